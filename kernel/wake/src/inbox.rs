//! The inbox: a multi-producer, single-consumer queue of work that only one
//! core may run.
//!
//! # Structure
//!
//! A `VecDeque` behind a lock (in the kernel a test-and-set spinlock;
//! hosted, std's mutex: see `sync.rs` for why), plus an atomic item count `len`
//! that is kept equal to the queue's length *whenever the lock is free*
//! (every change to it is made by the lock holder). The count is what makes
//! the inbox cheap to look at without the lock, and its read-modify-writes
//! are the inbox's half of the wake protocol (see the crate docs,
//! "Memory ordering").
//!
//! # Waiting
//!
//! Nobody ever waits for anybody to *finish publishing*: an item is in the
//! queue, whole, as soon as its producer releases the lock, so unlike a
//! linked lock-free MPSC queue the consumer never finds a half-linked node and
//! never spins waiting for a producer to complete one. The only wait is for
//! the lock itself, held by each producer for one `push_back` and one
//! atomic add (the kernel pushes with interrupts disabled, so a holder is
//! never preempted by the guest). The kernel's lock is not FIFO (a fair
//! lock stalls every waiter behind one whose vCPU the host descheduled,
//! see `sync.rs`): a consumer can lose the lock to producers that arrive
//! after it, as many times as they push. There is no hard bound on that
//! wait: it is short in practice (a producer pushes into another core's
//! inbox only to wake it, and holds the lock for one push), and nothing
//! in the protocol depends on who gets the lock first. The
//! consumer's own critical section is O(1) whatever the backlog: it swaps
//! buffers rather than copying items. The idle loop does not take the lock at
//! all while the count reads zero.
//!
//! # Memory
//!
//! Items are moved in and moved out; there are no nodes, so there is nothing
//! to reclaim later and no deferred-free scheme. The consumer drains by
//! swapping the queue's buffer with its own empty one, so two buffers
//! ping-pong between the inbox and the consumer and, once they have grown to
//! the largest backlog seen, pushing allocates nothing. (A growth does
//! allocate, inside the lock.) Dropping the inbox drops the items still in it
//! and frees its buffer; the consumer's buffer is the consumer's.
//!
//! # Interrupts
//!
//! The lock is a spinlock: the kernel must not push or drain with interrupts
//! enabled if an interrupt handler on the same core can push into the same
//! inbox, or the handler would spin on a lock its own core holds.

use alloc::collections::VecDeque;
use core::fmt;

use crate::sync::{AtomicUsize, Mutex, Ordering};

/// A multi-producer, single-consumer queue for one core's private work.
///
/// Any core may [`push`](Inbox::push); only the owning core may
/// [`drain_into`](Inbox::drain_into). On its own an inbox tells nobody about
/// new work: to give another core work, use
/// [`CoreWake::send`](crate::CoreWake::send), which pushes and then runs the
/// wake protocol against that core.
pub struct Inbox<T> {
    /// Items in `queue`. Only ever changed by read-modify-writes made while
    /// holding `queue`'s lock, so that (a) it equals the queue's length
    /// whenever the lock is free, and (b) every change to it continues the
    /// release sequence of the idle core's re-check (`recheck_for_halt`),
    /// which is what lets any later push acquire that re-check.
    len: AtomicUsize,
    queue: Mutex<VecDeque<T>>,
}

/// What a push found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pushed {
    /// The inbox was empty before this push: this push's producer is the one
    /// who must announce the work. A push that found the inbox non-empty
    /// joined work somebody else is already announcing (whatever drain picks
    /// that up picks this up too).
    pub was_empty: bool,
}

impl<T> Inbox<T> {
    /// An empty inbox. Allocates nothing until the first push.
    #[must_use]
    pub fn new() -> Self {
        Self {
            len: AtomicUsize::new(0),
            queue: Mutex::new(VecDeque::new()),
        }
    }

    /// Appends `item` (any core may push).
    pub fn push(&self, item: T) -> Pushed {
        let mut queue = self.queue.lock();
        queue.push_back(item);
        // RMW, Acquire: this is the waker's half of the wake protocol's
        // Dekker pair. Being a read-modify-write it reads the newest value of
        // `len`; if the idle core's re-check (`recheck_for_halt`, a Release
        // RMW on this same atomic) came before it, this RMW reads from that
        // re-check or from a later RMW in its release sequence, and Acquire
        // makes the idle core's earlier `Running -> Halting` store visible to
        // the state read that follows in `notify`. If the re-check comes
        // after it instead, the re-check reads this increment and the idle
        // core does not halt. A plain load + store here (not one RMW), or
        // Relaxed, lets both sides miss each other: the lost wakeup. The item
        // itself needs no ordering from this RMW; it travels under the lock.
        let before = self.len.fetch_add(1, Ordering::Acquire);
        drop(queue);
        Pushed {
            was_empty: before == 0,
        }
    }

    /// Moves every queued item to the back of `out`, in push order, and
    /// returns how many it moved. Only the owning core may call this.
    ///
    /// Pass an empty `out` to get the cheap path: the inbox's buffer and
    /// `out`'s are swapped under the lock, so nothing is copied and, in
    /// steady state, nothing is allocated. A non-empty `out` is appended to
    /// after the lock is released.
    pub fn drain_into(&self, out: &mut VecDeque<T>) -> usize {
        // Relaxed: a fast path only. A stale zero costs nothing: before the
        // core may halt it re-checks with an RMW (`recheck_for_halt`), which
        // reads the newest count, and by read-read coherence a later load
        // cannot go back to an older one.
        if self.len.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        let mut batch = VecDeque::new();
        let moved = {
            let mut queue = self.queue.lock();
            let moved = queue.len();
            if out.is_empty() {
                core::mem::swap(&mut *queue, out);
            } else {
                core::mem::swap(&mut *queue, &mut batch);
            }
            // RMW, Relaxed: the count must drop by exactly what was taken
            // (producers may have added since the fast-path load). It orders
            // nothing itself (the items travel under the lock), but being an
            // RMW it continues the release sequence of the core's last
            // re-check. A plain store would end it, and if the core drained
            // between its re-check and its commit (the API does not forbid
            // it), a push that read the stored value would not acquire the
            // core's `Halting` and could miss it. In the usual loop (drain,
            // then prepare and re-check) a store would be harmless, since the
            // next re-check heads a fresh sequence; the RMW keeps the rule
            // "every change to `len` is an RMW" without exceptions.
            self.len.fetch_sub(moved, Ordering::Relaxed);
            moved
        };
        if !batch.is_empty() {
            out.append(&mut batch);
        }
        moved
    }

    /// Moves every queued item into `out`, any [`Extend`], in push order,
    /// and returns how many it moved. Only the owning core may call this.
    /// The items are taken under the lock (the inbox keeps no buffer) and
    /// handed to `out` after it is released.
    pub fn drain(&self, out: &mut impl Extend<T>) -> usize {
        let mut batch = VecDeque::new();
        let moved = self.drain_into(&mut batch);
        out.extend(batch);
        moved
    }

    /// Address of the item count (a `usize`), for a host-side debugger
    /// reading a hung guest's memory. Taking an address reads nothing.
    #[must_use]
    #[cfg(feature = "test-hooks")]
    pub fn len_address(&self) -> usize {
        core::ptr::from_ref(&self.len) as usize
    }

    /// How many items are queued: one relaxed load, never the lock. Exact
    /// whenever no push or drain is in progress; otherwise it may be one
    /// behind per producer in flight. For statistics, the stuck-core
    /// detector and fast paths; the wake protocol does not rely on it.
    #[must_use]
    pub fn len(&self) -> usize {
        // Relaxed: an observation, it orders nothing.
        self.len.load(Ordering::Relaxed)
    }

    /// Whether [`len`](Inbox::len) reads zero (same caveats).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The idle core's interlocked re-check, made after it stored `Halting`:
    /// the number of queued items, read by a read-modify-write.
    ///
    /// `fetch_add(0)`, Release: as an RMW it reads the newest count, so it
    /// sees every push whose RMW precedes it; Release heads a release
    /// sequence (continued by every later push and drain, all RMWs) that any
    /// later push's Acquire RMW synchronises with, carrying the core's
    /// `Halting` store to that waker's state read. This pair is the
    /// store-buffering pattern of the crate docs; a plain load here, or
    /// Relaxed, lets the core miss a push while the pusher misses `Halting`.
    pub(crate) fn recheck_for_halt(&self) -> usize {
        self.len.fetch_add(0, Ordering::Release)
    }
}

impl<T> Default for Inbox<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> fmt::Debug for Inbox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbox")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}
