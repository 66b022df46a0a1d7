//! How many idle workers may poll their inbox at once: every worker,
//! unless the pool's config caps it.
//!
//! A worker that polls before it parks answers the next job at once (no
//! unpark, no wait for the OS to run it again), which is what a stream of
//! small jobs needs. It yields its core between two looks, so it does not
//! hold up a thread with work on a busy host; a cap is for a pool that
//! shares its host with other busy programs. A worker asks for a slot
//! before it polls ([`IdleHooks::may_poll`]); the workers beyond the
//! slots park at once. How long a worker polls is its adaptive backoff's:
//! a poll that catches nothing teaches it to stop, so an idle pool keeps
//! no thread polling. The kernel caps its polling vCPUs at the host's
//! parallelism it measured at boot (`kernel/src/sched/poll_slots.rs`): a
//! vCPU cannot yield its host core to another.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use crate::backoff::PollOutcome;
use crate::idle_hooks::IdleHooks;
use crate::steal::Stealable;

/// The pool's poll slots.
#[derive(Debug)]
pub(crate) struct PollSlots {
    /// Slots in use. Relaxed everywhere: a slot orders nothing (a poll
    /// reads its inbox through the protocol's own orderings); the count
    /// only bounds how many workers spin at once.
    in_use: AtomicUsize,
    slots: usize,
}

impl PollSlots {
    pub(crate) const fn new(slots: usize) -> Self {
        Self {
            in_use: AtomicUsize::new(0),
            slots,
        }
    }

    /// Takes a slot if one is free.
    fn acquire(&self) -> bool {
        self.in_use
            .try_update(Relaxed, Relaxed, |in_use| {
                (in_use < self.slots).then_some(in_use + 1)
            })
            .is_ok()
    }

    /// Gives back a slot taken by [`acquire`](Self::acquire).
    fn release(&self) {
        self.in_use.fetch_sub(1, Relaxed);
    }
}

/// Worker `me`'s idle hooks: the poll slots, and the stealable pool's
/// hint that it polls (so that shared work chooses it before a parked
/// worker: its search wake is then a push it sees at once, no unpark).
/// Nothing else: the pool has no chaos, history or detector report.
pub(crate) struct PoolHooks<'a, J> {
    pub(crate) me: usize,
    pub(crate) slots: &'a PollSlots,
    pub(crate) steal: &'a Stealable<J>,
}

impl<T, J> IdleHooks<T> for PoolHooks<'_, J> {
    fn may_poll(&self) -> bool {
        let may = self.slots.acquire();
        if may {
            self.steal.set_polling(self.me, true);
        }
        may
    }

    fn poll_ended(&self, _outcome: PollOutcome) {
        self.steal.set_polling(self.me, false);
        self.slots.release();
    }
}

#[cfg(test)]
mod tests {
    use super::PollSlots;

    #[test]
    fn at_most_the_slots_poll_at_once() {
        let slots = PollSlots::new(2);
        assert!(slots.acquire());
        assert!(slots.acquire());
        assert!(!slots.acquire(), "a third poller on two slots");
        slots.release();
        assert!(slots.acquire());
        let none = PollSlots::new(0);
        assert!(!none.acquire(), "a poller with no slots");
    }
}
