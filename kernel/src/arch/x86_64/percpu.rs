//! Per-core block reachable in O(1) from the running core through the GS
//! base MSR. Until a core installs its block, it reads as core 0 (only the
//! bootstrap core runs before that).

use x86_64::VirtAddr;
use x86_64::registers::model_specific::GsBase;

/// The per-core block. `#[repr(C)]` so the index sits at a fixed offset.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct PerCore {
    /// Dense core index 0..N-1 used by the rest of the kernel.
    pub index: usize,
    /// The core's local APIC id (need not be dense).
    pub apic_id: u32,
}

/// Points this core's GS base at `block` (leaked: lives for the run).
///
/// # Safety
///
/// Once per core, before anything on it reads its index, with a block whose
/// `index` is this core's and no other core's: every per-core structure
/// with a single writer (counters, records, the scheduler's core) trusts
/// that index, and two cores with one index would race on them.
pub unsafe fn install(block: &'static PerCore) {
    GsBase::write(VirtAddr::from_ptr(block as *const PerCore));
}

/// This core's block, if installed.
pub fn current() -> Option<&'static PerCore> {
    let base = GsBase::read().as_u64();
    if base == 0 {
        return None;
    }
    // SAFETY: GS base is only ever written by `install`, with the address of
    // a leaked (hence 'static) `PerCore`.
    Some(unsafe { &*(base as *const PerCore) })
}

/// Dense index of the running core (0 before per-core setup).
pub fn current_index() -> usize {
    current().map_or(0, |block| block.index)
}
