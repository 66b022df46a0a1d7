//! The loom switch: the synchronisation primitives the protocol is built on.
//!
//! Normally these are `core`'s atomics and a `spin` ticket lock. Built with
//! `RUSTFLAGS="--cfg loom"` they are loom's model-checked equivalents instead,
//! so the protocol code in `idle_state.rs`, `inbox.rs` and `lost_wakeup.rs`
//! is the very same code in the kernel and under the model checker. The wrappers only paper
//! over API differences (loom's `Mutex::lock` returns a `LockResult`, and
//! neither loom type has a `const fn new`).
//!
//! The per-core statistics in `counters.rs` deliberately do *not* go through
//! this switch: no protocol decision ever reads them, so modelling them would
//! only multiply loom's state space without checking anything.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering, fence};

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering, fence};

/// How a waiter for the ticket lock passes the time: spinning in the kernel
/// (the lock is only held with interrupts disabled, for a few instructions,
/// and its holder is never preempted).
#[cfg(all(not(loom), not(test), not(feature = "std")))]
type Relax = spin::relax::Spin;

/// Hosted (feature `std`, and this crate's unit tests, which run the inbox
/// on more threads than the host has cores): yield to the OS scheduler. A
/// holder preempted by the OS would otherwise make every waiter spin away
/// its whole time slice, and, with a FIFO ticket lock, every later waiter
/// after it.
#[cfg(all(not(loom), any(test, feature = "std")))]
type Relax = YieldToHost;

/// See [`Relax`].
#[cfg(all(not(loom), any(test, feature = "std")))]
pub(crate) struct YieldToHost;

#[cfg(all(not(loom), any(test, feature = "std")))]
impl spin::relax::RelaxStrategy for YieldToHost {
    fn relax() {
        std::thread::yield_now();
    }
}

/// A mutual-exclusion lock: a FIFO ticket spinlock on the kernel, loom's
/// mutex under the model checker.
pub(crate) struct Mutex<T> {
    #[cfg(not(loom))]
    inner: spin::mutex::TicketMutex<T, Relax>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
}

/// The guard returned by [`Mutex::lock`].
#[cfg(not(loom))]
pub(crate) type MutexGuard<'a, T> = spin::mutex::TicketMutexGuard<'a, T>;
/// The guard returned by [`Mutex::lock`].
#[cfg(loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// Wraps `value` in an unlocked mutex.
    pub(crate) fn new(value: T) -> Self {
        Self {
            #[cfg(not(loom))]
            inner: spin::mutex::TicketMutex::new(value),
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(value),
        }
    }

    /// Takes the lock, waiting (spinning, in the kernel) until it is free.
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(not(loom))]
        {
            self.inner.lock()
        }
        #[cfg(loom)]
        {
            // loom's blocking lock: the model machine's IPI is a latch, not
            // an `unpark`, so nothing wakes a thread blocked here but the
            // unlock. A loom mutex is only poisoned if a model thread
            // panicked while holding it, and then the model has failed
            // already.
            self.inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }
    }
}
