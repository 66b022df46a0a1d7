//! The first instructions each core runs, before any Rust.
//!
//! The bootstrap core enters `_start` (the ELF's entry, which QEMU's
//! `-kernel` jumps to at EL1 with the MMU and caches off); every other
//! core enters `vigil_secondary_entry` from PSCI `CPU_ON`, also with the
//! MMU off, its `x0` the context PSCI was given: the physical address of
//! its [`ApBoot`](super::bringup::ApBoot) record.
//!
//! Stacks: kernel code runs on `SP_EL0` (`SPSel` = 0, "EL1t"), so that
//! every exception, taken on `SP_EL1`, runs on a separate per-core
//! exception stack: a kernel stack that overflows into its guard page
//! faults on a stack that still has room, and the fault is reported (the
//! x86_64 layer's double-fault IST stack does the same).

use core::arch::global_asm;

/// Bytes of the bootstrap core's boot stack (its idle loop runs on it).
pub const BOOT_STACK_BYTES: usize = 256 * 1024;
/// Bytes of each core's exception stack (`SP_EL1`).
pub const EXCEPTION_STACK_BYTES: usize = 16 * 1024;

// Offsets of the fields of `bringup::ApBoot` (asserted there).
global_asm!(
    r#"
.section .text.boot, "ax"
.global _start
_start:
    msr daifset, #0xf
    msr tpidr_el1, xzr
    mrs x9, CurrentEL
    lsr x9, x9, #2
    cmp x9, #1
    b.ne 9f
    adrp x9, vigil_boot_exception_stack_top
    add x9, x9, :lo12:vigil_boot_exception_stack_top
    mov sp, x9
    msr spsel, #0
    adrp x9, vigil_boot_stack_top
    add x9, x9, :lo12:vigil_boot_stack_top
    mov sp, x9
    adrp x9, __bss_start
    add x9, x9, :lo12:__bss_start
    adrp x10, __bss_end
    add x10, x10, :lo12:__bss_end
1:
    cmp x9, x10
    b.hs 2f
    str xzr, [x9], #8
    b 1b
2:
    adrp x9, vigil_exception_vectors
    add x9, x9, :lo12:vigil_exception_vectors
    msr vbar_el1, x9
    isb
    bl vigil_boot_primary
9:
    wfe
    b 9b

.global vigil_secondary_entry
vigil_secondary_entry:
    msr daifset, #0xf
    msr tpidr_el1, xzr
    ldr x9, [x0, #0]
    msr mair_el1, x9
    ldr x9, [x0, #8]
    msr tcr_el1, x9
    ldr x9, [x0, #16]
    msr ttbr0_el1, x9
    isb
    tlbi vmalle1
    dsb nsh
    isb
    ldr x9, [x0, #24]
    msr sctlr_el1, x9
    isb
    ldr x9, [x0, #32]
    mov sp, x9
    msr spsel, #0
    ldr x9, [x0, #40]
    mov sp, x9
    adrp x9, vigil_exception_vectors
    add x9, x9, :lo12:vigil_exception_vectors
    msr vbar_el1, x9
    isb
    bl vigil_ap_entry
8:
    wfe
    b 8b

.section .bss.vigil_boot_stacks, "aw", @nobits
.balign 4096
vigil_boot_exception_stack:
    .space 16384
vigil_boot_exception_stack_top:
vigil_boot_stack:
    .space 262144
.global vigil_boot_stack_top
vigil_boot_stack_top:
.text
"#
);

const _: () = assert!(EXCEPTION_STACK_BYTES == 16384 && BOOT_STACK_BYTES == 262_144);

unsafe extern "C" {
    /// The secondary cores' entry point (PSCI `CPU_ON` starts them here).
    pub fn vigil_secondary_entry();
}

/// Physical (= virtual: identity-mapped) address of the secondary entry.
pub fn secondary_entry_address() -> u64 {
    vigil_secondary_entry as *const () as u64
}
