//! [`LoneItemGrace`]: how long a worker with nothing to run leaves another
//! worker's lone item to its owner before it takes the pool's lock to steal
//! it.
//!
//! A worker that spawns one job and then returns (a chain of spawns, the
//! last leaves of a fork-join tree) pops that job itself a few tens of
//! nanoseconds later, without the pool's lock. An idle worker chosen to
//! search for it (the rule must choose one: the spawner might instead
//! block waiting for the job) steals it if it looks first, and the chain
//! then changes worker on most jobs, each time through the pool's lock and
//! two queue locks: chained spawns at 2 workers took 2.3-3.7x rayon's time
//! with that theft (`kernel/wake/README.md`). So a worker with nothing of
//! its own (chosen to search, or back from its own job) glances at the
//! queues without the lock ([`Stealable::glance`]) before it looks: it
//! leaves a lone item to its owner while the item changes (the owner pops
//! it and pushes the next), and steals it once it has seen the *same* item
//! for [`STUCK_GLANCES`] glances (its owner is busy, or waits for it). A
//! worker chosen to search waits out of the idle set, holding its search,
//! so the owner's next spawns find nobody idle (2 workers) or a searcher
//! still to look for their lone job (the push / search pair in
//! [`Stealable::push_local`]) and take no lock. (One whose search wake
//! came after it had looked and registered idle again waits registered,
//! its wake marked in flight, and is no searcher: the owner's spawns then
//! take the lock and choose nobody new.)
//!
//! The grace only delays a look, as a worker the OS descheduled delays
//! it: every outcome it leads to is one a slow worker leads to, and the
//! rule's guarantees do not read it. What it must not do is wait forever
//! for an item that stays, which `STUCK_GLANCES` bounds
//! (`a_blocked_spawners_lone_job_is_stolen` in `tests/pool_threads.rs`
//! fails without the bound).

use crate::steal::Glance;

/// Glances that see nothing, after the last sight of a lone item, before
/// the worker looks under the lock (and, finding nothing there, registers
/// idle): a chain's item is queued about half of each job, so eight
/// glances in a row miss a running chain about once in 256. A worker that
/// has seen no lone item looks at once: a search wake alone starts no
/// wait (tried: it made no difference to chained spawns, and kept workers
/// that found a burst's item taken out of the idle set for nothing).
const PATIENCE_GLANCES: u32 = 8;

/// Glances at the same lone item before the worker steals it: a few
/// microseconds at one `yield_now` between two glances (Go's scheduler
/// waits 3 µs before it steals a running P's next goroutine).
pub(super) const STUCK_GLANCES: u32 = 8;

/// One worker's wait before its next look (see the module docs).
#[derive(Debug, Default)]
pub(super) struct LoneItemGrace {
    /// Glances of nothing left before the worker looks (set at each sight
    /// of a lone item).
    patience: u32,
    /// The lone item seen last (its queue's owner and its `added` count),
    /// and for how many glances in a row.
    seen: Option<(usize, u64)>,
    same_for: u32,
}

impl LoneItemGrace {
    /// Whether the worker, having glanced `glance`, waits (gives its core
    /// away once and glances again) instead of looking under the lock now.
    pub(super) fn wait(&mut self, glance: Glance) -> bool {
        match glance {
            Glance::Look => {
                *self = Self::default();
                false
            }
            Glance::Lone { core, added } => {
                if self.seen == Some((core, added)) {
                    self.same_for += 1;
                } else {
                    self.seen = Some((core, added));
                    self.same_for = 1;
                }
                if self.same_for >= STUCK_GLANCES {
                    *self = Self::default();
                    false
                } else {
                    self.patience = PATIENCE_GLANCES;
                    true
                }
            }
            Glance::Nothing => {
                if self.patience == 0 {
                    *self = Self::default();
                    false
                } else {
                    self.patience -= 1;
                    true
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{LoneItemGrace, STUCK_GLANCES};
    use crate::steal::Glance;

    const LONE: Glance = Glance::Lone { core: 1, added: 5 };

    /// The same lone item: the worker waits, then steals it at the
    /// bound's glance.
    #[test]
    fn the_same_lone_item_is_stolen_at_the_bound() {
        let mut grace = LoneItemGrace::default();
        for sighting in 1..STUCK_GLANCES {
            assert!(grace.wait(LONE), "sighting {sighting}: waits");
        }
        assert!(!grace.wait(LONE), "sighting {STUCK_GLANCES}: steals");
    }

    /// Lone items that change (a chain: its owner pops each and pushes
    /// the next) keep the worker waiting; glances of nothing after the
    /// last one end the wait after 8; with no sighting, nothing ends it at
    /// once, and so does a glance that sees plenty.
    #[test]
    fn changing_lone_items_keep_it_waiting_and_nothing_ends_the_wait() {
        let mut grace = LoneItemGrace::default();
        assert!(!grace.wait(Glance::Nothing), "no sighting: look at once");
        for added in 0..100 {
            assert!(grace.wait(Glance::Lone { core: 1, added }));
            assert!(grace.wait(Glance::Nothing), "a chain between two links");
        }
        for glance in 2..=8 {
            assert!(grace.wait(Glance::Nothing), "nothing, glance {glance}");
        }
        assert!(!grace.wait(Glance::Nothing), "the ninth glance of nothing");
        assert!(grace.wait(LONE));
        assert!(!grace.wait(Glance::Look), "plenty: look now");
        assert!(!grace.wait(Glance::Nothing), "and the wait is over");
    }
}
