//! The in-guest stuck-core detector. A core that halts arms its LAPIC
//! one-shot timer with the watchdog deadline (`watchdog=MS`, default 200).
//! If the timer, not a wake IPI, ends the halt:
//! - with the core still `Halted` and its inbox empty, it is a quiet tick:
//!   the core re-arms (each quiet tick doubling the next, up to
//!   [`MAX_QUIET_TICK_US`]) and halts again (no counters move);
//! - otherwise the core drains its inbox; any task that had been waiting
//!   there for at least the deadline with no wake IPI is a **lost wakeup**:
//!   reported (core, wait time, notifying core, what the notifier saw and
//!   did, this core's recent idle history), counted (the run then fails),
//!   and rescued: it runs as if woken.
//!
//! `watchdog=off` leaves cores truly tickless: a lost wakeup is then a real
//! hang, for the host-side detector (`xtask`) to examine.

use super::task::TaskRef;
use crate::arch::tsc;
use crate::println;
use crate::smp::cores::MAX_CORES;
use alloc::collections::VecDeque;
use core::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// Longest gap between two quiet watchdog ticks of an idle core (the first
/// tick comes after the deadline; each quiet one doubles the next).
pub const MAX_QUIET_TICK_US: u64 = 1_600_000;

/// Default watchdog deadline.
pub const DEFAULT_WATCHDOG_MS: u32 = 200;

static WATCHDOG_MS: AtomicU64 = AtomicU64::new(0);
static LOST_WAKEUPS: AtomicU64 = AtomicU64::new(0);

/// Sets the deadline (0: off).
pub fn configure(watchdog_ms: u32) {
    WATCHDOG_MS.store(u64::from(watchdog_ms), Ordering::Relaxed);
}

/// The deadline in µs, if the watchdog is on.
pub fn deadline_us() -> Option<u64> {
    match WATCHDOG_MS.load(Ordering::Relaxed) {
        0 => None,
        ms => Some(ms * 1000),
    }
}

/// Lost wakeups detected so far (all cores).
pub fn lost_wakeups() -> u64 {
    LOST_WAKEUPS.load(Ordering::Relaxed)
}

/// An idle-side event in a core's history ring.
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
    /// `hlt` returned on the watchdog timer.
    WokeByWatchdog = 6,
    /// `hlt` returned on something else.
    WokeOther = 7,
    /// Chaos held the core between the re-check and the commit until a
    /// waker finished notifying it.
    ChaosHeldUntilNotified = 8,
    /// Chaos held the core there for its whole limit; no notify came.
    ChaosHoldExpired = 9,
}

impl IdleEvent {
    fn from_raw(raw: u8) -> Self {
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
            _ => Self::None,
        }
    }
}

const HISTORY: usize = 8;

/// A core's last few idle-side events (written by that core only).
#[derive(Debug)]
pub struct IdleHistory {
    next: AtomicU64,
    events: [AtomicU8; HISTORY],
    tsc: [AtomicU64; HISTORY],
}

impl IdleHistory {
    /// Empty.
    pub const fn new() -> Self {
        Self {
            next: AtomicU64::new(0),
            events: [const { AtomicU8::new(0) }; HISTORY],
            tsc: [const { AtomicU64::new(0) }; HISTORY],
        }
    }

    /// Records `event` now.
    pub fn record(&self, event: IdleEvent) {
        let n = self.next.load(Ordering::Relaxed);
        let slot = (n % HISTORY as u64) as usize;
        self.events[slot].store(event as u8, Ordering::Relaxed);
        self.tsc[slot].store(tsc::now(), Ordering::Relaxed);
        self.next.store(n + 1, Ordering::Relaxed);
    }

    /// Prints the history, oldest first, as ages before `now`.
    pub fn print(&self, now: u64) {
        let n = self.next.load(Ordering::Relaxed);
        for k in n.saturating_sub(HISTORY as u64)..n {
            let slot = (k % HISTORY as u64) as usize;
            let event = IdleEvent::from_raw(self.events[slot].load(Ordering::Relaxed));
            let at = self.tsc[slot].load(Ordering::Relaxed);
            println!(
                "    {:>9} us ago: {event:?}",
                tsc::ticks_to_us(now.saturating_sub(at))
            );
        }
    }
}

impl Default for IdleHistory {
    fn default() -> Self {
        Self::new()
    }
}

/// Per-core histories, by core index.
pub static HISTORIES: [IdleHistory; MAX_CORES] = [const { IdleHistory::new() }; MAX_CORES];

/// After a watchdog wake: reports every task of `drained` that waited at
/// least the deadline. Returns how many were lost.
pub fn check_lost(core: usize, drained: &VecDeque<TaskRef>) -> u64 {
    let Some(deadline_us) = deadline_us() else {
        return 0;
    };
    let now = tsc::now();
    let mut lost = 0;
    for task in drained {
        let stamp = task.pending_wake_tsc();
        if stamp == 0 {
            continue;
        }
        let waited_us = tsc::ticks_to_us(now.saturating_sub(stamp));
        if waited_us < deadline_us {
            continue;
        }
        lost += 1;
        let (from, observed, action) = task.notify_record();
        println!(
            "LOST WAKEUP on core {core}: task {} waited {} ms in the inbox while the core was halted and no wake IPI came; notified by core {from}, which saw {observed} and {action}; rescued by the watchdog. Core {core}'s idle history:",
            task.id(),
            waited_us / 1000
        );
        HISTORIES[core].print(now);
    }
    LOST_WAKEUPS.fetch_add(lost, Ordering::Relaxed);
    lost
}
