//! The pinned shape: one thread per worker, each pinned to its own CPU
//! (the caller is worker 0), computing its own block of every iteration,
//! with one barrier per iteration (`std::sync::Barrier`: a mutex and a
//! condition variable, so a thread that arrives early sleeps on a futex and
//! the last one to arrive wakes the others). Vigil's `pool=pinned` runs the
//! same blocks, one task per core.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use rustix::thread::{CpuSet, sched_setaffinity};

use crate::costs::Snapshot;
use crate::grid::Grids;
use crate::timed_loop::TimedLoop;

/// Pins the calling thread to `cpu`.
fn pin_to(cpu: usize) -> std::io::Result<()> {
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).map_err(std::io::Error::from)
}

/// Runs `iterations` iterations of `grids` on one pinned thread per block.
pub fn run(grids: &Arc<Grids>, iterations: usize) -> std::io::Result<TimedLoop> {
    let workers = grids.blocks();
    let barrier = Arc::new(Barrier::new(workers));
    pin_to(0)?;
    let mut handles = Vec::with_capacity(workers - 1);
    for worker in 1..workers {
        let grids = Arc::clone(grids);
        let barrier = Arc::clone(&barrier);
        handles.push(
            thread::Builder::new().spawn(move || -> std::io::Result<()> {
                let pinned = pin_to(worker);
                // Every thread takes part in every barrier, pinned or not, so
                // that a failed pin cannot leave the others waiting forever.
                barrier.wait();
                for iteration in 0..iterations {
                    grids.compute_block(iteration, worker);
                    barrier.wait();
                }
                pinned
            })?,
        );
    }
    // Start together: every thread created, pinned and waiting.
    barrier.wait();
    let before = Snapshot::take()?;
    let start = Instant::now();
    for iteration in 0..iterations {
        grids.compute_block(iteration, 0);
        barrier.wait();
    }
    let elapsed = start.elapsed();
    let after = Snapshot::take()?;
    for handle in handles {
        handle
            .join()
            .map_err(|_| std::io::Error::other("a worker thread panicked"))??;
    }
    Ok(TimedLoop {
        elapsed,
        before,
        after,
    })
}
