//! Faults raised on purpose (`fault=...` boot parameter) so the harness can
//! prove that it reports each kind of failure as a failure.

use super::paging::{self, GuardOwner};
use x86_64::VirtAddr;
use x86_64::structures::DescriptorTablePointer;

/// Loads an IDT of limit 0 and raises `#BP`: the CPU cannot deliver the
/// exception, nor the resulting double fault, and resets (QEMU with
/// `-no-reboot` then exits with status 0).
pub fn triple_fault() -> ! {
    let empty = DescriptorTablePointer {
        limit: 0,
        base: VirtAddr::new(0),
    };
    // SAFETY: deliberately breaks exception delivery to force a triple fault;
    // nothing runs after the `int3`.
    unsafe {
        x86_64::instructions::tables::lidt(&empty);
        core::arch::asm!("int3", options(nomem, nostack));
    }
    unreachable!("the CPU survived a triple fault")
}

/// Reads the guard page below a freshly mapped stack: a page fault that the
/// handler reports (with the guard's owner) and turns into a failed run.
pub fn guard_page_read() -> ! {
    let stack = paging::map_stack(
        4096,
        GuardOwner {
            what: "fault-injection stack",
            index: 0,
        },
    );
    let guard: *const u64 = stack.guard.as_ptr();
    // SAFETY: not sound by design: the page is unmapped so the read faults,
    // and the page-fault handler ends the run before the value could be used.
    let value = unsafe { guard.read_volatile() };
    unreachable!("read {value:#x} from an unmapped guard page")
}

/// Recurses until the stack runs into its guard page (each frame holds 1 KiB
/// the optimiser cannot remove).
#[allow(unconditional_recursion, reason = "the point is to overflow the stack")]
pub fn overflow_stack() -> ! {
    let frame = core::hint::black_box([0u8; 1024]);
    core::hint::black_box(&frame);
    overflow_stack()
}
