//! A fork-join pool with one persistent worker task per core: `run` hands
//! every worker the same job (with its worker index), runs share 0 on the
//! calling task, and returns when all shares are done.
//!
//! Releasing a round is one cross-core wake per worker, either all from the
//! caller (`Release::Flat`) or spread over a binary tree (`Release::Tree`):
//! the caller (worker 0) wakes workers 1 and 2, and worker `i` wakes
//! `2i + 1` and `2i + 2` before it computes its own share, so the last worker
//! is released after about log2(n) wakes instead of n - 1 in a row from one
//! core. Joining is one wake of the caller, by the last worker to finish.

use super::idle_history;
use super::latch::Latch;
use super::round_watch;
use super::task::TaskRef;
use super::wakeup::{self, JoinHandle, park};
use crate::params::{Pool, Release};
use crate::println;
use crate::smp::cores::MAX_CORES;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::{Mutex, Once};

static FIXED_POOL: spin::Once<Option<Pool>> = spin::Once::new();

/// Fixes the pool kind of every fork-join workload (`pool=`), or leaves it
/// to each workload's [`RoundPlan`](super::round_plan::RoundPlan) (`None`);
/// once, at boot.
pub fn configure_pool(pool: Option<Pool>) {
    FIXED_POOL.call_once(|| pool);
}

/// The pool kind `pool=` fixed, if it did.
pub fn fixed_pool() -> Option<Pool> {
    FIXED_POOL.get().copied().flatten()
}

/// Rounds by how many distinct cores ran their work (index: cores).
static CORES_PER_ROUND: [AtomicU64; MAX_CORES + 1] = [const { AtomicU64::new(0) }; MAX_CORES + 1];

/// Counts one finished round that ran on `cores` distinct cores (Relaxed:
/// statistics, read at the end of the run).
pub fn record_round_cores(cores: usize) {
    CORES_PER_ROUND[cores.min(MAX_CORES)].fetch_add(1, Ordering::Relaxed);
}

/// Forgets the rounds recorded so far (the boot's timed rounds), from the
/// main task before its workload: the only core that records rounds, so
/// the stores race with nothing.
pub fn forget_round_cores() {
    for count in &CORES_PER_ROUND {
        count.store(0, Ordering::Relaxed);
    }
}

/// Rounds recorded, and the median, minimum and maximum of the distinct
/// cores that ran each (`None` before any round).
pub fn cores_per_round() -> Option<(u64, usize, usize, usize)> {
    let counts: Vec<u64> = CORES_PER_ROUND
        .iter()
        .map(|count| count.load(Ordering::Relaxed))
        .collect();
    let rounds: u64 = counts.iter().sum();
    if rounds == 0 {
        return None;
    }
    let min = counts.iter().position(|&c| c > 0)?;
    let max = counts.iter().rposition(|&c| c > 0)?;
    let mut seen = 0;
    let median = counts
        .iter()
        .position(|&c| {
            seen += c;
            seen * 2 >= rounds
        })
        .unwrap_or(max);
    Some((rounds, median, min, max))
}

static RELEASE: spin::Once<Release> = spin::Once::new();

/// Sets the release shape for every pool (once, at boot).
pub fn configure(release: Release) {
    RELEASE.call_once(|| release);
}

fn release() -> Release {
    RELEASE.get().copied().unwrap_or(Release::Tree)
}

/// A round's job: called once per worker index.
pub type Job = Arc<dyn Fn(usize) + Send + Sync>;

struct Slot {
    job: Mutex<Option<Job>>,
    task: Once<TaskRef>,
    /// The last round this worker finished (its count-down), for the
    /// stuck-round dump. Relaxed: an observation.
    finished_round: AtomicU64,
}

struct Shared {
    slots: Vec<Slot>,
    /// Rounds started (the current round's number, from 1).
    round: AtomicU64,
    round_done: Latch,
    started: Latch,
    shutdown: AtomicBool,
}

/// The pool. Worker `i` (1..n) is pinned to core `i`; the caller is worker 0.
pub struct ForkJoin {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle>,
}

impl core::fmt::Debug for ForkJoin {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ForkJoin")
            .field("workers", &self.workers.len())
            .finish()
    }
}

impl ForkJoin {
    /// Starts workers on cores 1..`n` (the caller, on core 0, is worker 0).
    pub fn new(n: usize) -> Self {
        assert!(n >= 1);
        let shared = Arc::new(Shared {
            slots: (0..n)
                .map(|_| Slot {
                    job: Mutex::new(None),
                    task: Once::new(),
                    finished_round: AtomicU64::new(0),
                })
                .collect(),
            round: AtomicU64::new(0),
            round_done: Latch::new(0),
            started: Latch::new(n - 1),
            shutdown: AtomicBool::new(false),
        });
        let workers = (1..n)
            .map(|i| {
                let shared = shared.clone();
                wakeup::spawn_on(i, move || worker(&shared, i))
            })
            .collect();
        shared.started.wait();
        *WATCHED.lock() = Some(shared.clone());
        Self { shared, workers }
    }

    /// Number of workers (including the caller).
    pub fn width(&self) -> usize {
        self.shared.slots.len()
    }

    /// Runs `job(i)` for every worker index `i`, share 0 on the caller.
    pub fn run(&self, job: &Job) {
        let n = self.width();
        // Relaxed: only the caller writes it; the dump only reports it.
        let round = self.shared.round.load(Ordering::Relaxed) + 1;
        self.shared.round.store(round, Ordering::Relaxed);
        // The caller is busy while its workers run: it runs the detectors'
        // scan when one is due (the watchdog core's tick only fires while
        // that core is halted).
        super::watchdog::scan_if_due(crate::arch::percpu::current_index());
        round_watch::begin();
        self.shared.round_done.reset(n - 1);
        // Highest index first. A worker may take its job without waiting for
        // its release wake (it can still be awake from the last round, between
        // its count-down and its next look at the slot), and taking it
        // releases its tree children (`2i + 1`, `2i + 2`, both above `i`).
        // Stored upward, worker 7 could take job 7 before jobs 15 and 16 were
        // stored: its wakes found the children's slots empty, they parked
        // again, and the round hung with every core idle (seen once in ~200
        // always-ipi boots at 32 cores; every boot with the chaos points
        // below). Stored downward, every child's job is in place before its
        // parent's, so a parent that can see its own job releases children
        // that can see theirs.
        for (index, slot) in self.shared.slots.iter().enumerate().skip(1).rev() {
            *slot.job.lock() = Some(job.clone());
            crate::chaos::delay(crate::chaos::Point::BetweenJobStores);
            if release() == Release::Flat && !dropped(&self.shared, index) {
                wakeup::wake(slot.task.get().expect("worker registered"));
            }
        }
        wake_children(&self.shared, 0);
        job(0);
        self.shared.round_done.wait();
        record_round_cores(n);
        round_watch::end();
    }

    /// Stops the workers and waits for them.
    pub fn shutdown(self) {
        *WATCHED.lock() = None;
        self.shared.shutdown.store(true, Ordering::Release);
        // Every worker is parked on an empty slot: wake each one directly.
        for slot in &self.shared.slots[1..] {
            wakeup::wake(slot.task.get().expect("worker registered"));
        }
        for handle in self.workers {
            handle.join();
        }
    }
}

/// The first round in which `fault=dropped-task-wake` may drop the last
/// worker's release wake: it drops it in the first round from this one on
/// in which that worker is parked when its wake is due (a worker still
/// awake from the last round takes its job without a wake, and dropping
/// that wake would prove nothing: the flaky version of this fault).
pub const DROPPED_WAKE_ROUND: u64 = 10;
static DROP_WAKE: AtomicBool = AtomicBool::new(false);

/// Fault injection: a round of the next pool, from [`DROPPED_WAKE_ROUND`]
/// on, does not wake its last worker (set once, at boot, before any pool
/// runs).
pub fn drop_one_release_wake() {
    DROP_WAKE.store(true, Ordering::Relaxed);
}

/// Whether `fault=dropped-task-wake` was asked for and never found a wake to
/// drop (the run then proves nothing).
pub fn dropped_wake_unfired() -> bool {
    DROP_WAKE.load(Ordering::Relaxed)
}

/// Whether the release wake of worker `child` is the injected lost one:
/// the last worker's, in a round from [`DROPPED_WAKE_ROUND`] on, while it
/// is parked with its job still in its slot (it then runs only when woken),
/// once.
fn dropped(shared: &Shared, child: usize) -> bool {
    // Relaxed: a boot-time flag, set before the first pool starts, and
    // cleared (by a swap: once) by the one wake it drops.
    child == shared.slots.len() - 1
        && shared.slots.len() > 1
        && shared.round.load(Ordering::Relaxed) >= DROPPED_WAKE_ROUND
        && DROP_WAKE.load(Ordering::Relaxed)
        && shared.slots[child]
            .task
            .get()
            .is_some_and(|task| task.parker.state_name() == "parked")
        // Parked is not enough: a worker still awake from the last round can
        // take this round's job (stored before its wake), run it, find its
        // slot empty and park again before this check: the wake dropped then
        // was not needed, and the round finishes (seen once in CI: the test
        // expecting a stuck round got a clean run). Parked *and* its job
        // still in the slot, checked in that order: a parked worker cannot
        // take its job until this wake, so the job is still there and the
        // worker needs exactly this wake.
        && shared.slots[child].job.lock().is_some()
        && DROP_WAKE.swap(false, Ordering::Relaxed)
}

/// The pool whose rounds the stuck-round watch reports on (the latest one
/// created and not yet shut down).
static WATCHED: Mutex<Option<Arc<Shared>>> = Mutex::new(None);

/// Prints the watched pool's round for a stuck-round dump: the latch, and
/// every worker that has not finished the round, with its task's parker and
/// whether its job is still waiting in its slot. Locks are only tried: the
/// caller is an idle core and must not spin on a lock a stuck core holds.
pub fn dump_stuck_round() {
    if super::stealable::enabled() {
        println!(
            "  stealable pool: {}",
            super::stealable::describe(super::stealable::pool().snapshot())
        );
    }
    let Some(guard) = WATCHED.try_lock() else {
        println!("  fork-join: pool lock busy");
        return;
    };
    let Some(shared) = guard.as_ref() else {
        println!("  fork-join: no pool");
        return;
    };
    let round = shared.round.load(Ordering::Relaxed);
    println!(
        "  fork-join: round {round}, {} worker(s), latch {} count-down(s) missing, {} waiter(s) registered",
        shared.slots.len(),
        shared.round_done.remaining(),
        shared
            .round_done
            .waiter_count()
            .map_or_else(|| "?".into(), |n| alloc::format!("{n}")),
    );
    for (index, slot) in shared.slots.iter().enumerate().skip(1) {
        let finished = slot.finished_round.load(Ordering::Relaxed);
        if finished == round {
            continue;
        }
        let job = match slot.job.try_lock() {
            Some(job) if job.is_some() => "job waiting in its slot",
            Some(_) => "slot empty (job taken)",
            None => "slot lock busy",
        };
        let Some(task) = slot.task.get() else {
            println!("  worker {index}: no task registered, {job}");
            continue;
        };
        let (from, observed, action) = task.notify_record();
        println!(
            "  worker {index} (task {}): last finished round {finished}, {job}, parker {}; {}; last cross-core wake from core {from}, which saw {observed} and {action}; core {}'s idle history:",
            task.id(),
            task.parker.state_name(),
            task.counts.describe(),
            task.core(),
        );
        idle_history::HISTORIES[task.core()].print(crate::arch::tsc::now());
    }
}

/// Wakes worker `index`'s children in the release tree (nothing when the
/// release is flat).
fn wake_children(shared: &Shared, index: usize) {
    if release() == Release::Flat {
        return;
    }
    for child in [2 * index + 1, 2 * index + 2] {
        if let Some(slot) = shared.slots.get(child)
            && !dropped(shared, child)
        {
            wakeup::wake(slot.task.get().expect("worker registered"));
        }
    }
}

fn worker(shared: &Shared, index: usize) {
    let slot = &shared.slots[index];
    slot.task.call_once(wakeup::current);
    shared.started.count_down();
    loop {
        let job = slot.job.lock().take();
        match job {
            Some(job) => {
                wake_children(shared, index);
                job(index);
                slot.finished_round
                    .store(shared.round.load(Ordering::Relaxed), Ordering::Relaxed);
                shared.round_done.count_down();
                crate::chaos::delay(crate::chaos::Point::AfterCountDown);
            }
            None if shared.shutdown.load(Ordering::Acquire) => return,
            None => park(),
        }
    }
}
