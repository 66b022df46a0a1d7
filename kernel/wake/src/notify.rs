//! What a waker is told to do after giving a core work.

use crate::state::State;

/// Why a notification sent no wake.
///
/// `#[non_exhaustive]`: reasons may be added; match with a wildcard arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Elided {
    /// The target was `Running`: it re-checks its inbox before it can halt.
    /// Cost: one atomic read, no write.
    TargetRunning,
    /// The target was `Halting`; this waker swapped in `DontSleep`, so the
    /// target's commit fails and it goes round its idle loop instead of
    /// halting.
    SetDontSleep,
    /// The target was `DontSleep` already, or `Halted` but another waker won
    /// the claim (that waker sends the one wake), or it woke up by itself.
    AlreadyClaimed,
    /// The target's inbox was non-empty before this push, so the waker that
    /// made it non-empty notifies, and whatever drain picks that item up
    /// picks this one up too. No atomic read of the target's state at all.
    AlreadyPending,
    /// The target is the waker's own core, which is running (it is executing
    /// this call) and drains its inbox before it can sleep. Never a wake to
    /// oneself.
    SelfTarget,
    /// The target polls its inbox and never sleeps (policy `poll`).
    Polling,
}

impl Elided {
    /// Every reason.
    pub const ALL: [Elided; 6] = [
        Elided::TargetRunning,
        Elided::SetDontSleep,
        Elided::AlreadyClaimed,
        Elided::AlreadyPending,
        Elided::SelfTarget,
        Elided::Polling,
    ];
}

/// The waker's instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "on `Wake` the caller must send the wake signal, or the target may sleep on its work"]
pub enum Notify {
    /// Send the target its wake signal now (the kernel's wake IPI; a
    /// user-space pool's unpark). This waker claimed the sleeping target (or
    /// the policy always wakes); no other waker was told to wake it for the
    /// same sleep.
    Wake,
    /// Send nothing, for the reason given.
    Skip(Elided),
}

/// The result of [`CoreWake::send`](crate::CoreWake::send): what to do, and
/// what the target was doing when the waker looked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "on `Wake` the caller must send the wake signal, or the target may sleep on its work"]
pub struct NotifyOutcome {
    /// Wake the target or not.
    pub action: Notify,
    /// The target's state as read by the waker's one read of the state
    /// atomic (for statistics and wake-latency histograms), or `None` when no
    /// read was needed ([`Elided::AlreadyPending`], [`Elided::SelfTarget`]).
    pub observed: Option<State>,
}

impl NotifyOutcome {
    /// Whether the caller must send the target its wake signal.
    #[must_use]
    pub const fn must_wake(&self) -> bool {
        matches!(self.action, Notify::Wake)
    }
}
