//! Per-core GDT and TSS. Each core gets its own TSS (the task register is
//! per core, and a TSS descriptor is marked busy when loaded, so cores cannot
//! share one) with an IST stack for double faults, so that a kernel stack
//! overflow is reported instead of escalating to a triple fault.

use alloc::boxed::Box;
use alloc::vec;
use x86_64::VirtAddr;
use x86_64::instructions::segmentation::{CS, DS, ES, SS, Segment};
use x86_64::instructions::tables::load_tss;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable, SegmentSelector};
use x86_64::structures::tss::TaskStateSegment;

/// IST slot (0-based, as the TSS array is indexed) used by the double-fault
/// handler.
pub const DOUBLE_FAULT_IST_INDEX: u16 = 0;
const DOUBLE_FAULT_STACK_BYTES: usize = 16 * 1024;

/// One core's descriptor tables, built once and loaded by that core.
#[derive(Debug)]
pub struct CoreTables {
    gdt: GlobalDescriptorTable,
    code: SegmentSelector,
    data: SegmentSelector,
    tss: SegmentSelector,
}

/// Builds a core's GDT, TSS and double-fault stack on the heap (they live for
/// the rest of the run). The bootstrap core builds every AP's tables before
/// starting them, so APs need no heap on their way in.
pub fn build() -> &'static CoreTables {
    let df_stack: &'static mut [u8] =
        Box::leak(vec![0u8; DOUBLE_FAULT_STACK_BYTES].into_boxed_slice());
    let df_stack_top = VirtAddr::from_ptr(df_stack.as_ptr_range().end);

    let mut tss = TaskStateSegment::new();
    tss.interrupt_stack_table[usize::from(DOUBLE_FAULT_IST_INDEX)] = df_stack_top;
    let tss: &'static TaskStateSegment = Box::leak(Box::new(tss));

    let mut gdt = GlobalDescriptorTable::new();
    let code = gdt.append(Descriptor::kernel_code_segment());
    let data = gdt.append(Descriptor::kernel_data_segment());
    let tss = gdt.append(Descriptor::tss_segment(tss));
    Box::leak(Box::new(CoreTables {
        gdt,
        code,
        data,
        tss,
    }))
}

/// Loads `tables` on this core. Each `CoreTables` must be loaded by exactly
/// one core (loading marks its TSS descriptor busy).
pub fn load(tables: &'static CoreTables) {
    tables.gdt.load();
    // SAFETY: the selectors index descriptors of the GDT just loaded (which
    // is 'static); the code/data descriptors are flat 64-bit kernel segments,
    // and the TSS descriptor points at a 'static TSS used by no other core.
    unsafe {
        CS::set_reg(tables.code);
        SS::set_reg(tables.data);
        DS::set_reg(tables.data);
        ES::set_reg(tables.data);
        load_tss(tables.tss);
    }
}

/// Builds and loads this core's tables (the bootstrap core, after the heap).
pub fn init_this_core() {
    load(build());
}

/// The double-fault IST stack top of this core's loaded TSS (0 if none).
pub fn double_fault_stack_top() -> u64 {
    let tr: u16;
    // SAFETY: `str` only reads the task register's selector.
    unsafe { core::arch::asm!("str {0:x}", out(reg) tr, options(nomem, nostack, preserves_flags)) };
    let index = u64::from(tr >> 3);
    if index == 0 {
        return 0;
    }
    let gdtr = x86_64::instructions::tables::sgdt();
    let base = gdtr.base.as_u64();
    // SAFETY: the GDT base and the task register's index come from the CPU;
    // a loaded TSS descriptor is 16 bytes at that index, inside the GDT that
    // `init_this_core` leaked for the rest of the run.
    let (low, high) = unsafe {
        let entry = (base + index * 8) as *const u64;
        (entry.read_volatile(), entry.add(1).read_volatile())
    };
    let tss_base =
        ((low >> 16) & 0xff_ffff) | (((low >> 56) & 0xff) << 24) | ((high & 0xffff_ffff) << 32);
    // SAFETY: `tss_base` is the address of the 'static TSS the descriptor was
    // built from.
    let tss = unsafe { &*(tss_base as *const TaskStateSegment) };
    tss.interrupt_stack_table[usize::from(DOUBLE_FAULT_IST_INDEX)].as_u64()
}
