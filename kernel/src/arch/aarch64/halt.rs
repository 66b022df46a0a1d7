//! The only place in the kernel that executes `wfi`.
//!
//! # Why `wfi` with interrupts masked keeps the `sti; hlt` guarantee
//!
//! On x86_64 the idle loop re-checks its inbox with interrupts off and
//! then runs `sti; hlt`: the `sti` shadow delays a pending interrupt until
//! the core is inside `hlt`, so a wake IPI sent after the re-check ends
//! the halt instead of being consumed just before it.
//!
//! AArch64 needs no shadow: `wfi` completes at once, or wakes, when an
//! interrupt is pending at the CPU interface *whatever `PSTATE.I` says*
//! (the Arm ARM's WFI wake-up events: a physical IRQ "regardless of the
//! value of" the mask; Linux's `cpu_do_idle` relies on it). So this core
//! runs `wfi` with IRQs still masked: a wake SGI that became pending at
//! any point after the re-check, before the `wfi` or during it, ends it;
//! only then are IRQs unmasked, the pending interrupt taken (its handler
//! counts it, which is how the idle loop learns what ended the sleep), and
//! masked again by the caller. There is no instant at which the interrupt
//! could be taken and the core then sleep: the sleep comes first.
//!
//! `wfi` may also complete with nothing pending (the architecture allows
//! it): the idle loop sees unchanged counts and counts a spurious wakeup.

use core::arch::asm;

/// Sleeps until an interrupt is pending, then takes it: `dsb sy; wfi`
/// with IRQs masked (the caller's), then `msr daifclr` and `isb`. Returns
/// with IRQs unmasked, like x86_64's `sti; hlt`; callers mask them again.
///
/// - `dsb sy` before `wfi`: the core's earlier memory accesses (its
///   `Halted` state, its last look at its inbox) complete before it stops,
///   so a waker sees the state this core sleeps in and claims it (the Arm
///   ARM asks for a `DSB` before `WFI` for exactly this, as Linux's
///   `cpu_do_idle` has).
/// - `isb` after the unmask: a pending IRQ is guaranteed to be taken at
///   the next context synchronization event after it is unmasked; the
///   `isb` is that event, so the interrupt's handler has run (and counted
///   it) before this returns and the caller masks IRQs again.
///
/// Not `nomem`: interrupt handlers write memory (the per-core interrupt
/// counts the idle loop reads right after), so the compiler may not move
/// loads of those counts, or stores they read, across it.
pub fn enable_interrupts_and_halt() {
    // SAFETY: barriers, `wfi` and the IRQ unmask; the exception vectors are
    // installed on every core before it can get here.
    unsafe { asm!("dsb sy", "wfi", "msr daifclr, #2", "isb", options(nostack)) };
}

/// Stops this core for good: IRQs masked and this core's GIC CPU
/// interface told to signal no Group 1 interrupt (`ICC_IGRPEN1_EL1` = 0),
/// then `wfi` in a loop. Masking alone would not do: a pending interrupt
/// ends `wfi` whatever the mask (see above), and a loop of `wfi`s that
/// each complete at once is a spinning core (x86_64's `cli; hlt` does
/// stay halted).
pub fn halt_forever() -> ! {
    // SAFETY: masks IRQs and turns off this core's Group 1 signalling; the
    // core never runs kernel code again.
    unsafe {
        asm!(
            "msr daifset, #2",
            "msr s3_0_c12_c12_7, xzr",
            "isb",
            options(nomem, nostack)
        )
    };
    loop {
        // SAFETY: waits; no memory effect.
        unsafe { asm!("wfi", options(nomem, nostack)) };
    }
}
