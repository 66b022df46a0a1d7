//! The per-core interrupt counts and the test-interrupt hook, shared by
//! every architecture: each arch's handlers bump their own core's entries
//! (`interrupt_vectors`), the idle platform and the statistics read them.

use core::sync::atomic::AtomicU64;
use spin::RwLock;

/// Highest core count the kernel runs on: every per-core array (these
/// counters, the core table, the debug table the host reads) has this many
/// entries. On x86_64, above 255 cores x2APIC is needed (xAPIC ids are 8
/// bits, 0xff is the broadcast id). The host reads the debug table with the same
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

/// Runs the test-vector hook, if one is installed (from the test vector's
/// handler, with the receiving core's index).
pub fn run_test_hook(core: usize) {
    let hook = &TEST_HOOK;
    // A writer only changes hooks between tests; if one is mid-update we skip
    // the hook rather than spin inside an interrupt handler.
    if let Some(guard) = hook.try_read()
        && let Some(f) = *guard
    {
        f(core);
    }
}
