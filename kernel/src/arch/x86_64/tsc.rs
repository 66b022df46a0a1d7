//! The time-stamp counter and its calibration against the PIT. Under QEMU
//! TCG the TSC follows host time and is shared by all vCPUs, so stamps taken
//! on different cores compare.

use core::sync::atomic::{AtomicU64, Ordering};

static TICKS_PER_MS: AtomicU64 = AtomicU64::new(0);

/// Reads the TSC.
pub fn now() -> u64 {
    // SAFETY: `rdtsc` has no side effects; CR4.TSD is clear in ring 0.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Records the calibrated rate (from `pit`-timed measurement).
pub fn set_ticks_per_ms(ticks: u64) {
    TICKS_PER_MS.store(ticks.max(1), Ordering::Relaxed);
}

/// TSC ticks per millisecond (0 before calibration).
pub fn ticks_per_ms() -> u64 {
    TICKS_PER_MS.load(Ordering::Relaxed)
}

/// Converts TSC ticks to microseconds (needs calibration).
pub fn ticks_to_us(ticks: u64) -> u64 {
    let per_ms = ticks_per_ms().max(1);
    (u128::from(ticks) * 1000 / u128::from(per_ms)) as u64
}

/// Converts TSC ticks to nanoseconds (needs calibration).
pub fn ticks_to_ns(ticks: u64) -> u64 {
    let per_ms = ticks_per_ms().max(1);
    (u128::from(ticks) * 1_000_000 / u128::from(per_ms)) as u64
}

/// Converts microseconds to TSC ticks (needs calibration).
pub fn us_to_ticks(us: u64) -> u64 {
    (u128::from(us) * u128::from(ticks_per_ms()) / 1000) as u64
}

/// Spins until `us` microseconds have passed (after calibration). For
/// architectural delays and hang guards only, never as synchronisation.
pub fn spin_us(us: u64) {
    let end = now() + us_to_ticks(us);
    while now() < end {
        core::hint::spin_loop();
    }
}
