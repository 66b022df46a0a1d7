//! `Worker::join` on real threads: a one-worker pool runs a join tree in
//! place; a joiner with no thief runs every spawned half itself, depth
//! first, with no unpark and no job left behind; a join takes back only its
//! own half; a join nested behind its outer join's half runs in place while
//! no worker is idle, and spawns otherwise, as a join in no spawning join's
//! first half always does; a half another worker runs is waited for and its
//! result returned; and a panic in either half goes on from the join.
//! `Worker::join_sharing` clones what its halves share only for a half it
//! spawns, hands a stolen half that clone, and runs neither half when the
//! clone panics.
//!
//! Its own test binary: the panic hook that keeps the deliberate panics
//! quiet is process-wide. Every wait is for a message; the timeout
//! ([`HANG_GUARD`]) turns a join that waits for good into a failure.

#![cfg(not(loom))]

#[path = "support/deliberate_panic.rs"]
mod deliberate_panic;

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use deliberate_panic::{DeliberatePanic, quiet_deliberate_panics};
use vigil_wake::pool::{PoolConfig, ThreadPool, Worker};

/// Generous: only a hang gets near it.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// The next message from `finished`, or a failure naming `what` if none
/// comes within [`HANG_GUARD`]: the pool is leaked then, not stopped (its
/// stop would wait for the hung job for good, and the test would hang
/// instead of failing).
fn received<T>(pool: &mut Option<ThreadPool>, finished: &Receiver<T>, what: &str) -> T {
    finished.recv_timeout(HANG_GUARD).unwrap_or_else(|error| {
        std::mem::forget(pool.take());
        match error {
            RecvTimeoutError::Timeout => panic!("{what} hung"),
            RecvTimeoutError::Disconnected => panic!("{what} was dropped unrun"),
        }
    })
}

fn wait_until_all_asleep(pool: &ThreadPool) {
    while pool.sleeping_workers() < pool.workers() {
        std::thread::yield_now();
    }
}

/// A two-worker pool whose worker 1 runs a job that holds it until
/// `release` is sent or dropped (or twice [`HANG_GUARD`] passes, so that
/// a test that hangs fails at its own guard first): worker 0's joins spawn
/// their halves (a one-worker pool would run them in place) and nobody
/// steals them. Both workers were asleep before the hold: the hold's wake
/// is the pool's only unpark so far.
struct HeldPool {
    /// Declared first, so dropped first: a test that fails with the pool
    /// still here lets worker 1 go before the pool's drop waits for it.
    release: Sender<()>,
    pool: Option<ThreadPool>,
}

impl HeldPool {
    fn new() -> Self {
        let pool = ThreadPool::new(PoolConfig::new(2));
        wait_until_all_asleep(&pool);
        let (release, released) = mpsc::channel();
        let (holding, is_holding) = mpsc::channel();
        pool.submit(1, move |_| {
            holding.send(()).unwrap();
            let _ = released.recv_timeout(2 * HANG_GUARD);
        });
        is_holding
            .recv_timeout(HANG_GUARD)
            .expect("worker 1 never ran the job that holds it");
        Self {
            release,
            pool: Some(pool),
        }
    }

    /// Runs `run` on a held pool (see [`HeldPool::new`]), then lets worker
    /// 1 go and stops the pool: its stats.
    fn stats_after(run: impl FnOnce(&mut Option<ThreadPool>)) -> vigil_wake::pool::PoolStats {
        let mut held = Self::new();
        run(&mut held.pool);
        held.shutdown()
    }

    /// Lets worker 1 go and stops the pool.
    fn shutdown(self) -> vigil_wake::pool::PoolStats {
        self.release.send(()).unwrap();
        self.pool.unwrap().shutdown()
    }
}

/// A join tree over `from..to`: each leaf sends its number to `ran` as it
/// runs, so the receiver reads the leaves in the order they ran.
fn leaves(w: &Worker<'_>, from: u32, to: u32, ran: &Sender<u32>) {
    if to - from == 1 {
        ran.send(from).unwrap();
        return;
    }
    let middle = from + (to - from) / 2;
    let second = ran.clone();
    w.join(
        |w| leaves(w, from, middle, ran),
        move |w| leaves(w, middle, to, &second),
    );
}

/// Runs a join tree of [`LEAVES`] leaves as one job of `pool`: the leaves
/// in the order they ran.
fn run_tree(pool: &mut Option<ThreadPool>) -> Vec<u32> {
    let (ran, leaves_ran) = mpsc::channel();
    let (done, finished) = mpsc::channel();
    pool.as_ref().unwrap().spawn(move |w| {
        leaves(w, 0, LEAVES, &ran);
        done.send(()).unwrap();
    });
    received(pool, &finished, "the join tree");
    leaves_ran.try_iter().collect()
}

const LEAVES: u32 = 1024;

/// One worker: nothing is spawned, both halves run in place, depth first
/// (each leaf in order); the only unpark is the one that woke the worker
/// for the tree, and the only job the tree's root.
#[test]
fn one_worker_runs_a_join_tree_in_place() {
    let mut pool = Some(ThreadPool::new(PoolConfig::new(1)));
    let one = pool.as_ref().unwrap();
    wait_until_all_asleep(one);
    let order = run_tree(&mut pool);
    assert_eq!(order, (0..LEAVES).collect::<Vec<_>>());
    let stats = pool.unwrap().shutdown();
    assert_eq!(stats.jobs_run, 1, "{stats:?}");
    assert_eq!(stats.unparks, 1, "{stats:?}");
}

/// A joiner with no thief (the other worker held): it runs every second
/// half itself, at once, depth first (each leaf in order), and never waits.
/// A join that waited for its spawned half to come round in the queue
/// would hang here: the joiner is the only worker that would run it
/// (worker 1 is held past the test's own guard).
#[test]
fn a_joiner_with_no_thief_runs_a_join_tree_depth_first_without_an_unpark() {
    let stats = HeldPool::stats_after(|pool| {
        let order = run_tree(pool);
        assert_eq!(order, (0..LEAVES).collect::<Vec<_>>());
    });
    // The hold and the root alone ran: every join took its spawned job
    // back off the queue (had one stayed, it would have run, finding its
    // half claimed, and counted). Every join spawned: the held worker
    // stays registered idle, so none ran in place behind its outer half.
    assert_eq!(stats.jobs_run, 2, "{stats:?}");
    // No join woke anybody: its pushes went onto the running worker's own
    // queue with the only other worker busy, and no joiner parked (that
    // unpark would be counted here). The two: the hold's, the root's.
    assert_eq!(stats.unparks, 2, "{stats:?}");
}

/// Spawns a job whose join's first half spawns a plain job, and waits for
/// that plain job to run.
fn join_with_a_plain_spawn(pool: &mut Option<ThreadPool>) {
    let (done, finished) = mpsc::channel();
    pool.as_ref().unwrap().spawn(move |w| {
        let ((), ()) = w.join(move |w| w.spawn(move |_| done.send(7).unwrap()), |_| ());
    });
    assert_eq!(received(pool, &finished, "the first half's spawn"), 7);
}

/// One worker spawns nothing for a join: the root and its first half's
/// plain job are the only jobs run (the spawned path would leave the
/// half's job behind the newer plain job, to run later as a no-op: 3).
#[test]
fn a_one_worker_join_spawns_nothing() {
    let mut pool = Some(ThreadPool::new(PoolConfig::new(1)));
    join_with_a_plain_spawn(&mut pool);
    let stats = pool.unwrap().shutdown();
    assert_eq!(stats.jobs_run, 2, "{stats:?}");
}

/// A join takes back only its own half's job: a plain job its first half
/// spawned, newer on the queue than the half, stays there and runs (the
/// other worker held, so nobody steals it first).
#[test]
fn a_join_leaves_a_job_its_first_half_spawned_on_the_queue() {
    let stats = HeldPool::stats_after(join_with_a_plain_spawn);
    // The hold, the root, the plain job, and the half's spawned job, which
    // stayed (the plain job was newer) and ran before it (oldest first),
    // finding its half claimed.
    assert_eq!(stats.jobs_run, 4, "{stats:?}");
}

/// Spawns a job whose join nests a second join in its first half; the
/// inner join's first half spawns a plain job. Waits for that job to run.
fn join_nested_behind_its_half(pool: &mut Option<ThreadPool>) {
    let (done, finished) = mpsc::channel();
    pool.as_ref().unwrap().spawn(move |w| {
        let (((), ()), ()) = w.join(
            move |w| w.join(move |w| w.spawn(move |_| done.send(7).unwrap()), |_| ()),
            |_| (),
        );
    });
    assert_eq!(received(pool, &finished, "the inner first half's job"), 7);
}

/// A two-worker pool whose other worker is busy with a shared job (so not
/// registered idle, as a worker held by a private job is) until `release`
/// is sent or dropped: the holding job's channel and the pool.
fn pool_with_a_worker_busy() -> (Sender<()>, Option<ThreadPool>) {
    let mut pool = Some(ThreadPool::new(PoolConfig::new(2)));
    wait_until_all_asleep(pool.as_ref().unwrap());
    let (release, released) = mpsc::channel::<()>();
    let (holding, is_holding) = mpsc::channel();
    pool.as_ref().unwrap().spawn(move |_| {
        holding.send(()).unwrap();
        let _ = released.recv_timeout(2 * HANG_GUARD);
    });
    received(&mut pool, &is_holding, "the shared job that holds a worker");
    (release, pool)
}

/// A join nested in a join that spawned its half, that half still on the
/// worker's queue and no worker registered idle, spawns nothing: a thief
/// would take the queued half first, so the inner join runs both halves in
/// place. The hold, the root and the inner first half's plain job run, and
/// the outer half, which could not be taken back past the newer plain job
/// and runs later as a no-op: 4 (the inner half spawned as well, left on
/// the queue under the newer plain job the same way: 5).
#[test]
fn a_join_nested_behind_its_outer_half_with_no_worker_idle_runs_in_place() {
    let (release, mut pool) = pool_with_a_worker_busy();
    join_nested_behind_its_half(&mut pool);
    release.send(()).unwrap();
    let stats = pool.unwrap().shutdown();
    assert_eq!(stats.jobs_run, 4, "{stats:?}");
}

/// The same nested join with a worker registered idle (held by a private
/// job, which it started from idle) spawns its half: an idle worker could
/// take it. The held worker never does, so both halves' jobs stay on the
/// queue under the newer plain job and run as no-ops: 5 (4 with the idle
/// check removed).
#[test]
fn a_join_nested_behind_its_outer_half_spawns_while_a_worker_is_idle() {
    let stats = HeldPool::stats_after(join_nested_behind_its_half);
    assert_eq!(stats.jobs_run, 5, "{stats:?}");
}

/// What the halves of [`leaves_sharing`] share: the leaves' channel, and
/// a count of this handle's clones (each clone adds one to it).
#[derive(Debug)]
struct SharedLeaves {
    ran: Sender<u32>,
    clones: Arc<AtomicUsize>,
}

impl Clone for SharedLeaves {
    fn clone(&self) -> Self {
        self.clones.fetch_add(1, Ordering::Relaxed);
        Self {
            ran: self.ran.clone(),
            clones: Arc::clone(&self.clones),
        }
    }
}

/// [`leaves`] through `Worker::join_sharing`.
fn leaves_sharing(w: &Worker<'_>, from: u32, to: u32, shared: &SharedLeaves) {
    if to - from == 1 {
        shared.ran.send(from).unwrap();
        return;
    }
    let middle = from + (to - from) / 2;
    w.join_sharing(
        shared,
        |w, shared| leaves_sharing(w, from, middle, shared),
        move |w, shared| leaves_sharing(w, middle, to, shared),
    );
}

/// [`run_tree`] through `Worker::join_sharing`: the leaves in the order
/// they ran, and how many times the shared handle was cloned.
fn run_tree_sharing(pool: &mut Option<ThreadPool>) -> (Vec<u32>, usize) {
    let (ran, leaves_ran) = mpsc::channel();
    let (done, finished) = mpsc::channel();
    pool.as_ref().unwrap().spawn(move |w| {
        let shared = SharedLeaves {
            ran,
            clones: Arc::new(AtomicUsize::new(0)),
        };
        leaves_sharing(w, 0, LEAVES, &shared);
        done.send(shared.clones.load(Ordering::Relaxed)).unwrap();
    });
    let clones = received(pool, &finished, "the join tree");
    (leaves_ran.try_iter().collect(), clones)
}

/// One worker: `join_sharing` runs the tree as `join` does, both halves
/// borrowing the shared handle, which is never cloned (with a clone made
/// before every join, as `join`'s caller must: 1023).
#[test]
fn join_sharing_in_a_one_worker_pool_clones_nothing() {
    let mut pool = Some(ThreadPool::new(PoolConfig::new(1)));
    let (order, clones) = run_tree_sharing(&mut pool);
    assert_eq!(order, (0..LEAVES).collect::<Vec<_>>());
    assert_eq!(clones, 0);
    assert_eq!(pool.unwrap().shutdown().jobs_run, 1);
}

/// A join that spawns its half gives the half a clone of its own: with
/// worker 1 held and registered idle every join of the tree spawns, one
/// clone each, and the joiner runs every half itself, in order.
#[test]
fn join_sharing_clones_for_every_half_it_spawns() {
    HeldPool::stats_after(|pool| {
        let (order, clones) = run_tree_sharing(pool);
        assert_eq!(order, (0..LEAVES).collect::<Vec<_>>());
        assert_eq!(clones, LEAVES as usize - 1);
    });
}

/// A join nested behind its outer half with no worker idle runs in place
/// and clones nothing; its outer join spawned, and cloned once (2 with a
/// clone at every join, or with the nested join spawning).
#[test]
fn join_sharing_nested_behind_its_outer_half_clones_nothing() {
    let (release, mut pool) = pool_with_a_worker_busy();
    let (done, finished) = mpsc::channel();
    pool.as_ref().unwrap().spawn(move |w| {
        let shared = SharedLeaves {
            ran: mpsc::channel().0,
            clones: Arc::new(AtomicUsize::new(0)),
        };
        w.join_sharing(
            &shared,
            |w, shared| w.join_sharing(shared, |_, _| (), |_, _| ()),
            |_, _| (),
        );
        done.send(shared.clones.load(Ordering::Relaxed)).unwrap();
    });
    let clones = received(&mut pool, &finished, "the nested join");
    release.send(()).unwrap();
    assert_eq!(clones, 1);
    assert_eq!(pool.unwrap().shutdown().panicked_jobs, 0);
}

/// A stolen half of `join_sharing` runs on the thief with its own clone,
/// which reaches what the joiner shared: the first half waits until the
/// second has started on another worker.
#[test]
fn join_sharing_hands_a_stolen_half_its_clone() {
    let pool = ThreadPool::new(PoolConfig::new(2));
    wait_until_all_asleep(&pool);
    thief_runs_the_half(Some(pool), None, |w, first_runs| {
        let (started, has_started) = mpsc::channel();
        let shared = SharedLeaves {
            ran: started,
            clones: Arc::new(AtomicUsize::new(0)),
        };
        let (thief, ()) = w.join_sharing(
            &shared,
            move |_, _| {
                let _ = first_runs.send(());
                has_started
                    .recv_timeout(HANG_GUARD)
                    .expect("the second half never started elsewhere")
            },
            |w, shared| shared.ran.send(u32::try_from(w.index()).unwrap()).unwrap(),
        );
        assert_eq!(shared.clones.load(Ordering::Relaxed), 1);
        usize::try_from(thief).unwrap()
    });
}

/// Joins with a first half that says it runs (to `first_runs`, if anyone
/// still listens) and then waits for the second half to start on another
/// worker: the index of the worker that ran the second half.
fn join_waiting_for_a_thief(w: &Worker<'_>, first_runs: Sender<()>) -> usize {
    let (started, has_started) = mpsc::channel();
    let (thief, ()) = w.join(
        move |_| {
            let _ = first_runs.send(());
            has_started
                .recv_timeout(HANG_GUARD)
                .expect("the second half never started elsewhere")
        },
        move |w| started.send(w.index()).unwrap(),
    );
    thief
}

/// Runs `join` as one job of `pool` (its argument: the sender for
/// [`join_waiting_for_a_thief`]), lets `release` go once the first half
/// runs, and checks that another worker than the joiner ran the half.
fn thief_runs_the_half(
    mut pool: Option<ThreadPool>,
    release: Option<Sender<()>>,
    join: impl FnOnce(&Worker<'_>, Sender<()>) -> usize + Send + 'static,
) {
    let (first_runs, first_is_running) = mpsc::channel();
    let (done, finished) = mpsc::channel();
    pool.as_ref().unwrap().spawn(move |w| {
        let me = w.index();
        done.send((me, join(w, first_runs))).unwrap();
    });
    received(&mut pool, &first_is_running, "the waiting first half");
    if let Some(release) = release {
        release.send(()).unwrap();
    }
    let (joiner, thief) = received(&mut pool, &finished, "the join");
    assert_ne!(joiner, thief, "the joiner ran the half it waited for");
    assert_eq!(pool.unwrap().shutdown().panicked_jobs, 0);
}

/// Three workers, two of them idle: a join nested behind its outer half
/// still gets its second half run on another worker while its first waits
/// for it (one or both of the idle workers take the outer half and the
/// inner one). With the idle check removed the inner join runs in place
/// and its first half's wait times out, unless a woken worker had already
/// taken the outer half by the time the joiner reached the inner join (a
/// wake and eight glances against a few instructions).
#[test]
fn a_join_nested_behind_its_outer_half_gives_an_idle_worker_its_half() {
    let pool = ThreadPool::new(PoolConfig::new(3));
    wait_until_all_asleep(&pool);
    thief_runs_the_half(Some(pool), None, |w, first_runs| {
        w.join(|w| join_waiting_for_a_thief(w, first_runs), |_| ())
            .0
    });
}

/// A join nested in no spawning join spawns its half even behind a queued
/// job with no worker idle: the other worker, busy when the join starts,
/// takes the queued job and then the half, while the first half waits for
/// the second to start (released only once the first half runs, so after
/// the join chose). A join that ran in place behind any queued job would
/// wait here for good: its second half never starts.
#[test]
fn a_join_behind_a_queued_job_in_no_spawning_join_spawns_its_half() {
    let (release, pool) = pool_with_a_worker_busy();
    thief_runs_the_half(pool, Some(release), |w, first_runs| {
        w.spawn(|_| ());
        join_waiting_for_a_thief(w, first_runs)
    });
}

/// A join nested behind an outer half that a thief already took, its
/// worker's queue empty and no worker idle (the thief is running that
/// half), spawns its half: nothing is left on the queue for a thief, so
/// the inner join offers its own, which the thief takes once let go (after
/// the inner first half runs). Run in place whenever it is nested, the
/// queue's length unread, the inner join would wait for good.
#[test]
fn a_nested_join_whose_outer_half_a_thief_runs_spawns_its_half() {
    let pool = ThreadPool::new(PoolConfig::new(2));
    wait_until_all_asleep(&pool);
    let (let_go, go) = mpsc::channel::<()>();
    thief_runs_the_half(Some(pool), Some(let_go), |w, first_runs| {
        let (outer_runs, outer_is_running) = mpsc::channel();
        w.join(
            move |w| {
                outer_is_running
                    .recv_timeout(HANG_GUARD)
                    .expect("the outer half never started elsewhere");
                join_waiting_for_a_thief(w, first_runs)
            },
            move |_| {
                outer_runs.send(()).unwrap();
                let _ = go.recv_timeout(2 * HANG_GUARD);
            },
        )
        .0
    });
}

/// A join made in a second half that the joiner runs itself is no longer
/// behind that join's half (its job was taken back, or stays only as a
/// no-op), so with no worker idle and jobs queued it spawns as a top-level
/// join does: the other worker, released once the inner first half runs,
/// takes the queued jobs and then the inner half. Counted as nested (the
/// outer join still open while its `second` runs), the inner join would
/// run in place and its first half's wait would time out.
#[test]
fn a_join_in_a_second_half_run_by_its_joiner_spawns_its_half() {
    let (release, pool) = pool_with_a_worker_busy();
    thief_runs_the_half(pool, Some(release), |w, first_runs| {
        w.join(
            // A plain job newer than the outer half: the half's job cannot
            // be taken back past it and stays queued, claimed.
            |w| w.spawn(|_| ()),
            move |w| join_waiting_for_a_thief(w, first_runs),
        )
        .1
    });
}

/// A half another worker started is waited for, and its result is the
/// join's: the first half holds the joiner until the second has started
/// on the other worker (so the claim is the thief's), then the joiner
/// waits for the thief to finish. Whether it parks (the thief still
/// running at its claim) or finds the half finished depends on the host's
/// timing, so this checks the integration on whichever paths the trials
/// take; the lost wake on the parked path is the loom model's to find
/// (`tests/loom_join.rs`, every interleaving).
#[test]
fn a_half_another_worker_runs_is_waited_for_and_returned() {
    const TRIALS: u32 = 200;
    let mut pool = Some(ThreadPool::new(PoolConfig::new(2)));
    for trial in 0..TRIALS {
        let (done, finished) = mpsc::channel();
        pool.as_ref().unwrap().spawn(move |w| {
            let (started, has_started) = mpsc::channel();
            let me = w.index();
            let result = w.join(
                move |_| {
                    has_started
                        .recv_timeout(HANG_GUARD)
                        .expect("the second half never started elsewhere")
                },
                move |w| {
                    started.send(w.index()).unwrap();
                    trial * 2
                },
            );
            done.send((me, result)).unwrap();
        });
        let (joiner, (thief, doubled)) = received(&mut pool, &finished, "the join");
        assert_ne!(
            joiner, thief,
            "trial {trial}: the joiner ran the half it waited for"
        );
        assert_eq!(doubled, trial * 2, "trial {trial}");
    }
    let stats = pool.unwrap().shutdown();
    assert_eq!(stats.panicked_jobs, 0);
}

/// The payload a join panicked with, from inside a job.
fn join_panic(
    pool: &mut Option<ThreadPool>,
    join: impl FnOnce(&Worker<'_>) + Send + 'static,
) -> Option<&'static str> {
    let (done, finished) = mpsc::channel();
    pool.as_ref().unwrap().spawn(move |w| {
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| join(w)));
        let payload = outcome.err().map(|payload| {
            payload
                .downcast::<DeliberatePanic>()
                .expect("the deliberate panic")
                .0
        });
        done.send(payload).unwrap();
    });
    received(pool, &finished, "the join")
}

/// The first half's panic and the second's, run where the join is: in
/// place (`pool` of one worker) or taken back (the other worker held).
fn panics_run_here(pool: &mut Option<ThreadPool>) {
    let first = join_panic(pool, |w| {
        let _ = w.join(|_| panic::panic_any(DeliberatePanic("first")), |_| 1);
    });
    assert_eq!(first, Some("first"));
    let second_here = join_panic(pool, |w| {
        let _ = w.join(
            |_| 1,
            |_| -> u32 { panic::panic_any(DeliberatePanic("second")) },
        );
    });
    assert_eq!(second_here, Some("second"));
    // `second` dropped unrun after `first` panicked, its drop panicking:
    // that panic comes out of the join (dropped during the first's
    // unwinding, it would abort the process).
    let dropped = join_panic(pool, |w| {
        let guard = PanicsOnDrop;
        let _ = w.join(
            |_| panic::panic_any(DeliberatePanic("first")),
            move |_| {
                let _kept = &guard;
                1
            },
        );
    });
    assert_eq!(dropped, Some("drop"));
}

/// Panics with [`DeliberatePanic`] `"drop"` when dropped.
struct PanicsOnDrop;

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        panic::panic_any(DeliberatePanic("drop"));
    }
}

/// A handle whose clone panics with [`DeliberatePanic`] `"clone"`.
#[derive(Debug)]
struct PanicsOnClone;

impl Clone for PanicsOnClone {
    fn clone(&self) -> Self {
        panic::panic_any(DeliberatePanic("clone"))
    }
}

/// A `join_sharing` whose clone panics (worker 1 held and registered idle,
/// so the join spawns and clones) runs neither half, and the clone's panic
/// goes on from the join; a `second` whose drop panics is dropped before
/// that panic goes on, so its panic comes out of the join (dropped during
/// the clone's unwinding, it would abort the test binary).
#[test]
fn a_panicking_clone_in_join_sharing_runs_neither_half() {
    quiet_deliberate_panics();
    let stats = HeldPool::stats_after(|pool| {
        let ran = Arc::new(AtomicUsize::new(0));
        let (first_ran, second_ran) = (Arc::clone(&ran), Arc::clone(&ran));
        let cloned = join_panic(pool, move |w| {
            let ((), ()) = w.join_sharing(
                &PanicsOnClone,
                move |_, _| {
                    first_ran.fetch_add(1, Ordering::Relaxed);
                },
                move |_, _| {
                    second_ran.fetch_add(1, Ordering::Relaxed);
                },
            );
        });
        assert_eq!(cloned, Some("clone"));
        assert_eq!(ran.load(Ordering::Relaxed), 0, "a half ran");
        let dropped = join_panic(pool, |w| {
            let guard = PanicsOnDrop;
            let ((), ()) = w.join_sharing(
                &PanicsOnClone,
                |_, _| (),
                move |_, _| {
                    let _kept = &guard;
                },
            );
        });
        assert_eq!(dropped, Some("drop"));
    });
    assert_eq!(stats.panicked_jobs, 0);
}

/// A panic in either half goes on from the join, whoever ran the half: the
/// first half's own; the second's, run here (one worker, or two with the
/// other held) or by a thief (two workers, the first half waiting until it
/// started); the first's when both panic, after the thief's half is done.
/// None counts as a panicked job of the pool: each was caught where the
/// join was called.
#[test]
fn a_panic_in_either_half_goes_on_from_the_join() {
    quiet_deliberate_panics();
    let mut one = Some(ThreadPool::new(PoolConfig::new(1)));
    panics_run_here(&mut one);
    assert_eq!(one.unwrap().shutdown().panicked_jobs, 0);
    assert_eq!(HeldPool::stats_after(panics_run_here).panicked_jobs, 0);

    let mut two = Some(ThreadPool::new(PoolConfig::new(2)));
    for both in [false, true] {
        let payload = join_panic(&mut two, move |w| {
            let (started, has_started) = mpsc::channel();
            let _ = w.join(
                move |_| {
                    has_started
                        .recv_timeout(HANG_GUARD)
                        .expect("the half never started");
                    if both {
                        panic::panic_any(DeliberatePanic("first"));
                    }
                },
                move |_| -> u32 {
                    started.send(()).unwrap();
                    panic::panic_any(DeliberatePanic("stolen"))
                },
            );
        });
        assert_eq!(payload, Some(if both { "first" } else { "stolen" }));
    }
    assert_eq!(two.unwrap().shutdown().panicked_jobs, 0);
}
