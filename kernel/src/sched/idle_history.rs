//! Each core's last few idle-side events, with their TSC, for state dumps
//! (lost-wakeup reports, stuck-round dumps).

use crate::arch::tsc;
use crate::println;
use crate::smp::cores::MAX_CORES;
use core::sync::atomic::{AtomicU8, AtomicU64, Ordering};

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
            10 => Self::WokeByProbe,
            11 => Self::LostWakeupFound,
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
