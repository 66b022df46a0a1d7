//! [`Parker`]: one wake token per task, as in `std::thread::park`.
//!
//! `try_consume_or_park` returns at once if a wake came first (the token is
//! consumed), otherwise marks the task parked and the caller switches away
//! until an `unpark` tells somebody to make it runnable. A wake that arrives
//! between "decide to block" and "block" is therefore never lost, and callers
//! re-check their condition in a loop (spurious returns are allowed).

use core::fmt;

use crate::sync::{AtomicU8, Ordering};

const EMPTY: u8 = 0;
const NOTIFIED: u8 = 1;
const PARKED: u8 = 2;

/// What [`Parker::unpark`] must do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unparked {
    /// The task was parked: the caller must make it runnable (exactly one
    /// unparker gets this for one park).
    MustEnqueue,
    /// The task was not parked: a token was left (or already there).
    TokenLeft,
}

/// The per-task parking state.
pub struct Parker {
    state: AtomicU8,
}

impl Parker {
    /// No token, not parked.
    #[cfg(not(loom))]
    #[must_use]
    pub const fn new() -> Self {
        Self {
            state: AtomicU8::new(EMPTY),
        }
    }

    /// No token, not parked (loom's atomics have no `const fn new`).
    #[cfg(loom)]
    #[must_use]
    pub fn new() -> Self {
        Self {
            state: AtomicU8::new(EMPTY),
        }
    }

    /// Called by the task itself. `true`: a token was waiting (consumed), do
    /// not block. `false`: the task is now `PARKED` and must switch away;
    /// whoever unparks it makes it runnable again.
    #[inline]
    pub fn try_consume_or_park(&self) -> bool {
        // Acquire on success pairs with the unparker's Release: a task that
        // consumes the token sees what the unparker published before it.
        if self
            .state
            .compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            return true;
        }
        // Release: a wake that finds PARKED sees everything the task did
        // before blocking. If this fails, a token arrived since the first
        // check: consume it and run on.
        match self
            .state
            .compare_exchange(EMPTY, PARKED, Ordering::Release, Ordering::Acquire)
        {
            Ok(_) => false,
            Err(_) => {
                self.state.store(EMPTY, Ordering::Relaxed);
                true
            }
        }
    }

    /// Wakes the task: leaves a token, or (if it is parked) tells the caller
    /// to make it runnable. Release pairs with the task's Acquire above.
    #[inline]
    pub fn unpark(&self) -> Unparked {
        let mut current = self.state.load(Ordering::Relaxed);
        loop {
            let (next, result) = match current {
                NOTIFIED => return Unparked::TokenLeft,
                PARKED => (EMPTY, Unparked::MustEnqueue),
                _ => (NOTIFIED, Unparked::TokenLeft),
            };
            // AcqRel: Release publishes the waker's writes to the task;
            // Acquire (PARKED case) sees the task's writes before it parked.
            match self.state.compare_exchange_weak(
                current,
                next,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return result,
                Err(seen) => current = seen,
            }
        }
    }
}

impl Default for Parker {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Parker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parker")
            .field("state", &self.state.load(Ordering::Relaxed))
            .finish()
    }
}
