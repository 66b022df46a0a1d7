//! The time source: the generic timer's virtual count (`CNTVCT_EL0`),
//! one counter for the whole machine (every core reads the same time, as
//! the x86_64 layer's TSC under QEMU), at the frequency `CNTFRQ_EL0` says
//! (set by QEMU; no calibration needed). The module keeps the x86_64
//! layer's name so that the kernel above names one time source.

use super::sysreg::read_sysreg;
use core::sync::atomic::{AtomicU64, Ordering};

static TICKS_PER_MS: AtomicU64 = AtomicU64::new(0);

/// Reads the counter. The `isb` before it keeps the read from being
/// performed early (the counter may otherwise be read speculatively, out
/// of order with the code before it, and a time stamp taken after an event
/// could read earlier than the event).
pub fn now() -> u64 {
    // SAFETY: `isb` is a barrier; CNTVCT_EL0 is readable at EL1.
    unsafe { core::arch::asm!("isb", options(nomem, nostack, preserves_flags)) };
    read_sysreg!("cntvct_el0")
}

/// Records the counter's rate from `CNTFRQ_EL0` (bootstrap core, at boot).
pub fn init() {
    let hz = read_sysreg!("cntfrq_el0");
    TICKS_PER_MS.store((hz / 1000).max(1), Ordering::Relaxed);
}

/// Counter ticks per millisecond (0 before [`init`]).
pub fn ticks_per_ms() -> u64 {
    TICKS_PER_MS.load(Ordering::Relaxed)
}

/// Converts ticks to microseconds.
pub fn ticks_to_us(ticks: u64) -> u64 {
    let per_ms = ticks_per_ms().max(1);
    (u128::from(ticks) * 1000 / u128::from(per_ms)) as u64
}

/// Converts ticks to nanoseconds.
pub fn ticks_to_ns(ticks: u64) -> u64 {
    let per_ms = ticks_per_ms().max(1);
    (u128::from(ticks) * 1_000_000 / u128::from(per_ms)) as u64
}

/// Converts microseconds to ticks.
pub fn us_to_ticks(us: u64) -> u64 {
    (u128::from(us) * u128::from(ticks_per_ms()) / 1000) as u64
}

/// Spins until `us` microseconds have passed. For architectural delays and
/// hang guards only, never as synchronisation.
pub fn spin_us(us: u64) {
    let end = now() + us_to_ticks(us);
    while now() < end {
        core::hint::spin_loop();
    }
}
