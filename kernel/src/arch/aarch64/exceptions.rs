//! The exception vector table (`VBAR_EL1`, shared by every core) and its
//! handlers. Every unexpected exception prints its class, syndrome,
//! faulting address and return address, then fails the run with the
//! CPU-exception exit code. `brk` is reported and resumed (tests use it),
//! and a data abort raised by an armed [`fault_probe`](crate::arch::fault_probe)
//! resumes the probe. IRQs go to `interrupt_vectors::handle_irq`.
//!
//! Kernel code runs on `SP_EL0`; every exception is taken on this core's
//! `SP_EL1` exception stack (see `entry.rs`), so a stack overflow into a
//! guard page is reported like any other fault.

use super::interrupt_vectors;
use super::sysreg::read_sysreg;
use crate::arch::fault_probe;
use crate::arch::guard_pages;
use crate::exit::{ExitCode, fail};
use core::arch::global_asm;
use core::sync::atomic::{AtomicU64, Ordering};

static BREAKPOINTS: AtomicU64 = AtomicU64::new(0);

/// The registers an exception saves (`vigil_exception_common` below).
#[derive(Debug)]
#[repr(C)]
pub struct Frame {
    /// x0-x30.
    pub x: [u64; 31],
    /// ELR_EL1: where the exception returns to.
    pub elr: u64,
    /// SPSR_EL1: the interrupted PSTATE.
    pub spsr: u64,
    padding: u64,
}

const _: () = assert!(core::mem::size_of::<Frame>() == 272);

// Sixteen 128-byte entries: (current EL with SP_EL0, current EL with
// SP_ELx, lower EL AArch64, lower EL AArch32) x (synchronous, IRQ, FIQ,
// SError). Each saves x0-x1, puts its number in x0 and branches to the
// common path, which saves the rest, calls `vigil_exception` and returns
// with `eret`.
global_asm!(
    r#"
.macro VECTOR kind
    .balign 128
    sub sp, sp, #272
    stp x0, x1, [sp, #0]
    mov x0, #\kind
    b vigil_exception_common
.endm

.section .text.vigil_vectors, "ax"
.balign 2048
.global vigil_exception_vectors
vigil_exception_vectors:
    VECTOR 0
    VECTOR 1
    VECTOR 2
    VECTOR 3
    VECTOR 4
    VECTOR 5
    VECTOR 6
    VECTOR 7
    VECTOR 8
    VECTOR 9
    VECTOR 10
    VECTOR 11
    VECTOR 12
    VECTOR 13
    VECTOR 14
    VECTOR 15

vigil_exception_common:
    stp x2, x3, [sp, #16]
    stp x4, x5, [sp, #32]
    stp x6, x7, [sp, #48]
    stp x8, x9, [sp, #64]
    stp x10, x11, [sp, #80]
    stp x12, x13, [sp, #96]
    stp x14, x15, [sp, #112]
    stp x16, x17, [sp, #128]
    stp x18, x19, [sp, #144]
    stp x20, x21, [sp, #160]
    stp x22, x23, [sp, #176]
    stp x24, x25, [sp, #192]
    stp x26, x27, [sp, #208]
    stp x28, x29, [sp, #224]
    mrs x9, elr_el1
    mrs x10, spsr_el1
    stp x30, x9, [sp, #240]
    str x10, [sp, #256]
    mov x1, x0
    mov x0, sp
    bl vigil_exception
    ldp x30, x9, [sp, #240]
    ldr x10, [sp, #256]
    msr elr_el1, x9
    msr spsr_el1, x10
    ldp x0, x1, [sp, #0]
    ldp x2, x3, [sp, #16]
    ldp x4, x5, [sp, #32]
    ldp x6, x7, [sp, #48]
    ldp x8, x9, [sp, #64]
    ldp x10, x11, [sp, #80]
    ldp x12, x13, [sp, #96]
    ldp x14, x15, [sp, #112]
    ldp x16, x17, [sp, #128]
    ldp x18, x19, [sp, #144]
    ldp x20, x21, [sp, #160]
    ldp x22, x23, [sp, #176]
    ldp x24, x25, [sp, #192]
    ldp x26, x27, [sp, #208]
    ldp x28, x29, [sp, #224]
    add sp, sp, #272
    eret
.text
"#
);

/// Exception classes (ESR_EL1.EC) handled by name.
const EC_DATA_ABORT_SAME_EL: u64 = 0x25;
const EC_INSTRUCTION_ABORT_SAME_EL: u64 = 0x21;
const EC_BRK: u64 = 0x3c;

/// Raises a breakpoint exception (`brk #0`), which the handler counts and
/// resumes from.
pub fn breakpoint() {
    // SAFETY: `brk` traps to the handler below, which resumes after it.
    unsafe { core::arch::asm!("brk #0", options(nostack)) };
}

/// How many `brk` exceptions have been taken (all cores).
pub fn breakpoint_count() -> u64 {
    BREAKPOINTS.load(Ordering::Relaxed)
}

fn kind_name(kind: u64) -> &'static str {
    match kind % 4 {
        0 => "synchronous",
        1 => "IRQ",
        2 => "FIQ",
        _ => "SError",
    }
}

fn report(what: &str, kind: u64, frame: &Frame) -> ! {
    let esr = read_sysreg!("esr_el1");
    let far = read_sysreg!("far_el1");
    let sp_el0 = read_sysreg!("sp_el0");
    crate::emergency_println!(
        "CPU EXCEPTION {what} ({} from {}) esr={esr:#x} (class {:#x}) far={far:#x} elr={:#x} sp={sp_el0:#x}",
        kind_name(kind),
        match kind / 4 {
            0 => "EL1 on SP_EL0",
            1 => "EL1 on SP_EL1 (an exception handler)",
            _ => "a lower EL",
        },
        esr >> 26,
        frame.elr
    );
    fail(ExitCode::CpuException)
}

/// Entered from `vigil_exception_common` with the saved registers and the
/// vector's number (0-15).
#[unsafe(no_mangle)]
extern "C" fn vigil_exception(frame: &mut Frame, kind: u64) {
    if super::power::exiting() && kind % 4 == 0 {
        // The exit's semihosting call trapped (QEMU without
        // `-semihosting`): the verdict line is out; power off.
        super::psci::system_off();
        super::halt::halt_forever()
    }
    match kind {
        // IRQ while running kernel code (the halt), or inside a handler.
        1 | 5 => interrupt_vectors::handle_irq(),
        0 | 4 => synchronous(frame, kind),
        _ => report("unexpected vector", kind, frame),
    }
}

fn synchronous(frame: &mut Frame, kind: u64) {
    let esr = read_sysreg!("esr_el1");
    let class = esr >> 26;
    match class {
        EC_BRK => {
            BREAKPOINTS.fetch_add(1, Ordering::Relaxed);
            log::info!("brk breakpoint at elr={:#x}", frame.elr);
            frame.elr += 4;
        }
        EC_DATA_ABORT_SAME_EL => {
            let far = read_sysreg!("far_el1");
            if let Some(resume) = fault_probe::take_recovery(far, esr) {
                // The probe's asm armed `resume` as a label inside itself,
                // in the code that faulted, expecting the same registers.
                frame.elr = resume;
                return;
            }
            crate::emergency_println!(
                "PAGE FAULT at address {far:#x}{} (esr {esr:#x})",
                guard_pages::describe_guard(far)
            );
            report("data abort", kind, frame)
        }
        EC_INSTRUCTION_ABORT_SAME_EL => report("instruction abort", kind, frame),
        _ => report("unexpected synchronous exception", kind, frame),
    }
}
