//! [`Parker`]: one wake token per task, as in `std::thread::park`.
//!
//! `try_consume_or_park` returns at once if a wake came first (the token is
//! consumed), otherwise marks the task parked and the caller switches away
//! until an `unpark` tells somebody to make it runnable. A wake that arrives
//! between "decide to block" and "block" is therefore never lost, and callers
//! re-check their condition in a loop (spurious returns are allowed).
//!
//! # States and who writes them
//!
//! One atomic byte: `EMPTY` (no token, running), `NOTIFIED` (a token is
//! waiting), `PARKED` (the task is switched away, or about to be).
//!
//! | transition | by | operation |
//! |---|---|---|
//! | `NOTIFIED -> EMPTY` | task (consume) | compare-exchange, Acquire |
//! | `EMPTY -> PARKED` | task (park) | compare-exchange, Release |
//! | `NOTIFIED -> EMPTY` | task (token arrived between the two above) | swap, Acquire |
//! | `EMPTY -> NOTIFIED` | unparker (leave a token) | compare-exchange, AcqRel (Release used) |
//! | `NOTIFIED -> NOTIFIED` | unparker (join the waiting token) | compare-exchange, AcqRel (Release used) |
//! | `PARKED -> EMPTY` | unparker (claim: `MustEnqueue`) | compare-exchange, AcqRel (Acquire used) |
//!
//! Every write is a read-modify-write. That is what the two guarantees
//! below rest on, and two of them were plain accesses once: a wake that
//! found a token returned after a Relaxed load, and the task consumed a
//! late token with a Relaxed store. The loom model (`tests/loom_parker.rs`)
//! finds the lost wake that made possible: two wakes in a row, the second
//! one's data not yet visible to a task that consumes the first one's token,
//! re-checks, and parks for good.
//!
//! # Guarantees and the pairs that give them
//!
//! * **One enqueue per park.** Only the task writes `PARKED`; the only way
//!   out of it is an unparker's compare-exchange `PARKED -> EMPTY`, and of
//!   several unparkers that read `PARKED` exactly one exchange succeeds.
//!   The others fail, re-read (`EMPTY` or `NOTIFIED`), and leave or join a
//!   token. A token left while the task is still running after being
//!   enqueued makes its next park return at once (spurious, allowed).
//! * **No lost wake.** The task's park is a compare-exchange from `EMPTY`:
//!   it fails if any wake left a token since the consume attempt, and then
//!   the task consumes it and runs on. An unparker's write is a
//!   compare-exchange too, so it cannot overwrite `PARKED` with a token
//!   nobody will look at.
//! * **A wake carries its data** (what the waker wrote before `unpark` is
//!   visible to the task once it consumes the token): every unparker's
//!   write to `EMPTY`/`NOTIFIED` is a Release RMW, and every consume is an
//!   Acquire RMW. RMWs on one atomic are totally ordered and each reads the
//!   latest value, so either an unpark comes before the consume in that
//!   order (then the consume reads from it, or from a later RMW in its
//!   release sequence, and synchronizes with it), or after it (then the
//!   unpark finds `EMPTY` or `PARKED` and leaves a new token or enqueues).
//!   A wake that finds a token must still *write* (`NOTIFIED -> NOTIFIED`):
//!   a plain load there orders nothing, and the consume may then not see
//!   that waker's data although its wake was "delivered".
//!   After a `MustEnqueue`, the parker orders nothing towards the task: the
//!   enqueue itself (the run queue's lock, the inbox) hands the waker's
//!   writes over.
//! * **The enqueuer sees the task's pre-park writes**: the park's Release
//!   pairs with the claim's Acquire. The kernel does not need this today
//!   (tasks are pinned and a task's context is saved and restored by its
//!   own core), but it is part of the contract, as with `std`'s park, and
//!   the loom model checks it.

use core::fmt;

use crate::sync::{AtomicU8, Ordering};

const EMPTY: u8 = 0;
const NOTIFIED: u8 = 1;
const PARKED: u8 = 2;

/// What [`Parker::unpark`] must do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unparked {
    /// The task was parked: the caller must make it runnable (exactly one
    /// unparker gets this for one park).
    MustEnqueue,
    /// The task was not parked: a token was left (or already there).
    TokenLeft,
}

/// The per-task parking state.
pub struct Parker {
    state: AtomicU8,
}

impl Parker {
    /// No token, not parked.
    #[cfg(not(loom))]
    #[must_use]
    pub const fn new() -> Self {
        Self {
            state: AtomicU8::new(EMPTY),
        }
    }

    /// No token, not parked (loom's atomics have no `const fn new`).
    #[cfg(loom)]
    #[must_use]
    pub fn new() -> Self {
        Self {
            state: AtomicU8::new(EMPTY),
        }
    }

    /// Called by the task itself. `true`: a token was waiting (consumed), do
    /// not block. `false`: the task is now `PARKED` and must switch away;
    /// whoever unparks it makes it runnable again.
    #[inline]
    pub fn try_consume_or_park(&self) -> bool {
        // Consume a token. Acquire on success pairs with the Release of every
        // unpark that left or joined this token (their RMWs form one release
        // sequence): the task sees what each of those wakers published before
        // its `unpark`. Failure is Relaxed: it only sends us on to the park
        // attempt, which reads the state again.
        if self
            .state
            .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return true;
        }
        // Park. An RMW from `EMPTY`, so it fails if a token arrived since the
        // attempt above (a plain store here would overwrite that token: lost
        // wake). Release on success pairs with the claiming unparker's
        // Acquire (`PARKED -> EMPTY` in `unpark`): the enqueuer sees what the
        // task wrote before it parked. Failure is Relaxed: the swap below
        // reads again, with Acquire.
        match self
            .state
            .compare_exchange(EMPTY, PARKED, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => false,
            Err(_) => {
                // A token arrived between the two attempts. The state can only
                // be `NOTIFIED` now (only this task writes `PARKED`, and from
                // `NOTIFIED` unparkers only write `NOTIFIED`), but it must be
                // consumed with an RMW, not a store: the RMW reads the *latest*
                // `NOTIFIED`, including one written by a wake that joined the
                // token after the failed exchange, and its Acquire pairs with
                // that wake's Release. A store would consume that wake without
                // synchronizing with it.
                let token = self.state.swap(EMPTY, Ordering::Acquire);
                debug_assert_eq!(token, NOTIFIED, "a token vanished or the task parked twice");
                true
            }
        }
    }

    /// Wakes the task: leaves a token, or (if it is parked) tells the caller
    /// to make it runnable ([`Unparked::MustEnqueue`], returned to exactly
    /// one unparker per park).
    ///
    /// What the caller wrote before this call is visible to the task once
    /// it consumes the token; after `MustEnqueue`, the caller's enqueue must
    /// hand it over (a lock or a release/acquire on the run queue does).
    #[inline]
    #[must_use = "on `MustEnqueue` the caller must make the task runnable"]
    pub fn unpark(&self) -> Unparked {
        // Relaxed: only a guess for the first exchange, which checks it.
        let mut current = self.state.load(Ordering::Relaxed);
        loop {
            let (next, result) = match current {
                // Join the waiting token: still an RMW (see the module docs,
                // "A wake carries its data").
                NOTIFIED => (NOTIFIED, Unparked::TokenLeft),
                // Claim the park: of several unparkers that see `PARKED`,
                // exactly one exchange succeeds.
                PARKED => (EMPTY, Unparked::MustEnqueue),
                // `EMPTY`: leave a token.
                _ => (NOTIFIED, Unparked::TokenLeft),
            };
            // AcqRel on success. Release is what the token cases need: it
            // pairs with the task's Acquire consume (the exchange or the swap
            // in `try_consume_or_park`) and publishes this waker's writes.
            // Acquire is what the claim needs: it pairs with the park's
            // Release, so the enqueuer sees the task's writes before it
            // parked. Failure is Relaxed: retry with the value seen.
            match self.state.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return result,
                Err(seen) => current = seen,
            }
        }
    }

    /// The state's name (`empty`, `notified` or `parked`), for diagnostics
    /// such as a hung run's state dump. Orders nothing.
    #[must_use]
    pub fn state_name(&self) -> &'static str {
        // Relaxed: an observation for a report.
        match self.state.load(Ordering::Relaxed) {
            EMPTY => "empty",
            NOTIFIED => "notified",
            PARKED => "parked",
            _ => "invalid",
        }
    }
}

impl Default for Parker {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Parker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parker")
            .field("state", &self.state.load(Ordering::Relaxed))
            .finish()
    }
}
