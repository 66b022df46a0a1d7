//! What a waker is told to do after giving a core work.

use crate::state::State;

/// Why a notification sent no IPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elided {
    /// The target was `Running`: it re-checks its inbox before it can halt.
    /// Cost: one atomic read, no write.
    TargetRunning,
    /// The target was `Halting`; this waker swapped in `DontSleep`, so the
    /// target's commit fails and it goes round its idle loop instead of
    /// halting.
    SetDontSleep,
    /// The target was `DontSleep` already, or `Halted` but another waker won
    /// the claim (that waker sends the one IPI), or it woke up by itself.
    AlreadyClaimed,
    /// The target's inbox was non-empty before this push, so the waker that
    /// made it non-empty notifies, and whatever drain picks that item up
    /// picks this one up too. No atomic read of the target's state at all.
    AlreadyPending,
    /// The target is the waker's own core, which is running (it is executing
    /// this call) and drains its inbox before it can halt. Never an IPI to
    /// oneself.
    SelfTarget,
    /// The target polls its inbox and never halts (policy `poll`).
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
#[must_use = "on `SendIpi` the caller must send the wakeup IPI, or the target may sleep on its work"]
pub enum Notify {
    /// Send the wakeup IPI to the target now. This waker claimed the halted
    /// target (or the policy always sends); no other waker was told to send
    /// one for the same halt.
    SendIpi,
    /// Send nothing, for the reason given.
    NoIpi(Elided),
}

/// The result of [`CoreWake::send`](crate::CoreWake::send): what to do, and
/// what the target was doing when the waker looked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "on `SendIpi` the caller must send the wakeup IPI, or the target may sleep on its work"]
pub struct NotifyOutcome {
    /// Send an IPI or not.
    pub action: Notify,
    /// The target's state as read by the waker's one read of the state
    /// atomic (for statistics and wake-latency histograms), or `None` when no
    /// read was needed ([`Elided::AlreadyPending`], [`Elided::SelfTarget`]).
    pub observed: Option<State>,
}

impl NotifyOutcome {
    /// Whether the caller must send the wakeup IPI to the target.
    #[must_use]
    pub const fn send_ipi(&self) -> bool {
        matches!(self.action, Notify::SendIpi)
    }
}
