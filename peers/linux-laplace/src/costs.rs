//! What Linux paid for the loop, read from Linux itself: the process's
//! context switches (`getrusage(RUSAGE_SELF)`: every thread's, live or
//! ended) and two rows of `/proc/interrupts`, summed over CPUs: `RES`, the
//! rescheduling IPI (`smp_send_reschedule`), and `CAL`, the function-call
//! IPI. Linux 6.1 wakes a thread on an idle CPU by queueing it on that
//! CPU's wake list and sending a call-function IPI (`ttwu_queue_wakelist`;
//! none when the CPU polls, `TIF_POLLING_NRFLAG`), so its wake IPIs are
//! mostly in `CAL`: the first boots at 4 vCPUs counted 1 `RES` for 4,700
//! futex wakes.

use std::fs;
use std::io;

/// Where the interrupt counts are.
const INTERRUPTS: &str = "/proc/interrupts";
/// The row of the rescheduling IPIs.
const RESCHEDULING_ROW: &str = "RES:";
/// The row of the function-call IPIs (remote wake-ups among them).
const FUNCTION_CALL_ROW: &str = "CAL:";
/// Where Linux says which cpuidle driver it registered.
const IDLE_DRIVER: &str = "/sys/devices/system/cpu/cpuidle/current_driver";

/// The counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    /// `ru_nvcsw`.
    pub voluntary_switches: u64,
    /// `ru_nivcsw`.
    pub involuntary_switches: u64,
    /// The `RES` row summed over CPUs.
    pub rescheduling_ipis: u64,
    /// The `CAL` row summed over CPUs.
    pub function_call_ipis: u64,
    /// CPUs in `/proc/interrupts` (its header's columns).
    pub cpus: u64,
}

impl Snapshot {
    /// Reads the counters now.
    pub fn take() -> io::Result<Self> {
        let (voluntary_switches, involuntary_switches) = context_switches()?;
        let interrupts = fs::read_to_string(INTERRUPTS)?;
        let row = |name: &str| {
            row_sum(&interrupts, name)
                .ok_or_else(|| io::Error::other(format!("{INTERRUPTS} has no {name} row")))
        };
        let (cpus, rescheduling_ipis) = row(RESCHEDULING_ROW)?;
        let (_, function_call_ipis) = row(FUNCTION_CALL_ROW)?;
        Ok(Self {
            voluntary_switches,
            involuntary_switches,
            rescheduling_ipis,
            function_call_ipis,
            cpus,
        })
    }
}

/// The process's (voluntary, involuntary) context switches so far.
fn context_switches() -> io::Result<(u64, u64)> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid, writable `rusage`; getrusage(2) writes
    // only into it and reads nothing else of ours.
    let status = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if status != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: zero-initialised, then filled in by a successful getrusage(2);
    // every field of `rusage` is an integer, valid at any bit pattern.
    let usage = unsafe { usage.assume_init() };
    let count = |value: libc::c_long| u64::try_from(value).unwrap_or(0);
    Ok((count(usage.ru_nvcsw), count(usage.ru_nivcsw)))
}

/// `(CPUs, the row summed over them)` from `/proc/interrupts`' text: the
/// header names one `CPUn` column per CPU, a row (`RES:`) has one count
/// per CPU, then its description.
pub fn row_sum(text: &str, name: &str) -> Option<(u64, u64)> {
    let mut lines = text.lines();
    let cpus = lines
        .next()?
        .split_whitespace()
        .filter(|word| word.starts_with("CPU"))
        .count();
    let row = lines.find_map(|line| line.trim_start().strip_prefix(name))?;
    let counts: Vec<u64> = row
        .split_whitespace()
        .take(cpus)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    (counts.len() == cpus && cpus > 0).then(|| (cpus as u64, counts.iter().sum()))
}

/// Linux's cpuidle driver (`none` when it registered none), or `-` when
/// the file is missing (a kernel without cpuidle).
pub fn idle_driver() -> String {
    fs::read_to_string(IDLE_DRIVER).map_or_else(|_| "-".to_string(), |text| text.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTERRUPTS_2_CPUS: &str = "           CPU0       CPU1       \n\
          0:         37          0   IO-APIC   2-edge      timer\n\
        NMI:          0          0   Non-maskable interrupts\n\
        LOC:       4816       3965   Local timer interrupts\n\
        RES:        217        301   Rescheduling interrupts\n\
        CAL:         85        110   Function call interrupts\n";

    #[test]
    fn a_row_is_summed_over_the_header_cpus() {
        assert_eq!(row_sum(INTERRUPTS_2_CPUS, RESCHEDULING_ROW), Some((2, 518)));
        assert_eq!(
            row_sum(INTERRUPTS_2_CPUS, FUNCTION_CALL_ROW),
            Some((2, 195))
        );
        assert_eq!(
            row_sum(&INTERRUPTS_2_CPUS.replace("RES:", "XYZ:"), RESCHEDULING_ROW),
            None
        );
        assert_eq!(
            row_sum(&INTERRUPTS_2_CPUS.replace("301", "x"), RESCHEDULING_ROW),
            None
        );
    }

    #[test]
    fn this_process_has_counters() {
        let (voluntary, involuntary) = context_switches().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1));
        let (after, _) = context_switches().unwrap();
        assert!(after > voluntary, "{voluntary} -> {after} ({involuntary})");
    }
}
