//! The time source's rate and the conversions between its ticks and time
//! units, one copy for every architecture: each `tsc` module reads its
//! counter and records the rate here (x86_64 from its PIT calibration,
//! AArch64 from `CNTFRQ_EL0`), and re-exports these functions so that the
//! kernel above names one time source.

use core::sync::atomic::{AtomicU64, Ordering};

/// Relaxed: set once at boot by the bootstrap core before any reader can
/// need it (the APs start after it), a plain number.
static TICKS_PER_MS: AtomicU64 = AtomicU64::new(0);

/// Records the rate (the bootstrap core, at boot).
pub fn set_ticks_per_ms(ticks: u64) {
    TICKS_PER_MS.store(ticks.max(1), Ordering::Relaxed);
}

/// Ticks per millisecond (0 before the rate is recorded).
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
    let end = super::tsc::now() + us_to_ticks(us);
    while super::tsc::now() < end {
        core::hint::spin_loop();
    }
}
