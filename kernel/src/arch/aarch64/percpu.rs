//! The per-core block, reached in O(1) from the running core through
//! `TPIDR_EL1` (a register the hardware leaves to the OS). Until a core
//! installs its block, it reads as core 0 (only the bootstrap core runs
//! before that).

use super::sysreg::{read_sysreg, write_sysreg};
use core::sync::atomic::AtomicU64;

/// The per-core block.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct PerCore {
    /// Dense core index 0..N-1 used by the rest of the kernel.
    pub index: usize,
    /// The core's MPIDR affinity (Aff3..Aff0, as `cores::apic_id` keeps it).
    pub hw_id: u32,
    /// This core's GIC redistributor's SGI/PPI frame (0 until the core has
    /// set up its redistributor; written and read by this core only).
    pub sgi_frame: AtomicU64,
}

/// Points this core's `TPIDR_EL1` at `block` (leaked: lives for the run).
///
/// # Safety
///
/// Once per core, before anything on it reads its index, with a block whose
/// `index` is this core's and no other core's: every per-core structure
/// with a single writer trusts that index.
pub unsafe fn install(block: &'static PerCore) {
    write_sysreg!("tpidr_el1", core::ptr::from_ref(block) as u64);
}

/// This core's block, if installed.
pub fn current() -> Option<&'static PerCore> {
    let base = read_sysreg!("tpidr_el1");
    if base == 0 {
        return None;
    }
    // SAFETY: TPIDR_EL1 is only ever written by `install`, with the address
    // of a leaked (hence 'static) `PerCore`; it is 0 from reset until then.
    Some(unsafe { &*(base as *const PerCore) })
}

/// Dense index of the running core (0 before per-core setup).
pub fn current_index() -> usize {
    current().map_or(0, |block| block.index)
}
