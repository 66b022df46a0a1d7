//! [`RoundPool`]: the fork-join pool a workload's [`RoundPlan`] chose,
//! pinned or stealing, behind one interface.

use super::fork_join::{ForkJoin, Job};
use super::round_plan::RoundPlan;
use super::steal_join::StealJoin;
use crate::params::Pool;

/// A fork-join pool of either kind.
#[derive(Debug)]
pub enum RoundPool {
    /// One pinned worker task per core.
    Pinned(ForkJoin),
    /// Stealable chunks, as many per round as its caller says.
    Steal(StealJoin),
}

impl RoundPool {
    /// The pool `plan` chose (pinned: a worker on each of `plan.chunks`
    /// cores).
    pub fn new(plan: RoundPlan) -> Self {
        match plan.pool {
            Pool::Pinned => Self::Pinned(ForkJoin::new(plan.chunks)),
            Pool::Steal => Self::Steal(StealJoin::new()),
        }
    }

    /// Runs one round, `job(i)` for `i` in `0..chunks`: the stealing pool
    /// as `chunks` chunks (the plan's, or the round trial's,
    /// `sched::round_trial`); the pinned pool on its workers, one share
    /// each, so `chunks` must be its worker count.
    pub fn run(&self, job: &Job, chunks: usize) {
        match self {
            Self::Pinned(pool) => {
                debug_assert_eq!(
                    chunks,
                    pool.width(),
                    "a pinned round runs one share per worker"
                );
                pool.run(job);
            }
            Self::Steal(pool) => pool.run(job, chunks),
        }
    }

    /// Stops the pool's workers (the stealing pool has none).
    pub fn shutdown(self) {
        match self {
            Self::Pinned(pool) => pool.shutdown(),
            Self::Steal(..) => {}
        }
    }
}
