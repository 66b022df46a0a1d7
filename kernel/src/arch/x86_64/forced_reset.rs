//! The reset `fault=triple-fault` raises (`arch::fault_injection`).

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
