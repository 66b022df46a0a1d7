//! The AP start-up trampoline: real mode -> protected mode -> long mode, on
//! the kernel's own page tables, then a call into Rust on the core's own
//! stack. Assembled into the kernel image as data and copied to the fixed low
//! page [`TRAMPOLINE_PHYS`] (the bootloader leaves memory below 1 MiB free and
//! unmapped; Vigil identity-maps this page while APs use it).
//!
//! Each AP finds its stack by its APIC id: the trampoline reads the 32-bit
//! x2APIC id from CPUID leaf 0xB (the 8-bit initial id of CPUID leaf 1 when
//! leaf 0xB is absent), looks it up in a table of up to
//! [`MAX_TRAMPOLINE_CORES`] ids inside the page and takes the stack at the
//! same position; a CPU whose id is not in the table (beyond the compiled
//! maximum) parks with interrupts off and never reaches Rust.
//!
//! Leaf 1 alone is not enough: beyond 255 ids it has no room, and QEMU 10.0
//! with 256 or more logical processors per package ORs the count (256) into
//! CPUID.1:EBX[23:16], which carries into bit 24, the initial APIC id's low
//! bit, so CPUs 2 and 3 both read 3 (measured: at `-smp 256` pairs of APs
//! took the same stack and GDT and the second one's `ltr` faulted on a busy
//! TSS, a triple fault).

use super::paging;
use core::arch::global_asm;
use x86_64::PhysAddr;

/// Physical (and, while mapped, virtual) address of the trampoline page.
/// SIPI vector = page number = 0x08.
pub const TRAMPOLINE_PHYS: u64 = 0x8000;
/// Entries in the trampoline's APIC-id and stack tables.
pub const MAX_TRAMPOLINE_CORES: usize = 256;
const _: () = assert!(MAX_TRAMPOLINE_CORES >= super::interrupt_vectors::MAX_CORES);

// The addresses below are absolute (`TRAMP + offset`, data at fixed offsets
// placed with `.org`, which fails the build if the code outgrows its room):
// the code only ever runs at TRAMPOLINE_PHYS. EFER.NXE must be set before
// paging is enabled because the bootloader's page tables use the NX bit;
// CR0.WP matches the bootstrap core's write protection. Page layout: code
// from 0, GDT 0x300, GDTR 0x320, CR3 0x330, entry 0x338, core count 0x340,
// APIC ids (u32) 0x400..0x800, stack tops (u64) 0x800..0x1000.
global_asm!(
    r#"
.section .rodata.vigil_trampoline, "a"
.balign 4096
.set TRAMP, 0x8000
.set GDT_OFFSET, 0x300
.set GDTR_OFFSET, 0x320
.set CR3_OFFSET, 0x330
.set ENTRY_OFFSET, 0x338
.set COUNT_OFFSET, 0x340
.set IDS_OFFSET, 0x400
.set STACKS_OFFSET, 0x800
.global vigil_trampoline_start
.global vigil_trampoline_end
.global vigil_trampoline_cr3
.global vigil_trampoline_entry
.global vigil_trampoline_count
.global vigil_trampoline_ids
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
    xor eax, eax
    cpuid
    cmp eax, 0xb
    jb 6f
    mov eax, 0xb
    xor ecx, ecx
    cpuid
    test ebx, ebx
    jz 6f
    mov ebx, edx
    jmp 7f
6:
    mov eax, 1
    cpuid
    shr ebx, 24
7:
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
    mov ecx, dword ptr [TRAMP + COUNT_OFFSET]
    xor eax, eax
8:
    cmp eax, ecx
    jae 5f
    cmp ebx, dword ptr [rax * 4 + TRAMP + IDS_OFFSET]
    je 9f
    inc eax
    jmp 8b
9:
    mov rsp, qword ptr [rax * 8 + TRAMP + STACKS_OFFSET]
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
vigil_trampoline_count:
    .quad 0
.org IDS_OFFSET
vigil_trampoline_ids:
    .fill 256, 4, 0
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
    static vigil_trampoline_count: u8;
    static vigil_trampoline_ids: u8;
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
    assert!(
        params.stacks.len() <= MAX_TRAMPOLINE_CORES,
        "{} APs, more than the trampoline's table of {MAX_TRAMPOLINE_CORES}",
        params.stacks.len()
    );
    let ids = offset_of(&raw const vigil_trampoline_ids);
    let stacks = offset_of(&raw const vigil_trampoline_stacks);
    for (slot, &(apic_id, top)) in params.stacks.iter().enumerate() {
        // SAFETY: `slot` < MAX_TRAMPOLINE_CORES (asserted above), so the u32
        // at `ids + 4 * slot` lies inside the copied id table.
        unsafe {
            dst.add(ids + slot * 4)
                .cast::<u32>()
                .write_volatile(apic_id)
        };
        put(stacks + slot * 8, top);
    }
    put(
        offset_of(&raw const vigil_trampoline_count),
        params.stacks.len() as u64,
    );
    (TRAMPOLINE_PHYS >> 12) as u8
}

/// Unmaps the trampoline page (after every AP checked in).
pub fn remove() {
    paging::unmap_low_page(PhysAddr::new(TRAMPOLINE_PHYS));
}
