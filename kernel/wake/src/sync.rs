//! The loom switch: the synchronisation primitives the protocol is built on.
//!
//! In the kernel these are `core`'s atomics and a `spin` ticket lock
//! (hosted, with feature `std`, the lock is std's mutex: see [`Mutex`]). Built with
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

/// How a waiter for the kernel's ticket lock passes the time: spinning
/// (the lock is only held with interrupts disabled, for a few
/// instructions, and its holder is never preempted by the guest).
#[cfg(all(not(loom), not(test), not(feature = "std")))]
type Relax = spin::relax::Spin;

// Hosted builds do not use `spin`, the kernel's lock, but Cargo cannot make
// a dependency conditional on a feature being off: name it so that the
// build does not report it unused.
#[cfg(all(not(loom), any(test, feature = "std")))]
use spin as _;

/// A mutual-exclusion lock: a FIFO ticket spinlock on the kernel, the
/// standard library's mutex when hosted (feature `std`, and this crate's
/// unit tests), loom's mutex under the model checker.
///
/// Why hosted code does not use the ticket lock: a FIFO lock hands the
/// lock to the next ticket, and a thread the OS has descheduled while it
/// waits for its turn holds up every waiter behind it until the OS runs it
/// again (a yield in the wait does not help: the turn is that thread's).
/// With one more runnable thread than host cores, a burst of 10,000 shared
/// jobs through the pool took 600 µs a job in one repeat in
/// `examples/peer_bench.rs` (0.4 µs in the others). std's mutex (a futex
/// on Linux) lets whichever waiter runs take a free lock, and parks a
/// waiter that would otherwise spin away its time slice. What the FIFO
/// order bought (the inbox's consumer waits behind at most the producers
/// already queued, see `inbox.rs`) the kernel keeps; a hosted consumer's
/// wait is bounded by the OS scheduler instead, as for any std mutex.
pub(crate) struct Mutex<T> {
    #[cfg(all(not(loom), not(test), not(feature = "std")))]
    inner: spin::mutex::TicketMutex<T, Relax>,
    #[cfg(all(not(loom), any(test, feature = "std")))]
    inner: std::sync::Mutex<T>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
}

/// The guard returned by [`Mutex::lock`].
#[cfg(all(not(loom), not(test), not(feature = "std")))]
pub(crate) type MutexGuard<'a, T> = spin::mutex::TicketMutexGuard<'a, T>;
/// The guard returned by [`Mutex::lock`].
#[cfg(all(not(loom), any(test, feature = "std")))]
pub(crate) type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;
/// The guard returned by [`Mutex::lock`].
#[cfg(loom)]
pub(crate) type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// Wraps `value` in an unlocked mutex.
    pub(crate) fn new(value: T) -> Self {
        Self {
            #[cfg(all(not(loom), not(test), not(feature = "std")))]
            inner: spin::mutex::TicketMutex::new(value),
            #[cfg(all(not(loom), any(test, feature = "std")))]
            inner: std::sync::Mutex::new(value),
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(value),
        }
    }

    /// Takes the lock, waiting (spinning, in the kernel) until it is free.
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(all(not(loom), not(test), not(feature = "std")))]
        {
            self.inner.lock()
        }
        #[cfg(all(not(loom), any(test, feature = "std")))]
        {
            // Poisoned only if a thread panicked while holding it: no pool
            // or protocol code runs a job (or anything that can panic but
            // a bug) under the lock, and the state it guards is changed in
            // single steps, so the data is whole; the lock stays usable.
            self.inner
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
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
