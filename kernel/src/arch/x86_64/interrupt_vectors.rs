//! The non-exception vectors Vigil uses, and their handlers. Handlers do the
//! least possible: count, call a registered hook (never allocating), EOI.
//! The wake IPI's handler in particular only acknowledges: the interrupted
//! idle loop does the work.

use super::{lapic, percpu};
use core::sync::atomic::Ordering;
use x86_64::structures::idt::{InterruptDescriptorTable, InterruptStackFrame};

/// The LAPIC one-shot timer.
pub const TIMER_VECTOR: u8 = 0x30;
/// The lost-wakeup probe: the watchdog core asks a halted core to check
/// itself. Below the wake vector's priority class, so a wake IPI pending at
/// the same time is delivered first.
pub const PROBE_VECTOR: u8 = 0x31;
/// The wake IPI: ends a halt, nothing more.
pub const WAKE_VECTOR: u8 = 0x40;
/// An IPI for tests (calls the registered test hook).
pub const TEST_VECTOR: u8 = 0x41;
/// LAPIC error interrupt.
pub const ERROR_VECTOR: u8 = 0xfe;
/// LAPIC spurious interrupt (no EOI).
pub const SPURIOUS_VECTOR: u8 = 0xff;

use crate::arch::irq_counts::run_test_hook;
pub use crate::arch::irq_counts::{COUNTS, MAX_CORES, set_test_hook};

/// Installs the handlers of every non-exception vector Vigil uses.
pub fn install(idt: &mut InterruptDescriptorTable) {
    idt[TIMER_VECTOR].set_handler_fn(timer);
    idt[WAKE_VECTOR].set_handler_fn(wake);
    idt[TEST_VECTOR].set_handler_fn(test);
    idt[PROBE_VECTOR].set_handler_fn(probe);
    idt[ERROR_VECTOR].set_handler_fn(error);
    idt[SPURIOUS_VECTOR].set_handler_fn(spurious);
}

extern "x86-interrupt" fn timer(_frame: InterruptStackFrame) {
    let core = percpu::current_index();
    COUNTS[core]
        .timer_last_tsc
        .store(super::tsc::now(), Ordering::Relaxed);
    COUNTS[core].timer.fetch_add(1, Ordering::Relaxed);
    lapic::eoi();
}

extern "x86-interrupt" fn wake(_frame: InterruptStackFrame) {
    COUNTS[percpu::current_index()]
        .wake
        .fetch_add(1, Ordering::Relaxed);
    lapic::eoi();
}

extern "x86-interrupt" fn probe(_frame: InterruptStackFrame) {
    COUNTS[percpu::current_index()]
        .probe
        .fetch_add(1, Ordering::Relaxed);
    lapic::eoi();
}

extern "x86-interrupt" fn test(_frame: InterruptStackFrame) {
    let core = percpu::current_index();
    COUNTS[core].test.fetch_add(1, Ordering::Relaxed);
    run_test_hook(core);
    lapic::eoi();
}

extern "x86-interrupt" fn error(_frame: InterruptStackFrame) {
    let status = lapic::error_status();
    crate::println!("LAPIC error interrupt: ESR={status:#x}");
    lapic::eoi();
}

extern "x86-interrupt" fn spurious(_frame: InterruptStackFrame) {
    COUNTS[percpu::current_index()]
        .spurious
        .fetch_add(1, Ordering::Relaxed);
}
