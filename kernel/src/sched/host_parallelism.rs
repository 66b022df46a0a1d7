//! How many of its cores the host runs at once, measured at boot.
//!
//! Under an emulator or a hypervisor each vCPU is a host thread. When more
//! vCPUs want to run than the host has cores for, the host deschedules some
//! of them for whole time slices (milliseconds): a round split over more
//! cores than run at once waits for the descheduled ones, and a core that
//! spins waiting for work takes host time from the cores that have it. The
//! kernel cannot ask the host how many cores it has, but it can see the
//! slices it does not get: a core that reads its clock in a tight loop sees
//! a gap between two reads whenever its vCPU was descheduled.
//!
//! The measurement: every core spins in the same window of
//! [`WINDOW_US`], reading the TSC; the time between two reads counts as
//! running when the gap is under [`DESCHEDULED_GAP_US`], as descheduled
//! otherwise. The sum over the cores of their running time, divided by the
//! window, is how many cores the host ran at once while all of them wanted
//! to run: 2 for 32 vCPUs on 2 host cores (each vCPU running about a
//! sixteenth of the window), 32 on a host with 32 idle cores. The window
//! starts at a TSC time every core learns only once all of them have
//! checked in, so a core the host has not run yet is not counted as
//! running before it arrives.
//!
//! The TSC is the host's clock under QEMU's TCG (one clock for every vCPU,
//! so the window is the same for all); under Bochs it is emulated time,
//! which advances with the instructions of every CPU alike, so there every
//! core runs the whole window and the estimate is the core count (Bochs
//! emulates all CPUs in one host thread, but in emulated time they do run
//! at once).

use crate::arch::tsc;
use crate::smp::{cores, remote_call};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use spin::Once;

/// How long every core spins for the measurement, µs. Long against a host
/// time slice (Linux's CFS/EEVDF slices are 0.75 to a few ms), so that a
/// core that is descheduled part of the time shows as such.
pub const WINDOW_US: u64 = 40_000;

/// A gap between two clock reads longer than this is time the vCPU was
/// descheduled (a read takes well under a µs; the host's slices are
/// milliseconds).
pub const DESCHEDULED_GAP_US: u64 = vigil_wake::STEAL_GAP_US;

/// What the measurement found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostParallelism {
    /// Cores the host ran at once, in thousandths (the sum of the cores'
    /// running fractions).
    pub measured_milli: u64,
    /// The estimate the kernel uses: `measured_milli` rounded to the
    /// nearest whole core, at least 1 and at most the core count.
    pub cores_at_once: usize,
    /// The cores measured.
    pub cores: usize,
}

static MEASURED: Once<HostParallelism> = Once::new();
/// `parallelism=`, if given (set once at boot).
static FIXED: Once<Option<usize>> = Once::new();

/// The boot measurement, or `None` before [`measure`] ran.
pub fn measured() -> Option<HostParallelism> {
    MEASURED.get().copied()
}

/// Fixes the parallelism the kernel uses (`parallelism=`), or leaves it
/// to the measurement (`None`); once, at boot.
pub fn configure(fixed: Option<usize>) {
    FIXED.call_once(|| fixed);
}

/// The parallelism in force: `parallelism=` if given, else the
/// measurement, else (before it) every core.
pub fn in_force() -> usize {
    FIXED
        .get()
        .copied()
        .flatten()
        .or_else(|| measured().map(|m| m.cores_at_once))
        .unwrap_or_else(cores::count)
}

/// Runs the measurement on every core at once (from a task on the
/// bootstrap core, after every AP is online) and keeps its result.
pub fn measure() -> HostParallelism {
    let count = cores::count();
    let arrived = Arc::new(AtomicUsize::new(0));
    // The window's start, set by the last core to arrive (0: not yet).
    let start = Arc::new(AtomicU64::new(0));
    let running_ticks: Arc<Vec<AtomicU64>> =
        Arc::new((0..count).map(|_| AtomicU64::new(0)).collect());
    let window = tsc::us_to_ticks(WINDOW_US);
    let gap = tsc::us_to_ticks(DESCHEDULED_GAP_US);
    let job = {
        let (arrived, start, running_ticks) =
            (arrived.clone(), start.clone(), running_ticks.clone());
        Arc::new(move |core: usize| {
            // Relaxed throughout: the counts are joined by `run_everywhere`
            // (each job's end happens before the join returns), and the
            // start time is only a number to wait for.
            if arrived.fetch_add(1, Ordering::Relaxed) + 1 == count {
                // A little after now, so that the other cores, spinning on
                // `start`, begin at the same TSC time.
                start.store(tsc::now() + tsc::us_to_ticks(1000), Ordering::Relaxed);
            }
            let begin = loop {
                let t = start.load(Ordering::Relaxed);
                if t != 0 {
                    break t;
                }
                core::hint::spin_loop();
            };
            let end = begin + window;
            running_ticks[core].store(running_in(begin, end, gap), Ordering::Relaxed);
            Ok(())
        })
    };
    if let Err(why) = remote_call::run_everywhere(job) {
        panic!("host parallelism: the measurement failed on a core: {why}");
    }
    let total: u64 = running_ticks
        .iter()
        .map(|t| t.load(Ordering::Relaxed))
        .sum();
    let measured_milli = total.saturating_mul(1000) / window.max(1);
    let cores_at_once = (((measured_milli + 500) / 1000) as usize).clamp(1, count);
    let result = HostParallelism {
        measured_milli,
        cores_at_once,
        cores: count,
    };
    *MEASURED.call_once(|| result)
}

/// Spins from TSC time `begin` to `end` reading the clock; the ticks in
/// that window between reads less than `gap` apart (the time this core
/// ran).
fn running_in(begin: u64, end: u64, gap: u64) -> u64 {
    let mut last = loop {
        let now = tsc::now();
        if now >= begin {
            // Descheduled across `begin`: the time from `begin` to this
            // read is not counted (the gap test below would not see it).
            break if now - begin > gap { now } else { begin };
        }
    };
    let mut running = 0;
    loop {
        let now = tsc::now();
        let step = now.min(end) - last.min(end);
        if now - last <= gap {
            running += step;
        }
        last = now;
        if now >= end {
            return running;
        }
    }
}
