//! [`ThreadPool`]: worker threads on the wake protocol, with private and
//! shared work.

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{
    AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst, fence,
};
use std::thread::JoinHandle;
use std::time::Instant;

use super::lone_item_grace::LoneItemGrace;
use super::poll_slots::{PollSlots, PoolHooks};
use super::worker_platform::{SleepCounts, WakeLine, WorkerPlatform};
use crate::backoff::BackoffMode;
use crate::core_wake::CoreWake;
use crate::counters::{CounterSnapshot, Counters};
use crate::idle_driver::{DriverConfig, Idle, IdleDriver};
use crate::idle_hooks::NoHooks;
use crate::policy::Policy;
use crate::state::State;
use crate::steal::{Searcher, Stealable};
use crate::waker::wake_core;

/// A unit of work: runs once, on some worker, which it may give more work.
pub type Job = Box<dyn FnOnce(&Worker<'_>) + Send + 'static>;

/// What travels through a worker's inbox.
enum Item {
    /// Private work for this worker.
    Job(Job),
    /// The work-conserving rule chose this worker to search the shared
    /// queue: its search wake (ticket), of which at most one is on its way.
    Search,
    /// The always-unpark baseline's extra wake: the worker looks at the
    /// shared queue when it has drained it (unless its `take`'s fast path
    /// reads no item queued: a job pushed from outside past a searcher
    /// still to look leaves the mirrored count as it was, and that
    /// searcher takes it), but it is not a ticket. (Sent
    /// as a `Search`, a worker whose real ticket was still on its way
    /// would drain this one, count its ticket as arrived and be chosen
    /// again: two search wakes in flight, which the rule's bound forbids.)
    Nudge,
}

/// How a pool is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Worker threads (at least 1).
    pub workers: usize,
    /// The wake policy of every worker: [`Policy::StateMachine`] (unpark a
    /// worker only once it committed to sleep; shared work wakes the
    /// workers the work-conserving rule chooses) or [`Policy::AlwaysIpi`]
    /// (the baseline: unpark on every notification, and every shared job
    /// also unparks one worker, round-robin).
    pub policy: Policy,
    /// How long an idle worker polls its inbox before it parks
    /// ([`BackoffMode::Off`]: parks at once; the default,
    /// [`BackoffMode::Adaptive`], learns it from how soon its parks end,
    /// and polls not at all while its parks last long).
    pub spin: BackoffMode,
    /// How many idle workers may poll at once (the others park at once).
    /// `None`, the default: every worker. A polling worker yields its host
    /// core between two looks to any thread waiting for it; capping the
    /// pollers at the host's cores
    /// ([`std::thread::available_parallelism`]) was measured slower (see
    /// `relax` in `worker_platform.rs`). A cap is for a pool that shares
    /// its host with other busy programs.
    pub pollers: Option<usize>,
}

impl PoolConfig {
    /// `workers` threads, the protocol, adaptive polling.
    #[must_use]
    pub const fn new(workers: usize) -> Self {
        Self {
            workers,
            policy: Policy::StateMachine,
            spin: BackoffMode::Adaptive,
            pollers: None,
        }
    }
}

/// The pool's counts, added up over its workers and producers (each count
/// is exact once the pool has stopped).
///
/// `#[non_exhaustive]`: counts may be added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolStats {
    /// Jobs run (private and shared), those that panicked included.
    pub jobs_run: u64,
    /// Jobs that panicked: each panic was caught, and the worker went on
    /// (see [`ThreadPool`]'s panic policy).
    pub panicked_jobs: u64,
    /// Wakes the senders sent (each one `Thread::unpark` of a worker).
    pub wakes_sent: u64,
    /// Every `Thread::unpark` the pool made (wakes, probes, a thief's
    /// unpark of a parked joiner; stopping aside).
    pub unparks: u64,
    /// The sleepers' side: sleeps that ended on a latched wake.
    pub wakes_taken: u64,
    /// The sleepers' side: calls to `park`.
    pub parks: u64,
    /// The sleepers' side: `park` returns with nothing latched.
    pub empty_park_returns: u64,
    /// Search wakes the work-conserving rule chose (shared work).
    pub search_wakes: u64,
    /// The protocol's counters of every worker and producer.
    pub protocol: CounterSnapshot,
}

/// What every thread of the pool shares.
struct Shared {
    policy: Policy,
    /// The next worker an always-unpark pool wakes for a shared job.
    next_unparked: AtomicUsize,
    cores: Box<[CoreWake<Item>]>,
    lines: Box<[WakeLine]>,
    steal: Stealable<Job>,
    poll_slots: PollSlots,
    stopping: AtomicBool,
    /// Jobs that panicked so far (a count; Relaxed).
    panicked_jobs: AtomicU64,
    epoch: Instant,
}

impl Shared {
    /// Under [`Policy::AlwaysIpi`], the worker every shared job also wakes
    /// (round-robin): the baseline pool that unparks a worker per dispatch,
    /// whatever the work-conserving rule chose. `None` under the protocol.
    fn unparked_for_shared_job(&self) -> Option<usize> {
        (self.policy == Policy::AlwaysIpi)
            // Relaxed: any spread of the wakes will do.
            .then(|| self.next_unparked.fetch_add(1, Relaxed) % self.cores.len())
    }

    /// Hands `item` to `target` from a producer that is not a worker.
    fn submit(&self, target: usize, item: Item, counters: &Counters) {
        if self.cores[target].submit(item, counters).must_wake() {
            self.lines[target].send_wake();
        }
    }
}

/// A running pool. Dropping it stops it (see [`ThreadPool::shutdown`]).
///
/// # A job that panics
///
/// The worker catches the panic ([`std::panic::catch_unwind`]), counts it
/// ([`ThreadPool::panicked_jobs`], [`PoolStats::panicked_jobs`]), drops the
/// payload and goes on with its next job: the panic message has been
/// printed by the panic hook, and nothing else of the panic is kept. The
/// work the job gave before it panicked, the worker's later private work,
/// and shared work that chose the worker to search all run; `shutdown`
/// does not panic for it. (A worker that died instead would stay
/// registered idle: the next shared job could choose it to search, and
/// that search and its private work would never run.) Under `panic =
/// "abort"` there is nothing to catch: a panicking job aborts the process.
///
/// ```
/// use std::sync::mpsc;
/// use vigil_wake::pool::{PoolConfig, ThreadPool};
///
/// let pool = ThreadPool::new(PoolConfig::new(2));
/// let (done, results) = mpsc::channel();
/// for i in 0..4u32 {
///     let done = done.clone();
///     // Private work for worker i % 2; the worker is unparked only if it
///     // committed to sleep.
///     pool.submit(i as usize % 2, move |_| done.send(i * i).unwrap());
/// }
/// let mut squares: Vec<u32> = results.iter().take(4).collect();
/// squares.sort();
/// assert_eq!(squares, [0, 1, 4, 9]);
/// let stats = pool.shutdown();
/// assert_eq!(stats.jobs_run, 4);
/// // Never more wakes than halts: each sleep is woken at most once.
/// assert!(stats.wakes_sent <= stats.protocol.halts);
/// ```
pub struct ThreadPool {
    shared: Arc<Shared>,
    producer: Producer,
    handles: Vec<JoinHandle<WorkerTotals>>,
}

impl core::fmt::Debug for ThreadPool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ThreadPool")
            .field("workers", &self.shared.cores.len())
            .finish_non_exhaustive()
    }
}

/// What a worker counted, returned when it stops.
#[derive(Debug, Default, Clone, Copy)]
struct WorkerTotals {
    jobs_run: u64,
    sleep: SleepCounts,
}

impl ThreadPool {
    /// Starts `config.workers` worker threads.
    ///
    /// # Panics
    ///
    /// If `config.workers` is 0, if the policy is neither
    /// [`Policy::StateMachine`] nor [`Policy::AlwaysIpi`], or if a thread
    /// cannot be spawned.
    #[must_use]
    pub fn new(config: PoolConfig) -> Self {
        assert!(config.workers > 0, "a pool needs at least one worker");
        assert!(
            matches!(config.policy, Policy::StateMachine | Policy::AlwaysIpi),
            "the pool runs state-machine or always-ipi, not {}",
            config.policy
        );
        let shared = Arc::new(Shared {
            policy: config.policy,
            next_unparked: AtomicUsize::new(0),
            cores: (0..config.workers)
                .map(|_| CoreWake::new(config.policy))
                .collect(),
            lines: (0..config.workers).map(|_| WakeLine::default()).collect(),
            steal: Stealable::with_local_queues(config.workers),
            poll_slots: PollSlots::new(config.pollers),
            stopping: AtomicBool::new(false),
            panicked_jobs: AtomicU64::new(0),
            epoch: Instant::now(),
        });
        let handles = (0..config.workers)
            .map(|me| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(alloc::format!("vigil-pool-{me}"))
                    .spawn(move || run_worker(&shared, me, config.spin))
                    .expect("spawn a pool worker")
            })
            .collect();
        let producer = Producer {
            shared: Arc::clone(&shared),
            counters: Counters::new(),
        };
        Self {
            shared,
            producer,
            handles,
        }
    }

    /// The number of workers.
    #[must_use]
    pub fn workers(&self) -> usize {
        self.shared.cores.len()
    }

    /// Wakes taken so far, counted by the sleepers (each a sleep that ended
    /// on a latched wake): the other side of [`PoolStats::wakes_sent`].
    #[must_use]
    pub fn wakes_taken(&self) -> u64 {
        self.shared.lines.iter().map(WakeLine::wakes_taken).sum()
    }

    /// Jobs that panicked so far (each caught; its worker went on). A job's
    /// panic is counted before its worker runs its next job.
    #[must_use]
    pub fn panicked_jobs(&self) -> u64 {
        // Relaxed: a count. Whoever saw the worker's next job run (through
        // that job's own synchronisation) sees the increment before it.
        self.shared.panicked_jobs.load(Relaxed)
    }

    /// How many workers are asleep now (state `Halted`: committed to sleep
    /// and not yet woken). An observation, stale as soon as it is read.
    #[must_use]
    pub fn sleeping_workers(&self) -> usize {
        self.shared
            .cores
            .iter()
            .filter(|core| core.state() == State::Halted)
            .count()
    }

    /// Gives worker `worker` a private job (from the pool's own producer
    /// slot; a thread that submits often should use its own
    /// [`producer`](ThreadPool::producer)).
    pub fn submit(&self, worker: usize, job: impl FnOnce(&Worker<'_>) + Send + 'static) {
        self.producer.submit(worker, job);
    }

    /// Queues a shared job: any worker may run it.
    pub fn spawn(&self, job: impl FnOnce(&Worker<'_>) + Send + 'static) {
        self.producer.spawn(job);
    }

    /// A producer handle with its own counters, for one submitting thread.
    #[must_use]
    pub fn producer(&self) -> Producer {
        Producer {
            shared: Arc::clone(&self.shared),
            counters: Counters::new(),
        }
    }

    /// Stops the pool: every worker finishes what it has, parks once more,
    /// and ends. Call it once the jobs you care about have completed (a job
    /// given to a worker that already stopped is dropped unrun). Returns the
    /// pool's counts (the pool's own producer included; producers handed
    /// out by [`producer`](ThreadPool::producer) keep theirs).
    #[must_use]
    pub fn shutdown(mut self) -> PoolStats {
        self.stop()
    }

    fn stop(&mut self) -> PoolStats {
        // A store-buffering pair, closed by two SeqCst fences:
        //
        //   here:          store `stopping`; FENCE_STOP; read each worker's
        //                  registration (`nudge`: unpark if registered)
        //   each worker:   register its thread; FENCE_REGISTER (in
        //                  `WakeLine::register`); read `stopping` before
        //                  every `park` (`WorkerPlatform::sleep`)
        //
        // With Relaxed accesses and no fences both reads may miss the other
        // side's write: this thread finds no thread to unpark, the worker
        // reads `stopping` false and parks, and the join below waits forever
        // (a pool dropped right after `new`). SeqCst fences are totally
        // ordered: if FENCE_REGISTER comes first, the nudge's read after
        // FENCE_STOP sees the registration and unparks the worker; the
        // unpark synchronizes with the `park` that consumes it (std's
        // documented ordering), whose return then sees `stopping`, which is
        // stored before the unpark. If FENCE_STOP comes first, every read
        // of `stopping` after FENCE_REGISTER sees it, and the worker never
        // parks. Either way every worker ends. (The accesses themselves can
        // stay Relaxed: the fences carry the order.)
        self.shared.stopping.store(true, Relaxed);
        fence(SeqCst); // FENCE_STOP
        let mut stats = PoolStats::default();
        for line in self.shared.lines.iter() {
            line.nudge();
        }
        for handle in self.handles.drain(..) {
            let Ok(totals) = handle.join() else {
                // A job's panic is caught by the worker: this is a panic in
                // the pool itself. `shutdown` says so; a drop (perhaps
                // during that very unwinding) goes on quietly.
                assert!(
                    std::thread::panicking(),
                    "a pool worker panicked outside a job"
                );
                continue;
            };
            stats.jobs_run += totals.jobs_run;
            stats.parks += totals.sleep.parks;
            stats.empty_park_returns += totals.sleep.empty_returns;
        }
        for (core, line) in self.shared.cores.iter().zip(self.shared.lines.iter()) {
            stats.protocol += core.counters().snapshot();
            stats.wakes_sent += line.wakes_sent();
            stats.unparks += line.unparks();
            stats.wakes_taken += line.wakes_taken();
        }
        stats.protocol += self.producer.counters.snapshot();
        stats.search_wakes = self.shared.steal.snapshot().search_wakes;
        stats.panicked_jobs = self.shared.panicked_jobs.load(Relaxed);
        stats
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        if !self.handles.is_empty() {
            let _ = self.stop();
        }
    }
}

/// A thread that gives the pool work without being one of its workers,
/// with its own protocol counters (a counter block has one writer).
pub struct Producer {
    shared: Arc<Shared>,
    counters: Counters,
}

impl core::fmt::Debug for Producer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Producer")
            .field("counters", &self.counters.snapshot())
            .finish_non_exhaustive()
    }
}

impl Producer {
    /// Gives worker `worker` a private job.
    ///
    /// # Panics
    ///
    /// If `worker` is not one of the pool's.
    pub fn submit(&self, worker: usize, job: impl FnOnce(&Worker<'_>) + Send + 'static) {
        self.shared
            .submit(worker, Item::Job(Box::new(job)), &self.counters);
    }

    /// Queues a shared job; the work-conserving rule wakes a worker to
    /// search unless one is already on its way for every queued job.
    pub fn spawn(&self, job: impl FnOnce(&Worker<'_>) + Send + 'static) {
        let job: Job = Box::new(job);
        // Onto the outside queue (a thread outside the pool's cores, never
        // chosen to search): without the pool's lock unless a worker is
        // registered idle and no searcher covers the job.
        self.shared.steal.push_outside(job, |chosen| {
            self.shared.submit(chosen, Item::Search, &self.counters);
        });
        if let Some(worker) = self.shared.unparked_for_shared_job() {
            self.shared.submit(worker, Item::Nudge, &self.counters);
        }
    }

    /// This producer's protocol counters.
    #[must_use]
    pub fn counters(&self) -> CounterSnapshot {
        self.counters.snapshot()
    }
}

/// The worker running a job: what the job may use to give more work.
pub struct Worker<'a> {
    shared: &'a Shared,
    sender: WorkerPlatform<'a>,
    /// The worker's part in the stealable rule: borrowed by the worker's
    /// loop between jobs and by [`Worker::spawn`] during a job, never both
    /// (a job runs with no borrow held).
    searcher: RefCell<Searcher>,
    /// The worker's private run queue: the jobs drained from its inbox,
    /// and those it gave itself, which go straight here, not through its
    /// inbox (no other thread can be waiting for them to arrive, and no
    /// wake is ever needed). Borrowed as `searcher` is.
    private: RefCell<VecDeque<Job>>,
    /// Joins in the running job that spawned their half and are running
    /// their first half ([`Worker::join`]: a join nested there may run in
    /// place).
    spawned_joins: Cell<usize>,
}

impl core::fmt::Debug for Worker<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Worker")
            .field("index", &self.index())
            .finish_non_exhaustive()
    }
}

impl Worker<'_> {
    /// This worker's index.
    #[must_use]
    pub fn index(&self) -> usize {
        crate::platform::Platform::core(&self.sender)
    }

    /// Gives worker `worker` a private job, counted in this worker's
    /// counters. A job for this worker itself goes straight to its run
    /// queue (no inbox push, no protocol count): it runs after the running
    /// job, in order with the others this worker gave itself, and in no
    /// promised order against jobs other senders gave it.
    pub fn submit(&self, worker: usize, job: impl FnOnce(&Worker<'_>) + Send + 'static) {
        self.send(worker, Item::Job(Box::new(job)));
    }

    /// Queues a shared job: onto this worker's own queue, and wakes a
    /// worker to search only if one is registered idle and no searcher
    /// covers the job yet. From a private job that started while the
    /// worker was registered idle, onto the shared queue.
    ///
    /// The worker runs its own queue **oldest first**, after the job that
    /// spawned, and an idle worker steals the older half: a job that
    /// respawns itself never runs ahead of an earlier spawn, and a job that
    /// waits for an earlier spawn of its worker finds it run (with newest
    /// first, rayon's order, neither holds). Across workers there is no
    /// order: a thief may run a later spawn before the owner runs an
    /// earlier one.
    pub fn spawn(&self, job: impl FnOnce(&Worker<'_>) + Send + 'static) {
        self.spawn_job(Box::new(job));
    }

    /// [`spawn`](Self::spawn), of a boxed job.
    #[inline]
    pub(super) fn spawn_job(&self, job: Job) {
        let mut searcher = self.searcher.borrow_mut();
        self.shared.steal.push_local(&mut searcher, job, |chosen| {
            self.send(chosen, Item::Search);
        });
    }

    /// How many workers the pool has.
    pub(super) fn pool_workers(&self) -> usize {
        self.shared.cores.len()
    }

    /// Whether this worker's own queue holds a job and no worker is
    /// registered idle (a hint).
    pub(super) fn own_queue_feeds_thieves(&self) -> bool {
        self.shared.steal.own_queue_feeds_thieves(self.index())
    }

    /// The count of this worker's open joins that spawned their half.
    pub(super) fn spawned_joins(&self) -> &Cell<usize> {
        &self.spawned_joins
    }

    /// Takes back the job this worker spawned last, if it is still the
    /// newest on the worker's own queue and `is_it` says it is the one.
    pub(super) fn take_back_newest(&self, is_it: impl FnOnce(&Job) -> bool) -> Option<Job> {
        self.shared.steal.take_back_newest(self.index(), is_it)
    }

    /// Unparks worker `joiner`, parked in a join whose second half this
    /// worker finished (counted in [`PoolStats::unparks`]).
    pub(super) fn unpark_joiner(&self, joiner: usize) {
        self.shared.lines[joiner].unpark_joiner();
    }

    fn send(&self, target: usize, item: Item) {
        let me = self.index();
        if target == me {
            match item {
                // Its own run queue, after the job.
                Item::Job(job) => self.private.borrow_mut().push_back(job),
                // Never chosen by itself (a choice excludes the chooser);
                // its own inbox, drained before it can sleep, would do.
                Item::Search | Item::Nudge => {
                    let core = &self.shared.cores[me];
                    let _ = core.send(item, core);
                }
            }
        } else {
            let _ = wake_core(&self.shared.cores, target, item, &self.sender, &NoHooks);
        }
    }
}

/// One worker thread: the kernel's idle loop, on threads.
fn run_worker(shared: &Shared, me: usize, spin: BackoffMode) -> WorkerTotals {
    shared.lines[me].register();
    let platform = WorkerPlatform::new(me, &shared.lines, &shared.stopping, shared.epoch);
    let mut driver = IdleDriver::new(
        &shared.cores,
        platform,
        PoolHooks {
            me,
            slots: &shared.poll_slots,
            steal: &shared.steal,
        },
        DriverConfig {
            backoff: spin,
            watchdog_tick_us: None,
        },
    );
    let worker = Worker {
        shared,
        sender: WorkerPlatform::new(me, &shared.lines, &shared.stopping, shared.epoch),
        searcher: RefCell::new(Searcher::new(me)),
        private: RefCell::new(VecDeque::new()),
        spawned_joins: Cell::new(0),
    };
    let mut batch = VecDeque::new();
    let mut grace = LoneItemGrace::default();
    let mut totals = WorkerTotals::default();
    loop {
        driver.drain(&mut batch);
        let mut private = worker.private.borrow_mut();
        let mut searcher = worker.searcher.borrow_mut();
        sort(&mut batch, &mut private, &mut searcher);
        let next = if private.is_empty() {
            if grace.wait(shared.steal.glance(&searcher)) {
                drop((private, searcher));
                crate::platform::Platform::relax(&worker.sender);
                continue;
            }
            shared
                .steal
                .take(&mut searcher, |chosen| worker.send(chosen, Item::Search))
        } else {
            shared
                .steal
                .before_pinned_work(&mut searcher, |chosen| worker.send(chosen, Item::Search));
            private.pop_front()
        };
        drop((private, searcher));
        if let Some(job) = next {
            run_job(job, &worker);
            totals.jobs_run += 1;
            continue;
        }
        match driver.idle(&mut batch) {
            Idle::Ready => sort(
                &mut batch,
                &mut worker.private.borrow_mut(),
                &mut worker.searcher.borrow_mut(),
            ),
            Idle::MachineStopped => break,
        }
    }
    totals.sleep = driver.platform().sleep_counts();
    totals
}

/// Runs `job`, catching a panic (the pool's panic policy, see
/// [`ThreadPool`]): the panic is counted and the worker goes on.
fn run_job(job: Job, worker: &Worker<'_>) {
    // AssertUnwindSafe: the job is consumed by the call, so nothing of it is
    // seen after a panic; what it reaches of the pool through `worker` (the
    // inboxes, the stealable queue) is only changed by pool code that runs
    // no job code in the middle of an update and holds no lock while a job
    // runs, so a panic can only stop a job between two of the pool's
    // operations, and the next job sees the pool whole. What the job shares
    // with the rest of the program is the job's own business, as it is
    // for a thread's closure.
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| job(worker))) {
        // Relaxed: a count (see `ThreadPool::panicked_jobs`).
        worker.shared.panicked_jobs.fetch_add(1, Relaxed);
        // A payload whose own drop panics must not take the worker with it:
        // that second payload is leaked, not dropped.
        if let Err(nested) = panic::catch_unwind(AssertUnwindSafe(move || drop(payload))) {
            core::mem::forget(nested);
        }
    }
}

/// Moves drained items to the worker's private run queue, noting search
/// wakes.
fn sort(batch: &mut VecDeque<Item>, private: &mut VecDeque<Job>, searcher: &mut Searcher) {
    if batch.is_empty() {
        return;
    }
    for item in batch.drain(..) {
        match item {
            Item::Job(job) => private.push_back(job),
            Item::Search => searcher.search_wake_drained(),
            Item::Nudge => {}
        }
    }
}
