//! The AP start-up trampoline: real mode -> protected mode -> long mode, on
//! the kernel's own page tables, then a call into Rust on the core's own
//! stack. Assembled into the kernel image as data and copied to the fixed low
//! page [`TRAMPOLINE_PHYS`] (the bootloader leaves memory below 1 MiB free and
//! unmapped; Vigil identity-maps this page while APs use it).
//!
//! Each AP finds its stack by its initial APIC id (CPUID.1:EBX[31:24]) in a
//! 256-entry table inside the page; a CPU with no stack (beyond the compiled
//! maximum) parks with interrupts off and never reaches Rust.

use super::paging;
use core::arch::global_asm;
use x86_64::PhysAddr;

/// Physical (and, while mapped, virtual) address of the trampoline page.
/// SIPI vector = page number = 0x08.
pub const TRAMPOLINE_PHYS: u64 = 0x8000;
/// Entries in the stack table (initial APIC ids are 8 bits).
pub const STACK_TABLE_ENTRIES: usize = 256;

// The addresses below are absolute (`TRAMP + offset`, data at fixed offsets
// placed with `.org`): the code only ever runs at TRAMPOLINE_PHYS. EFER.NXE must be set before paging is enabled
// because the bootloader's page tables use the NX bit; CR0.WP matches the
// bootstrap core's write protection.
global_asm!(
    r#"
.section .rodata.vigil_trampoline, "a"
.balign 4096
.set TRAMP, 0x8000
.set GDT_OFFSET, 0x7c0
.set GDTR_OFFSET, 0x7e0
.set CR3_OFFSET, 0x7f0
.set ENTRY_OFFSET, 0x7f8
.set STACKS_OFFSET, 0x800
.global vigil_trampoline_start
.global vigil_trampoline_end
.global vigil_trampoline_cr3
.global vigil_trampoline_entry
.global vigil_trampoline_stacks
.code16
vigil_trampoline_start:
    cli
    cld
    xor ax, ax
    mov ds, ax
    lgdt [TRAMP + GDTR_OFFSET]
    mov eax, cr0
    or eax, 1
    mov cr0, eax
    .byte 0x66, 0xea
    .long TRAMP + (3f - vigil_trampoline_start)
    .word 0x08
.code32
3:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov eax, 1
    cpuid
    shr ebx, 24
    mov eax, cr4
    or eax, 0x20
    mov cr4, eax
    mov eax, dword ptr [TRAMP + CR3_OFFSET]
    mov cr3, eax
    mov ecx, 0xc0000080
    rdmsr
    or eax, 0x900
    wrmsr
    mov eax, cr0
    or eax, 0x80010001
    mov cr0, eax
    .byte 0xea
    .long TRAMP + (4f - vigil_trampoline_start)
    .word 0x18
.code64
4:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov ebx, ebx
    mov rsp, qword ptr [rbx * 8 + TRAMP + STACKS_OFFSET]
    test rsp, rsp
    jz 5f
    mov rdi, rbx
    mov rax, qword ptr [TRAMP + ENTRY_OFFSET]
    call rax
5:
    cli
    hlt
    jmp 5b
.org GDT_OFFSET
1:
    .quad 0
    .quad 0x00cf9a000000ffff
    .quad 0x00cf92000000ffff
    .quad 0x00af9a000000ffff
.org GDTR_OFFSET
    .word 4 * 8 - 1
    .long TRAMP + GDT_OFFSET
.org CR3_OFFSET
vigil_trampoline_cr3:
    .quad 0
vigil_trampoline_entry:
    .quad 0
.org STACKS_OFFSET
vigil_trampoline_stacks:
    .fill 256, 8, 0
vigil_trampoline_end:
.text
"#
);

unsafe extern "C" {
    static vigil_trampoline_start: u8;
    static vigil_trampoline_end: u8;
    static vigil_trampoline_cr3: u8;
    static vigil_trampoline_entry: u8;
    static vigil_trampoline_stacks: u8;
}

fn offset_of(symbol: *const u8) -> usize {
    symbol as usize - (&raw const vigil_trampoline_start) as usize
}

/// What an AP needs to reach Rust.
#[derive(Debug)]
pub struct TrampolineParams<'a> {
    /// Physical address of the PML4 (must be below 4 GiB: loaded in 32-bit mode).
    pub pml4_phys: u64,
    /// The Rust entry point; receives the AP's APIC id.
    pub entry: extern "C" fn(u64) -> !,
    /// `(apic_id, stack_top)` for every AP that should start.
    pub stacks: &'a [(u32, u64)],
}

/// Copies the trampoline to its low page, identity-maps it and fills in the
/// parameters. Returns the SIPI vector (the page number).
pub fn install(params: &TrampolineParams<'_>) -> u8 {
    let code_start = &raw const vigil_trampoline_start;
    let size = offset_of(&raw const vigil_trampoline_end);
    assert!(size <= 4096, "trampoline is {size} bytes, more than a page");
    assert!(
        params.pml4_phys < 1 << 32,
        "PML4 above 4 GiB cannot be loaded by the trampoline"
    );
    paging::identity_map_low_page(PhysAddr::new(TRAMPOLINE_PHYS));
    let dst = paging::phys_to_virt(PhysAddr::new(TRAMPOLINE_PHYS)).as_mut_ptr::<u8>();
    // SAFETY: `dst` is the bootloader's mapping of the free low page the
    // trampoline owns (no AP runs yet); the source is `size` bytes of the
    // kernel image between the two trampoline symbols.
    unsafe { core::ptr::copy_nonoverlapping(code_start, dst, size) };
    let put = |offset: usize, value: u64| {
        // SAFETY: `offset` is the offset of an 8-byte-aligned `.quad` field
        // inside the copied page.
        unsafe { dst.add(offset).cast::<u64>().write_volatile(value) };
    };
    put(offset_of(&raw const vigil_trampoline_cr3), params.pml4_phys);
    put(
        offset_of(&raw const vigil_trampoline_entry),
        params.entry as usize as u64,
    );
    let table = offset_of(&raw const vigil_trampoline_stacks);
    for &(apic_id, top) in params.stacks {
        let slot = apic_id as usize;
        assert!(
            slot < STACK_TABLE_ENTRIES,
            "APIC id {apic_id} beyond the trampoline's table"
        );
        put(table + slot * 8, top);
    }
    (TRAMPOLINE_PHYS >> 12) as u8
}

/// Unmaps the trampoline page (after every AP checked in).
pub fn remove() {
    paging::unmap_low_page(PhysAddr::new(TRAMPOLINE_PHYS));
}
