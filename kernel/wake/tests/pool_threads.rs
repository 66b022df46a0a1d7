//! The pool on real threads, in the shapes of the wake bugs user-space pools
//! have shipped: a pool of one worker, a burst of shared work for as many
//! sleepers, private work and its owner, a dispatch nobody sleeps for.
//!
//! Every wait here is for a condition (a state, a count), never for time;
//! the one timeout turns a hang (the bug these tests look for) into a
//! failure with a message.

#![cfg(not(loom))]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use vigil_wake::Policy;
use vigil_wake::pool::{PoolConfig, ThreadPool, Worker};

/// Generous: only a hang gets near it.
const HANG_GUARD: Duration = Duration::from_secs(60);

fn wait_until_all_asleep(pool: &ThreadPool) {
    while pool.sleeping_workers() < pool.workers() {
        std::thread::yield_now();
    }
}

/// A pool of exactly one worker: a job that keeps resubmitting itself goes
/// to the worker's own inbox and never unparks anybody.
#[test]
fn one_worker_resubmitting_itself_never_unparks() {
    const ROUNDS: usize = 1000;
    fn again(worker: &Worker<'_>, left: usize, done: mpsc::Sender<usize>) {
        if left == 0 {
            done.send(worker.index()).unwrap();
            return;
        }
        worker.submit(worker.index(), move |w| again(w, left - 1, done));
    }
    let pool = ThreadPool::new(PoolConfig::new(1));
    wait_until_all_asleep(&pool);
    let (done, finished) = mpsc::channel();
    pool.submit(0, move |w| again(w, ROUNDS, done));
    assert_eq!(finished.recv_timeout(HANG_GUARD), Ok(0));
    let stats = pool.shutdown();
    assert_eq!(stats.jobs_run, ROUNDS as u64 + 1);
    // The first submit found the worker asleep: one wake. The resubmits
    // target the running worker itself.
    assert_eq!(stats.wakes_sent, 1, "{stats:?}");
    assert_eq!(stats.protocol.elided_self_target, ROUNDS as u64);
}

/// Shared work for N sleepers wakes N distinct sleepers: each job holds
/// its worker until all N have started, so the N jobs can only finish if
/// the rule woke N different workers (a rule that wakes one sleeper for a
/// batch, or the same one twice, hangs here).
#[test]
fn a_burst_of_shared_work_wakes_distinct_sleepers() {
    const WORKERS: usize = 4;
    let pool = ThreadPool::new(PoolConfig::new(WORKERS));
    wait_until_all_asleep(&pool);
    let started = Arc::new((Mutex::new(BTreeSet::new()), Condvar::new()));
    let (done, finished) = mpsc::channel();
    for _ in 0..WORKERS {
        let started = Arc::clone(&started);
        let done = done.clone();
        pool.spawn(move |w| {
            let (set, all_started) = &*started;
            let mut set = set.lock().unwrap();
            set.insert(w.index());
            all_started.notify_all();
            let (set, timeout) = all_started
                .wait_timeout_while(set, HANG_GUARD, |set| set.len() < WORKERS)
                .unwrap();
            let distinct = set.len();
            drop(set);
            // The test may have failed and gone: nobody to tell.
            let _ = done.send((distinct, timeout.timed_out()));
        });
    }
    for _ in 0..WORKERS {
        let (distinct, timed_out) = finished.recv().unwrap();
        assert!(
            !timed_out,
            "only {distinct} of {WORKERS} sleepers were woken for {WORKERS} shared jobs"
        );
    }
    let stats = pool.shutdown();
    assert_eq!(stats.jobs_run, WORKERS as u64);
    // One search wake per sleeper: the rule grew the awake set one worker
    // at a time, never two wakes for one sleep.
    assert!(stats.wakes_sent <= stats.protocol.halts, "{stats:?}");
    assert!(stats.search_wakes >= WORKERS as u64, "{stats:?}");
}

/// Private work wakes its owner and nobody else.
#[test]
fn private_work_wakes_its_owner_only() {
    const WORKERS: usize = 4;
    let pool = ThreadPool::new(PoolConfig::new(WORKERS));
    for owner in 0..WORKERS {
        wait_until_all_asleep(&pool);
        let before = pool.wakes_taken();
        let (ran_on, ran) = mpsc::channel();
        pool.submit(owner, move |w| ran_on.send(w.index()).unwrap());
        assert_eq!(ran.recv_timeout(HANG_GUARD), Ok(owner));
        wait_until_all_asleep(&pool);
        // Taken counted by the sleepers: exactly one of them woke.
        assert_eq!(pool.wakes_taken() - before, 1, "owner {owner}");
    }
    let stats = pool.shutdown();
    assert_eq!(stats.wakes_sent, WORKERS as u64, "{stats:?}");
}

/// Runs `dispatches` private jobs into workers that are all busy (each
/// held in a job until the dispatches are done) and returns how many wakes
/// the producer sent.
fn wakes_for_dispatches_to_busy_workers(policy: Policy, dispatches: usize) -> u64 {
    const WORKERS: usize = 2;
    let pool = ThreadPool::new(PoolConfig {
        policy,
        ..PoolConfig::new(WORKERS)
    });
    let release = Arc::new(AtomicBool::new(false));
    let busy = Arc::new(AtomicUsize::new(0));
    for worker in 0..WORKERS {
        let release = Arc::clone(&release);
        let busy = Arc::clone(&busy);
        pool.submit(worker, move |_| {
            busy.fetch_add(1, SeqCst);
            while !release.load(SeqCst) {
                std::thread::yield_now();
            }
        });
    }
    while busy.load(SeqCst) < WORKERS {
        std::thread::yield_now();
    }
    let producer = pool.producer();
    let ran = Arc::new(AtomicUsize::new(0));
    for i in 0..dispatches {
        let ran = Arc::clone(&ran);
        producer.submit(i % WORKERS, move |_| {
            ran.fetch_add(1, SeqCst);
        });
    }
    let sent = producer.counters().wakes_sent;
    release.store(true, SeqCst);
    while ran.load(SeqCst) < dispatches {
        std::thread::yield_now();
    }
    let _stats = pool.shutdown();
    sent
}

/// A dispatch when nobody sleeps makes no unpark, counted by the producer
/// and able to count more: the same dispatches under `always-ipi` pay one
/// each.
#[test]
fn a_dispatch_when_nobody_sleeps_makes_no_unpark() {
    const DISPATCHES: usize = 200;
    assert_eq!(
        wakes_for_dispatches_to_busy_workers(Policy::StateMachine, DISPATCHES),
        0
    );
    assert_eq!(
        wakes_for_dispatches_to_busy_workers(Policy::AlwaysIpi, DISPATCHES),
        DISPATCHES as u64
    );
}
