//! The kernel's stealable work: one [`Stealable`] pool of chunks any core
//! may run (`pool=steal` fork-join rounds publish into it), the search wake
//! (a ticket through the chosen core's inbox, so the pinned protocol and its
//! lost-wakeup detector carry it), and the strand watch the watchdog core
//! runs on its ticks.
//!
//! Chunks run in the idle loop, on the core's idle stack, with interrupts
//! disabled like everything else outside the halt: a chunk is a plain
//! function call that never blocks (it is a slice of a fork-join round).

use super::core_sched;
use super::idle_hooks::KernelSearchWakeHooks;
use super::inbound::Inbound;
use crate::arch::idle_platform::X86Platform;
use crate::arch::percpu;
use crate::exit::{ExitCode, exit};
use crate::println;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use spin::{Mutex, Once};
use vigil_wake::{Searcher, State, StealSnapshot, Stealable, StrandWatch};

/// A unit of stealable work: index `index` of a batch's job.
#[derive(Clone)]
pub struct Chunk {
    /// What runs it.
    pub batch: Arc<dyn ChunkBatch>,
    /// Which part.
    pub index: usize,
}

impl core::fmt::Debug for Chunk {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Chunk").field("index", &self.index).finish()
    }
}

/// A batch of chunks published together (a fork-join round).
pub trait ChunkBatch: Send + Sync {
    /// Runs chunk `index` on core `core`.
    fn run_chunk(&self, index: usize, core: usize);
}

impl Chunk {
    /// Runs it on this core.
    pub fn run(self) {
        self.batch.run_chunk(self.index, percpu::current_index());
    }
}

static POOL: Once<Stealable<Chunk>> = Once::new();
/// Whether the idle loops look for stealable work (`pool=steal`): with
/// `pool=pinned` nothing is ever published, and the idle loops skip the
/// pool's lock altogether.
static ENABLED: AtomicBool = AtomicBool::new(false);
/// Chunks run from the idle loop (by any core but a pool's caller).
static RUN_BY_IDLE_LOOPS: AtomicU64 = AtomicU64::new(0);

/// Creates the pool for `cores` cores (once, at boot, before any AP runs).
pub fn init(cores: usize, enabled: bool) {
    POOL.call_once(|| Stealable::new(cores));
    // Relaxed: set before the APs start (their start-up orders it).
    ENABLED.store(enabled, Ordering::Relaxed);
}

/// Whether stealable work is in use.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The pool.
pub fn pool() -> &'static Stealable<Chunk> {
    POOL.get().expect("stealable pool not initialised")
}

/// Sends core `target` a search wake from this core: a ticket pushed into
/// its inbox through the pinned protocol (an IPI if it is halted).
pub fn search_wake(target: usize) {
    let me = percpu::current_index();
    crate::chaos::delay(crate::chaos::Point::BeforeSearchWake);
    let hooks = KernelSearchWakeHooks::new(target);
    let _outcome = vigil_wake::wake_core(
        core_sched::wakes(),
        target,
        Inbound::Search,
        &X86Platform::of_core(me),
        &hooks,
    );
}

/// `fault=stranded-steal`: the core that must skip its next look at the
/// pool (`usize::MAX`: none).
static SKIP_LOOK: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Fault injection: core `core` skips its next look at the pool.
pub fn skip_next_look(core: usize) {
    SKIP_LOOK.store(core, Ordering::Relaxed);
}

/// Each AP's searcher, registered idle in the pool by the bootstrap core
/// before the APs start ([`register_aps_idle`]), taken by the AP's idle
/// loop ([`searcher_for`]).
static PREREGISTERED: [Mutex<Option<Searcher>>; crate::smp::cores::MAX_CORES] =
    [const { Mutex::new(None) }; crate::smp::cores::MAX_CORES];

/// Registers cores `1..cores` idle in the pool on their behalf, from the
/// bootstrap core before they start (nothing is published yet, so each
/// look finds the queue empty and registers the core idle). Without it
/// every AP's first look at the pool took the pool's ticket lock at the
/// same moment: at 256 vCPUs on 2 host cores that convoy (each waiter
/// spinning until its ticket comes up, the next ticket's vCPU often not
/// running) kept 200 and more vCPUs spinning for 10-25 s after the boot
/// line in some boots (measured: `fault=hang` at `-smp 256`, the host's
/// stuck-core examination found them in `Stealable::take` under
/// `TicketMutex::lock`). A registered core's first look then takes the
/// lock-free fast path; a publisher that chooses it meanwhile pushes a
/// search wake into its inbox, which it drains before it looks.
pub fn register_aps_idle(cores: usize) {
    if !enabled() {
        return;
    }
    for (core, slot) in PREREGISTERED.iter().enumerate().take(cores).skip(1) {
        let mut searcher = Searcher::new(core);
        let taken = pool().take(&mut searcher, search_wake);
        assert!(
            taken.is_none(),
            "stealable work published before the APs started"
        );
        *slot.lock() = Some(searcher);
    }
}

/// Core `me`'s searcher for its idle loop: the one registered idle for it
/// before it started, else a new one.
pub fn searcher_for(me: usize) -> Searcher {
    PREREGISTERED[me]
        .lock()
        .take()
        .unwrap_or_else(|| Searcher::new(me))
}

/// The idle loop of a core with nothing pinned to run: the next chunk, if
/// any (`None`: the core is registered idle and goes to the halt path).
pub fn take(searcher: &mut Searcher) -> Option<Chunk> {
    if !enabled() {
        return None;
    }
    if SKIP_LOOK.load(Ordering::Relaxed) == searcher.core()
        && SKIP_LOOK
            .compare_exchange(
                searcher.core(),
                usize::MAX,
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok()
    {
        return None;
    }
    let chunk = pool().take(searcher, search_wake)?;
    RUN_BY_IDLE_LOOPS.fetch_add(1, Ordering::Relaxed);
    Some(chunk)
}

/// The idle loop is about to run pinned work.
pub fn before_pinned_work(searcher: &mut Searcher) {
    if enabled() {
        pool().before_pinned_work(searcher, search_wake);
    }
}

/// The strand watch's memory between the watchdog core's ticks.
static WATCH: Mutex<StrandWatch> = Mutex::new(StrandWatch::new());
static REPORTED: AtomicBool = AtomicBool::new(false);

/// Called by the watchdog core on each scan tick (it is halted itself):
/// stealable work queued with every core halted, twice in a row with no
/// item published or taken in between, is stranded. Prints a state dump
/// and ends the run failed.
pub fn check_stranded(me: usize) {
    if !enabled() {
        return;
    }
    let all_halted = core_sched::wakes()
        .iter()
        .all(|core| core.state() == State::Halted);
    let counts = pool().snapshot();
    let Some(mut watch) = WATCH.try_lock() else {
        return;
    };
    let Some(stranded) = watch.look(counts, all_halted) else {
        return;
    };
    drop(watch);
    if REPORTED.swap(true, Ordering::Relaxed) {
        return;
    }
    println!(
        "STRANDED STEALABLE WORK: {} chunk(s) queued with every core halted, on two watchdog ticks in a row with nothing taken in between; found by core {me}. Pool: {}. State dump:",
        stranded.counts.queued,
        describe(stranded.counts)
    );
    core_sched::dump_cores();
    super::fork_join::dump_stuck_round();
    println!("vigil: FAILED: stealable work stranded (every core halted)");
    exit(ExitCode::CheckFailed)
}

/// The pool's counts, for dumps.
pub fn describe(counts: StealSnapshot) -> alloc::string::String {
    alloc::format!(
        "queued {}, searching {}, idle cores {}, published {}, taken {}, search wakes {}, run by idle loops {}",
        counts.queued,
        counts.searching,
        counts.idle,
        counts.published,
        counts.taken,
        counts.search_wakes,
        RUN_BY_IDLE_LOOPS.load(Ordering::Relaxed)
    )
}
