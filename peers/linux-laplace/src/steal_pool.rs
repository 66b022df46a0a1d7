//! The work-stealing shape: rayon's pool with one thread per CPU, unpinned
//! (Linux places them), and per iteration the iteration's chunks as
//! parallel jobs (`into_par_iter` split to one job per chunk): the thread
//! running the loop runs a chunk itself and the others are stolen by idle
//! workers, which rayon wakes from their futex when it queues the work.
//! The chunks are [`stealable_chunks`]: a floor of grid points per chunk,
//! at most one per CPU. Vigil's kernel plans its chunk count from what it
//! measures of the host (`kernel/src/sched/round_plan.rs`); this peer
//! keeps the fixed floor that plan replaced, the rule a user-space program
//! on rayon would write.

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use crate::costs::Snapshot;
use crate::grid::Grids;
use crate::timed_loop::TimedLoop;

/// About how much work, in grid points, one chunk has (the grid's
/// interior is split evenly into whole rows, so a chunk can be a little
/// under it: 2 chunks of 31 rows of 62 points for 64x64). Measured on
/// Vigil's kernel before it planned its rounds (2 host cores, TCG,
/// release, sync-heavy 64x64 at 32 vCPUs): one chunk per core took
/// 190-320 ms; floors of 250, 500, 1000 and 2000 points took 147-267,
/// 137-148, 92-132 and 35-52 ms.
pub const MIN_CHUNK_POINTS: usize = 2000;

/// How many chunks a round of a grid of side `size` is split into with
/// `workers` workers: as many chunks of about [`MIN_CHUNK_POINTS`] as the
/// grid holds (whole rows), at most one per worker.
#[must_use]
pub fn stealable_chunks(size: usize, workers: usize) -> usize {
    let interior = size - 2;
    let rows_per_chunk = MIN_CHUNK_POINTS.div_ceil(interior);
    workers.min(interior.div_ceil(rows_per_chunk)).max(1)
}

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

#[cfg(test)]
mod tests {
    use super::stealable_chunks;

    #[test]
    fn chunks_follow_the_point_floor() {
        // 64x64: 62 interior rows of 62 points, 33 rows a chunk: 2 chunks.
        assert_eq!(stealable_chunks(64, 32), 2);
        assert_eq!(stealable_chunks(64, 1), 1);
        // 512x512: 510 points a row, 4 rows a chunk, 128 chunks, capped.
        assert_eq!(stealable_chunks(512, 32), 32);
    }
}
