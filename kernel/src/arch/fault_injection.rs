//! Faults raised on purpose (`fault=...` boot parameter) so the harness can
//! prove that it reports each kind of failure as a failure. Shared by
//! every architecture: the reset is each arch's own (`forced_reset`), the
//! guard page and the stack overflow go through each arch's `paging`.

use super::paging::{self, GuardOwner};

pub use super::forced_reset::triple_fault;

/// Reads the guard page below a freshly mapped stack: a fault (x86_64: a
/// page fault; AArch64: a data abort) that the handler reports, with the
/// guard's owner, and turns into a failed run.
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
    // and the fault handler ends the run before the value could be used.
    let value = unsafe { guard.read_volatile() };
    unreachable!("read {value:#x} from an unmapped guard page")
}

/// Recurses until the stack runs into its guard page (each frame holds 1
/// KiB the optimiser cannot remove).
#[allow(unconditional_recursion, reason = "the point is to overflow the stack")]
pub fn overflow_stack() -> ! {
    let frame = core::hint::black_box([0u8; 1024]);
    core::hint::black_box(&frame);
    overflow_stack()
}
