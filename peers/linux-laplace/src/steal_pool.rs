//! The work-stealing shape: rayon's pool with one thread per CPU, unpinned
//! (Linux places them), and per iteration the iteration's chunks as
//! parallel jobs (`into_par_iter` split to one job per chunk): the thread
//! running the loop runs a chunk itself and the others are stolen by idle
//! workers, which rayon wakes from their futex when it queues the work.
//! Vigil's `pool=steal` runs the same chunks ([`stealable_chunks`]) from
//! its stealable queue.
//!
//! [`stealable_chunks`]: vigil_proto::laplace_grid::stealable_chunks

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use crate::costs::Snapshot;
use crate::grid::Grids;
use crate::timed_loop::TimedLoop;

/// Runs `iterations` iterations of `grids` on a rayon pool of `threads`
/// threads, the loop itself on one of them.
pub fn run(grids: &Arc<Grids>, iterations: usize, threads: usize) -> std::io::Result<TimedLoop> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(std::io::Error::other)?;
    let chunks = grids.blocks();
    pool.install(|| {
        let before = Snapshot::take()?;
        let start = Instant::now();
        for iteration in 0..iterations {
            (0..chunks)
                .into_par_iter()
                .with_max_len(1)
                .for_each(|chunk| grids.compute_block(iteration, chunk));
        }
        let elapsed = start.elapsed();
        let after = Snapshot::take()?;
        Ok(TimedLoop {
            elapsed,
            before,
            after,
        })
    })
}
