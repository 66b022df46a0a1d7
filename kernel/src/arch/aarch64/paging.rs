//! Translation tables (4 KiB granule, 48-bit addresses, `TTBR0_EL1` only)
//! and the kernel's stacks with guard pages.
//!
//! The kernel runs identity-mapped: virtual = physical for RAM and devices,
//! so the device tree's addresses, the frame allocator's frames and the
//! page tables themselves need no translation. Built once on the bootstrap
//! core with the MMU off ([`build_identity_map`]), then turned on
//! ([`enable`]); every other core loads the same registers in its entry
//! code (`entry.rs`) before it runs Rust.
//!
//! - RAM: Normal memory, write-back cacheable, inner shareable. The
//!   kernel's atomics need it: load/store-exclusive (and the LSE atomics)
//!   are only architecturally guaranteed on Normal, shareable memory, and
//!   the global monitor that makes a compare-exchange atomic between cores
//!   only tracks shareable memory.
//! - Devices below 1 GiB (GIC, PL011, fw_cfg): Device-nGnRE, never
//!   executable, in 2 MiB blocks; the first 2 MiB (the flash at address
//!   0) are left unmapped so that a null pointer faults.
//! - The GIC's second redistributor region (above 123 CPUs, at 256 GiB on
//!   `virt`): Device-nGnRE, 1 GiB blocks.
//! - Stacks: in their own area at 512 GiB, 4 KiB pages, each with an
//!   unmapped guard page below it ([`map_stack`]).

use super::devicetree::Machine;
use super::sysreg::{isb, read_sysreg, write_sysreg};
use crate::arch::guard_pages;
pub use crate::arch::guard_pages::{GuardOwner, describe_guard};
use crate::memory::frames::{FRAME_BYTES, FRAMES};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Mutex;

const ENTRIES: usize = 512;
const VALID: u64 = 1 << 0;
/// Table descriptor (levels 0-2) or page descriptor (level 3).
const TABLE_OR_PAGE: u64 = 1 << 1;
const ATTR_DEVICE: u64 = 1 << 2;
const ATTR_NORMAL: u64 = 2 << 2;
const INNER_SHAREABLE: u64 = 0b11 << 8;
const ACCESS_FLAG: u64 = 1 << 10;
const PRIVILEGED_EXECUTE_NEVER: u64 = 1 << 53;
const EXECUTE_NEVER: u64 = 1 << 54;
const ADDRESS_MASK: u64 = 0x0000_ffff_ffff_f000;

/// Normal RAM, read-write at EL1, executable at EL1 (the kernel's image
/// is in it; `EXECUTE_NEVER` is UXN, for EL0, which never runs).
const RAM_BLOCK: u64 = VALID | ATTR_NORMAL | INNER_SHAREABLE | ACCESS_FLAG | EXECUTE_NEVER;
/// Device registers: never executable.
const DEVICE_BLOCK: u64 =
    VALID | ATTR_DEVICE | ACCESS_FLAG | PRIVILEGED_EXECUTE_NEVER | EXECUTE_NEVER;
/// A stack page: Normal, never executable.
const STACK_PAGE: u64 = VALID
    | TABLE_OR_PAGE
    | ATTR_NORMAL
    | INNER_SHAREABLE
    | ACCESS_FLAG
    | PRIVILEGED_EXECUTE_NEVER
    | EXECUTE_NEVER;

/// MAIR_EL1: attribute 0 Device-nGnRnE (0x00), 1 Device-nGnRE (0x04), 2
/// Normal write-back read/write-allocate, inner and outer (0xff).
const MAIR: u64 = (0x04 << 8) | (0xff << 16);

const GIB: u64 = 1 << 30;
const MIB2: u64 = 1 << 21;
/// Where the stacks' area starts (level-0 entry 1).
const STACK_AREA: u64 = 512 * GIB;
const STACK_AREA_END: u64 = 1024 * GIB;

#[repr(C, align(4096))]
struct Table(UnsafeCell<[u64; ENTRIES]>);

// SAFETY: the static tables are written only by the bootstrap core before
// the MMU is on and before any other core runs (`build_identity_map`), and
// afterwards only under the `AREA` lock (`map_page`).
unsafe impl Sync for Table {}

impl Table {
    const fn new() -> Self {
        Self(UnsafeCell::new([0; ENTRIES]))
    }

    fn address(&self) -> u64 {
        self.0.get() as u64
    }
}

static LEVEL0: Table = Table::new();
static LEVEL1_LOW: Table = Table::new();
static LEVEL2_DEVICES: Table = Table::new();

/// The registers every core loads to turn its MMU on (the bootstrap core
/// in [`enable`], the others in `entry.rs` from their `ApBoot`).
#[derive(Debug, Clone, Copy)]
pub struct MmuRegisters {
    /// MAIR_EL1.
    pub mair: u64,
    /// TCR_EL1.
    pub tcr: u64,
    /// TTBR0_EL1.
    pub ttbr0: u64,
    /// SCTLR_EL1 with the MMU and caches on.
    pub sctlr: u64,
}

static REGISTERS: Mutex<Option<MmuRegisters>> = Mutex::new(None);

/// Writes entry `index` of the table at physical (= virtual) `table`.
///
/// # Safety
///
/// `table` must be a page table this module owns, `index` < 512, and no
/// other core may be writing it.
unsafe fn write_entry(table: u64, index: usize, value: u64) {
    // SAFETY: as the caller guarantees.
    unsafe { (table as *mut u64).add(index).write_volatile(value) };
}

/// Reads entry `index` of the table at `table` (same contract).
unsafe fn read_entry(table: u64, index: usize) -> u64 {
    // SAFETY: as the caller guarantees.
    unsafe { (table as *const u64).add(index).read_volatile() }
}

/// Builds the identity map of `machine` in the static tables. Bootstrap
/// core only, MMU off, before any other core runs.
pub fn build_identity_map(machine: &Machine) -> MmuRegisters {
    let l0 = LEVEL0.address();
    let l1 = LEVEL1_LOW.address();
    let l2 = LEVEL2_DEVICES.address();
    // SAFETY: the static tables, written by this core alone with the MMU
    // off; every index is below 512 (asserted where computed).
    unsafe {
        write_entry(l0, 0, l1 | VALID | TABLE_OR_PAGE);
        write_entry(l1, 0, l2 | VALID | TABLE_OR_PAGE);
        // Devices: 2 MiB .. 1 GiB (entry 0, the flash at 0, left out).
        for i in 1..ENTRIES {
            write_entry(l2, i, (i as u64 * MIB2) | DEVICE_BLOCK);
        }
        // RAM, in 1 GiB blocks, executable (the kernel's code is in it).
        let first = machine.ram.base / GIB;
        let last = (machine.ram.base + machine.ram.bytes).div_ceil(GIB);
        assert!(last <= 256, "RAM above 256 GiB");
        for i in first..last {
            write_entry(l1, i as usize, (i * GIB) | RAM_BLOCK);
        }
        // Redistributor regions above RAM's level-1 entries (the second
        // region of a `virt` with more than 123 CPUs).
        for region in &machine.gic_redistributors[..machine.gic_redistributor_count] {
            if region.base < GIB {
                continue;
            }
            let first = region.base / GIB;
            let last = (region.base + region.bytes).div_ceil(GIB);
            assert!(last <= 512, "GIC region above 512 GiB");
            for i in first..last {
                write_entry(l1, i as usize, (i * GIB) | DEVICE_BLOCK);
            }
        }
    }
    let pa_range = read_sysreg!("id_aa64mmfr0_el1") & 0xf;
    let tcr = 16 // T0SZ: 48-bit addresses
        | (0b01 << 8) // IRGN0: write-back, write-allocate
        | (0b01 << 10) // ORGN0
        | (0b11 << 12) // SH0: inner shareable
        // TG0 (bits 14-15) 0: 4 KiB granule
        | (1 << 23) // EPD1: no TTBR1 walks
        | (0b10 << 30) // TG1: 4 KiB (unused)
        | (pa_range.min(0b101) << 32); // IPS: the CPU's physical range
    let sctlr = (read_sysreg!("sctlr_el1")
        | (1 << 0) // M: MMU on
        | (1 << 2) // C: data caches
        | (1 << 12)) // I: instruction cache
        & !(1 << 1) // A: no alignment faults (Normal memory)
        & !(1 << 19); // WXN: the RAM block is both writable and executable
    MmuRegisters {
        mair: MAIR,
        tcr,
        ttbr0: l0,
        sctlr,
    }
}

/// Keeps the registers for the other cores' start (after the MMU is on:
/// the lock's atomics need Normal memory).
pub fn keep_registers(registers: MmuRegisters) {
    *REGISTERS.lock() = Some(registers);
}

/// The registers [`build_identity_map`] computed.
pub fn registers() -> MmuRegisters {
    REGISTERS
        .lock()
        .expect("paging::build_identity_map not called")
}

/// Turns this core's MMU on with `registers` (the bootstrap core; the
/// others do the same in `entry.rs`).
pub fn enable(registers: &MmuRegisters) {
    write_sysreg!("mair_el1", registers.mair);
    write_sysreg!("tcr_el1", registers.tcr);
    write_sysreg!("ttbr0_el1", registers.ttbr0);
    isb();
    // SAFETY: invalidates this core's TLB before translation starts (no
    // stale entry from before reset may be used); no memory effect.
    unsafe { core::arch::asm!("tlbi vmalle1", "dsb nsh", "isb", options(nostack)) };
    write_sysreg!("sctlr_el1", registers.sctlr);
    // The instructions after the SCTLR write are fetched with the MMU on:
    // identity-mapped, so the same addresses.
    isb();
}

/// A virtual address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VirtAddr(u64);

impl VirtAddr {
    /// The address as a number.
    pub fn as_u64(self) -> u64 {
        self.0
    }

    /// The address as a pointer.
    pub fn as_ptr<T>(self) -> *const T {
        self.0 as *const T
    }
}

/// A stack mapped by [`map_stack`]: `[bottom, top)` is mapped, the page
/// below `bottom` is not.
#[derive(Debug, Clone, Copy)]
pub struct MappedStack {
    /// Lowest mapped address.
    pub bottom: VirtAddr,
    /// One past the highest mapped address (the initial stack pointer).
    pub top: VirtAddr,
    /// Start of the unmapped guard page.
    pub guard: VirtAddr,
}

/// Next free address of the stacks' area.
static AREA: Mutex<u64> = Mutex::new(STACK_AREA);
static TABLE_FRAMES: AtomicU64 = AtomicU64::new(0);

/// A pointer to physical address `phys` (identity-mapped, Normal memory).
pub fn phys_to_ptr(phys: u64) -> *mut u8 {
    phys as *mut u8
}

fn new_table() -> u64 {
    let frame = FRAMES
        .lock()
        .allocate_contiguous(FRAME_BYTES)
        .expect("out of physical memory for a page table");
    TABLE_FRAMES.fetch_add(1, Ordering::Relaxed);
    // SAFETY: a fresh frame of RAM (identity-mapped) handed out once.
    unsafe { core::ptr::write_bytes(frame as *mut u8, 0, FRAME_BYTES as usize) };
    frame
}

/// Maps the page at `virt` to the frame at `phys` (the area lock held).
fn map_page(virt: u64, phys: u64, _area: &mut u64) {
    let index = |level: u32| ((virt >> (39 - 9 * level)) & 0x1ff) as usize;
    let mut table = LEVEL0.address();
    for level in 0..3 {
        // SAFETY: `table` is LEVEL0 or a table this function created; the
        // area lock serialises every writer of the stacks' tables.
        let entry = unsafe { read_entry(table, index(level)) };
        table = if entry & VALID != 0 {
            entry & ADDRESS_MASK
        } else {
            let next = new_table();
            // SAFETY: as above.
            unsafe { write_entry(table, index(level), next | VALID | TABLE_OR_PAGE) };
            next
        };
    }
    // SAFETY: as above; the page was never mapped (the area only grows).
    unsafe { write_entry(table, index(3), phys | STACK_PAGE) };
}

/// Maps a fresh stack of `bytes` (rounded to pages) with an unmapped guard
/// page below it, and records the guard as protecting `owner`.
pub fn map_stack(bytes: u64, owner: GuardOwner) -> MappedStack {
    let pages = bytes.div_ceil(FRAME_BYTES);
    let mut area = AREA.lock();
    let guard = *area;
    let bottom = guard + FRAME_BYTES;
    let top = bottom + pages * FRAME_BYTES;
    assert!(top <= STACK_AREA_END, "kernel stack area exhausted");
    *area = top;
    for i in 0..pages {
        let frame = FRAMES
            .lock()
            .allocate_contiguous(FRAME_BYTES)
            .expect("out of physical memory for a stack");
        map_page(bottom + i * FRAME_BYTES, frame, &mut area);
    }
    // `dsb ishst`: the new entries are visible to every core's table walker
    // before the stack's address is handed to anyone (a new mapping, from
    // invalid: no TLB entry to invalidate); `isb` for this core's own use.
    // SAFETY: barriers only.
    unsafe { core::arch::asm!("dsb ishst", "isb", options(nostack)) };
    drop(area);
    guard_pages::register(guard, owner);
    MappedStack {
        bottom: VirtAddr(bottom),
        top: VirtAddr(top),
        guard: VirtAddr(guard),
    }
}

/// What this core's MMU makes of a virtual address (`AT S1E1R`, then
/// `PAR_EL1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Translation {
    /// The physical address.
    pub phys: u64,
    /// The memory attributes, as MAIR encodes them (0xff: Normal
    /// write-back; 0x04: Device-nGnRE).
    pub attributes: u8,
    /// The shareability (0b11: inner shareable).
    pub shareability: u8,
}

/// Translates `virt` for a read at EL1; `None` if the translation faults.
pub fn translate(virt: u64) -> Option<Translation> {
    let par: u64;
    // SAFETY: the address translation instruction only writes PAR_EL1; the
    // `isb` makes the result readable. No memory is accessed.
    unsafe {
        core::arch::asm!(
            "at s1e1r, {virt}",
            "isb",
            "mrs {par}, par_el1",
            virt = in(reg) virt,
            par = out(reg) par,
            options(nostack, preserves_flags)
        )
    };
    (par & 1 == 0).then_some(Translation {
        phys: (par & ADDRESS_MASK) | (virt & 0xfff),
        attributes: (par >> 56) as u8,
        shareability: ((par >> 7) & 0b11) as u8,
    })
}
