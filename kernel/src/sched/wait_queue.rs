//! A wait queue of tasks, keyed by waiter. Registering again under the same
//! key *replaces* the registered task (seed 002: a waiter re-polled with a
//! new waker kept the old one queued and was never woken; here the newest
//! registration is the one that gets woken, and there is never more than one
//! entry per key).

use super::task::TaskRef;
use super::wakeup::{self, park};
use alloc::vec::Vec;
use spin::Mutex;

/// What `register` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    /// A new entry.
    Added,
    /// The key was already registered; its task was replaced.
    Replaced,
}

/// Tasks waiting for something, FIFO, at most one entry per key.
#[derive(Debug, Default)]
pub struct WaitQueue {
    waiters: Mutex<Vec<(u64, TaskRef)>>,
}

impl WaitQueue {
    /// Empty.
    pub const fn new() -> Self {
        Self {
            waiters: Mutex::new(Vec::new()),
        }
    }

    /// Registers `task` under `key`, replacing any task registered under it.
    pub fn register(&self, key: u64, task: TaskRef) -> Registered {
        let mut waiters = self.waiters.lock();
        if let Some(entry) = waiters.iter_mut().find(|(k, _)| *k == key) {
            entry.1 = task;
            return Registered::Replaced;
        }
        waiters.push((key, task));
        Registered::Added
    }

    /// Removes the entry under `key`, if any.
    pub fn deregister(&self, key: u64) {
        self.waiters.lock().retain(|(k, _)| *k != key);
    }

    /// Wakes (and removes) every waiter; returns how many.
    pub fn wake_all(&self) -> usize {
        let waiters = core::mem::take(&mut *self.waiters.lock());
        for (_, task) in &waiters {
            wakeup::wake(task);
        }
        waiters.len()
    }

    /// Number of registered waiters.
    pub fn len(&self) -> usize {
        self.waiters.lock().len()
    }

    /// Number of registered waiters, or `None` if the lock is busy.
    pub fn try_len(&self) -> Option<usize> {
        self.waiters.try_lock().map(|waiters| waiters.len())
    }

    /// Blocks the current task until `ready()` holds. Registers before each
    /// check, so a wake between the check and the park is not lost (it leaves
    /// a token and the park returns at once).
    pub fn wait_until(&self, ready: impl Fn() -> bool) {
        let me = wakeup::current();
        loop {
            self.register(me.id(), me.clone());
            if ready() {
                self.deregister(me.id());
                return;
            }
            park();
        }
    }
}
