//! Faults raised on purpose (`fault=...` boot parameter) so the harness can
//! prove that it reports each kind of failure as a failure.

use super::paging::{self, GuardOwner};
use super::psci;

/// The AArch64 stand-in for x86_64's triple fault: the machine resets with
/// no word from the kernel (PSCI `SYSTEM_RESET`; QEMU with `-no-reboot`
/// exits with status 0), which the harness must report as a failure,
/// never as success.
pub fn triple_fault() -> ! {
    psci::system_reset();
    unreachable!("the machine survived a PSCI SYSTEM_RESET")
}

/// Reads the guard page below a freshly mapped stack: a data abort that the
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
    // and the handler ends the run before the value could be used.
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
