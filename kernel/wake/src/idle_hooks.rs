//! The driver's one seam to the rest of the kernel: what it tells the
//! kernel's idle history, chaos mode, statistics and lost-wakeup report
//! ([`IdleHooks`], on the idle side; [`WakerHooks`], on the waker side), and
//! the events it reports ([`IdleEvent`], [`FoundAt`]).
//!
//! Every method has an empty default: a kernel without chaos or history
//! implements only what it uses. No hook takes part in a protocol decision;
//! each is told what the driver did, or (the two chaos windows) may delay
//! the driver at one fixed point.

use alloc::collections::VecDeque;

use crate::backoff::PollOutcome;
use crate::notify::NotifyOutcome;

/// An idle-side event, for a core's history ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum IdleEvent {
    /// Nothing recorded in this slot.
    None = 0,
    /// `Running -> Halting`, about to re-check.
    PrepareToHalt = 1,
    /// The re-check found work.
    RecheckFoundWork = 2,
    /// A waker's `DontSleep` cancelled the halt.
    DontSleep = 3,
    /// Committed: entering `sti; hlt`.
    Halt = 4,
    /// `hlt` returned on a wake IPI.
    WokeByIpi = 5,
    /// `hlt` returned on the watchdog core's scan tick (that core only; not
    /// recorded: it halts again, or reports).
    WokeByWatchdog = 6,
    /// `hlt` returned on something else (the core halts again).
    WokeOther = 7,
    /// Chaos held the core between the re-check and the commit until a
    /// waker finished notifying it.
    ChaosHeldUntilNotified = 8,
    /// Chaos held the core there for its whole limit; no notify came.
    ChaosHoldExpired = 9,
    /// `hlt` returned on the watchdog core's lost-wakeup probe, and the
    /// core found nothing lost (it halts again).
    WokeByProbe = 10,
    /// The core found work announced to it with no wake IPI on its way: a
    /// lost wakeup (reported, then the core ran the work).
    LostWakeupFound = 11,
}

impl IdleEvent {
    /// The event stored as `raw` (`event as u8`); [`IdleEvent::None`] for
    /// anything else.
    #[must_use]
    pub fn from_raw(raw: u8) -> Self {
        match raw {
            1 => Self::PrepareToHalt,
            2 => Self::RecheckFoundWork,
            3 => Self::DontSleep,
            4 => Self::Halt,
            5 => Self::WokeByIpi,
            6 => Self::WokeByWatchdog,
            7 => Self::WokeOther,
            8 => Self::ChaosHeldUntilNotified,
            9 => Self::ChaosHoldExpired,
            10 => Self::WokeByProbe,
            11 => Self::LostWakeupFound,
            _ => Self::None,
        }
    }
}

/// Where a core found its lost wakeup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundAt {
    /// At its own halt, before `sti; hlt`.
    Halt,
    /// Woken by the watchdog core's probe.
    Probe,
    /// On its own scan tick (the watchdog core).
    Tick,
    /// Woken by an interrupt that is neither a wake IPI nor the tick.
    OtherWake,
}

impl FoundAt {
    /// A phrase for reports.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            FoundAt::Halt => "at its own halt, before sti; hlt",
            FoundAt::Probe => "when the watchdog core's probe woke it",
            FoundAt::Tick => "on its own watchdog scan tick",
            FoundAt::OtherWake => "when an unrelated interrupt woke it",
        }
    }
}

/// What the idle driver tells the kernel (all optional). `T` is the task
/// handle the inbox carries.
pub trait IdleHooks<T> {
    /// An idle-side event happened (for the core's history ring).
    fn record(&self, event: IdleEvent) {
        let _ = event;
    }

    /// The window between the re-check and the commit, the one every
    /// lost-wakeup race runs through: chaos mode may delay the core here, or
    /// hold it until a waker has finished notifying it. Records its own
    /// events.
    fn between_recheck_and_commit(&self) {}

    /// An idle pass (poll and halt path) that began `idle_ticks` ago ended.
    fn idle_ended(&self, idle_ticks: u64) {
        let _ = idle_ticks;
    }

    /// A halt (committed `Halted`, possibly several `hlt`s) ended by `cause`
    /// after `halted_ticks`; `woke_up` then drained `drained` items.
    fn halt_ended(&self, cause: IdleEvent, drained: usize, halted_ticks: u64) {
        let _ = (cause, drained, halted_ticks);
    }

    /// The core found a lost wakeup `at`, and has drained `batch`, the work
    /// it slept on (and whatever came with it). The kernel reports it; the
    /// tasks then run as usual.
    fn lost_wakeup(&self, at: FoundAt, batch: &VecDeque<T>) {
        let _ = (at, batch);
    }

    /// The core is about to poll its inbox before the halt path (its
    /// backoff budget is not zero): may it? `false` sends it to the halt
    /// path at once. A kernel that knows how many of its cores the host
    /// runs at once lets at most that many poll: a polling vCPU beyond
    /// them takes a host core from one that has work. Each `true` is
    /// followed by one [`poll_ended`](Self::poll_ended). Not a protocol
    /// decision: a core that polls stays `Running` and still re-checks
    /// before it halts. Default: always.
    fn may_poll(&self) -> bool {
        true
    }

    /// A poll that [`may_poll`](Self::may_poll) allowed ended, as `outcome`
    /// says.
    fn poll_ended(&self, outcome: PollOutcome) {
        let _ = outcome;
    }

    /// The watchdog core's scan tick fired: may it scan now? `false` when
    /// another core ran the scan that was due (a kernel whose busy and idle
    /// cores also run due scans claims each period once, so that no two
    /// scans of one record are less than a period apart: the probe rule's
    /// "the same picture a whole period later" needs it). The core still
    /// checks itself. Default: always.
    fn claim_scan(&self) -> bool {
        true
    }

    /// The watchdog core's scan tick ran (it sent `probes_sent` probes):
    /// the kernel's own periodic checks go here.
    fn watchdog_tick(&self, probes_sent: usize) {
        let _ = probes_sent;
    }
}

/// What the waker side of the driver tells the kernel (all optional).
pub trait WakerHooks {
    /// Between the push and the notify decision: chaos mode may delay here.
    fn between_push_and_notify(&self) {}

    /// The notify decision was `outcome` (for the task's wake record).
    fn decided(&self, outcome: &NotifyOutcome) {
        let _ = outcome;
    }

    /// About to send the wake IPI: chaos mode may delay here.
    fn before_ipi(&self) {}

    /// The waker has finished notifying the target (push, decision, IPI):
    /// ends a chaos hold of the target.
    fn notified(&self) {}
}

/// Hooks that do nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl<T> IdleHooks<T> for NoHooks {}
impl WakerHooks for NoHooks {}
