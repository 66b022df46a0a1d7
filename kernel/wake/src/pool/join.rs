//! [`Worker::join`]: run two closures, the second stealable, and return
//! both results: the fork-join of rayon's `join`, on the pool's own queues.
//!
//! The second closure is spawned as a shared job whose body *claims* it
//! from a slot both sides hold; the joiner, after running the first
//! closure itself, tries the same claim. Whoever claims first runs it
//! (the claim, and the joiner's wait for a thief, are
//! [`JoinState`](crate::JoinState), model-checked in `tests/loom_join.rs`).
//! So a join never waits for a job that has not started: if no worker stole
//! the second half, the joiner runs it at once (depth first, like rayon's
//! join, however far back in its queue the spawned job sits); if another
//! worker claimed it, that worker is running it, and the joiner waits only
//! for it to finish. The spawned job that lost the claim is taken back off
//! the queue if it is still its newest item (the usual case: the first
//! half's own joins took theirs back), and otherwise runs later as a
//! no-op. The pool's order for [`Worker::spawn`] is unchanged: a join is
//! how a job says which spawn it waits for, so that one can run out of
//! turn without letting a respawning job starve an earlier spawn.
//!
//! The joiner waits parked, not helping: it runs no other job while it
//! waits (a job of the pool's cannot run inside another's borrow of the
//! worker's queues). A join waits only for a half that another worker is
//! running, and that half waits only for halves of its own, so the waits
//! form a tree whose leaves run: no join waits for good on the pool's
//! account. A second half that waits for something else can: one that
//! waits for a plain job the first half spawned onto the joiner's queue
//! waits until an idle worker steals that job, and with no idle worker
//! (two workers, the other running the second half) for good, where
//! rayon's joiner, which runs other jobs while it waits, would run it.
//!
//! A join in a private job that started while its worker was registered
//! idle spawns onto the shared queue (as every spawn there does), which
//! takes the pool's lock; its spawned job cannot be taken back from there
//! and runs later, finding the half claimed.
//!
//! A pool of one worker runs both halves in place, `first` then `second`,
//! with nothing spawned: no other worker could run the half, and the
//! spawned path would run it here too, after an allocation, a push and a
//! take-back (15-19 ns a node of a join tree at one worker, against
//! 36-38, measured). The order and the panics are the same; `jobs_run` can
//! differ: where the spawned path could not take its job back (a plain
//! job spawned after it, a join in a private job started from idle), the
//! job stayed queued and ran later as a counted no-op, and here there is
//! no job.
//!
//! A join made in the first half of a join of the same worker that spawned
//! its half (a nested join) runs both halves in place the same way while
//! this worker's own queue holds a job and no worker is registered idle
//! (lazy splitting, as in Tzannes et al.'s lazy binary splitting). In a
//! join tree the queued job is then an outer join's half, at least as large
//! as this whole join, and a thief takes the oldest jobs of a queue first;
//! every other worker is running, or chosen to search for that job. So each
//! running worker keeps about one job for thieves, its oldest: once thieves
//! have taken what its queue held, its next join spawns again. With a
//! worker registered idle the join spawns, so that the idle worker, once
//! woken, can run the half beside the first. A join in no spawning join's
//! first half always spawns (with more than one worker; a `second` that
//! this worker runs itself is no part of its own join's first half: its job
//! was taken back): a job that spawned a plain job and then joins two long
//! halves gets the second half run by the next worker that comes free after
//! the plain job, as before. Where a first half also spawns plain jobs, the
//! queued job may be one of those once a thief has taken the outer half: a
//! nested join then runs in place behind it until the queue empties
//! (parallelism lost, no work). A worker held by a private job that it
//! started from idle counts as registered idle, so no join goes in place
//! while one runs. What a nested join in place gives up: a thief that would
//! have come back for its half after the queued job finds none, so two
//! halves that wait for each other can wait for good there (a join promises
//! no thief; at one worker such halves always wait for good). Measured on 2
//! host cores (`peer_bench --jobs 10000`, join trees of 8,191 nodes, three
//! alternations at 2, 4 and 8 workers of the commit before, a first version
//! without the nesting condition and this one): 13-28 ns a node with the
//! shared data behind a `&'static`, against 26-46 before (rayon 14-24 in
//! the same runs), and 22-30 with an `Arc` of it cloned at every node,
//! against 35-42; the first version read 16-27 and 22-31.
//!
//! [`Worker::join_sharing`] is `join` for halves that share a handle (an
//! `Arc`, say): `second` must own what it uses, so a plain `join`'s caller
//! clones the handle for it at every join, and where the join runs in
//! place that clone is made for nothing (a reference-count increment and
//! decrement on a line every worker of a tree writes). `join_sharing`
//! clones it only on the spawning path. Measured on 2 host cores
//! (`peer_bench --jobs 10000 --repeats 5`, join trees of 8,191 nodes with
//! an `Arc` of the counter, three alternations against `join` with a clone
//! at every node, 2026-12-06): at 2 workers 25-28 ns a node against 37-46
//! (rayon 27-34 in the same runs), at 4 23-32 against 39-41 (rayon 27-35),
//! at 8 33-44 against 45-52 (rayon 32-45).
//!
//! (The queues hold boxed jobs. Holding the join's slot itself, as a
//! second kind of queue item, saved an allocation a join but made every
//! plain spawn 7-8 ns slower at one worker, measured: chained-spawn 48 ns
//! a job against 40-41.)

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;

use super::thread_pool::{Job, Worker};
use crate::join_state::{JoinState, JoinerClaim};

/// What the joiner and the spawned job share.
struct JoinSlot<B, RB> {
    /// Who runs the half, and whether it finished ([`JoinState`], the
    /// model-checked part).
    state: JoinState,
    /// The half, taken by the claim's winner (so never contended).
    half: Mutex<Option<B>>,
    /// Its result once a thief ran it: a value or a panic's payload,
    /// stored before [`JoinState::finish`].
    result: Mutex<Option<thread::Result<RB>>>,
    /// The joiner's worker, unparked (through the pool's wake line, so the
    /// unpark is counted) if it parked.
    joiner: usize,
}

impl<B, RB> JoinSlot<B, RB> {
    /// The half, for the claim's winner.
    fn take_half(&self) -> B {
        lock(&self.half)
            .take()
            .expect("a join's half is taken once, by the claim's winner")
    }

    /// The thief's end: stores the result, then marks the half finished
    /// and unparks the joiner if it parked.
    fn finish(&self, result: thread::Result<RB>, thief: &Worker<'_>) {
        *lock(&self.result) = Some(result);
        if self.state.finish() {
            thief.unpark_joiner(self.joiner);
        }
    }

    /// The joiner's end when a thief claimed the half: its result, once
    /// it finished.
    fn wait(&self, claim: JoinerClaim) -> thread::Result<RB> {
        if claim == JoinerClaim::MustPark {
            // `park` may return spuriously, or on a token left by an
            // unpark of the pool's (a wake latched for this worker's next
            // sleep, which it finds in its latch then): look again.
            while !self.state.is_finished() {
                thread::park();
            }
        }
        lock(&self.result)
            .take()
            .expect("a finished half left its result")
    }
}

/// The address of a job's box (a thin pointer, for comparison only).
fn job_address(job: &Job) -> *const () {
    core::ptr::from_ref(&**job).cast()
}

/// Locks `mutex`, through a poisoning: the slot's data is an `Option`
/// moved in or out whole, never left half-updated by a panic.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A join that spawned its half, counted open on its worker
/// ([`Worker::spawned_joins`]) while its first half runs: from its
/// creation until its drop.
struct OpenSpawnedJoin<'w>(&'w Cell<usize>);

impl<'w> OpenSpawnedJoin<'w> {
    fn new(open: &'w Cell<usize>) -> Self {
        open.set(open.get() + 1);
        Self(open)
    }
}

impl Drop for OpenSpawnedJoin<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

impl Worker<'_> {
    /// Runs `first` on this worker and `second` on whichever worker gets
    /// to it first, and returns both results: `second` is spawned (a shared
    /// job, stealable by an idle worker, which the work-conserving rule
    /// wakes as for any spawn), `first` runs at once, and then, if no
    /// worker has started `second`, this worker runs it itself, at once.
    /// Otherwise this worker waits, parked, for the worker that runs it.
    /// In a pool of one worker nothing is spawned: `first` runs, then
    /// `second`, both here; the same for a join made in the first half of
    /// a spawning join of this worker while its own queue holds a job and
    /// no worker is registered idle (see the module docs). So a half must
    /// not wait for the other half: nothing promises they run at once.
    ///
    /// `second` and its result cross threads, so they are `Send +
    /// 'static` (rayon's `join` lends its closures the caller's stack; this
    /// crate has no `unsafe` to do that with). `first` runs here and may
    /// borrow. Halves that share a handle (an `Arc`) can take it through
    /// [`Worker::join_sharing`], which clones it only where it spawns.
    ///
    /// # Panics
    ///
    /// If either half panics, the panic goes on from `join` once both are
    /// done (the first half's if both panic); if `first` panics and
    /// nobody had started `second`, `second` is dropped unrun. A half that
    /// ran on another worker panics there without counting as a panicked
    /// job of the pool: its panic is this join's.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use vigil_wake::pool::{PoolConfig, ThreadPool, Worker};
    ///
    /// fn sum(w: &Worker<'_>, from: u64, to: u64) -> u64 {
    ///     if to - from <= 1_000 {
    ///         return (from..to).sum();
    ///     }
    ///     let middle = from + (to - from) / 2;
    ///     let (low, high) = w.join(|w| sum(w, from, middle), move |w| sum(w, middle, to));
    ///     low + high
    /// }
    ///
    /// let pool = ThreadPool::new(PoolConfig::new(2));
    /// let (done, result) = mpsc::channel();
    /// pool.spawn(move |w| done.send(sum(w, 0, 100_000)).unwrap());
    /// assert_eq!(result.recv().unwrap(), (0..100_000u64).sum());
    /// ```
    pub fn join<A, B, RA, RB>(&self, first: A, second: B) -> (RA, RB)
    where
        A: FnOnce(&Worker<'_>) -> RA,
        B: FnOnce(&Worker<'_>) -> RB + Send + 'static,
        RB: Send + 'static,
    {
        if self.joins_in_place() {
            return self.join_in_place(first, second);
        }
        self.join_spawning(first, second)
    }

    /// [`Worker::join`] for halves that share `shared`, which `second`
    /// would otherwise have to own a clone of at every join: `second`
    /// gets a clone of its own only when the join spawns it (it may run on
    /// another worker, past this frame); where both halves run here (one
    /// worker, or a join nested behind its outer half; see the module
    /// docs) both borrow `shared` and nothing is cloned. For an `Arc`
    /// that the joins of a tree share, that is a reference-count
    /// increment and decrement, on a line every worker writes, saved at
    /// most of the tree's nodes: measured on 2 host cores (`peer_bench
    /// --jobs 10000`, join trees of 8,191 nodes), see the crate's README.
    ///
    /// So `second` reaches the caller's `shared` where the join runs in
    /// place and a clone of it where the join spawns: `S` is meant to be a
    /// handle whose clones share what they reach (an `Arc`, a `&'static`);
    /// what a `second` changed in a clone's own state would reach the
    /// caller only in place.
    ///
    /// # Panics
    ///
    /// As [`Worker::join`]. If cloning `shared` panics (only where the join
    /// spawns, before anything is spawned), neither half runs: both are
    /// dropped and the clone's panic goes on from the join.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::mpsc;
    /// use vigil_wake::pool::{PoolConfig, ThreadPool, Worker};
    ///
    /// fn sum(w: &Worker<'_>, data: &Arc<Vec<u64>>, from: usize, to: usize) -> u64 {
    ///     if to - from <= 1_000 {
    ///         return data[from..to].iter().sum();
    ///     }
    ///     let middle = from + (to - from) / 2;
    ///     let (low, high) = w.join_sharing(
    ///         data,
    ///         |w, data| sum(w, data, from, middle),
    ///         move |w, data| sum(w, data, middle, to),
    ///     );
    ///     low + high
    /// }
    ///
    /// let pool = ThreadPool::new(PoolConfig::new(2));
    /// let data: Arc<Vec<u64>> = Arc::new((0..100_000).collect());
    /// let (done, result) = mpsc::channel();
    /// pool.spawn(move |w| done.send(sum(w, &data, 0, data.len())).unwrap());
    /// assert_eq!(result.recv().unwrap(), (0..100_000u64).sum());
    /// ```
    pub fn join_sharing<S, A, B, RA, RB>(&self, shared: &S, first: A, second: B) -> (RA, RB)
    where
        S: Clone + Send + 'static,
        A: FnOnce(&Worker<'_>, &S) -> RA,
        B: FnOnce(&Worker<'_>, &S) -> RB + Send + 'static,
        RB: Send + 'static,
    {
        if self.joins_in_place() {
            return self.join_in_place(|w| first(w, shared), |w| second(w, shared));
        }
        // The halves are dropped before a panicking clone's panic goes on,
        // as `join_in_place` drops `second` before `first`'s: a panicking
        // drop of a half is then a panic out of the join, not one during
        // unwinding (which aborts). AssertUnwindSafe: on a panic the clone
        // is gone, and `shared` is the caller's, which gets the panic.
        let owned = match panic::catch_unwind(AssertUnwindSafe(|| shared.clone())) {
            Ok(owned) => owned,
            Err(payload) => {
                drop(first);
                drop(second);
                panic::resume_unwind(payload)
            }
        };
        self.join_spawning(|w| first(w, shared), move |w| second(w, &owned))
    }

    /// Whether a join made now runs both halves here, spawning nothing: in
    /// a pool of one worker, no other worker could ever run the half; in a
    /// join nested in one whose half went onto this worker's queue, which
    /// still holds a job older (and, in a tree, larger) than this join for
    /// every worker that could come (see the module docs).
    fn joins_in_place(&self) -> bool {
        self.pool_workers() == 1
            || (self.spawned_joins().get() > 0 && self.own_queue_feeds_thieves())
    }

    /// Both halves here, in order, as the spawned path runs them when
    /// nobody steals. A panic in `first` drops `second` unrun before the
    /// panic goes on, as there (so a panicking drop of `second` is a panic
    /// out of the join, not one during unwinding, which aborts); one in
    /// `second` goes on from here.
    fn join_in_place<A, B, RA, RB>(&self, first: A, second: B) -> (RA, RB)
    where
        A: FnOnce(&Worker<'_>) -> RA,
        B: FnOnce(&Worker<'_>) -> RB,
    {
        // AssertUnwindSafe: on a panic `first` is gone, and `second` is
        // dropped unrun.
        match panic::catch_unwind(AssertUnwindSafe(|| first(self))) {
            Ok(first_value) => (first_value, second(self)),
            Err(payload) => {
                drop(second);
                panic::resume_unwind(payload)
            }
        }
    }

    /// The join that spawns `second` as a stealable job (see the module
    /// docs).
    fn join_spawning<A, B, RA, RB>(&self, first: A, second: B) -> (RA, RB)
    where
        A: FnOnce(&Worker<'_>) -> RA,
        B: FnOnce(&Worker<'_>) -> RB + Send + 'static,
        RB: Send + 'static,
    {
        let slot = Arc::new(JoinSlot {
            state: JoinState::new(),
            half: Mutex::new(Some(second)),
            result: Mutex::new(None),
            joiner: self.index(),
        });
        let stolen = Arc::clone(&slot);
        let spawned: Job = Box::new(move |w| {
            if stolen.state.thief_claims() {
                let half = stolen.take_half();
                // AssertUnwindSafe: the payload is handed to the joiner,
                // which resumes it; nothing of the half is used after.
                stolen.finish(panic::catch_unwind(AssertUnwindSafe(|| half(w))), w);
            }
        });
        // The spawned job's identity: its box's address, compared (never
        // read through) when the joiner takes it back, which it does only
        // right after its own claim won. A queued job is freed only when
        // it runs, when its own join takes it back, or with the pool, and
        // its run claims first: so at the claim the box was alive, and
        // every item on this worker's queue then, older or newer, was
        // alive beside it at another address. A thief may run and free the
        // job after the claim, but only this worker pushes onto its queue,
        // and it pushes nothing between the claim and the take-back
        // (thieves move what they steal onto their own queues). So an item
        // on its queue at this address is this job. (A zero-sized box
        // would share addresses; this one holds an `Arc`.)
        let spawned_at = job_address(&spawned);
        self.spawn_job(spawned);
        // Open while `first` runs (its half is queued then, unless a thief
        // took it): the joins `first` makes are nested behind that half.
        // Not while `second` runs here: its job was taken back by then.
        // AssertUnwindSafe: on a panic `first` is gone, and the panic goes
        // on from here once the second half is settled.
        let first_result = {
            let _open = OpenSpawnedJoin::new(self.spawned_joins());
            panic::catch_unwind(AssertUnwindSafe(|| first(self)))
        };
        let claim = slot.state.joiner_claims();
        if claim == JoinerClaim::RunsItself {
            // The spawned job, which would find the half claimed and do
            // nothing, comes off the queue unrun if it is still the newest
            // there (the first half's own joins took theirs back).
            drop(self.take_back_newest(|job| core::ptr::eq(job_address(job), spawned_at)));
        }
        let first_value = match first_result {
            Ok(value) => value,
            Err(payload) => {
                // The second half is dropped unrun, or waited for if a
                // thief runs it (its result or panic dropped).
                if claim == JoinerClaim::RunsItself {
                    drop(slot.take_half());
                } else if let Err(second) = slot.wait(claim) {
                    // A payload whose own drop panics must not end the
                    // unwinding that carries the first: it is leaked.
                    if let Err(nested) = panic::catch_unwind(AssertUnwindSafe(move || drop(second)))
                    {
                        core::mem::forget(nested);
                    }
                }
                panic::resume_unwind(payload)
            }
        };
        let second_value = match claim {
            // Nobody had started it: run it here, at once.
            JoinerClaim::RunsItself => slot.take_half()(self),
            _ => slot
                .wait(claim)
                .unwrap_or_else(|payload| panic::resume_unwind(payload)),
        };
        (first_value, second_value)
    }
}
