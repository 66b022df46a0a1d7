//! The time source: the generic timer's virtual count (`CNTVCT_EL0`),
//! one counter for the whole machine (every core reads the same time, as
//! the x86_64 layer's TSC under QEMU), at the frequency `CNTFRQ_EL0` says
//! (set by QEMU; no calibration needed). The module keeps the x86_64
//! layer's name so that the kernel above names one time source.

use super::sysreg::read_sysreg;
pub use crate::arch::tick_rate::{
    set_ticks_per_ms, spin_us, ticks_per_ms, ticks_to_ns, ticks_to_us, us_to_ticks,
};

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
    set_ticks_per_ms(hz / 1000);
}
