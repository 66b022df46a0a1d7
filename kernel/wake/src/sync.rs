//! The loom switch: the synchronisation primitives the protocol is built on.
//!
//! In the kernel these are `core`'s atomics and a `spin` test-and-set lock
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

/// How a waiter for the kernel's lock passes the time: spinning (the lock
/// is only held with interrupts disabled, for a few instructions, and its
/// holder is never preempted by the guest).
#[cfg(all(not(loom), not(test), not(feature = "std")))]
type Relax = spin::relax::Spin;

// Hosted builds do not use `spin`, the kernel's lock, but Cargo cannot make
// a dependency conditional on a feature being off: name it so that the
// build does not report it unused.
#[cfg(all(not(loom), any(test, feature = "std")))]
use spin as _;

/// A mutual-exclusion lock: a test-and-set spinlock in the kernel, the
/// standard library's mutex when hosted (feature `std`, and this crate's
/// unit tests), loom's mutex under the model checker.
///
/// Why not a fair (FIFO ticket) lock: it hands the lock to the next
/// ticket, and a waiter whose CPU is not running when its turn comes
/// holds up every waiter behind it until it runs again (a yield in the
/// wait does not help: the turn is that waiter's). The guest never
/// preempts a lock holder or a waiter (interrupts are off), but the host
/// does: 32 vCPUs on 2 host cores are host threads descheduled for whole
/// time slices. Linux makes the same choice for the same reason: a guest
/// without paravirtual spinlocks falls back from its fair queued lock to a
/// test-and-set lock (`virt_spin_lock`, "fair locks have horrible lock
/// holder preemption issues"). A test-and-set lock lets whichever waiter
/// runs take a free lock; only a descheduled *holder* still stalls the
/// others, which no lock avoids. Hosted, the same convoy was measured:
/// with one more runnable thread than host cores, a burst of 10,000
/// shared jobs through the thread pool took 600 µs a job in one repeat of
/// `examples/peer_bench.rs` with the ticket lock (0.4 µs in the others);
/// std's mutex (a futex on Linux) also parks a waiter that would spin
/// away its time slice. What the FIFO order bought, a bound on the inbox
/// consumer's wait (behind at most the producers already queued, one per
/// core), becomes a bound in practice: each producer holds the lock for
/// one push, and a core pushes to another's inbox only as part of a wake
/// (see `inbox.rs`).
pub(crate) struct Mutex<T> {
    #[cfg(all(not(loom), not(test), not(feature = "std")))]
    inner: spin::mutex::SpinMutex<T, Relax>,
    /// Kernel builds: acquisitions that found the lock held and waited,
    /// counted for every lock of the crate (the inboxes' too; only the
    /// stealable pool's is reported, in its snapshot) (a
    /// statistic no decision reads: `core`'s atomic, Relaxed, written only
    /// on the waiting path, so an uncontended acquisition is the one
    /// compare-exchange it was before, with no write of the count).
    #[cfg(all(not(loom), not(test), not(feature = "std")))]
    contended: core::sync::atomic::AtomicU64,
    #[cfg(all(not(loom), any(test, feature = "std")))]
    inner: std::sync::Mutex<T>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
}

/// The guard returned by [`Mutex::lock`].
#[cfg(all(not(loom), not(test), not(feature = "std")))]
pub(crate) type MutexGuard<'a, T> = spin::mutex::SpinMutexGuard<'a, T>;
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
            inner: spin::mutex::SpinMutex::new(value),
            #[cfg(all(not(loom), not(test), not(feature = "std")))]
            contended: core::sync::atomic::AtomicU64::new(0),
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
            if let Some(guard) = self.inner.try_lock() {
                return guard;
            }
            self.contended
                .fetch_add(1, core::sync::atomic::Ordering::Relaxed);
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

    /// Acquisitions that found the lock held and waited, ever: counted in
    /// kernel builds only (0 hosted and under loom, where a waiter blocks
    /// instead of spinning and the count would be another branch for the
    /// model to explore).
    pub(crate) fn contended_acquisitions(&self) -> u64 {
        #[cfg(all(not(loom), not(test), not(feature = "std")))]
        {
            self.contended.load(core::sync::atomic::Ordering::Relaxed)
        }
        #[cfg(any(loom, test, feature = "std"))]
        {
            0
        }
    }
}
