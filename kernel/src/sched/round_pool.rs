//! [`RoundPool`]: the fork-join pool a workload asked for (`pool=`), pinned
//! or stealing, behind one interface.

use super::fork_join::{ForkJoin, Job};
use super::steal_join::StealJoin;
use crate::params::Pool;

/// A fork-join pool of either kind.
#[derive(Debug)]
pub enum RoundPool {
    /// One pinned worker task per core.
    Pinned(ForkJoin),
    /// Stealable chunks.
    Steal(StealJoin),
}

impl RoundPool {
    /// A pool of `kind` whose rounds run `job(i)` for `i` in `0..width`
    /// (pinned: on `width` cores, one each; steal: as `width` chunks).
    pub fn new(kind: Pool, width: usize) -> Self {
        match kind {
            Pool::Pinned => Self::Pinned(ForkJoin::new(width)),
            Pool::Steal => Self::Steal(StealJoin::new(width)),
        }
    }

    /// Runs one round.
    pub fn run(&self, job: &Job) {
        match self {
            Self::Pinned(pool) => pool.run(job),
            Self::Steal(pool) => pool.run(job),
        }
    }

    /// Stops the pool's workers (the stealing pool has none).
    pub fn shutdown(self) {
        match self {
            Self::Pinned(pool) => pool.shutdown(),
            Self::Steal(_) => {}
        }
    }
}
