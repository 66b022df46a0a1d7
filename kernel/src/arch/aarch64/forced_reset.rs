//! The reset `fault=triple-fault` raises (`arch::fault_injection`).

use super::psci;

/// The AArch64 stand-in for x86_64's triple fault: the machine resets with
/// no word from the kernel (PSCI `SYSTEM_RESET`; QEMU with `-no-reboot`
/// exits with status 0), which the harness must report as a failure,
/// never as success.
pub fn triple_fault() -> ! {
    psci::system_reset();
    unreachable!("the machine survived a PSCI SYSTEM_RESET")
}
