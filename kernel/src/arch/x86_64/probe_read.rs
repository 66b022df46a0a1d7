//! The x86_64 half of the recoverable probe (`arch::fault_probe`): the read
//! that the page-fault handler can resume, and what its error code says.

use core::arch::asm;
use core::sync::atomic::AtomicU64;

/// Publishes the address of its own resume label in `slot`, then reads
/// eight bytes at `addr`: the value, or `None` if the read faulted and the
/// page-fault handler (through `fault_probe::take_recovery`) resumed at
/// the label.
pub fn read_or_resume(slot: &AtomicU64, addr: u64) -> Option<u64> {
    let value: u64;
    let completed: u64;
    // If the read faults, the handler resumes at label 2 with `completed`
    // still 0. The slot is written with a plain store: the fault that
    // reads it is synchronous, on this core.
    // SAFETY: the store to `slot` is an aligned 8-byte store to an atomic
    // (a plain store of one is atomic on this arch); no Rust reference is
    // formed to `addr`, so a faulting address is not UB; and the handler
    // resumes inside this asm block.
    unsafe {
        asm!(
            "xor {done:e}, {done:e}",
            "lea {tmp}, [rip + 2f]",
            "mov qword ptr [{slot}], {tmp}",
            "mov {val}, qword ptr [{addr}]",
            "mov {done:e}, 1",
            "2:",
            slot = in(reg) slot.as_ptr(),
            addr = in(reg) addr,
            tmp = out(reg) _,
            val = lateout(reg) value,
            done = out(reg) completed,
            options(nostack),
        );
    }
    (completed == 1).then_some(value)
}

/// Whether a page-fault error code says the page was not mapped (bit 0,
/// P, clear), rather than a protection violation.
pub fn is_not_present(error_code: u64) -> bool {
    const PRESENT_BIT: u64 = 1;
    error_code & PRESENT_BIT == 0
}
