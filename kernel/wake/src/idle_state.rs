//! One core's idle-state atomic and the transitions each policy makes on it:
//! the idle side (prepare, re-check, commit or abort, woke up) and the waker
//! side (observe, then act).
//!
//! The orderings are argued next to each atomic operation; the whole argument
//! (why these suffice, and which pair is the store-buffering pattern) is in
//! the crate docs, "Memory ordering". In short: the only operations that
//! carry ordering are the two read-modify-writes on the inbox count (the idle
//! core's Release re-check and the pusher's Acquire increment). Every
//! operation on the state atomic is Relaxed: what it needs is *atomicity*
//! (compare-exchange, so that a `DontSleep` is never overwritten by a commit
//! and a halted core is claimed by exactly one waker), not ordering. The idle
//! core's own writes are plain stores except two swaps (see `abort` and
//! `woke_up`).

use crate::inbox::Inbox;
use crate::notify::{Elided, Notify, NotifyOutcome};
use crate::policy::Policy;
use crate::state::State;
use crate::sync::{AtomicU8, Ordering};

/// What [`IdleState::commit`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CommitStep {
    /// The state is now `Halted` (or, for `racy-flag`, the flag is up): halt.
    Halt,
    /// A waker wrote `DontSleep`; the state is back to `Running`.
    DontSleep,
    /// The policy never halts.
    Poll,
}

/// One core's idle state: the atomic plus the policy that says how to use it.
pub(crate) struct IdleState {
    /// A [`State`] as its raw `u8`.
    state: AtomicU8,
    policy: Policy,
}

impl IdleState {
    #[inline]
    pub(crate) fn new(policy: Policy) -> Self {
        Self {
            state: AtomicU8::new(State::Running.as_raw()),
            policy,
        }
    }

    #[inline]
    pub(crate) fn policy(&self) -> Policy {
        self.policy
    }

    /// The raw state: one relaxed load, for the stuck-core detector and
    /// statistics. Orders nothing.
    #[inline]
    pub(crate) fn state_raw(&self) -> u8 {
        self.state.load(Ordering::Relaxed)
    }

    /// Address of the state byte, for a host-side debugger reading a hung
    /// guest's memory.
    #[inline]
    #[cfg(feature = "test-hooks")]
    pub(crate) fn state_address(&self) -> usize {
        core::ptr::from_ref(&self.state) as usize
    }

    #[inline]
    pub(crate) fn state(&self) -> State {
        State::decode(self.state_raw())
    }

    #[inline]
    fn store(&self, state: State) {
        // Relaxed. Under `state-machine` none of the idle core's writes needs
        // to order anything: its `Halting` is published to wakers by the
        // Release re-check that follows it on the inbox count, and its
        // `Running` (after `DontSleep`) needs no publishing (a
        // waker that reads an older value acts on that value, and each such
        // action is safe, see the crate docs). Under `always-ipi` the state
        // is informational; under `racy-flag` this is seed 004's flag.
        self.state.store(state.as_raw(), Ordering::Relaxed);
    }

    #[inline]
    fn compare_exchange(&self, current: State, new: State) -> Result<State, State> {
        // Relaxed on success and failure: compare-exchange is used for its
        // atomicity (exactly one of two racing transitions out of the same
        // value wins), which no ordering adds to or takes from. Visibility of
        // the work comes from the inbox count's RMWs and from the lock.
        self.state
            .compare_exchange(
                current.as_raw(),
                new.as_raw(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .map(State::decode)
            .map_err(State::decode)
    }

    // ----- idle side -----------------------------------------------------

    /// Step 2a: announce the intent to halt (`Running -> Halting`).
    #[inline]
    pub(crate) fn prepare(&self) {
        match self.policy {
            Policy::StateMachine => {
                debug_assert_eq!(
                    self.state(),
                    State::Running,
                    "prepare_to_halt on a core that is not Running"
                );
                // A plain store, not an RMW: from `Running` no waker writes
                // (they only compare-exchange away from `Halting` and
                // `Halted`, which only this core creates), so there is no
                // concurrent write to lose.
                self.store(State::Halting);
            }
            Policy::AlwaysIpi => self.store(State::Halting),
            // Seed 004: the flag goes up only *after* the inbox check.
            #[cfg(feature = "fault-fixtures")]
            Policy::RacyFlag => {}
            // Never halts: stays `Running`, so wakers never try to wake it.
            Policy::Poll => {}
        }
    }

    /// Step 2b: re-check the inbox after announcing `Halting`. Returns
    /// whether there is work; if so the state is back to `Running`.
    #[inline]
    pub(crate) fn recheck<T>(&self, inbox: &Inbox<T>) -> bool {
        let queued = match self.policy {
            // The interlocked re-check: a Release RMW on the inbox count,
            // pairing with every push's Acquire RMW (see `Inbox`).
            //
            // `always-ipi` needs it too. Its wakers send an IPI after every
            // push, so a push the re-check misses ends the halt; but an IPI
            // carries no memory (see the `Platform` contract): the woken
            // core's relaxed reads of the count may keep missing the push
            // through every later drain and re-check, and it halts again
            // with the IPI spent. The hardware-faithful loom model found
            // exactly that with a plain `len()` here (the mutation
            // run, `always-ipi-recheck-plain-load`). With the RMW the next re-check reads the
            // newest count. (On x86 the IPI does order the sender's earlier
            // stores before the interrupt in practice, and `iret` is
            // serialising; the protocol no longer leans on it.)
            Policy::StateMachine | Policy::AlwaysIpi => inbox.recheck_for_halt(),
            // Seed 004's check: a plain read, *before* the flag goes up.
            #[cfg(feature = "fault-fixtures")]
            Policy::RacyFlag => inbox.len(),
            Policy::Poll => inbox.len(),
        };
        if queued != 0 {
            self.abort();
        }
        queued != 0
    }

    /// The idle core gives up this halt attempt (`Halting -> Running`).
    #[inline]
    pub(crate) fn abort(&self) {
        match self.policy {
            Policy::StateMachine => {
                // A `DontSleep` written since `prepare` is consumed here,
                // which is right: the core is staying awake, which is all it
                // asks.
                //
                // A swap, not a store, although nothing reads what it
                // returns: this is the one write the idle core makes over a
                // waker's write that it has not read (a `DontSleep` that
                // landed after `prepare`). Under the C++ model a store would
                // do (the waker's compare-exchange write immediately follows
                // the `Halting` it read, so this later store of the core's is
                // after it in the state's modification order, and a waker
                // ordered after the core's next `Halting` cannot read that
                // `DontSleep`). Loom does not derive that order for a store,
                // and with one here it reports exactly that impossible read
                // as a lost wakeup (mutant `abort-swap-to-store`). The
                // swap makes the core read the `DontSleep`, which orders it
                // in loom too, for one locked exchange on a path that is about
                // to run work anyway.
                let _halting_or_dont_sleep = self.swap(State::Running);
            }
            Policy::AlwaysIpi => self.store(State::Running),
            #[cfg(feature = "fault-fixtures")]
            Policy::RacyFlag => {}
            Policy::Poll => {}
        }
    }

    #[inline]
    fn swap(&self, state: State) -> State {
        // Relaxed: see `abort` and `woke_up`, its callers; it orders
        // nothing.
        State::decode(self.state.swap(state.as_raw(), Ordering::Relaxed))
    }

    /// Step 3: commit to halting, or learn that a waker said not to.
    #[inline]
    pub(crate) fn commit(&self) -> CommitStep {
        match self.policy {
            Policy::StateMachine => {
                // Compare-exchange, not a store: a waker may have swapped
                // `Halting` for `DontSleep` since the re-check (it pushed
                // after the re-check read the count). A store would overwrite
                // its `DontSleep`, and it sends no IPI: the core would sleep
                // on its work.
                match self.compare_exchange(State::Halting, State::Halted) {
                    Ok(_) => CommitStep::Halt,
                    Err(State::DontSleep) => {
                        // Consume it: back to `Running`, round the idle loop.
                        // A plain store: this core has just read the
                        // `DontSleep`, and from it no waker writes.
                        self.store(State::Running);
                        CommitStep::DontSleep
                    }
                    Err(other) => unreachable!(
                        "commit from {other}: only a waker's DontSleep can replace Halting"
                    ),
                }
            }
            Policy::AlwaysIpi => {
                // Informational: always-ipi's wakers ignore the state.
                self.store(State::Halted);
                CommitStep::Halt
            }
            #[cfg(feature = "fault-fixtures")]
            Policy::RacyFlag => {
                // THE SEED-004 BUG, on purpose: the "halting" flag goes up
                // after the inbox check, with a plain store and no
                // interlock. A waker that pushed and read the flag between
                // the check and this store saw it down and sent nothing.
                self.store(State::Halted);
                CommitStep::Halt
            }
            Policy::Poll => CommitStep::Poll,
        }
    }

    /// Step 4 (after `hlt` returns): back to `Running`.
    #[inline]
    pub(crate) fn woke_up(&self) {
        match self.policy {
            // The only other writer from `Halted` is a waker's claim, which
            // writes the same `Running`. If the claim comes second it fails
            // (the core woke by itself; the claimer sends nothing); if it
            // came first, its IPI may still be in flight and end a later
            // `hlt` early: one spurious wakeup, never a lost one.
            //
            // A swap, not a store, for the reason the abort is one: when the
            // claim came first, this is a write over a waker's write the
            // core has not read (the IPI carries no memory). Under the C++
            // model a store is correct (the claim is an RMW of the core's
            // own `Halted`, so it sits right after it in modification
            // order, before this store); loom's modification order does not
            // derive that, and lets the core's commit, two steps later, read
            // the stale claim (`commit from Running`). One locked exchange
            // on a path that has just taken an interrupt.
            Policy::StateMachine => {
                let _claimed_or_halted = self.swap(State::Running);
            }
            // Only the core writes the state under these policies.
            Policy::AlwaysIpi => self.store(State::Running),
            #[cfg(feature = "fault-fixtures")]
            Policy::RacyFlag => self.store(State::Running),
            Policy::Poll => {}
        }
    }

    // ----- waker side ----------------------------------------------------

    /// The whole waker side, after a push into this core's inbox that found
    /// it `was_empty` or not.
    #[inline]
    pub(crate) fn notify(&self, was_empty: bool) -> NotifyOutcome {
        if let Some(why) = self.decide_without_read(was_empty) {
            return NotifyOutcome {
                action: Notify::Skip(why),
                observed: None,
            };
        }
        let observed = self.observe();
        NotifyOutcome {
            action: self.act(observed),
            observed: Some(observed),
        }
    }

    /// Waker step 0: the cases decided without reading the state at all.
    #[inline]
    pub(crate) fn decide_without_read(&self, was_empty: bool) -> Option<Elided> {
        match self.policy {
            // The inbox was already non-empty: the producer that made it so
            // notifies, and the drain that takes its item takes this one.
            // (Not under `always-ipi`, which by definition IPIs every time,
            // nor `racy-flag`, which keeps seed 004's code as it was.)
            Policy::StateMachine if !was_empty => Some(Elided::AlreadyPending),
            Policy::Poll => Some(Elided::Polling),
            _ => None,
        }
    }

    /// Waker step 1: the one read of the target's state.
    #[inline]
    pub(crate) fn observe(&self) -> State {
        // Relaxed: ordered after the push by the push's Acquire RMW (see
        // `Inbox::push`). If the idle core's re-check preceded that RMW, this
        // load cannot return anything older than the core's `Halting`.
        self.state()
    }

    /// Waker step 2: act on what step 1 read. At most two compare-exchanges,
    /// no loop.
    #[inline]
    pub(crate) fn act(&self, observed: State) -> Notify {
        match self.policy {
            Policy::StateMachine => match observed {
                // It re-checks before it can halt, and that re-check comes
                // after our push (crate docs): nothing to do, nothing written.
                State::Running => Notify::Skip(Elided::TargetRunning),
                // Someone already told it not to sleep.
                State::DontSleep => Notify::Skip(Elided::AlreadyClaimed),
                State::Halted => self.claim(),
                State::Halting => {
                    // Compare-exchange, not a store: the core may commit
                    // `Halted` in between, and a blind `DontSleep` written
                    // over `Halted` would leave it asleep with nobody sending
                    // the IPI (and tell later wakers not to send one either).
                    match self.compare_exchange(State::Halting, State::DontSleep) {
                        Ok(_) => Notify::Skip(Elided::SetDontSleep),
                        // It committed first: it is asleep, claim it.
                        Err(State::Halted) => self.claim(),
                        // Its re-check found work (or it aborted): awake.
                        Err(State::Running) => Notify::Skip(Elided::TargetRunning),
                        Err(State::DontSleep) => Notify::Skip(Elided::AlreadyClaimed),
                        Err(State::Halting) => {
                            unreachable!("a failed compare-exchange read the expected value")
                        }
                    }
                }
            },
            Policy::AlwaysIpi => Notify::Wake,
            // THE SEED-004 BUG, on purpose: act on a plain read of the flag,
            // with no claim and no interlock with the core's check.
            #[cfg(feature = "fault-fixtures")]
            Policy::RacyFlag => match observed {
                State::Halted => Notify::Wake,
                _ => Notify::Skip(Elided::TargetRunning),
            },
            Policy::Poll => Notify::Skip(Elided::Polling),
        }
    }

    /// Claims a halted core: `Halted -> Running`. The one waker whose
    /// compare-exchange succeeds sends the IPI; any other finds `Running`
    /// and sends nothing. Compare-exchange, not load + store: with a store,
    /// every waker that read `Halted` would send its own IPI.
    #[inline]
    fn claim(&self) -> Notify {
        match self.compare_exchange(State::Halted, State::Running) {
            Ok(_) => Notify::Wake,
            // Another waker claimed it (and sends the IPI), or it woke up by
            // itself; either way it is, or is about to be, running, and it
            // re-checks its inbox before halting again.
            Err(_) => Notify::Skip(Elided::AlreadyClaimed),
        }
    }
}
