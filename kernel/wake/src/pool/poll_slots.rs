//! How many idle workers may poll their inbox at once: every worker,
//! unless the pool's config caps it.
//!
//! A worker that polls before it parks answers the next job at once (no
//! unpark, no wait for the OS to run it again), which is what a stream of
//! small jobs needs. It yields its core between two looks to any thread
//! waiting for that core; a cap is for a pool that shares its host with
//! other busy programs. A worker asks for a slot before it polls
//! ([`IdleHooks::may_poll`]); the workers beyond the slots park at once.
//! How long a worker polls is its adaptive backoff's: a poll that catches
//! nothing teaches it to stop, so an idle pool keeps no thread polling.
//! The kernel caps its polling vCPUs at the host's parallelism it
//! measured at boot, raised where a round trial showed more
//! (`kernel/src/sched/poll_slots.rs`): a vCPU cannot yield its host core
//! to another.

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
    /// The most that may be in use (`PoolConfig::pollers`); `None`, the
    /// default, is every worker, and then `in_use` is never touched (no
    /// read-modify-write at each poll's start and end for a bound that
    /// cannot bind).
    slots: Option<usize>,
}

impl PollSlots {
    pub(crate) const fn new(slots: Option<usize>) -> Self {
        Self {
            in_use: AtomicUsize::new(0),
            slots,
        }
    }

    /// Takes a slot if one is free.
    fn acquire(&self) -> bool {
        let Some(slots) = self.slots else {
            return true;
        };
        self.in_use
            .try_update(Relaxed, Relaxed, |in_use| {
                (in_use < slots).then_some(in_use + 1)
            })
            .is_ok()
    }

    /// Gives back a slot taken by [`acquire`](Self::acquire).
    fn release(&self) {
        if self.slots.is_some() {
            self.in_use.fetch_sub(1, Relaxed);
        }
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
    use super::{PollSlots, PoolHooks};
    use crate::backoff::PollOutcome;
    use crate::idle_hooks::IdleHooks;
    use crate::steal::{Searcher, Stealable};
    use alloc::vec::Vec;
    use std::sync::atomic::Ordering::Relaxed;

    /// A pool of three cores with cores 1 and 2 registered idle.
    fn two_idle() -> Stealable<u32> {
        let steal = Stealable::new(3);
        for core in [1, 2] {
            let mut searcher = Searcher::new(core);
            assert_eq!(steal.take(&mut searcher, |_| panic!("no work")), None);
        }
        steal
    }

    /// The cores core 0's publication of one item chooses.
    fn chosen(steal: &Stealable<u32>) -> Vec<usize> {
        let mut woke = Vec::new();
        steal.publish(0, [7], |core| woke.push(core));
        woke
    }

    #[test]
    fn a_poll_holds_a_slot_and_the_hint_and_its_end_gives_both_back() {
        let slots = PollSlots::new(Some(1));
        let steal = two_idle();
        let core = |me| PoolHooks {
            me,
            slots: &slots,
            steal: &steal,
        };
        // Core 2 polls: it holds the one slot, and is chosen before core 1.
        assert!(IdleHooks::<()>::may_poll(&core(2)));
        assert!(!IdleHooks::<()>::may_poll(&core(1)), "one slot");
        assert_eq!(chosen(&steal), [2]);
        IdleHooks::<()>::poll_ended(&core(2), PollOutcome::RanOut);
        // Its poll over, the slot is free again.
        assert!(IdleHooks::<()>::may_poll(&core(1)));
        IdleHooks::<()>::poll_ended(&core(1), PollOutcome::RanOut);
        // And no hint is left: a fresh pool's choice is the lowest.
        let steal = two_idle();
        let core_2 = PoolHooks {
            me: 2,
            slots: &slots,
            steal: &steal,
        };
        assert!(IdleHooks::<()>::may_poll(&core_2));
        IdleHooks::<()>::poll_ended(&core_2, PollOutcome::Caught);
        assert_eq!(chosen(&steal), [1]);
    }

    #[test]
    fn at_most_the_slots_poll_at_once() {
        let slots = PollSlots::new(Some(2));
        assert!(slots.acquire());
        assert!(slots.acquire());
        assert!(!slots.acquire(), "a third poller on two slots");
        slots.release();
        assert!(slots.acquire());
        let none = PollSlots::new(Some(0));
        assert!(!none.acquire(), "a poller with no slots");
        let every = PollSlots::new(None);
        for _ in 0..3 {
            assert!(every.acquire(), "uncapped: every worker polls");
        }
        every.release();
        assert_eq!(every.in_use.load(Relaxed), 0, "uncapped: no count kept");
    }
}
