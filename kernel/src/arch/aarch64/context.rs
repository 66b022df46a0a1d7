//! Kernel-thread context switching: the callee-saved registers (AAPCS64:
//! x19-x28, the frame pointer x29, the link register x30) and the
//! interrupt mask (DAIF) on the outgoing stack, stack pointers swapped, the
//! incoming context popped.
//!
//! No floating-point or SIMD state is saved because there is none: the
//! kernel's target (`aarch64-unknown-none-softfloat`) never emits an FP or
//! SIMD instruction (as the x86_64 kernel's soft-float target never emits
//! SSE). The stack is `SP_EL0` (kernel code runs with `SPSel` = 0, see
//! `entry.rs`).

use core::arch::naked_asm;

/// Bytes the switch pushes: x19-x30 (12 words) and DAIF, rounded to 16.
const FRAME_BYTES: u64 = 112;
/// DAIF for a new context: every exception masked (the scheduler runs with
/// interrupts off; only the halt unmasks them).
const INITIAL_DAIF: u64 = 0b1111 << 6;

/// Saves the current context, storing its stack pointer at `save_sp`, and
/// resumes the context whose stack pointer is `load_sp`.
///
/// # Safety
///
/// `save_sp` must be valid for a write of 8 bytes; `load_sp` must be a
/// stack pointer produced by a previous `switch` (saved at its `save_sp`)
/// or by [`prepare_stack`], whose stack is still mapped and not in use by
/// any other core; the caller's stack must stay mapped until resumed.
#[unsafe(naked)]
pub unsafe extern "C" fn switch(save_sp: *mut u64, load_sp: u64) {
    naked_asm!(
        "sub sp, sp, #112",
        "stp x19, x20, [sp, #0]",
        "stp x21, x22, [sp, #16]",
        "stp x23, x24, [sp, #32]",
        "stp x25, x26, [sp, #48]",
        "stp x27, x28, [sp, #64]",
        "stp x29, x30, [sp, #80]",
        "mrs x9, daif",
        "str x9, [sp, #96]",
        "mov x9, sp",
        "str x9, [x0]",
        "mov sp, x1",
        "ldr x9, [sp, #96]",
        "msr daif, x9",
        "ldp x19, x20, [sp, #0]",
        "ldp x21, x22, [sp, #16]",
        "ldp x23, x24, [sp, #32]",
        "ldp x25, x26, [sp, #48]",
        "ldp x27, x28, [sp, #64]",
        "ldp x29, x30, [sp, #80]",
        "add sp, sp, #112",
        "ret",
    )
}

/// Lays out a fresh stack so that the first [`switch`] to the returned
/// stack pointer "returns" into `entry` (its x30) with a zero frame pointer
/// (ending backtraces) and the stack 16-byte aligned.
///
/// # Safety
///
/// `stack_top` must be the 16-byte-aligned top of a mapped, writable stack
/// of at least a page that nothing else uses.
pub unsafe fn prepare_stack(stack_top: u64, entry: extern "C" fn() -> !) -> u64 {
    let sp = stack_top - FRAME_BYTES;
    let frame = sp as *mut u64;
    // SAFETY: the caller guarantees the bytes below `stack_top` are ours;
    // word 11 is x30, word 12 DAIF, the rest (x19-x29) zero.
    unsafe {
        for i in 0..(FRAME_BYTES / 8) as usize {
            frame.add(i).write(0);
        }
        frame.add(11).write(entry as usize as u64);
        frame.add(12).write(INITIAL_DAIF);
    }
    sp
}
