//! Interrupts between cores: an SGI to one core by its MPIDR affinity, and
//! whether an SGI or PPI is pending on this core (its redistributor's
//! `GICR_ISPENDR0`).

use super::{gic, percpu};
use core::sync::atomic::Ordering;

/// Sends SGI `vector` to the core whose MPIDR affinity is `hw_id`.
///
/// The barriers, and what each pairs with:
///
/// - `dsb ishst` before the `ICC_SGI1R_EL1` write. A system-register write
///   is not ordered with memory accesses by the memory model (not even by
///   the release/acquire of the waker's claim), so without it the SGI
///   could reach the target before the push it announces is observable.
///   The wake protocol does not need the order for correctness (a wake
///   carries no memory: the woken core re-reads its inbox through the
///   state it reads with acquire, which synchronises with the waker's
///   claim, as the loom model checks with IPIs that carry none), but
///   without it the target could wake, find its inbox empty and halt
///   again: a spurious wake in the place of the real one. With it, the
///   push (and the claim) complete for every observer in the inner
///   shareable domain before the SGI is generated. (The "missing `dmb`"
///   of ThreadX #704, on ARMv7-A, was this pairing.)
/// - `isb` after it. A system-register write takes effect at the latest at
///   the next context synchronization event; until then the SGI may not
///   have been generated. A waker that went on to its own idle path and
///   its `wfi` could sit on an SGI never sent: the target sleeps on, the
///   waker sleeps, and the wakeup is lost. The `isb` makes the write
///   happen before this returns. (Hermit's AArch64 wakeup hang, fixed in
///   ca501648 by an `isb` after the SGI write, was this one.)
pub fn send(hw_id: u32, vector: u8) {
    let value = gic::sgi1r_value(hw_id, u32::from(vector));
    // SAFETY: a barrier.
    unsafe { core::arch::asm!("dsb ishst", options(nostack, preserves_flags)) };
    gic::write_sgi1r(value);
    super::sysreg::isb();
}

/// Whether SGI or PPI `vector` is pending (not yet acknowledged) on this
/// core.
pub fn is_pending(vector: u8) -> bool {
    let frame = percpu::current().map_or(0, |block| block.sgi_frame.load(Ordering::Relaxed));
    frame != 0 && gic::is_pending(frame, u32::from(vector))
}

/// This core's hardware id: its MPIDR affinity, packed Aff3.Aff2.Aff1.Aff0.
pub fn this_core_id() -> u32 {
    hw_id_of_mpidr(super::sysreg::read_sysreg!("mpidr_el1"))
}

/// Packs an MPIDR (or a device tree's CPU `reg`) into Aff3.Aff2.Aff1.Aff0.
pub fn hw_id_of_mpidr(mpidr: u64) -> u32 {
    ((mpidr & 0xff_ffff) | ((mpidr >> 8) & 0xff00_0000)) as u32
}
