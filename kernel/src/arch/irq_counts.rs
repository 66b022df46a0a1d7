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

/// One core's interrupt counts, written by that core only (its handlers
/// bump them at every interrupt), read by anyone (statistics, the
/// watchdog, tests). A cache line of its own: packed as one array per
/// count, eight cores' counts shared each line, and every wake IPI or timer
/// tick on one core took the line from the seven others, on hardware and
/// under TCG alike (a guest's atomics are the host's, on guest memory).
#[derive(Debug)]
#[repr(align(64))]
pub struct CoreIrqCounts {
    /// Wake IPIs received.
    pub wake: AtomicU64,
    /// Timer interrupts received.
    pub timer: AtomicU64,
    /// TSC at the last timer interrupt.
    pub timer_last_tsc: AtomicU64,
    /// Test-vector IPIs received.
    pub test: AtomicU64,
    /// Lost-wakeup probes received.
    pub probe: AtomicU64,
    /// Spurious interrupts.
    pub spurious: AtomicU64,
}

impl CoreIrqCounts {
    const fn new() -> Self {
        Self {
            wake: AtomicU64::new(0),
            timer: AtomicU64::new(0),
            timer_last_tsc: AtomicU64::new(0),
            test: AtomicU64::new(0),
            probe: AtomicU64::new(0),
            spurious: AtomicU64::new(0),
        }
    }
}

// A build that packs two cores' counts into one line fails here.
const _: () = assert!(core::mem::align_of::<CoreIrqCounts>() >= 64);

/// The counters, by core index, for tests and statistics.
pub static COUNTS: [CoreIrqCounts; MAX_CORES] = [const { CoreIrqCounts::new() }; MAX_CORES];

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
