//! Per-core wake statistics.
//!
//! Each core owns one [`Counters`] block on its own cache line and is the only
//! writer of it: a waker counts what *it* did (IPIs sent or elided, pushes) in
//! its own block, an idle core counts its halts and wakeups in its own block.
//! So no line is written by every core, and an increment is a relaxed load
//! and a relaxed store, not a locked read-modify-write.
//!
//! The atomics here are `core`'s even under `cfg(loom)`: no protocol decision
//! reads a counter, so there is nothing for the model checker to check and
//! modelling them would only multiply its state space. Readers (statistics,
//! the host-side detector) get a [`CounterSnapshot`] whose fields may be a
//! few increments apart from one another; each field on its own is exact once
//! its core is quiet.

use core::ops::{Add, AddAssign};
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::notify::{Elided, Notify};

/// One core's wake statistics, cache-line aligned so that neighbouring
/// cores' blocks never share a line.
///
/// Written only by the core it belongs to (see the module docs), through
/// [`CoreWake`](crate::CoreWake); read by anyone through
/// [`Counters::snapshot`].
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct Counters {
    wakes_sent: AtomicU64,
    elided_target_running: AtomicU64,
    elided_dont_sleep: AtomicU64,
    elided_already_claimed: AtomicU64,
    elided_already_pending: AtomicU64,
    elided_self_target: AtomicU64,
    elided_polling: AtomicU64,
    inbox_pushes: AtomicU64,
    halts: AtomicU64,
    wakeups: AtomicU64,
    spurious_wakeups: AtomicU64,
    aborts_work: AtomicU64,
    aborts_dont_sleep: AtomicU64,
}

/// Adds one to a counter that only the calling core writes.
///
/// A load and a store rather than `fetch_add`: there is a single writer, so
/// no increment can be lost to another core, and this costs two plain moves
/// on x86 instead of a locked instruction. (An interrupt handler on the same
/// core that counts into the same field between the load and the store could
/// lose one increment; the kernel calls into this crate with interrupts
/// disabled, and these are statistics.)
#[inline]
fn bump(counter: &AtomicU64) {
    // Relaxed both ways: statistics order nothing.
    counter.store(counter.load(Relaxed).wrapping_add(1), Relaxed);
}

impl Counters {
    /// A block of zeroes.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            wakes_sent: AtomicU64::new(0),
            elided_target_running: AtomicU64::new(0),
            elided_dont_sleep: AtomicU64::new(0),
            elided_already_claimed: AtomicU64::new(0),
            elided_already_pending: AtomicU64::new(0),
            elided_self_target: AtomicU64::new(0),
            elided_polling: AtomicU64::new(0),
            inbox_pushes: AtomicU64::new(0),
            halts: AtomicU64::new(0),
            wakeups: AtomicU64::new(0),
            spurious_wakeups: AtomicU64::new(0),
            aborts_work: AtomicU64::new(0),
            aborts_dont_sleep: AtomicU64::new(0),
        }
    }

    /// A copy of every counter (each read relaxed, see the module docs).
    #[must_use]
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            wakes_sent: self.wakes_sent.load(Relaxed),
            elided_target_running: self.elided_target_running.load(Relaxed),
            elided_dont_sleep: self.elided_dont_sleep.load(Relaxed),
            elided_already_claimed: self.elided_already_claimed.load(Relaxed),
            elided_already_pending: self.elided_already_pending.load(Relaxed),
            elided_self_target: self.elided_self_target.load(Relaxed),
            elided_polling: self.elided_polling.load(Relaxed),
            inbox_pushes: self.inbox_pushes.load(Relaxed),
            halts: self.halts.load(Relaxed),
            wakeups: self.wakeups.load(Relaxed),
            spurious_wakeups: self.spurious_wakeups.load(Relaxed),
            aborts_work: self.aborts_work.load(Relaxed),
            aborts_dont_sleep: self.aborts_dont_sleep.load(Relaxed),
        }
    }

    /// Counts what a notification decided.
    #[inline]
    pub(crate) fn count_notify(&self, action: Notify) {
        match action {
            Notify::Wake => bump(&self.wakes_sent),
            Notify::Skip(why) => self.count_elided(why),
        }
    }

    #[inline]
    pub(crate) fn count_elided(&self, why: Elided) {
        bump(match why {
            Elided::TargetRunning => &self.elided_target_running,
            Elided::SetDontSleep => &self.elided_dont_sleep,
            Elided::AlreadyClaimed => &self.elided_already_claimed,
            Elided::AlreadyPending => &self.elided_already_pending,
            Elided::SelfTarget => &self.elided_self_target,
            Elided::Polling => &self.elided_polling,
        });
    }

    #[inline]
    pub(crate) fn count_push(&self) {
        bump(&self.inbox_pushes);
    }

    #[inline]
    pub(crate) fn count_halt(&self) {
        bump(&self.halts);
    }

    #[inline]
    pub(crate) fn count_wakeup(&self, found_work: bool) {
        bump(if found_work {
            &self.wakeups
        } else {
            &self.spurious_wakeups
        });
    }

    #[inline]
    pub(crate) fn count_abort_work(&self) {
        bump(&self.aborts_work);
    }

    #[inline]
    pub(crate) fn count_abort_dont_sleep(&self) {
        bump(&self.aborts_dont_sleep);
    }
}

/// A copy of one core's [`Counters`] (or, added up, of several cores').
///
/// The waker-side fields count what this core did *as a waker* to any core;
/// the idle-side fields count what this core did *as an idle core*.
///
/// `#[non_exhaustive]`: counters may be added; build one with `default()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CounterSnapshot {
    /// Waker side: notifications that returned [`Notify::Wake`](crate::Notify::Wake).
    pub wakes_sent: u64,
    /// Waker side: no IPI, the target was `Running` (one atomic read, no write).
    pub elided_target_running: u64,
    /// Waker side: no IPI, this waker turned the target's `Halting` into `DontSleep`.
    pub elided_dont_sleep: u64,
    /// Waker side: no IPI, another waker had already claimed the halted target
    /// or already written `DontSleep`.
    pub elided_already_claimed: u64,
    /// Waker side: no IPI, the target's inbox was already non-empty, so the
    /// waker that made it non-empty is the one that notifies.
    pub elided_already_pending: u64,
    /// Waker side: no IPI, the target was the waker's own core.
    pub elided_self_target: u64,
    /// Waker side: no IPI, the target polls (policy `poll`).
    pub elided_polling: u64,
    /// Waker side: items this core pushed into any core's inbox.
    pub inbox_pushes: u64,
    /// Idle side: times this core committed to `hlt`.
    pub halts: u64,
    /// Idle side: returns from `hlt` that found work in the inbox.
    pub wakeups: u64,
    /// Idle side: returns from `hlt` that found the inbox empty.
    pub spurious_wakeups: u64,
    /// Idle side: halt attempts abandoned because the re-check found work (or
    /// the caller aborted).
    pub aborts_work: u64,
    /// Idle side: halt attempts abandoned because a waker wrote `DontSleep`.
    pub aborts_dont_sleep: u64,
}

impl CounterSnapshot {
    /// All notifications that sent no IPI, whatever the reason.
    #[must_use]
    pub const fn wakes_elided(&self) -> u64 {
        self.elided_target_running
            + self.elided_dont_sleep
            + self.elided_already_claimed
            + self.elided_already_pending
            + self.elided_self_target
            + self.elided_polling
    }

    /// The count of notifications elided for `why`.
    #[must_use]
    pub const fn elided(&self, why: Elided) -> u64 {
        match why {
            Elided::TargetRunning => self.elided_target_running,
            Elided::SetDontSleep => self.elided_dont_sleep,
            Elided::AlreadyClaimed => self.elided_already_claimed,
            Elided::AlreadyPending => self.elided_already_pending,
            Elided::SelfTarget => self.elided_self_target,
            Elided::Polling => self.elided_polling,
        }
    }
}

impl AddAssign for CounterSnapshot {
    #[inline]
    fn add_assign(&mut self, other: Self) {
        self.wakes_sent += other.wakes_sent;
        self.elided_target_running += other.elided_target_running;
        self.elided_dont_sleep += other.elided_dont_sleep;
        self.elided_already_claimed += other.elided_already_claimed;
        self.elided_already_pending += other.elided_already_pending;
        self.elided_self_target += other.elided_self_target;
        self.elided_polling += other.elided_polling;
        self.inbox_pushes += other.inbox_pushes;
        self.halts += other.halts;
        self.wakeups += other.wakeups;
        self.spurious_wakeups += other.spurious_wakeups;
        self.aborts_work += other.aborts_work;
        self.aborts_dont_sleep += other.aborts_dont_sleep;
    }
}

impl Add for CounterSnapshot {
    type Output = Self;

    #[inline]
    fn add(mut self, other: Self) -> Self {
        self += other;
        self
    }
}
