//! [`CoreWake`]: one core's idle state, inbox and counters, and the API the
//! scheduler calls, with the idle side's steps as single-use tokens so that
//! they can only be taken in the protocol's order.

use alloc::collections::VecDeque;
use core::fmt;

use crate::counters::Counters;
use crate::idle_state::{CommitStep, IdleState};
use crate::inbox::{Inbox, Pushed};
use crate::lost_wakeup::LostWakeupRecord;
use crate::notify::{Elided, Notify, NotifyOutcome};
use crate::policy::Policy;
use crate::state::State;

/// Everything the wake protocol keeps for one core: its idle state, its
/// inbox of private work, and its statistics.
///
/// The kernel keeps one per core (for instance in a boxed slice indexed by
/// core number, built at boot once the core count and the policy are known).
/// The idle state and the inbox sit together because a waker touches both;
/// the counters have their own cache line.
///
/// * Wakers call [`send`](CoreWake::send) on the *target's* `CoreWake`.
/// * The core itself calls [`drain_into`](CoreWake::drain_into) and
///   [`prepare_to_halt`](CoreWake::prepare_to_halt) from its idle loop.
///
/// ```
/// use std::collections::VecDeque;
/// use vigil_wake::{Commit, CoreWake, Policy};
///
/// let cores: Vec<CoreWake<u32>> = (0..2).map(|_| CoreWake::new(Policy::StateMachine)).collect();
/// let mut run_queue = VecDeque::new();
///
/// // Core 1, idle, interrupts disabled:
/// let halted = match cores[1].prepare_to_halt().try_halt() {
///     Commit::Halt(halted) => halted, // now `sti; hlt`
///     _ => unreachable!("nothing was sent yet"),
/// };
///
/// // Core 0 gives core 1 a task; core 1 is halted, so core 0 must send the IPI.
/// let outcome = cores[1].send(7, &cores[0]);
/// assert!(outcome.must_wake());
///
/// // Core 1's `hlt` returns (the IPI): back to running, drain.
/// assert_eq!(halted.woke_up(&mut run_queue), 1);
/// assert_eq!(run_queue.pop_front(), Some(7));
/// ```
#[repr(align(64))]
pub struct CoreWake<T> {
    idle: IdleState,
    inbox: Inbox<T>,
    counters: Counters,
    lost_wakeup: LostWakeupRecord,
}

impl<T> CoreWake<T> {
    /// A running core with an empty inbox, using `policy`, without the
    /// lost-wakeup detector.
    #[must_use]
    pub fn new(policy: Policy) -> Self {
        Self::with_detector(policy, false)
    }

    /// A running core with an empty inbox, using `policy`, with the
    /// lost-wakeup detector's counts and checks on (`detector`) or off.
    /// Every core of one machine must be built the same way.
    #[must_use]
    pub fn with_detector(policy: Policy, detector: bool) -> Self {
        Self {
            idle: IdleState::new(policy),
            inbox: Inbox::new(),
            counters: Counters::new(),
            lost_wakeup: LostWakeupRecord::new(detector),
        }
    }

    /// The lost-wakeup detector's record of this core.
    #[must_use]
    pub fn lost_wakeup_record(&self) -> &LostWakeupRecord {
        &self.lost_wakeup
    }

    /// The policy this core was built with.
    #[must_use]
    pub fn policy(&self) -> Policy {
        self.idle.policy()
    }

    /// The core's state: one relaxed load (an observation; by the time the
    /// caller looks at it, it may have changed).
    #[must_use]
    pub fn state(&self) -> State {
        self.idle.state()
    }

    /// The raw value of the state atomic ([`State::as_raw`]), for the
    /// stuck-core detector: one relaxed load.
    #[must_use]
    pub fn state_raw(&self) -> u8 {
        self.idle.state_raw()
    }

    /// Where the state byte ([`State::as_raw`]) and the inbox's item count
    /// (`usize`) live, for a host-side stuck-core detector that reads a hung
    /// guest's memory without its help: `(state_address, inbox_len_address)`.
    /// Feature `test-hooks`.
    #[cfg(feature = "test-hooks")]
    #[must_use]
    pub fn debug_addresses(&self) -> (usize, usize) {
        (self.idle.state_address(), self.inbox.len_address())
    }

    /// How many items wait in the inbox: one relaxed load, no lock (see
    /// [`Inbox::len`]).
    #[must_use]
    pub fn inbox_len(&self) -> usize {
        self.inbox.len()
    }

    /// This core's statistics.
    #[must_use]
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    // ----- waker side ----------------------------------------------------

    /// Gives this core `item` and runs the waker side of the protocol:
    /// push into this core's inbox, then decide whether this core needs an
    /// IPI. On [`Notify::Wake`] the caller must send the wakeup IPI to
    /// this core (after this call returns: the IPI must not overtake the
    /// push; with the xAPIC the ICR write is an uncached store, which x86
    /// does not reorder with earlier stores; with the x2APIC, whose ICR
    /// `wrmsr` is not serialising, fence first as Linux's
    /// `weak_wrmsr_fence` does).
    ///
    /// `from` is the calling core's own `CoreWake`: its counters record what
    /// this waker did, and sending to oneself (`from` is `self`) never asks
    /// for an IPI (the core is running; it drains before it can halt). Only
    /// the calling core may be passed as `from`, since a core's counters have
    /// a single writer.
    ///
    /// Cost for a target that is `Running`: the push (lock, append, one
    /// atomic add) and one atomic read of the target's state, no write to
    /// it. If the push found the inbox non-empty, not even the read (under
    /// `state-machine`).
    ///
    /// Call with interrupts disabled if an interrupt handler on this core
    /// could send to the same target (the inbox lock is a spinlock).
    pub fn send(&self, item: T, from: &CoreWake<T>) -> NotifyOutcome {
        let pushed = self.push(item, from);
        self.notify(pushed, from)
    }

    /// [`send`](CoreWake::send) with `between` run after the push and before
    /// the notify decision: the kernel's chaos mode widens that window with
    /// a random delay to provoke races. Same contract as `send`. Feature
    /// `test-hooks`.
    #[cfg(feature = "test-hooks")]
    pub fn send_with(&self, item: T, from: &CoreWake<T>, between: impl FnOnce()) -> NotifyOutcome {
        let pushed = self.push(item, from);
        between();
        self.notify(pushed, from)
    }

    /// Gives this core `item` from a producer that is not one of the cores
    /// (an interrupt handler, a device thread, a client thread of a
    /// user-space pool): the same push and decision as
    /// [`send`](CoreWake::send), with what this producer did counted in
    /// `counters`, a block the caller owns (one per producer: a block has a
    /// single writer, see [`Counters`]). Never [`Elided::SelfTarget`]. On
    /// [`Notify::Wake`] the caller sends the wake, after this returns. Like
    /// `send`, it keeps no lost-wakeup detector counts ([`wake_core`]
    /// does, for cores).
    ///
    /// [`wake_core`]: crate::wake_core
    ///
    /// ```
    /// use vigil_wake::{CoreWake, Counters, Policy};
    ///
    /// let core: CoreWake<&str> = CoreWake::new(Policy::StateMachine);
    /// let device_thread = Counters::new();
    /// // The core is running: no wake needed, one read of its state.
    /// assert!(!core.submit("packet", &device_thread).must_wake());
    /// assert_eq!(device_thread.snapshot().inbox_pushes, 1);
    /// assert_eq!(device_thread.snapshot().wakes_sent, 0);
    /// ```
    pub fn submit(&self, item: T, counters: &Counters) -> NotifyOutcome {
        let pushed = self.inbox.push(item);
        counters.count_push();
        let outcome = self.idle.notify(pushed.was_empty);
        counters.count_notify(outcome.action);
        outcome
    }

    /// The push half of [`send`](CoreWake::send).
    pub(crate) fn push(&self, item: T, from: &CoreWake<T>) -> Pushed {
        let pushed = self.inbox.push(item);
        from.counters.count_push();
        pushed
    }

    /// The notify half of [`send`](CoreWake::send).
    pub(crate) fn notify(&self, pushed: Pushed, from: &CoreWake<T>) -> NotifyOutcome {
        let outcome = if core::ptr::eq(self, from) {
            NotifyOutcome {
                action: Notify::Skip(Elided::SelfTarget),
                observed: None,
            }
        } else {
            self.idle.notify(pushed.was_empty)
        };
        from.count_notify(outcome.action);
        outcome
    }

    /// Counts, in this (the waker's) counters, what a notification decided.
    pub(crate) fn count_notify(&self, action: Notify) {
        self.counters.count_notify(action);
    }

    /// The idle-state half of the protocol, for tests that step a waker's
    /// read and its compare-exchanges separately.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn idle(&self) -> &IdleState {
        &self.idle
    }

    // ----- idle side -----------------------------------------------------

    /// Moves everything in this core's inbox to the back of `out` and
    /// returns how many items it moved (see [`Inbox::drain_into`]: pass an
    /// empty `out` and nothing is copied). Only this core may call it.
    /// Takes no lock when the inbox count reads zero.
    pub fn drain_into(&self, out: &mut VecDeque<T>) -> usize {
        self.inbox.drain_into(out)
    }

    /// Moves everything in this core's inbox into `out`, any [`Extend`]
    /// (a `Vec`, a run queue of the caller's own), in push order, and
    /// returns how many items it moved. The items are taken under the lock
    /// and handed to `out` after it is released. Only this core may call
    /// it; takes no lock when the inbox count reads zero.
    ///
    /// ```
    /// use vigil_wake::{CoreWake, Counters, Policy};
    ///
    /// let core: CoreWake<u32> = CoreWake::new(Policy::StateMachine);
    /// let producer = Counters::new();
    /// let _ = core.submit(1, &producer);
    /// let _ = core.submit(2, &producer);
    /// let mut run_queue = Vec::new();
    /// assert_eq!(core.drain(&mut run_queue), 2);
    /// assert_eq!(run_queue, [1, 2]);
    /// ```
    pub fn drain(&self, out: &mut impl Extend<T>) -> usize {
        self.inbox.drain(out)
    }

    /// Step 2 of the idle loop: announce that this core is about to halt
    /// (`Running -> Halting`). Only this core may call it, with interrupts
    /// disabled from here until its `sti; hlt` (or until it gives up).
    ///
    /// The returned token is the only way to go on: re-check the inbox with
    /// [`HaltAttempt::recheck`] (or do that and commit in one go with
    /// [`HaltAttempt::try_halt`]), or [`HaltAttempt::abort`] if the caller
    /// has other work. Dropping it aborts.
    pub fn prepare_to_halt(&self) -> HaltAttempt<'_, T> {
        self.idle.prepare();
        HaltAttempt { core: self }
    }
}

impl<T> fmt::Debug for CoreWake<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CoreWake")
            .field("policy", &self.policy())
            .field("state", &self.state())
            .field("inbox_len", &self.inbox_len())
            .finish_non_exhaustive()
    }
}

/// A halt attempt after `Running -> Halting`: the inbox still has to be
/// re-checked. Dropping it aborts the attempt (back to `Running`).
#[must_use = "re-check the inbox (`recheck`/`try_halt`) or `abort`; dropping the attempt aborts it"]
pub struct HaltAttempt<'a, T> {
    core: &'a CoreWake<T>,
}

impl<'a, T> HaltAttempt<'a, T> {
    /// Re-checks the inbox. Under `state-machine` this read is the idle
    /// core's half of the interlock with wakers (see the crate docs): any push
    /// it does not see is made by a waker that will see this core's
    /// `Halting` (or later) and act on it.
    pub fn recheck(self) -> Recheck<'a, T> {
        let core = self.disarm();
        if core.idle.recheck(&core.inbox) {
            core.counters.count_abort_work();
            Recheck::Work
        } else {
            Recheck::Empty(Armed { core })
        }
    }

    /// [`recheck`](HaltAttempt::recheck), then, if the inbox was empty,
    /// [`Armed::commit`]: the whole rest of the halt decision in one call.
    pub fn try_halt(self) -> Commit<'a, T> {
        match self.recheck() {
            Recheck::Work => Commit::WorkArrived,
            Recheck::Empty(armed) => armed.commit(),
        }
    }

    /// Gives up the attempt (the caller found work of its own): back to
    /// `Running`.
    pub fn abort(self) {
        let core = self.disarm();
        core.idle.abort();
        core.counters.count_abort_work();
    }

    fn disarm(self) -> &'a CoreWake<T> {
        let core = self.core;
        core::mem::forget(self);
        core
    }
}

impl<T> Drop for HaltAttempt<'_, T> {
    fn drop(&mut self) {
        self.core.idle.abort();
        self.core.counters.count_abort_work();
    }
}

impl<T> fmt::Debug for HaltAttempt<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HaltAttempt").finish_non_exhaustive()
    }
}

/// The result of [`HaltAttempt::recheck`].
#[must_use = "an empty re-check must be committed (or aborted)"]
pub enum Recheck<'a, T> {
    /// The inbox is empty: commit (or abort) with the token.
    Empty(Armed<'a, T>),
    /// Work arrived: the state is back to `Running`; drain and run it.
    Work,
}

impl<T> fmt::Debug for Recheck<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Recheck::Empty(armed) => f.debug_tuple("Empty").field(armed).finish(),
            Recheck::Work => f.write_str("Work"),
        }
    }
}

/// A halt attempt whose re-check found the inbox empty, ready to commit.
/// Dropping it aborts the attempt (back to `Running`).
#[must_use = "`commit` (or `abort`); dropping the token aborts the halt attempt"]
pub struct Armed<'a, T> {
    core: &'a CoreWake<T>,
}

impl<'a, T> Armed<'a, T> {
    /// Step 3: commit to halting (`Halting -> Halted`), unless a waker wrote
    /// `DontSleep` since the re-check.
    pub fn commit(self) -> Commit<'a, T> {
        let core = self.disarm();
        match core.idle.commit() {
            CommitStep::Halt => {
                core.counters.count_halt();
                Commit::Halt(Halted { core })
            }
            CommitStep::DontSleep => {
                core.counters.count_abort_dont_sleep();
                Commit::DontSleep
            }
            CommitStep::Poll => Commit::Poll,
        }
    }

    /// Gives up the attempt (the caller found work of its own): back to
    /// `Running`.
    pub fn abort(self) {
        let core = self.disarm();
        core.idle.abort();
        core.counters.count_abort_work();
    }

    fn disarm(self) -> &'a CoreWake<T> {
        let core = self.core;
        core::mem::forget(self);
        core
    }
}

impl<T> Drop for Armed<'_, T> {
    fn drop(&mut self) {
        self.core.idle.abort();
        self.core.counters.count_abort_work();
    }
}

impl<T> fmt::Debug for Armed<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Armed").finish_non_exhaustive()
    }
}

/// The halt decision.
#[must_use = "on `Halt` the core must `sti; hlt` and then call `woke_up`"]
pub enum Commit<'a, T> {
    /// Halt now: the state is `Halted`. Execute `sti; hlt` in one asm block
    /// (the `sti` shadow lets a pending IPI end the `hlt`), then call
    /// [`Halted::woke_up`].
    Halt(Halted<'a, T>),
    /// The re-check found work ([`HaltAttempt::try_halt`] only): the state
    /// is back to `Running`; drain and run it.
    WorkArrived,
    /// A waker wrote `DontSleep` after the re-check: the state is back to
    /// `Running`; go round the idle loop (drain) instead of halting. No IPI
    /// was or will be sent for it.
    DontSleep,
    /// The policy (`poll`) never halts: go round the idle loop.
    Poll,
}

impl<T> fmt::Debug for Commit<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Commit::Halt(halted) => f.debug_tuple("Halt").field(halted).finish(),
            Commit::WorkArrived => f.write_str("WorkArrived"),
            Commit::DontSleep => f.write_str("DontSleep"),
            Commit::Poll => f.write_str("Poll"),
        }
    }
}

/// A core that committed to `hlt`. Its only use: [`Halted::woke_up`] once
/// `hlt` has returned.
#[must_use = "after `hlt` returns, call `woke_up`"]
pub struct Halted<'a, T> {
    core: &'a CoreWake<T>,
}

impl<T> Halted<'_, T> {
    /// Step 4: `hlt` returned. Back to `Running`, then drain the inbox into
    /// `out` (see [`CoreWake::drain_into`]) and count a wakeup, or a
    /// spurious wakeup if nothing was there. Returns how many items were
    /// drained.
    ///
    /// The state goes to `Running` *before* the drain, so a waker that pushes
    /// during the drain sees `Running` and sends no IPI this core does not
    /// need.
    pub fn woke_up(self, out: &mut VecDeque<T>) -> usize {
        self.core.idle.woke_up();
        let drained = self.core.inbox.drain_into(out);
        self.core.counters.count_wakeup(drained != 0);
        drained
    }
}

impl<T> fmt::Debug for Halted<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Halted").finish_non_exhaustive()
    }
}
