//! The pool on real threads, with jobs that panic: a panicking job is
//! caught and counted, its worker goes on, and no work is left behind, not
//! the work the panicking job gave before it panicked, not the worker's
//! later private work, not shared work that chose that worker to search.
//!
//! Its own test binary: the panic hook that keeps the deliberate panics
//! quiet is process-wide.
//!
//! Every wait is for a message; the timeout ([`HANG_GUARD`]) only turns a
//! job that never runs (a dead worker's inbox) into a failure with a
//! message.

#![cfg(not(loom))]

#[path = "support/deliberate_panic.rs"]
mod deliberate_panic;

use std::panic;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use deliberate_panic::{DeliberatePanic, quiet_deliberate_panics};
use vigil_wake::pool::{PoolConfig, ThreadPool, Worker};

/// Generous: only a hang gets near it.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// What the non-panicking jobs report.
#[derive(Clone)]
struct Done {
    ran: Arc<AtomicUsize>,
    tx: Sender<()>,
}

impl Done {
    fn new() -> (Self, Receiver<()>) {
        let (tx, rx) = mpsc::channel();
        let ran = Arc::new(AtomicUsize::new(0));
        (Self { ran, tx }, rx)
    }

    /// A job that counts itself and reports.
    fn job(&self) -> impl FnOnce(&Worker<'_>) + Send + 'static {
        let done = self.clone();
        move |_| {
            done.ran.fetch_add(1, SeqCst);
            // The test may have failed and gone: nobody to tell.
            let _ = done.tx.send(());
        }
    }

    /// A job that gives its own worker a private job and the pool a shared
    /// one, then panics.
    fn panicking_job(&self) -> impl FnOnce(&Worker<'_>) + Send + 'static {
        let done = self.clone();
        move |w| {
            w.submit(w.index(), done.job());
            w.spawn(done.job());
            panic::panic_any(DeliberatePanic("job"));
        }
    }
}

/// Waits for `expected` reports; fails with a message if one is missing
/// after [`HANG_GUARD`].
fn wait_for(reports: &Receiver<()>, expected: usize, what: &str) {
    for got in 0..expected {
        assert!(
            reports.recv_timeout(HANG_GUARD).is_ok(),
            "{what}: only {got} of {expected} jobs ran within {HANG_GUARD:?} of the last one"
        );
    }
}

/// `panics` rounds on `workers` workers: each round a panicking job
/// (private to worker `round % workers` on even rounds, shared on odd ones)
/// that gives a private and a shared job before it panics, then a private
/// job for the same worker and a shared job. Checks that every
/// non-panicking job ran and the counts.
fn panics_interleaved_with_work(workers: usize, panics: usize) {
    quiet_deliberate_panics();
    let pool = ThreadPool::new(PoolConfig::new(workers));
    let (done, reports) = Done::new();
    for round in 0..panics {
        let target = round % workers;
        if round % 2 == 0 {
            pool.submit(target, done.panicking_job());
        } else {
            pool.spawn(done.panicking_job());
        }
        pool.submit(target, done.job());
        pool.spawn(done.job());
    }
    // Four per round: two from the test, two given by the panicking job.
    let expected = 4 * panics;
    let what = format!("{panics} panicking jobs on {workers} workers");
    wait_for(&reports, expected, &what);
    let stats = pool.shutdown();
    assert_eq!(done.ran.load(SeqCst), expected);
    assert_eq!(stats.panicked_jobs, panics as u64, "{stats:?}");
    // Every job ran, those that panicked included.
    assert_eq!(stats.jobs_run, (expected + panics) as u64, "{stats:?}");
}

/// 1,000 panicking jobs, half private and half shared, interleaved with
/// shared and private work on four workers, leave no work behind.
#[test]
fn panicking_jobs_leave_no_work_behind() {
    panics_interleaved_with_work(4, 1000);
}

/// The same with exactly one worker: every job after the first panic runs
/// only if the one worker survived it.
#[test]
fn panicking_jobs_leave_no_work_behind_on_one_worker() {
    panics_interleaved_with_work(1, 100);
}

/// The count is live, and the worker whose job panicked goes on with its
/// private work and back to sleep, and shared work spawned once every
/// worker sleeps runs: with all four workers parked, worker 0 (the first
/// candidate to search) runs a job that panics, then a private job; then a
/// shared job and a private job for every worker.
#[test]
fn a_panicked_job_is_counted_and_the_worker_goes_on() {
    const WORKERS: usize = 4;
    quiet_deliberate_panics();
    let pool = ThreadPool::new(PoolConfig::new(WORKERS));
    all_asleep_within_guard(&pool);
    let (ran_on, ran) = mpsc::channel();
    pool.submit(0, |_| panic::panic_any(DeliberatePanic("job")));
    let after_panic = ran_on.clone();
    pool.submit(0, move |w| after_panic.send(w.index()).unwrap());
    assert_eq!(ran.recv_timeout(HANG_GUARD), Ok(0));
    assert_eq!(pool.panicked_jobs(), 1);
    all_asleep_within_guard(&pool);
    let shared = ran_on.clone();
    pool.spawn(move |_| shared.send(usize::MAX).unwrap());
    for worker in 0..WORKERS {
        let ran_on = ran_on.clone();
        pool.submit(worker, move |w| ran_on.send(w.index()).unwrap());
    }
    let mut reports: Vec<usize> = (0..=WORKERS)
        .map(|_| {
            ran.recv_timeout(HANG_GUARD)
                .expect("a job did not run after a panic")
        })
        .collect();
    reports.sort_unstable();
    assert_eq!(reports, [0, 1, 2, 3, usize::MAX]);
    let stats = pool.shutdown();
    assert_eq!(stats.jobs_run, 2 + 1 + WORKERS as u64, "{stats:?}");
    assert_eq!(stats.panicked_jobs, 1, "{stats:?}");
}

/// Waits until every worker of `pool` is asleep; fails (rather than hangs)
/// if they are not after [`HANG_GUARD`] (a worker that died never sleeps).
fn all_asleep_within_guard(pool: &ThreadPool) {
    // The clock is only a hang detector: the loop waits for the state.
    let give_up = Instant::now() + HANG_GUARD;
    while pool.sleeping_workers() < pool.workers() {
        assert!(
            Instant::now() < give_up,
            "workers still awake after {HANG_GUARD:?}: {} of {} asleep",
            pool.sleeping_workers(),
            pool.workers()
        );
        std::thread::yield_now();
    }
}
