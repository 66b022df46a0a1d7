//! The shared IDT and the CPU exception handlers. Every unexpected exception
//! prints its vector, error code, faulting address (CR2 for page faults) and
//! RIP, then fails the run with the CPU-exception exit code. `#BP` is
//! reported and resumed (tests use it), and a page fault raised by an armed
//! [`fault_probe`](crate::arch::fault_probe) resumes the probe.

use super::{gdt, paging};
use crate::arch::fault_probe;
use crate::exit::{ExitCode, fail};
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Lazy;
use x86_64::VirtAddr;
use x86_64::registers::control::Cr2;
use x86_64::structures::idt::{InterruptDescriptorTable, InterruptStackFrame, PageFaultErrorCode};

static IDT: Lazy<InterruptDescriptorTable> = Lazy::new(build_idt);
static BREAKPOINTS: AtomicU64 = AtomicU64::new(0);

fn build_idt() -> InterruptDescriptorTable {
    let mut idt = InterruptDescriptorTable::new();
    idt.divide_error.set_handler_fn(divide_error);
    idt.debug.set_handler_fn(debug);
    idt.non_maskable_interrupt.set_handler_fn(nmi);
    idt.breakpoint.set_handler_fn(breakpoint_handler);
    idt.overflow.set_handler_fn(overflow);
    idt.bound_range_exceeded.set_handler_fn(bound_range);
    idt.invalid_opcode.set_handler_fn(invalid_opcode);
    idt.device_not_available
        .set_handler_fn(device_not_available);
    idt.invalid_tss.set_handler_fn(invalid_tss);
    idt.segment_not_present.set_handler_fn(segment_not_present);
    idt.stack_segment_fault.set_handler_fn(stack_segment_fault);
    idt.general_protection_fault
        .set_handler_fn(general_protection);
    idt.page_fault.set_handler_fn(page_fault);
    idt.x87_floating_point.set_handler_fn(x87_floating_point);
    idt.alignment_check.set_handler_fn(alignment_check);
    idt.machine_check.set_handler_fn(machine_check);
    idt.simd_floating_point.set_handler_fn(simd_floating_point);
    // Until the bootstrap core loads its TSS (a few steps into boot) a double
    // fault escalates to a triple fault, which the harness reports as a
    // failure, never as success.
    // SAFETY: DOUBLE_FAULT_IST_INDEX names the IST slot that every core's TSS
    // fills with its own double-fault stack (gdt::build) before it runs.
    unsafe {
        idt.double_fault
            .set_handler_fn(double_fault)
            .set_stack_index(gdt::DOUBLE_FAULT_IST_INDEX);
    }
    super::interrupt_vectors::install(&mut idt);
    idt
}

/// Loads the shared IDT on this core.
pub fn load_idt() {
    IDT.load();
}

/// Raises a breakpoint exception (`int3`), which the handler counts and
/// resumes from.
pub fn breakpoint() {
    x86_64::instructions::interrupts::int3();
}

/// How many `#BP` exceptions have been taken (all cores).
pub fn breakpoint_count() -> u64 {
    BREAKPOINTS.load(Ordering::Relaxed)
}

fn report(name: &str, vector: u8, error_code: Option<u64>, frame: &InterruptStackFrame) -> ! {
    let rip = frame.instruction_pointer.as_u64();
    match error_code {
        Some(code) => crate::emergency_println!(
            "CPU EXCEPTION {name} (vector {vector}) error_code={code:#x} rip={rip:#x} rsp={:#x}",
            frame.stack_pointer.as_u64()
        ),
        None => crate::emergency_println!(
            "CPU EXCEPTION {name} (vector {vector}) rip={rip:#x} rsp={:#x}",
            frame.stack_pointer.as_u64()
        ),
    }
    fail(ExitCode::CpuException)
}

macro_rules! fatal_handler {
    ($fn_name:ident, $name:literal, $vector:literal) => {
        extern "x86-interrupt" fn $fn_name(frame: InterruptStackFrame) {
            report($name, $vector, None, &frame)
        }
    };
    ($fn_name:ident, $name:literal, $vector:literal, error_code) => {
        extern "x86-interrupt" fn $fn_name(frame: InterruptStackFrame, error_code: u64) {
            report($name, $vector, Some(error_code), &frame)
        }
    };
}

fatal_handler!(divide_error, "#DE divide error", 0);
fatal_handler!(debug, "#DB debug", 1);
fatal_handler!(nmi, "NMI", 2);
fatal_handler!(overflow, "#OF overflow", 4);
fatal_handler!(bound_range, "#BR bound range exceeded", 5);
fatal_handler!(invalid_opcode, "#UD invalid opcode", 6);
fatal_handler!(device_not_available, "#NM device not available", 7);
fatal_handler!(invalid_tss, "#TS invalid TSS", 10, error_code);
fatal_handler!(
    segment_not_present,
    "#NP segment not present",
    11,
    error_code
);
fatal_handler!(
    stack_segment_fault,
    "#SS stack-segment fault",
    12,
    error_code
);
fatal_handler!(general_protection, "#GP general protection", 13, error_code);
fatal_handler!(x87_floating_point, "#MF x87 floating point", 16);
fatal_handler!(alignment_check, "#AC alignment check", 17, error_code);
fatal_handler!(simd_floating_point, "#XM SIMD floating point", 19);

extern "x86-interrupt" fn machine_check(frame: InterruptStackFrame) -> ! {
    report("#MC machine check", 18, None, &frame)
}

extern "x86-interrupt" fn breakpoint_handler(frame: InterruptStackFrame) {
    BREAKPOINTS.fetch_add(1, Ordering::Relaxed);
    log::info!(
        "#BP breakpoint at rip={:#x}",
        frame.instruction_pointer.as_u64()
    );
}

extern "x86-interrupt" fn page_fault(
    mut frame: InterruptStackFrame,
    error_code: PageFaultErrorCode,
) {
    let address = Cr2::read_raw();
    if let Some(resume_rip) = fault_probe::take_recovery(address, error_code.bits()) {
        // SAFETY: the probe's asm block armed `resume_rip` as a label inside
        // itself, in the code that faulted, with the same stack and registers
        // it expects there; resuming at it is a jump within that block.
        unsafe {
            frame
                .as_mut()
                .update(|f| f.instruction_pointer = VirtAddr::new(resume_rip));
        }
        return;
    }
    crate::emergency_println!(
        "PAGE FAULT at address {address:#x}{} ({error_code:?})",
        paging::describe_guard(address)
    );
    report("#PF page fault", 14, Some(error_code.bits()), &frame)
}

extern "x86-interrupt" fn double_fault(frame: InterruptStackFrame, error_code: u64) -> ! {
    // A double fault here is almost always a stack overflow: the page fault
    // on the guard page could not push its frame on the exhausted stack. CR2
    // still holds the address of that first fault.
    let address = Cr2::read_raw();
    crate::emergency_println!(
        "DOUBLE FAULT (last page-fault address {address:#x}{})",
        paging::describe_guard(address)
    );
    report("#DF double fault", 8, Some(error_code), &frame)
}
