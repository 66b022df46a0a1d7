//! [`JoinState`]: who runs a join's second half, and how the joiner waits
//! for it when another worker does (the pool's `Worker::join`).
//!
//! A join spawns its second half and runs the first itself; then the
//! joiner and any worker that picks up the spawned job race to claim the
//! half. One atomic byte:
//!
//! | transition | by | operation |
//! |---|---|---|
//! | `UNCLAIMED -> JOINER_RUNS` | joiner (claim: runs it inline) | compare-exchange, Relaxed |
//! | `UNCLAIMED -> RUNNING` | thief (claim: runs it) | compare-exchange, Relaxed |
//! | `RUNNING -> JOINER_PARKED` | joiner (the thief still runs it) | compare-exchange, Relaxed (Acquire on failure) |
//! | `RUNNING` or `JOINER_PARKED -> FINISHED` | thief (done) | swap, Release |
//!
//! # Guarantees and the pairs that give them
//!
//! * **Exactly one side runs the half.** Both claims are compare-exchanges
//!   from `UNCLAIMED`; one succeeds. The joiner's failure reads `RUNNING`,
//!   `JOINER_PARKED` is its own, or `FINISHED`: the half is taken.
//! * **A join never waits for a half nobody started.** The joiner waits
//!   only after its claim failed, that is, after a thief claimed it, and a
//!   thief that claims runs it at once.
//! * **No lost wake.** The joiner registers with a compare-exchange from
//!   `RUNNING`, which fails once the thief's swap wrote `FINISHED`; the
//!   thief's swap reads `JOINER_PARKED` if the registration came first, and
//!   then it unparks. So either the joiner sees the half finished and never
//!   parks, or the thief sees it registered and unparks it (a park that
//!   comes after the unpark returns at once: the thread's token). This
//!   rests on the two being read-modify-writes of one atomic, which read
//!   each other in its modification order, and on no ordering: a plain
//!   store of `JOINER_PARKED` could overwrite `FINISHED`.
//! * **The joiner sees the result.** The thief's swap is a Release after it
//!   stored the result; every joiner read it goes on from after seeing
//!   `FINISHED` is an Acquire (the registration's failure, the wait's
//!   load, and the reload after a claim that read `FINISHED` Relaxed).
//!
//! The claims are Relaxed: the winner takes the half out of the slot
//! under the slot's own lock (the pool's `JoinSlot`), which hands it over,
//! and nothing else is published through them.
//!
//! The loom model (`tests/loom_join.rs`) checks the four guarantees, and
//! the mutation run (`cargo xtask mutants`) breaks each pair.

use crate::sync::{AtomicU8, Ordering};

const UNCLAIMED: u8 = 0;
const JOINER_RUNS: u8 = 1;
const RUNNING: u8 = 2;
const JOINER_PARKED: u8 = 3;
const FINISHED: u8 = 4;

/// What the joiner's claim found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinerClaim {
    /// Nobody had started the half: the joiner runs it now.
    RunsItself,
    /// A thief runs it and the joiner is registered: it must park until
    /// [`JoinState::is_finished`] (the thief unparks it).
    MustPark,
    /// A thief ran it already: its result is there to take.
    Finished,
}

/// One join's state (see the module docs).
#[derive(Debug)]
pub struct JoinState {
    state: AtomicU8,
}

impl Default for JoinState {
    fn default() -> Self {
        Self::new()
    }
}

impl JoinState {
    /// Nobody has claimed the half.
    #[must_use]
    pub fn new() -> Self {
        Self {
            state: AtomicU8::new(UNCLAIMED),
        }
    }

    /// A worker that picked up the spawned half: `true` if it won the claim
    /// and must run the half, then call [`finish`](Self::finish).
    #[must_use = "the winner must run the half"]
    pub fn thief_claims(&self) -> bool {
        // Relaxed: exclusivity is the exchange's; nothing is published.
        self.state
            .compare_exchange(UNCLAIMED, RUNNING, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// The joiner, after its first half: claims the second, or registers to
    /// wait for the thief running it.
    #[must_use = "the joiner must run the half or wait for it"]
    pub fn joiner_claims(&self) -> JoinerClaim {
        // Relaxed: as the thief's claim. On failure the value is only a
        // guess for the registration, which reads again.
        match self.state.compare_exchange(
            UNCLAIMED,
            JOINER_RUNS,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return JoinerClaim::RunsItself,
            Err(FINISHED) => {}
            Err(_) => {
                // Relaxed on success: the registration publishes nothing;
                // that the thief's swap reads it (or this exchange reads
                // FINISHED) is the modification order's. Acquire on
                // failure: it read FINISHED, and pairs with the thief's
                // release swap, so the result stored before it is seen.
                return match self.state.compare_exchange(
                    RUNNING,
                    JOINER_PARKED,
                    Ordering::Relaxed,
                    Ordering::Acquire,
                ) {
                    Ok(_) => JoinerClaim::MustPark,
                    Err(_) => JoinerClaim::Finished,
                };
            }
        }
        // The claim read FINISHED Relaxed: read it again with Acquire (the
        // thief's release swap), so the result is seen.
        let finished = self.is_finished();
        debug_assert!(finished, "a join's state left FINISHED");
        JoinerClaim::Finished
    }

    /// The thief, after it stored the half's result: `true` if the joiner
    /// is parked (or about to park) and must be unparked, exactly once.
    #[must_use = "on `true` the joiner must be unparked"]
    pub fn finish(&self) -> bool {
        // Release: the result stored before this swap is seen by the
        // joiner's Acquire read of FINISHED (its registration's failure,
        // `is_finished`). Reading JOINER_PARKED needs no acquire: the
        // unpark is all that follows from it.
        self.state.swap(FINISHED, Ordering::Release) == JOINER_PARKED
    }

    /// Whether the thief finished: what a parked joiner checks each time
    /// its park returns (a park may return spuriously).
    #[must_use]
    pub fn is_finished(&self) -> bool {
        // Acquire: pairs with the thief's release swap (its result).
        self.state.load(Ordering::Acquire) == FINISHED
    }
}
