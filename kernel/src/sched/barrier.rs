//! A reusable barrier for `n` tasks (any cores).

use super::wait_queue::WaitQueue;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Blocks tasks until `n` of them have arrived, then releases them all.
#[derive(Debug)]
pub struct Barrier {
    parties: usize,
    arrived: AtomicUsize,
    generation: AtomicU64,
    waiters: WaitQueue,
}

impl Barrier {
    /// A barrier for `parties` tasks.
    pub const fn new(parties: usize) -> Self {
        Self {
            parties,
            arrived: AtomicUsize::new(0),
            generation: AtomicU64::new(0),
            waiters: WaitQueue::new(),
        }
    }

    /// Waits until all parties arrived; `true` for exactly one of them (the
    /// last to arrive) per round.
    pub fn wait(&self) -> bool {
        // Acquire: the generation read before arriving orders this round's
        // check after the previous round's release.
        let generation = self.generation.load(Ordering::Acquire);
        // AcqRel: the last arriver sees every party's work before it.
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            self.arrived.store(0, Ordering::Relaxed);
            // Release pairs with the waiters' Acquire loads below.
            self.generation.store(generation + 1, Ordering::Release);
            self.waiters.wake_all();
            return true;
        }
        self.waiters
            .wait_until(|| self.generation.load(Ordering::Acquire) != generation);
        false
    }
}
