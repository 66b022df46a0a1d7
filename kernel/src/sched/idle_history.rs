//! Each core's last few idle-side events, with their TSC, for state dumps
//! (lost-wakeup reports, stuck-round dumps).

use crate::arch::tsc;
use crate::println;
use crate::smp::cores::MAX_CORES;
use core::sync::atomic::{AtomicU8, AtomicU64, Ordering};

pub use vigil_wake::IdleEvent;

const HISTORY: usize = 8;

/// A core's last few idle-side events (written by that core only, at
/// every idle event). A cache line of its own (two, it is 80 bytes): packed,
/// each core's record took a line its neighbours were writing too.
#[derive(Debug)]
#[repr(align(64))]
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

// A build that lets two cores' histories share a line fails here.
const _: () = assert!(core::mem::align_of::<IdleHistory>() >= 64);

/// Per-core histories, by core index.
pub static HISTORIES: [IdleHistory; MAX_CORES] = [const { IdleHistory::new() }; MAX_CORES];
