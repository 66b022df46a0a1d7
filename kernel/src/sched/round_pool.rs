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
    /// Stealable chunks, this many per round.
    Steal(StealJoin, usize),
}

impl RoundPool {
    /// The pool `plan` chose: its rounds run `job(i)` for `i` in
    /// `0..plan.chunks` (pinned: on that many cores, one each; steal: as
    /// that many chunks).
    pub fn new(plan: RoundPlan) -> Self {
        match plan.pool {
            Pool::Pinned => Self::Pinned(ForkJoin::new(plan.chunks)),
            Pool::Steal => Self::Steal(StealJoin::new(), plan.chunks),
        }
    }

    /// Runs one round.
    pub fn run(&self, job: &Job) {
        match self {
            Self::Pinned(pool) => pool.run(job),
            Self::Steal(pool, chunks) => pool.run(job, *chunks),
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
