//! The time-stamp counter and its calibration against the PIT. Under QEMU
//! TCG the TSC follows host time and is shared by all vCPUs, so stamps taken
//! on different cores compare.

pub use crate::arch::tick_rate::{
    set_ticks_per_ms, spin_us, ticks_per_ms, ticks_to_ns, ticks_to_us, us_to_ticks,
};

/// Reads the TSC.
pub fn now() -> u64 {
    // SAFETY: `rdtsc` has no side effects; CR4.TSD is clear in ring 0.
    unsafe { core::arch::x86_64::_rdtsc() }
}
