//! The only place in the kernel that executes `hlt`.

use core::arch::asm;

/// Enables interrupts and halts in one asm block, returning after an
/// interrupt (with interrupts enabled).
///
/// Why one block: `sti` delays recognition of interrupts until after the
/// *next* instruction (the "interrupt shadow"). With `sti; hlt` adjacent, an
/// interrupt that became pending while interrupts were disabled — e.g. a
/// wake IPI sent after the idle loop re-checked its inbox — is taken only
/// once the core is inside `hlt`, so it ends the halt instead of being
/// consumed just before it. If the compiler could place anything between the
/// two (two separate calls), the IPI could fire in that gap and the core would
/// then sleep with the wakeup already spent: the lost wakeup this kernel
/// exists to prevent.
///
/// The block is *not* `nomem`: interrupt handlers write memory (the
/// per-core interrupt counts the idle loop reads right after this returns
/// to learn what ended the halt), so the compiler must treat the halt as a
/// point where any memory may change, and may not move a load of those
/// counters (or a store the handlers read) across it.
pub fn enable_interrupts_and_halt() {
    // SAFETY: `sti; hlt` only changes the interrupt flag and waits; the
    // caller's interrupt handlers are installed (IDT loaded before any call).
    // No stack is touched by the asm itself (handlers run on the interrupt
    // stack frame the CPU pushes, which the Rust ABI leaves room for).
    unsafe { asm!("sti", "hlt", options(nostack)) };
}

/// Stops this core for good: interrupts off, halt in a loop (an NMI or SMI
/// could resume it).
pub fn halt_forever() -> ! {
    loop {
        // SAFETY: `cli; hlt` touches no memory; with interrupts off only an
        // NMI resumes it, and the loop halts again.
        unsafe { asm!("cli", "hlt", options(nomem, nostack)) };
    }
}
