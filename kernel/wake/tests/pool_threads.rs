//! The pool on real threads, in the shapes of the wake bugs user-space pools
//! have shipped: a pool of one worker, a burst of shared work for as many
//! sleepers, private work and its owner, a dispatch nobody sleeps for,
//! shared work while a worker is busy with private work, and a private job
//! that waits for a shared one.
//!
//! Every wait here is for a condition (a state, a count, a message), never
//! for time; the timeouts ([`HANG_GUARD`]) turn a hang (the bug these tests
//! look for) into a failure with a message.

#![cfg(not(loom))]

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

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
/// straight to the worker's own run queue and never unparks anybody.
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
    // target the running worker itself: its run queue, not its inbox.
    assert_eq!(stats.wakes_sent, 1, "{stats:?}");
    assert_eq!(stats.protocol.inbox_pushes, 1, "{stats:?}");
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

/// Holds every worker of `pool` in a private job until the returned flag
/// is set; returns once every worker is running its held job.
fn hold_every_worker(pool: &ThreadPool) -> Arc<AtomicBool> {
    let release = Arc::new(AtomicBool::new(false));
    let held = Arc::new(AtomicUsize::new(0));
    for worker in 0..pool.workers() {
        let (held, release) = (Arc::clone(&held), Arc::clone(&release));
        pool.submit(worker, move |_| {
            held.fetch_add(1, SeqCst);
            while !release.load(SeqCst) {
                std::thread::yield_now();
            }
        });
    }
    while held.load(SeqCst) < pool.workers() {
        std::thread::yield_now();
    }
    release
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
    let release = hold_every_worker(&pool);
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

/// Waits until every worker of `pool` is asleep; fails (rather than hangs)
/// if they are not after [`HANG_GUARD`].
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

/// Shared work runs while a worker is busy with a private job, although it
/// was the lowest-numbered sleeper when its private job came: with all four
/// workers parked, worker 0 gets a private job that blocks until the test
/// releases it; once it has started, a shared job is spawned. The private
/// job is released only after the shared job ran, so a rule that lets the
/// busy worker stay a candidate for the search (the shared job's search
/// wake then waits in worker 0's inbox behind the blocked job) fails here,
/// every trial, instead of finishing late.
#[test]
fn shared_work_runs_while_a_worker_is_busy_with_private_work() {
    const WORKERS: usize = 4;
    const TRIALS: usize = 20;
    for trial in 0..TRIALS {
        let pool = ThreadPool::new(PoolConfig::new(WORKERS));
        all_asleep_within_guard(&pool);
        let (started, private_started) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        pool.submit(0, move |w| {
            started.send(w.index()).unwrap();
            // Blocks until the test releases it; the bound (longer than the
            // test's own) only keeps a failed trial from hanging the worker
            // forever.
            let _ = released.recv_timeout(2 * HANG_GUARD);
        });
        assert_eq!(private_started.recv_timeout(HANG_GUARD), Ok(0));
        let (ran_on, shared_ran) = mpsc::channel();
        // The test may have failed and gone: nobody to tell.
        pool.spawn(move |w| {
            let _ = ran_on.send(w.index());
        });
        let shared = shared_ran.recv_timeout(HANG_GUARD);
        // Release worker 0 before any assertion, so that a failure unwinds
        // through a pool that can stop.
        release.send(()).expect("the private job is still blocked");
        let ran_on = shared.unwrap_or_else(|_| {
            panic!(
                "trial {trial}: the shared job did not run within {HANG_GUARD:?} while \
                 worker 0 was busy with a private job and the other workers slept"
            )
        });
        assert_ne!(ran_on, 0, "trial {trial}: worker 0 is blocked");
        let stats = pool.shutdown();
        assert_eq!(stats.jobs_run, 2, "trial {trial}: {stats:?}");
    }
}

/// A private job that waits for a shared job completes: the private job
/// blocks on a channel that only the shared job sends to, so it can finish
/// only if the shared job runs on another worker meanwhile. The shared job
/// is spawned from outside the pool (after the private job started) and,
/// in the second half of the trials, by the private job itself.
#[test]
fn a_private_job_waiting_for_a_shared_job_completes() {
    const WORKERS: usize = 4;
    const TRIALS: usize = 20;
    for trial in 0..TRIALS {
        let from_inside = trial >= TRIALS / 2;
        let pool = ThreadPool::new(PoolConfig::new(WORKERS));
        all_asleep_within_guard(&pool);
        let (wake_private, private_waits) = mpsc::channel::<usize>();
        let (started, private_started) = mpsc::channel();
        let (finished, private_finished) = mpsc::channel();
        let for_inside = wake_private.clone();
        pool.submit(0, move |w| {
            if from_inside {
                // The private job may have given up: nobody to tell.
                w.spawn(move |w| {
                    let _ = for_inside.send(w.index());
                });
            }
            started.send(()).unwrap();
            // The bound only turns a lost shared job into a failure.
            finished
                .send(private_waits.recv_timeout(HANG_GUARD))
                .unwrap();
        });
        private_started.recv_timeout(HANG_GUARD).unwrap();
        if !from_inside {
            pool.spawn(move |w| {
                let _ = wake_private.send(w.index());
            });
        }
        // The private job gives up on its own after HANG_GUARD: twice that
        // is only a hang detector for the private job itself.
        let outcome = private_finished
            .recv_timeout(2 * HANG_GUARD)
            .expect("the private job neither finished nor gave up");
        let side = if from_inside { "inside" } else { "outside" };
        let ran_on = outcome.unwrap_or_else(|_| {
            panic!(
                "trial {trial} (spawned from {side}): the private job on worker 0 waited \
                 {HANG_GUARD:?} for a shared job that never ran"
            )
        });
        assert_ne!(ran_on, 0, "trial {trial}: worker 0 was busy");
        let stats = pool.shutdown();
        assert_eq!(stats.jobs_run, 2, "trial {trial}: {stats:?}");
    }
}

/// The always-unpark baseline (each shared job also nudges a worker,
/// round-robin) runs every shared job, published from outside the pool
/// and from its workers, and shuts down: its extra wakes are nudges, not
/// search tickets, so the rule's bookkeeping is the protocol pool's.
#[test]
fn the_always_unpark_baseline_runs_every_shared_job() {
    const WORKERS: usize = 4;
    const JOBS: usize = 2000;
    let pool = ThreadPool::new(PoolConfig {
        policy: Policy::AlwaysIpi,
        ..PoolConfig::new(WORKERS)
    });
    let (done, finished) = mpsc::channel();
    for i in 0..JOBS {
        let done = done.clone();
        if i % 2 == 0 {
            pool.spawn(move |_| done.send(()).unwrap());
        } else {
            // A shared job published by a worker.
            pool.submit(i % WORKERS, move |worker| {
                worker.spawn(move |_| done.send(()).unwrap());
            });
        }
    }
    for n in 0..JOBS {
        assert_eq!(
            finished.recv_timeout(HANG_GUARD),
            Ok(()),
            "job {n} of {JOBS} never ran"
        );
    }
    let stats = pool.shutdown();
    assert_eq!(stats.panicked_jobs, 0, "{stats:?}");
}

/// A worker runs the jobs it spawns oldest first: a job that waits for an
/// earlier spawn of the same worker finds it run, even with no other
/// worker to steal it (with newest first, the waiting job ran first and
/// waited for good).
#[test]
fn a_job_waiting_for_an_earlier_spawn_of_its_worker_completes() {
    let pool = ThreadPool::new(PoolConfig::new(1));
    let (result, results) = mpsc::channel();
    pool.spawn(move |worker| {
        let (sent, received) = mpsc::channel::<u32>();
        worker.spawn(move |_| sent.send(7).unwrap());
        worker.spawn(move |_| {
            result.send(received.recv_timeout(HANG_GUARD)).unwrap();
        });
    });
    assert_eq!(
        results.recv_timeout(HANG_GUARD),
        Ok(Ok(7)),
        "the waiting job did not see the earlier spawn run"
    );
    let _ = pool.shutdown();
}

/// Two workers, both running (nobody is registered idle, so no spawn takes
/// the pool's lock and nobody steals), each spawn a job and then a poller
/// that respawns itself until both jobs have run (a cooperative yield): the
/// pollers end. With newest first each worker ran its own poller forever.
#[test]
fn a_respawning_job_never_starves_an_earlier_spawn() {
    struct Poll {
        ran: [AtomicBool; 2],
        give_up: AtomicBool,
    }
    fn poll(worker: &Worker<'_>, state: Arc<Poll>, done: mpsc::Sender<bool>) {
        let both = state.ran.iter().all(|ran| ran.load(SeqCst));
        if both || state.give_up.load(SeqCst) {
            let _ = done.send(both);
            return;
        }
        worker.spawn(move |worker| poll(worker, state, done));
    }
    let pool = ThreadPool::new(PoolConfig::new(2));
    let state = Arc::new(Poll {
        ran: [AtomicBool::new(false), AtomicBool::new(false)],
        give_up: AtomicBool::new(false),
    });
    let both_running = Arc::new(std::sync::Barrier::new(2));
    let (done, finished) = mpsc::channel();
    for i in 0..2 {
        let (state, both_running, done) =
            (Arc::clone(&state), Arc::clone(&both_running), done.clone());
        // Shared jobs: each runs on a worker not registered idle (it took
        // the job from the shared queue), so its spawns go onto its own
        // queue. The two meet at the barrier, so they run on two workers.
        pool.spawn(move |worker| {
            both_running.wait();
            let mine = Arc::clone(&state);
            worker.spawn(move |_| mine.ran[i].store(true, SeqCst));
            worker.spawn(move |worker| poll(worker, state, done));
        });
    }
    let outcome = finished.recv_timeout(HANG_GUARD);
    // Ends the pollers if they did not end themselves, so that the pool
    // can stop.
    state.give_up.store(true, SeqCst);
    assert_eq!(outcome, Ok(true), "a poller starved an earlier spawn");
    let _ = pool.shutdown();
}

/// Shared jobs spawned from outside the pool start oldest first: with two
/// workers, jobs A, B, C and D queued while both workers are held in a
/// private job, where A waits (without helping) until B has started and C
/// until D has. The two oldest always run together, so both pairs meet,
/// and A and B are the first two to start. A
/// taker that moved newer jobs onto its own queue behind the one it runs
/// (a share of the shared queue, tried in 643f50d) deadlocked here: A's
/// worker held B, the other worker ran C, and nobody ran B or D.
#[test]
fn outside_spawns_start_oldest_first_so_waiting_pairs_meet() {
    const WORKERS: usize = 2;
    const JOBS: usize = 4;
    let pool = ThreadPool::new(PoolConfig::new(WORKERS));
    let release = hold_every_worker(&pool);
    // Each job's place among the starts (`usize::MAX`: not started).
    let start_order: Arc<Vec<AtomicUsize>> =
        Arc::new((0..JOBS).map(|_| AtomicUsize::new(usize::MAX)).collect());
    let starts = Arc::new(AtomicUsize::new(0));
    // Set when the test gives up, so that a waiting job ends.
    let give_up = Arc::new(AtomicBool::new(false));
    let (done, finished) = mpsc::channel();
    for job in 0..JOBS {
        let (start_order, starts) = (Arc::clone(&start_order), Arc::clone(&starts));
        let (give_up, done) = (Arc::clone(&give_up), done.clone());
        pool.spawn(move |_| {
            start_order[job].store(starts.fetch_add(1, SeqCst), SeqCst);
            if job % 2 == 0 {
                while start_order[job + 1].load(SeqCst) == usize::MAX {
                    if give_up.load(SeqCst) {
                        return;
                    }
                    std::thread::yield_now();
                }
            }
            done.send(job).unwrap();
        });
    }
    release.store(true, SeqCst);
    let mut ran = BTreeSet::new();
    for _ in 0..JOBS {
        match finished.recv_timeout(HANG_GUARD) {
            Ok(job) => {
                ran.insert(job);
            }
            Err(_) => {
                give_up.store(true, SeqCst);
                let started: Vec<bool> = start_order
                    .iter()
                    .map(|o| o.load(SeqCst) != usize::MAX)
                    .collect();
                panic!("pairs never met: finished {ran:?}, started {started:?}");
            }
        }
    }
    // Oldest first: A and B hold the first two starts (a queue taken
    // newest first, or a taker's move, starts C or D before one of them).
    let order: Vec<usize> = start_order.iter().map(|o| o.load(SeqCst)).collect();
    let mut first_two = [order[0], order[1]];
    first_two.sort_unstable();
    assert_eq!(first_two, [0, 1], "start order of A, B, C, D: {order:?}");
    let stats = pool.shutdown();
    assert_eq!(stats.jobs_run, (JOBS + WORKERS) as u64, "{stats:?}");
}

/// A worker that spawns one job and then blocks until that job has run
/// leaves it alone on its own queue, where it will never pop it: another
/// worker must steal it. An idle worker leaves a lone job to its owner for
/// a few glances (`src/pool/lone_item_grace.rs`: the owner of a chain of
/// spawns pops it within nanoseconds) and then steals it; with no bound on
/// that wait, the other worker waited here for good.
#[test]
fn a_blocked_spawners_lone_job_is_stolen() {
    const TRIALS: usize = 10;
    for workers in [2, 4] {
        for trial in 0..TRIALS {
            let pool = ThreadPool::new(PoolConfig::new(workers));
            let (done, finished) = mpsc::channel();
            // A shared job: its worker took it out of the idle set, so its
            // spawn goes onto its own queue.
            pool.spawn(move |w| {
                let (ran, child_ran) = mpsc::channel();
                w.spawn(move |w| ran.send(w.index()).unwrap());
                done.send((w.index(), child_ran.recv_timeout(HANG_GUARD)))
                    .unwrap();
            });
            let (spawner, outcome) = finished
                .recv_timeout(2 * HANG_GUARD)
                .expect("the spawning job neither finished nor gave up");
            let thief = outcome.unwrap_or_else(|_| {
                panic!(
                    "{workers} workers, trial {trial}: the lone job of worker {spawner}, \
                     blocked waiting for it, never ran"
                )
            });
            assert_ne!(thief, spawner, "{workers} workers, trial {trial}");
            let stats = pool.shutdown();
            assert_eq!(
                stats.jobs_run, 2,
                "{workers} workers, trial {trial}: {stats:?}"
            );
        }
    }
}

/// Several threads outside the pool spawn at once, in bursts with every
/// worker asleep in between: each burst's first jobs find the workers
/// registered idle (the pushers take the pool's lock to wake them, or skip
/// it past a searcher still to look), the rest find them running (no lock:
/// the outside queue, `Stealable::push_outside`). Every job runs exactly
/// once and every burst completes: a pusher or a registering worker that
/// missed the other's write (the outside push / registration pair) leaves
/// a job stranded with every worker asleep, and the burst never ends.
#[test]
fn jobs_spawned_from_outside_by_several_threads_each_run_once() {
    const WORKERS: usize = 2;
    const PRODUCERS: usize = 3;
    const BURSTS: usize = 20;
    const JOBS_PER_PRODUCER: usize = 300;
    const JOBS: usize = PRODUCERS * JOBS_PER_PRODUCER;
    let pool = ThreadPool::new(PoolConfig::new(WORKERS));
    for burst in 0..BURSTS {
        wait_until_all_asleep(&pool);
        let runs: Arc<Vec<AtomicUsize>> =
            Arc::new((0..JOBS).map(|_| AtomicUsize::new(0)).collect());
        let ran = Arc::new(AtomicUsize::new(0));
        let (done, finished) = mpsc::channel();
        std::thread::scope(|scope| {
            for producer_index in 0..PRODUCERS {
                let producer = pool.producer();
                let (runs, ran, done) = (Arc::clone(&runs), Arc::clone(&ran), done.clone());
                scope.spawn(move || {
                    for job in 0..JOBS_PER_PRODUCER {
                        let slot = producer_index * JOBS_PER_PRODUCER + job;
                        let (runs, ran, done) = (Arc::clone(&runs), Arc::clone(&ran), done.clone());
                        producer.spawn(move |_| {
                            runs[slot].fetch_add(1, SeqCst);
                            if ran.fetch_add(1, SeqCst) + 1 == JOBS {
                                done.send(()).unwrap();
                            }
                        });
                    }
                });
            }
        });
        if finished.recv_timeout(HANG_GUARD).is_err() {
            panic!(
                "burst {burst}: {} of {JOBS} jobs ran, {} worker(s) asleep",
                ran.load(SeqCst),
                pool.sleeping_workers()
            );
        }
        let not_once: Vec<usize> = (0..JOBS)
            .filter(|&slot| runs[slot].load(SeqCst) != 1)
            .collect();
        assert!(
            not_once.is_empty(),
            "burst {burst}: jobs not run exactly once: {not_once:?}"
        );
    }
    let stats = pool.shutdown();
    assert_eq!(stats.jobs_run, (BURSTS * JOBS) as u64, "{stats:?}");
}
