//! The non-exception vectors Vigil uses, and their handlers. Handlers do the
//! least possible: count, call a registered hook (never allocating), EOI.
//! The wake IPI's handler in particular only acknowledges: the interrupted
//! idle loop does the work.

use super::{lapic, percpu};
use core::sync::atomic::{AtomicU64, Ordering};
use spin::RwLock;
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

/// Highest core count the kernel runs on: every per-core array (these
/// counters, the core table, the debug table the host reads) has this many
/// entries. Above 255 cores x2APIC is needed (xAPIC ids are 8 bits, 0xff
/// is the broadcast id). The host reads the debug table with the same
/// size, so the number is the protocol crate's.
pub const MAX_CORES: usize = vigil_proto::debug_table::MAX_CORES;

/// Per-core interrupt counts. Each core writes only its own entries.
#[derive(Debug)]
pub struct IrqCounts {
    /// Wake IPIs received.
    pub wake: [AtomicU64; MAX_CORES],
    /// Timer interrupts received.
    pub timer: [AtomicU64; MAX_CORES],
    /// TSC at the last timer interrupt.
    pub timer_last_tsc: [AtomicU64; MAX_CORES],
    /// Test-vector IPIs received.
    pub test: [AtomicU64; MAX_CORES],
    /// Lost-wakeup probes received.
    pub probe: [AtomicU64; MAX_CORES],
    /// Spurious interrupts.
    pub spurious: [AtomicU64; MAX_CORES],
}

/// The counters, for tests and statistics.
pub static COUNTS: IrqCounts = IrqCounts {
    wake: [const { AtomicU64::new(0) }; MAX_CORES],
    timer: [const { AtomicU64::new(0) }; MAX_CORES],
    timer_last_tsc: [const { AtomicU64::new(0) }; MAX_CORES],
    test: [const { AtomicU64::new(0) }; MAX_CORES],
    probe: [const { AtomicU64::new(0) }; MAX_CORES],
    spurious: [const { AtomicU64::new(0) }; MAX_CORES],
};

/// Hook run (with the receiving core's index) by the test-vector handler.
static TEST_HOOK: RwLock<Option<fn(usize)>> = RwLock::new(None);

/// Installs (or clears) the test-vector hook.
pub fn set_test_hook(hook: Option<fn(usize)>) {
    *TEST_HOOK.write() = hook;
}

fn run_hook(hook: &RwLock<Option<fn(usize)>>, core: usize) {
    // A writer only changes hooks between tests; if one is mid-update we skip
    // the hook rather than spin inside an interrupt handler.
    if let Some(guard) = hook.try_read()
        && let Some(f) = *guard
    {
        f(core);
    }
}

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
    COUNTS.timer_last_tsc[core].store(super::tsc::now(), Ordering::Relaxed);
    COUNTS.timer[core].fetch_add(1, Ordering::Relaxed);
    lapic::eoi();
}

extern "x86-interrupt" fn wake(_frame: InterruptStackFrame) {
    COUNTS.wake[percpu::current_index()].fetch_add(1, Ordering::Relaxed);
    lapic::eoi();
}

extern "x86-interrupt" fn probe(_frame: InterruptStackFrame) {
    COUNTS.probe[percpu::current_index()].fetch_add(1, Ordering::Relaxed);
    lapic::eoi();
}

extern "x86-interrupt" fn test(_frame: InterruptStackFrame) {
    let core = percpu::current_index();
    COUNTS.test[core].fetch_add(1, Ordering::Relaxed);
    run_hook(&TEST_HOOK, core);
    lapic::eoi();
}

extern "x86-interrupt" fn error(_frame: InterruptStackFrame) {
    let status = lapic::error_status();
    crate::println!("LAPIC error interrupt: ESR={status:#x}");
    lapic::eoi();
}

extern "x86-interrupt" fn spurious(_frame: InterruptStackFrame) {
    COUNTS.spurious[percpu::current_index()].fetch_add(1, Ordering::Relaxed);
}
