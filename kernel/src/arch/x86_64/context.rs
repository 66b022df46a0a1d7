//! Kernel-thread context switching: callee-saved registers and RFLAGS on
//! the outgoing stack, stack pointers swapped, the incoming context popped.
//!
//! No FPU/SSE state is saved because there is none to save: the kernel's
//! target (`x86_64-unknown-none`) is built with soft-float and no SSE, so
//! the compiler never emits an x87/SSE/AVX instruction, and nothing else in
//! Vigil does (CR4.OSFXSR is left as the bootloader set it; if a later change
//! enables SSE codegen, it must add `fxsave`/`fxrstor` here).

use core::arch::naked_asm;

/// Words the switch pushes: RFLAGS + rbp, rbx, r12, r13, r14, r15.
const SAVED_WORDS: usize = 7;
/// RFLAGS for a new context: reserved bit 1 set, interrupts disabled (the
/// scheduler runs with interrupts off; only the halt enables them).
const INITIAL_RFLAGS: u64 = 0x2;

/// Saves the current context, storing its stack pointer at `save_rsp`, and
/// resumes the context whose stack pointer is `load_rsp`.
///
/// # Safety
///
/// `save_rsp` must be valid for a write of 8 bytes; `load_rsp` must be a
/// stack pointer produced by a previous `switch` (saved at its `save_rsp`)
/// or by [`prepare_stack`], whose stack is still mapped and not in use by
/// any other core; the caller's stack must stay mapped until resumed.
#[unsafe(naked)]
pub unsafe extern "C" fn switch(save_rsp: *mut u64, load_rsp: u64) {
    naked_asm!(
        "pushfq",
        "push rbp",
        "push rbx",
        "push r12",
        "push r13",
        "push r14",
        "push r15",
        "mov [rdi], rsp",
        "mov rsp, rsi",
        "pop r15",
        "pop r14",
        "pop r13",
        "pop r12",
        "pop rbx",
        "pop rbp",
        "popfq",
        "ret",
    )
}

/// Lays out a fresh stack so that the first [`switch`] to the returned stack
/// pointer "returns" into `entry` with the stack aligned as after a call.
///
/// # Safety
///
/// `stack_top` must be the 16-byte-aligned top of a mapped, writable stack
/// of at least a page that nothing else uses.
pub unsafe fn prepare_stack(stack_top: u64, entry: extern "C" fn() -> !) -> u64 {
    let top = stack_top as *mut u64;
    // Layout, from the top down: a zero (the "return address" of `entry`,
    // ending backtraces), `entry` (popped by `switch`'s `ret`), RFLAGS
    // (pushed first by `switch`, popped last), then rbp, rbx, r12..r15.
    // SAFETY: the caller guarantees the words below `stack_top` are ours.
    unsafe {
        top.sub(1).write(0);
        top.sub(2).write(entry as usize as u64);
        top.sub(3).write(INITIAL_RFLAGS);
        for i in 1..SAVED_WORDS {
            top.sub(3 + i).write(0);
        }
    }
    stack_top - 8 * (2 + SAVED_WORDS as u64)
}
