//! The queue of stealable items pushed by threads outside the pool's cores
//! ([`Stealable::push_outside`](crate::Stealable::push_outside)): first in,
//! first out, pushed and popped without the pool's lock.
//!
//! A hosted pool's producer thread and its workers otherwise met on the
//! pool's lock for every job spawned from outside: the producer to queue
//! it, a worker to take it, the lock's line and the shared queue's moving
//! between their cores twice a job (`perf` of the burst from outside at 2
//! workers: std's mutex's contended path 6% of the samples, `publish` and
//! `take` 10% more). Rayon's injector takes no lock for the same traffic.
//!
//! Three builds of one interface:
//!
//! * **std** (the hosted pool): `crossbeam_deque::Injector`, the
//!   lock-free queue rayon's own injector is, rather than one written
//!   here: the crate forbids `unsafe`, and a lock-free queue of boxed jobs
//!   needs it. Its `push` reserves a slot with a SeqCst compare-exchange
//!   of the tail index; its `steal` (our `pop`) reads the head index, fences
//!   (SeqCst) and reads the tail index to tell an empty queue, retries a
//!   lost race for the head (we loop on `Retry`) and waits for a reserved
//!   slot's write, so an item whose tail update a reader saw is never
//!   missed; `is_empty` and `len` read both indices with SeqCst loads
//!   (crossbeam-deque 0.8.8). The pusher's fence after `push` is the
//!   pool's own (crossbeam's push fences nothing after its
//!   compare-exchange); the fence a registering core runs before its pop
//!   repeats the one `steal` runs itself, and is there for the two locked
//!   builds, which have none.
//!
//!   The taker that pops under the pool's lock (a core registering idle)
//!   may wait inside `steal` for a pusher the OS descheduled between its
//!   tail update and its slot write, and the others wait for the pool's
//!   lock meanwhile: no deadlock (the pusher needs no lock to finish), a
//!   wait as long as that pusher's preemption.
//! * **loom** (the models): the items behind the crate's lock, and their
//!   count in an atomic that [`is_empty`](OutsideQueue::is_empty) reads
//!   Relaxed and without the lock, as crossbeam's reader reads its indices
//!   without any lock: the model sees a push before its count's store as
//!   a reader that misses it, so the pairs in `Stealable` that order a
//!   push against a registration must close it with their fences (the
//!   mutation run drops each). What the model does not show: crossbeam's
//!   own paths (a lost race for the head, a reserved slot not yet
//!   written, a block's end), a pop that synchronizes with every earlier
//!   push as the lock makes it, and two producers at once (every model
//!   has one, so the pushers' half of the push / search pair between two
//!   outside pushers is argued, not checked).
//! * **neither** (the kernel, which never pushes from outside): the same
//!   as the loom build, on the kernel's lock.
//!
//! Only first-in-first-out order matters to the pool: jobs spawned from
//! outside start oldest first (`tests/pool_threads.rs`), which is why a
//! taker pops one item at a time and never moves a batch onto its own
//! queue (the README's "tried and taken out").

/// Items pushed from outside the pool's cores, oldest first.
pub(crate) struct OutsideQueue<T> {
    items: Items<T>,
}

#[cfg(all(feature = "std", not(loom)))]
type Items<T> = crossbeam_deque::Injector<T>;

#[cfg(not(all(feature = "std", not(loom))))]
type Items<T> = locked::LockedQueue<T>;

impl<T> OutsideQueue<T> {
    pub(crate) fn new() -> Self {
        Self {
            items: Items::new(),
        }
    }

    /// Queues `item` behind every item pushed before it.
    pub(crate) fn push(&self, item: T) {
        self.items.push(item);
    }

    /// The oldest item, or `None` if the queue is empty.
    pub(crate) fn pop(&self) -> Option<T> {
        #[cfg(all(feature = "std", not(loom)))]
        loop {
            match self.items.steal() {
                crossbeam_deque::Steal::Success(item) => return Some(item),
                crossbeam_deque::Steal::Empty => return None,
                // Another taker won the race for the head: the queue may
                // still hold items.
                crossbeam_deque::Steal::Retry => {}
            }
        }
        #[cfg(not(all(feature = "std", not(loom))))]
        self.items.pop()
    }

    /// Whether the queue is empty, read without a lock (see the module
    /// docs for each build's ordering).
    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// How many items the queue holds, read without a lock: exact only
    /// when nobody pushes or pops meanwhile.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(not(all(feature = "std", not(loom))))]
mod locked {
    use alloc::collections::VecDeque;

    use crate::sync::{AtomicUsize, Mutex, Ordering};

    /// The queue behind the crate's lock, with its length readable
    /// without it.
    pub(crate) struct LockedQueue<T> {
        items: Mutex<VecDeque<T>>,
        /// The items' count, stored under the lock after every change.
        /// Relaxed: it carries no order of its own; a reader that must see
        /// a push fences between its own store and this load, and the
        /// pusher between its push and its load of that store (the push /
        /// registration pair of `Stealable::push_outside`). A loom atomic,
        /// so that the model shows a reader the stale counts a fence must
        /// rule out.
        len: AtomicUsize,
    }

    impl<T> LockedQueue<T> {
        pub(crate) fn new() -> Self {
            Self {
                items: Mutex::new(VecDeque::new()),
                len: AtomicUsize::new(0),
            }
        }

        pub(crate) fn push(&self, item: T) {
            let mut items = self.items.lock();
            items.push_back(item);
            self.len.store(items.len(), Ordering::Relaxed);
        }

        pub(crate) fn pop(&self) -> Option<T> {
            // A reader that reads 0 here goes without the lock, as
            // crossbeam's does.
            if self.is_empty() {
                return None;
            }
            let mut items = self.items.lock();
            let item = items.pop_front();
            self.len.store(items.len(), Ordering::Relaxed);
            item
        }

        pub(crate) fn is_empty(&self) -> bool {
            self.len() == 0
        }

        pub(crate) fn len(&self) -> usize {
            self.len.load(Ordering::Relaxed)
        }
    }
}
