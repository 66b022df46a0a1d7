//! Loom: a join's [`JoinState`] under every interleaving and every
//! memory-order outcome loom models.
//!
//! The model, as the pool's `Worker::join` uses it:
//! * the **joiner** (the model's main thread) runs its first half (a loom
//!   operation, so the thief may run at any point of it), then claims the
//!   second: on `RunsItself` it runs the half; on `MustPark` it loom-`park`s
//!   until `is_finished`; on `Finished` it goes on. Then it reads the half's
//!   result;
//! * each **thief** (a loom thread: the spawned job, picked up by a worker)
//!   claims the half; if it wins, it runs it (stores the result, Relaxed:
//!   only the state may order it), then `finish`es and, on `true`,
//!   loom-`unpark`s the joiner.
//!
//! Checked in every execution:
//! * **the half runs exactly once**;
//! * **no lost wake**: the joiner never registers to park after the half
//!   finished, and a thief never finishes without an unpark while the joiner
//!   is registered (either would leave it parked for good);
//! * **the joiner sees the result** of a half a thief ran;
//! * **a join never waits for a half nobody started**: the joiner parks
//!   only while a thief is running the half.
//!
//! The bookkeeping ("ghost" state) uses `std` atomics, not loom's: loom
//! runs one thread at a time and switches only at loom operations, so ghost
//! updates made right after a `JoinState` call are atomic with it.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p vigil-wake --release
//! --target-dir target/loom --test loom_join`.

#![cfg(loom)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize as LoomUsize, Ordering::Relaxed};
use loom::thread;
use vigil_wake::{JoinState, JoinerClaim};

const RAN_TWICE: &str = "a join's half ran twice";
const NEVER_RAN: &str = "a join's half never ran";
const LOST_WAKE: &str = "lost wake: the joiner parked with nobody to unpark it";
const MISSED_RESULT: &str = "the joiner missed the half's result";
const WAITED_UNSTARTED: &str = "the joiner waits for a half nobody is running";

/// What the half computes.
const RESULT: usize = 42;

/// Shared by the model's threads, on loom's atomics.
struct Shared {
    state: JoinState,
    /// The half's result, stored Relaxed by whoever runs it.
    result: LoomUsize,
    /// The first half's work: a loom operation the thief can run beside.
    first: LoomUsize,
}

/// Bookkeeping, on `std` atomics (see the module docs).
#[derive(Default)]
struct Ghost {
    /// Times the half ran.
    runs: AtomicUsize,
    /// A thief won the claim and has not finished.
    thief_running: AtomicBool,
    /// A thief's `finish` happened.
    finished: AtomicBool,
    /// The joiner registered to park (`MustPark`).
    registered: AtomicBool,
}

/// The half itself, run by the claim's winner.
fn run_half(shared: &Shared, ghost: &Ghost) {
    assert_eq!(ghost.runs.fetch_add(1, SeqCst), 0, "{RAN_TWICE}");
    shared.result.store(RESULT, Relaxed);
}

fn thief(shared: &Shared, ghost: &Ghost, joiner: &thread::Thread) {
    if !shared.state.thief_claims() {
        return;
    }
    ghost.thief_running.store(true, SeqCst);
    run_half(shared, ghost);
    let must_unpark = shared.state.finish();
    ghost.thief_running.store(false, SeqCst);
    ghost.finished.store(true, SeqCst);
    if must_unpark {
        joiner.unpark();
    } else {
        assert!(!ghost.registered.load(SeqCst), "{LOST_WAKE}");
    }
}

fn joiner(shared: &Shared, ghost: &Ghost) {
    shared.first.fetch_add(1, Relaxed);
    match shared.state.joiner_claims() {
        JoinerClaim::RunsItself => run_half(shared, ghost),
        JoinerClaim::MustPark => {
            ghost.registered.store(true, SeqCst);
            assert!(!ghost.finished.load(SeqCst), "{LOST_WAKE}");
            assert!(ghost.thief_running.load(SeqCst), "{WAITED_UNSTARTED}");
            while !shared.state.is_finished() {
                thread::park();
            }
        }
        JoinerClaim::Finished => {}
    }
    assert_eq!(shared.result.load(Relaxed), RESULT, "{MISSED_RESULT}");
}

fn check(thieves: usize, preemption_bound: usize) -> usize {
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemption_bound);
    builder.check(move || {
        counter.fetch_add(1, SeqCst);
        let shared = Arc::new(Shared {
            state: JoinState::new(),
            result: LoomUsize::new(0),
            first: LoomUsize::new(0),
        });
        let ghost = std::sync::Arc::new(Ghost::default());
        let me = thread::current();
        let handles: Vec<_> = (0..thieves)
            .map(|_| {
                let (shared, ghost, me) = (
                    Arc::clone(&shared),
                    std::sync::Arc::clone(&ghost),
                    me.clone(),
                );
                thread::spawn(move || thief(&shared, &ghost, &me))
            })
            .collect();
        joiner(&shared, &ghost);
        for handle in handles {
            handle.join().unwrap();
        }
        assert_eq!(ghost.runs.load(SeqCst), 1, "{NEVER_RAN}");
    });
    executions.load(SeqCst)
}

/// The pool's case: one spawned job, picked up by a thief or not.
#[test]
fn one_thief_races_the_joiner() {
    let executions = check(1, 3);
    println!("one thief: {executions} executions");
}

/// The spawned job is one job, but a model of two thieves checks the claim
/// against a second claimant as well (two thieves racing each other and
/// the joiner).
#[test]
fn two_thieves_race_the_joiner() {
    let executions = check(2, 3);
    println!("two thieves: {executions} executions");
}
