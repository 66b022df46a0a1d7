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
use super::stats;
use crate::arch::idle_platform::CorePlatform;
use crate::arch::percpu;
use crate::arch::tsc;
use crate::exit::{ExitCode, exit};
use crate::println;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use spin::{Mutex, Once};
use vigil_proto::boot_params::{Fault, Key};
use vigil_proto::serial_line::{HELD_SEARCH_PREFIX, STRANDED_PREFIX};
use vigil_wake::{FAN_OUT, Published, Searcher, State, StealSnapshot, Stealable, StrandWatch};

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

    /// Tells the batch one of its chunks has run (a round counts down to
    /// its join here), after [`run_chunk`](Self::run_chunk); possibly
    /// later than that, see [`Chunk::run_report_later`].
    fn chunk_done(&self) {}
}

impl Chunk {
    /// Runs it on this core and reports it done.
    pub fn run(self) {
        self.batch.run_chunk(self.index, percpu::current_index());
        self.batch.chunk_done();
    }

    /// Runs it on this core; the report that it is done is left to the
    /// caller ([`DoneChunk::report`]).
    ///
    /// The idle loop reports a chunk after its next pass to the pool
    /// (`take`, or `before_pinned_work` when a task came), and before it can
    /// halt. When that pass is a look that finds the queue empty, it
    /// registers the core idle, so a round's join does not open before the
    /// core that ran its last chunk is back in the idle set: the next
    /// round's publication finds it there and, when it is the lowest idle
    /// core that has not published (the usual case: the caller published),
    /// gives it the search, a ticket and no IPI while it still polls. A
    /// report can make a task runnable on the reporting core (the round's
    /// caller, when it waits there), so the idle loop looks at its run
    /// queue again after a report before it halts. Reported straight after
    /// the chunk, the join raced the core's way back: the publication often found only
    /// halted cores and woke one with an IPI while the core back from its
    /// chunk took the work. With more vCPUs than host cores that woken
    /// vCPU was one runnable thread too many, and a round whose chunk it
    /// held waited for its next time slice (sync-heavy Laplace at 4 vCPUs
    /// on 2 host cores: 13-71 wake IPIs a run and rounds of 3.5 and 8 ms
    /// among rounds of 35-45 µs; with the report after the look, cores 2
    /// and 3 woke once in the whole run).
    pub fn run_report_later(self) -> DoneChunk {
        self.batch.run_chunk(self.index, percpu::current_index());
        DoneChunk { batch: self.batch }
    }
}

/// A chunk that has run and is not reported yet ([`Chunk::run_report_later`]).
#[must_use = "a round waits for every chunk's report"]
pub struct DoneChunk {
    batch: Arc<dyn ChunkBatch>,
}

impl DoneChunk {
    /// Reports the chunk done.
    pub fn report(self) {
        self.batch.chunk_done();
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

/// Search wakes chosen before the workload (the boot's timed rounds).
static SEARCH_WAKES_BEFORE_WORKLOAD: AtomicU64 = AtomicU64::new(0);
/// Contended acquisitions of the pool's lock before the workload.
static LOCK_CONTENDED_BEFORE_WORKLOAD: AtomicU64 = AtomicU64::new(0);
/// Ticks in the pool's calls, summed over cores, before the workload.
static POOL_CALL_TICKS_BEFORE_WORKLOAD: AtomicU64 = AtomicU64::new(0);

/// Keeps the search wakes chosen so far, the pool lock's contended
/// acquisitions and the ticks spent in the pool's calls, from the main
/// task before its workload (the `pool:` line counts the workload's own).
pub fn mark_workload_start() {
    if enabled() {
        let counts = pool().snapshot();
        SEARCH_WAKES_BEFORE_WORKLOAD.store(counts.search_wakes, Ordering::Relaxed);
        LOCK_CONTENDED_BEFORE_WORKLOAD.store(counts.lock_contended, Ordering::Relaxed);
        POOL_CALL_TICKS_BEFORE_WORKLOAD.store(pool_call_ticks(), Ordering::Relaxed);
    }
}

/// Search wakes chosen before the workload.
pub fn search_wakes_before_workload() -> u64 {
    SEARCH_WAKES_BEFORE_WORKLOAD.load(Ordering::Relaxed)
}

/// Since the workload started: the acquisitions of the pool's lock that
/// found it held, and the microseconds every core spent in the pool's
/// calls (summed over cores; each core's count is its own, read Relaxed:
/// read after the workload, when the rounds are over).
pub fn lock_cost_of_workload() -> (u64, u64) {
    let contended =
        pool().snapshot().lock_contended - LOCK_CONTENDED_BEFORE_WORKLOAD.load(Ordering::Relaxed);
    let ticks = pool_call_ticks() - POOL_CALL_TICKS_BEFORE_WORKLOAD.load(Ordering::Relaxed);
    (contended, tsc::ticks_to_us(ticks))
}

/// Ticks every core spent in the pool's calls so far.
fn pool_call_ticks() -> u64 {
    core_sched::cores()
        .iter()
        .map(|core| core.stats.pool_call_ticks.load(Ordering::Relaxed))
        .sum()
}

/// Runs `call`, one call into the pool, its search wakes collected; adds
/// the ticks it took to this core's `pool_call_ticks`, then sends the
/// wakes (so the count is the pool's: its lock's wait and its critical
/// section, not the wakes' inbox pushes and IPIs). The wakes go out in the
/// order chosen, as they would from inside the call, after its unlock.
fn timed<R>(call: impl FnOnce(&mut dyn FnMut(usize)) -> R) -> R {
    let mut chosen = [0usize; FAN_OUT];
    let mut count = 0;
    let start = tsc::now();
    let result = call(&mut |core| {
        chosen[count] = core;
        count += 1;
    });
    stats::add(
        &core_sched::this_core().stats.pool_call_ticks,
        tsc::now().saturating_sub(start),
    );
    for &core in &chosen[..count] {
        search_wake(core);
    }
    result
}

/// A take from the idle loop, timed (see [`timed`]).
fn timed_take(searcher: &mut Searcher) -> Option<Chunk> {
    timed(|wake| pool().take(searcher, wake))
}

/// A publication of a round's chunks, timed (see [`timed`]); the search
/// wakes are the caller's to send (`Published::woke`).
pub fn timed_publish(me: usize, chunks: impl IntoIterator<Item = Chunk>) -> Published {
    timed(|_| pool().publish(me, chunks, |_| {}))
}

/// A take by a running round's caller, timed (see [`timed`]).
pub fn timed_try_take() -> Option<Chunk> {
    timed(|_| pool().try_take())
}

/// The pool.
pub fn pool() -> &'static Stealable<Chunk> {
    POOL.get().expect("stealable pool not initialised")
}

/// Sends core `target` a search wake from this core: a ticket pushed into
/// its inbox through the pinned protocol (an IPI if it is halted).
pub fn search_wake(target: usize) {
    note_search_target(target);
    let me = percpu::current_index();
    crate::chaos::delay(crate::chaos::Point::BeforeSearchWake);
    let hooks = KernelSearchWakeHooks::new(target);
    let _outcome = vigil_wake::wake_core(
        core_sched::wakes(),
        target,
        Inbound::Search,
        &CorePlatform::of_core(me),
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
/// every AP's first look at the pool took the pool's lock at the same
/// moment (then a FIFO ticket lock; now test-and-set, which a descheduled
/// waiter does not hold up, but 256 cores on one lock at once still
/// contend): at 256 vCPUs on 2 host cores that convoy (each waiter
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

/// The core the pool last chose to search, plus one (0: none yet).
/// Relaxed: written after the choice (outside the pool's lock, by the
/// chooser) and read only by the held-search watch, which decides on
/// several scans in a row and so tolerates one stale read.
static SEARCH_TARGET: AtomicUsize = AtomicUsize::new(0);
/// Per core, its looks at the pool (every call of [`take`] and
/// [`before_pinned_work`] that reaches the pool). Written by that core
/// only, read by the held-search watch (Relaxed, as above).
static LOOKS: [AtomicU64; crate::smp::cores::MAX_CORES] =
    [const { AtomicU64::new(0) }; crate::smp::cores::MAX_CORES];

/// The pool chose `core` to search (its search wake is about to be sent,
/// or, under `fault=stranded-steal`, dropped).
pub fn note_search_target(core: usize) {
    SEARCH_TARGET.store(core + 1, Ordering::Relaxed);
}

fn count_look(core: usize) {
    let looks = &LOOKS[core];
    looks.store(looks.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// The address of the chosen searcher's word (core + 1, 0: none), for the
/// debug table.
pub fn search_target_address() -> u64 {
    SEARCH_TARGET.as_ptr() as u64
}

/// `fault=busy-searcher`: armed (`ARMED`), then the core that never hands
/// the search on (`usize::MAX`: off).
static BUSY_SEARCHER: AtomicUsize = AtomicUsize::new(usize::MAX);
const BUSY_SEARCHER_ARMED: usize = usize::MAX - 1;

/// Arms `fault=busy-searcher` (from the main task, after the APs started
/// and before any pinned work is handed to them): the first core other
/// than core 0 to run pinned work from then on skips
/// [`before_pinned_work`] for the rest of the run. Registered idle (every
/// AP is, from boot), it stays in the idle set while it runs pinned work
/// and keeps a search it is given: the rule before the work-conserving
/// one.
pub fn arm_busy_searcher() {
    // Relaxed: the push of the first pinned task to an AP comes after
    // this store on this core, and the AP's drain of that push (the
    // inbox's Acquire) orders it before the AP's load in
    // `is_busy_searcher`.
    BUSY_SEARCHER.store(BUSY_SEARCHER_ARMED, Ordering::Relaxed);
}

/// Whether core `me` is the `fault=busy-searcher` core (taking the fault
/// if it is still armed and `me` is not core 0).
fn is_busy_searcher(me: usize) -> bool {
    match BUSY_SEARCHER.load(Ordering::Relaxed) {
        usize::MAX => false,
        BUSY_SEARCHER_ARMED if me != 0 => {
            // Relaxed: exactly one core wins the compare-exchange; it
            // orders nothing.
            let won = BUSY_SEARCHER
                .compare_exchange(
                    BUSY_SEARCHER_ARMED,
                    me,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok();
            if won {
                println!(
                    "{}={} fired: core {me} runs pinned work still registered idle and will not hand a search on",
                    Key::Fault.name(),
                    Fault::BusySearcher.name()
                );
            }
            won
        }
        core => core == me,
    }
}

/// Whether `fault=busy-searcher` was armed and never fired (no core but
/// core 0 ran pinned work after it was armed: the run proved nothing).
pub fn busy_searcher_unfired() -> bool {
    BUSY_SEARCHER.load(Ordering::Relaxed) == BUSY_SEARCHER_ARMED
}

/// The `fault=busy-searcher` core, once the fault fired.
pub fn busy_searcher_core() -> Option<usize> {
    match BUSY_SEARCHER.load(Ordering::Relaxed) {
        usize::MAX | BUSY_SEARCHER_ARMED => None,
        core => Some(core),
    }
}

/// The idle loop of a core with nothing pinned to run: the next chunk, if
/// any (`None`: the core is registered idle and goes to the halt path).
pub fn take(searcher: &mut Searcher) -> Option<Chunk> {
    if !enabled() {
        return None;
    }
    count_look(searcher.core());
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
        pool().skip_look(searcher);
        return None;
    }
    let chunk = timed_take(searcher)?;
    RUN_BY_IDLE_LOOPS.fetch_add(1, Ordering::Relaxed);
    Some(chunk)
}

/// The idle loop is about to run pinned work.
pub fn before_pinned_work(searcher: &mut Searcher) {
    if enabled() && !is_busy_searcher(searcher.core()) {
        count_look(searcher.core());
        timed(|wake| pool().before_pinned_work(searcher, wake));
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
        "{STRANDED_PREFIX}{} chunk(s) queued with every core halted, on two watchdog ticks in a row with nothing taken in between; found by core {me}. Pool: {}. State dump:",
        stranded.counts.queued,
        describe(stranded.counts)
    );
    core_sched::dump_cores();
    super::fork_join::dump_stuck_round();
    println!("vigil: FAILED: stealable work stranded (every core halted)");
    exit(ExitCode::CheckFailed)
}

/// Scans in a row, per vCPU sharing a host core, that must find the same
/// search held, by a core that has
/// not looked at the pool and is halted or running a task, with chunks
/// queued, before the held-search watch reports. Scans, not time: a chosen
/// searcher is a core in its idle path that looks within its wake latency
/// (tens of µs), unless the host deschedules its vCPU, which under TCG on
/// 2 host cores lasts milliseconds, and on a loaded host longer than any
/// number of scans: so a scan that finds the holder in its idle path and
/// not halted does not count (seen in CI-like runs on a loaded host: a
/// 16-core chaos boot reported core 2, running in its idle path with its
/// search wake undrained). This many scans are at least this many scan
/// periods (20 ms by default) apart.
pub const HELD_SEARCH_SCANS_PER_SHARER: u32 = 5;

/// The scans the held-search watch waits: [`HELD_SEARCH_SCANS_PER_SHARER`]
/// times the vCPUs per host core, capped below the stuck-round watch
/// ([`super::watchdog::scans_for_descheduled`]). A holder
/// that is running a task is counted even when its vCPU is descheduled
/// (the watch cannot tell), and with 32 vCPUs on 2 host cores a holder
/// waits behind 15 others for its next slice: the AArch64 32-core suite
/// reported such a holder, running, that looked at the pool later.
pub fn held_search_scans() -> u32 {
    let scans = super::watchdog::scans_for_descheduled(u64::from(HELD_SEARCH_SCANS_PER_SHARER));
    u32::try_from(scans).unwrap_or(u32::MAX)
}

/// The held-search watch's memory between scans: the holder, its looks
/// and the pool's search-wake count at the last scan, and how many scans
/// in a row found them unchanged.
struct HeldWatch {
    last: Option<(usize, u64, u64)>,
    streak: u32,
}

static HELD: Mutex<HeldWatch> = Mutex::new(HeldWatch {
    last: None,
    streak: 0,
});

/// Called on each scan (by whichever core runs it): stealable work queued
/// while the core holding the pool's search has not looked at the pool
/// for [`held_search_scans`] scans in a row (the same search: no search
/// wake chosen since) is work waiting for a core that is not coming, even
/// if other cores are awake (the strand watch needs every core halted):
/// a search wake lost on its way to a halted core, or a search given to a
/// core busy with pinned work (`fault=busy-searcher`, the rule before the
/// work-conserving one). Prints a state dump and ends the run failed.
///
/// The holder is the pool's one searcher, as the pool mirrors it (not the
/// last core chosen: with the search fanning out, an earlier choice can
/// still be searching after a later one looked and halted). With two or
/// more searchers the watch waits: one of them is a core that looks, or
/// their items are covered twice over; the one-searcher case is the one a
/// held search strands (the fault test publishes one chunk for it).
pub fn check_held_search(me: usize) {
    if !enabled() {
        return;
    }
    let counts = pool().snapshot();
    let Some(mut watch) = HELD.try_lock() else {
        return;
    };
    let Some(holder) = counts
        .searcher
        .filter(|_| counts.searching == 1 && counts.queued > 0)
    else {
        watch.last = None;
        watch.streak = 0;
        return;
    };
    let now = (
        holder,
        LOOKS[holder].load(Ordering::Relaxed),
        counts.search_wakes,
    );
    // A holder in its idle path and not halted looks at the pool as soon
    // as it runs: if it has not, the host has not run its vCPU (under TCG
    // on a loaded host that lasts longer than any number of scans), which
    // is no held search. Only a holder busy with a task, or halted, holds
    // the search; such a scan counts.
    let holds = core_sched::wakes()[holder].state() == State::Halted
        || core_sched::cores()[holder].runs_a_task() == Some(true);
    if watch.last == Some(now) {
        if holds {
            watch.streak += 1;
        }
    } else {
        watch.last = Some(now);
        watch.streak = 0;
    }
    if watch.streak < held_search_scans() {
        return;
    }
    let streak = watch.streak;
    drop(watch);
    if REPORTED.swap(true, Ordering::Relaxed) {
        return;
    }
    let state = core_sched::wakes()[holder].state();
    let inbox = core_sched::wakes()[holder].inbox_len();
    println!(
        "{HELD_SEARCH_PREFIX}core {holder} holds the stealable pool's search and has not looked at the pool for {streak} scans while {} chunk(s) stay queued; core {holder} is {state} with {inbox} item(s) in its inbox{}; found by core {me}. Pool: {}. State dump:",
        counts.queued,
        if busy_searcher_core() == Some(holder) {
            alloc::format!(
                " (the {}={} core: busy with pinned work)",
                Key::Fault.name(),
                Fault::BusySearcher.name()
            )
        } else {
            alloc::string::String::new()
        },
        describe(counts)
    );
    core_sched::dump_cores();
    super::fork_join::dump_stuck_round();
    println!("vigil: FAILED: stealable work waits for a search held by a core that does not look");
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
