//! A count-down latch: `wait` blocks until `count_down` was called `n` times.

use super::wait_queue::WaitQueue;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Counts down to zero once; reusable through [`Latch::reset`].
#[derive(Debug, Default)]
pub struct Latch {
    remaining: AtomicUsize,
    waiters: WaitQueue,
}

impl Latch {
    /// A latch that opens after `count` count-downs.
    pub const fn new(count: usize) -> Self {
        Self {
            remaining: AtomicUsize::new(count),
            waiters: WaitQueue::new(),
        }
    }

    /// Re-arms the latch (only while nobody waits on it).
    pub fn reset(&self, count: usize) {
        self.remaining.store(count, Ordering::Relaxed);
    }

    /// Counts one down; the last one wakes the waiters.
    pub fn count_down(&self) {
        // AcqRel: Release publishes this party's work to whoever sees zero;
        // Acquire lets the party that reaches zero see the others' work.
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.waiters.wake_all();
        }
    }

    /// Count-downs still missing (an observation, for reports).
    pub fn remaining(&self) -> usize {
        // Relaxed: reported, not acted on.
        self.remaining.load(Ordering::Relaxed)
    }

    /// Registered waiters, or `None` if the queue's lock is busy (for
    /// reports from a context that must not spin).
    pub fn waiter_count(&self) -> Option<usize> {
        self.waiters.try_len()
    }

    /// Whether the count reached zero.
    pub fn is_open(&self) -> bool {
        // Acquire pairs with the Release of every `count_down`.
        self.remaining.load(Ordering::Acquire) == 0
    }

    /// Blocks the current task until the count reaches zero.
    pub fn wait(&self) {
        self.waiters.wait_until(|| self.is_open());
    }
}
