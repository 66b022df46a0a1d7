//! What Linux paid for the loop, read from Linux itself: the process's
//! context switches (`getrusage(RUSAGE_SELF)`: every thread's, live or
//! ended) and the rescheduling IPIs of every CPU (`/proc/interrupts`' `RES`
//! row: the IPI Linux sends to make another CPU run a woken thread, its
//! wake IPI).

use std::fs;
use std::io;

/// Where the interrupt counts are.
const INTERRUPTS: &str = "/proc/interrupts";
/// The row of the rescheduling IPIs.
const RESCHEDULING_ROW: &str = "RES:";
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
    /// CPUs in `/proc/interrupts` (its header's columns).
    pub cpus: u64,
}

impl Snapshot {
    /// Reads the counters now.
    pub fn take() -> io::Result<Self> {
        let (voluntary_switches, involuntary_switches) = context_switches()?;
        let interrupts = fs::read_to_string(INTERRUPTS)?;
        let (cpus, rescheduling_ipis) = rescheduling_ipis(&interrupts).ok_or_else(|| {
            io::Error::other(format!("{INTERRUPTS} has no {RESCHEDULING_ROW} row"))
        })?;
        Ok(Self {
            voluntary_switches,
            involuntary_switches,
            rescheduling_ipis,
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

/// `(CPUs, RES summed over them)` from `/proc/interrupts`' text: the
/// header names one `CPUn` column per CPU, the `RES:` row has one count
/// per CPU, then its description.
pub fn rescheduling_ipis(text: &str) -> Option<(u64, u64)> {
    let mut lines = text.lines();
    let cpus = lines
        .next()?
        .split_whitespace()
        .filter(|word| word.starts_with("CPU"))
        .count();
    let row = lines.find_map(|line| line.trim_start().strip_prefix(RESCHEDULING_ROW))?;
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
    fn the_res_row_is_summed_over_the_header_cpus() {
        assert_eq!(rescheduling_ipis(INTERRUPTS_2_CPUS), Some((2, 518)));
        assert_eq!(
            rescheduling_ipis(&INTERRUPTS_2_CPUS.replace("RES:", "XYZ:")),
            None
        );
        assert_eq!(
            rescheduling_ipis(&INTERRUPTS_2_CPUS.replace("301", "x")),
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
