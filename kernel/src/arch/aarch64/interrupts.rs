//! This core's IRQ mask (`PSTATE.I`, through `DAIFSet`/`DAIFClr`). The
//! asm blocks are not `nomem`: the compiler must not move memory accesses
//! into or out of a section with interrupts off.

/// Masks IRQs on this core.
pub fn disable() {
    // SAFETY: sets PSTATE.I; no memory effect.
    unsafe { core::arch::asm!("msr daifset, #2", options(nostack, preserves_flags)) };
}

/// Unmasks IRQs on this core. An IRQ already pending is taken at the
/// latest at the next context synchronization event; callers that need it
/// taken at once (the halt) add an `isb` (see `halt.rs`).
pub fn enable() {
    // SAFETY: clears PSTATE.I; no memory effect.
    unsafe { core::arch::asm!("msr daifclr, #2", options(nostack, preserves_flags)) };
}

/// Whether IRQs are masked on this core.
pub fn are_disabled() -> bool {
    let daif: u64;
    // SAFETY: reads PSTATE's mask bits.
    unsafe {
        core::arch::asm!("mrs {}, daif", out(reg) daif, options(nomem, nostack, preserves_flags))
    };
    daif & (1 << 7) != 0
}

/// Runs `f` with IRQs masked, restoring the mask as it was.
pub fn without<R>(f: impl FnOnce() -> R) -> R {
    let was_disabled = are_disabled();
    disable();
    let result = f();
    if !was_disabled {
        enable();
    }
    result
}
