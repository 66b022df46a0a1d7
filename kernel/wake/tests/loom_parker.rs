//! Loom: the task [`Parker`] under every interleaving and every memory-order
//! outcome loom models.
//!
//! The model:
//! * the **task** is a loom thread running the kernel's blocking loop: check
//!   a condition (every waker has published all its rounds), and if it does
//!   not hold, `try_consume_or_park`. A consumed token means "check again";
//!   `false` means the task is `PARKED` and **switches away**, modelled as
//!   a loom `park()` of the task's thread until somebody makes it runnable;
//! * each **waker** is a loom thread that, per round, publishes its round
//!   number (a Relaxed store: only the parker may order it), then calls
//!   `unpark`. On `MustEnqueue` it **makes the task runnable**: it marks it
//!   runnable and loom-`unpark`s its thread (loom's `unpark` carries the
//!   unparker's view to the task, as the kernel's locked run-queue and inbox
//!   hand-off does);
//! * when the last waker has finished it wakes the task's thread once more
//!   (the "end of execution" tick), so a task parked forever does not just
//!   deadlock the model but is checked and reported.
//!
//! Checked in every execution:
//! * **no lost wake**: the execution never ends with the task parked, not
//!   runnable, and every waker finished, although a wake was issued after
//!   the task's last check (it saw less than was published);
//! * **one enqueue per park**: `MustEnqueue` is only returned for a task
//!   that is parked and not yet made runnable (two enqueues of one park
//!   would run the task twice), and in the end enqueues equal parks;
//! * **a wake carries its data**: after consuming a token, the task's next
//!   check sees the round of every unpark that left or joined that token;
//!   after being enqueued it sees the round of the unpark that enqueued it;
//! * **the enqueuer sees the task's pre-park writes**: the unparker that
//!   gets `MustEnqueue` reads what the task wrote just before parking (the
//!   parker's documented Release/Acquire on `PARKED`).
//!
//! The bookkeeping ("ghost" state) uses `std` atomics and locks, not loom's:
//! loom runs one thread at a time and switches only at loom operations, so
//! ghost updates made right after a parker call are atomic with it, and
//! they add no branches to the exploration.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p vigil-wake --release
//! --target-dir target/loom --test loom_parker`.

#![cfg(loom)]

use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize as LoomUsize, Ordering::Relaxed};
use loom::thread;
use vigil_wake::{Parker, Unparked};

const LOST_WAKE: &str = "lost wake";
const DOUBLE_ENQUEUE: &str = "two enqueues of one park";
const MISSED_DATA: &str = "missed the published data";
const MISSED_TASK_WRITES: &str =
    "enqueuer missed the task's writes before parking (or enqueued an earlier park again)";

/// One model to check.
#[derive(Clone, Copy, Debug)]
struct Scenario {
    /// One waker thread per entry, publishing and unparking that many rounds.
    rounds_per_waker: &'static [usize],
    /// Loom's preemption bound.
    preemption_bound: usize,
}

/// Shared by the model's threads, on loom's atomics.
struct Shared {
    parker: Parker,
    /// Waker `w`'s last published round.
    progress: Vec<LoomUsize>,
    /// Written by the task just before each `try_consume_or_park`: the
    /// number this park would have if it blocks.
    task_note: LoomUsize,
}

/// Bookkeeping, on `std` atomics (see the module docs).
struct Ghost {
    /// The task parked (`try_consume_or_park` returned false) and has not
    /// run since.
    parked: AtomicBool,
    /// Made runnable by a `MustEnqueue`, not yet resumed.
    runnable: AtomicBool,
    /// The unpark that made it runnable: (waker, round).
    enqueued_by: StdMutex<Option<(usize, usize)>>,
    /// (waker, round) of every `TokenLeft` since the task last consumed.
    tokens: StdMutex<Vec<(usize, usize)>>,
    parks: AtomicUsize,
    enqueues: AtomicUsize,
    /// The task is in its switched-away wait, about to loom-`park`.
    waiting: AtomicBool,
    wakers_left: AtomicUsize,
    all_done: AtomicBool,
}

/// What a model run explored.
struct Explored {
    executions: usize,
    elapsed: Duration,
}

fn check(scenario: Scenario) -> Explored {
    let start = Instant::now();
    // Per check, not global: the test harness runs several checks at once.
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(scenario.preemption_bound);
    builder.check(move || {
        counter.fetch_add(1, SeqCst);
        run_once(scenario.rounds_per_waker);
    });
    Explored {
        executions: executions.load(SeqCst),
        elapsed: start.elapsed(),
    }
}

fn run_once(rounds: &'static [usize]) {
    let shared = Arc::new(Shared {
        parker: Parker::new(),
        progress: rounds.iter().map(|_| LoomUsize::new(0)).collect(),
        task_note: LoomUsize::new(0),
    });
    let ghost = Arc::new(Ghost {
        parked: AtomicBool::new(false),
        runnable: AtomicBool::new(false),
        enqueued_by: StdMutex::new(None),
        tokens: StdMutex::new(Vec::new()),
        parks: AtomicUsize::new(0),
        enqueues: AtomicUsize::new(0),
        waiting: AtomicBool::new(false),
        wakers_left: AtomicUsize::new(rounds.len()),
        all_done: AtomicBool::new(false),
    });
    let task = {
        let shared = Arc::clone(&shared);
        let ghost = Arc::clone(&ghost);
        thread::spawn(move || task(&shared, &ghost, rounds))
    };
    let task_thread = task.thread().clone();
    let wakers: Vec<_> = rounds
        .iter()
        .enumerate()
        .map(|(w, &n)| {
            let shared = Arc::clone(&shared);
            let ghost = Arc::clone(&ghost);
            let task_thread = task_thread.clone();
            thread::spawn(move || waker(&shared, &ghost, &task_thread, w, n))
        })
        .collect();
    for waker in wakers {
        waker.join().expect("waker panicked");
    }
    task.join().expect("task panicked");
    let (parks, enqueues) = (ghost.parks.load(SeqCst), ghost.enqueues.load(SeqCst));
    assert_eq!(
        parks, enqueues,
        "{DOUBLE_ENQUEUE}? {enqueues} enqueues for {parks} parks"
    );
}

/// The kernel's blocking loop (`while !cond { park() }`), with the switch
/// away modelled as waiting, loom-parked, until made runnable.
fn task(shared: &Shared, ghost: &Ghost, rounds: &[usize]) {
    // What the next check must see, per waker, because a consumed token or
    // an enqueue carried it.
    let mut must_see = vec![0; rounds.len()];
    loop {
        let seen: Vec<usize> = shared.progress.iter().map(|p| p.load(Relaxed)).collect();
        for (w, (&s, &m)) in seen.iter().zip(&must_see).enumerate() {
            assert!(
                s >= m,
                "{MISSED_DATA}: after a token or an enqueue carrying waker {w}'s round {m}, \
                 the task still sees round {s}"
            );
        }
        if seen == rounds {
            return;
        }
        let park_number = ghost.parks.load(SeqCst) + 1;
        shared.task_note.store(park_number, Relaxed);
        if shared.parker.try_consume_or_park() {
            // A token: everything the unparks behind it published.
            for (w, k) in ghost.tokens.lock().expect("ghost").drain(..) {
                must_see[w] = must_see[w].max(k);
            }
            continue;
        }
        ghost.parks.fetch_add(1, SeqCst);
        ghost.parked.store(true, SeqCst);
        // Switched away: the task runs again only once made runnable.
        loop {
            if ghost.runnable.swap(false, SeqCst) {
                break;
            }
            assert!(
                !ghost.all_done.load(SeqCst),
                "{LOST_WAKE}: the task is parked and nobody will enqueue it, every waker has \
                 finished, but its last check saw rounds {seen:?} of {rounds:?} (a wake was \
                 issued after that check)"
            );
            ghost.waiting.store(true, SeqCst);
            thread::park();
            ghost.waiting.store(false, SeqCst);
        }
        ghost.parked.store(false, SeqCst);
        let (w, k) = ghost
            .enqueued_by
            .lock()
            .expect("ghost")
            .take()
            .expect("runnable without an enqueue");
        must_see[w] = must_see[w].max(k);
    }
}

fn waker(shared: &Shared, ghost: &Ghost, task: &thread::Thread, w: usize, rounds: usize) {
    for k in 1..=rounds {
        shared.progress[w].store(k, Relaxed);
        match shared.parker.unpark() {
            Unparked::TokenLeft => ghost.tokens.lock().expect("ghost").push((w, k)),
            Unparked::MustEnqueue => {
                assert!(
                    ghost.parked.load(SeqCst),
                    "{DOUBLE_ENQUEUE}: waker {w} round {k} got MustEnqueue for a task that \
                     is running"
                );
                assert!(
                    !ghost.runnable.load(SeqCst),
                    "{DOUBLE_ENQUEUE}: waker {w} round {k} got MustEnqueue for a task \
                     already made runnable"
                );
                // Before any ghost update: this load is a loom step.
                let note = shared.task_note.load(Relaxed);
                let parks = ghost.parks.load(SeqCst);
                assert_eq!(
                    note, parks,
                    "{MISSED_TASK_WRITES}: waker {w} round {k} enqueues park {parks} but reads \
                     the note of park {note}"
                );
                ghost.enqueues.fetch_add(1, SeqCst);
                *ghost.enqueued_by.lock().expect("ghost") = Some((w, k));
                ghost.runnable.store(true, SeqCst);
                task.unpark();
            }
        }
    }
    if ghost.wakers_left.fetch_sub(1, SeqCst) == 1 {
        ghost.all_done.store(true, SeqCst);
        if ghost.waiting.load(SeqCst) {
            // The end-of-execution tick: let a parked task check that it is
            // not parked forever.
            task.unpark();
        }
    }
}

fn run(name: &str, rounds_per_waker: &'static [usize], preemption_bound: usize) {
    let explored = check(Scenario {
        rounds_per_waker,
        preemption_bound,
    });
    println!(
        "parker, {name}, preemption bound {preemption_bound}: {} executions in {:.1?}",
        explored.executions, explored.elapsed
    );
}

#[test]
fn one_waker_one_round() {
    run("1 waker x 1 round", &[1], 3);
}

#[test]
fn one_waker_two_rounds() {
    run("1 waker x 2 rounds", &[2], 3);
}

#[test]
fn two_wakers_one_round_each() {
    run("2 wakers x 1 round", &[1, 1], 2);
}

#[test]
fn two_wakers_two_and_one_rounds() {
    run("2 wakers x 2+1 rounds", &[2, 1], 2);
}
