//! The pool's shutdown on real threads: a pool stopped at once, before its
//! workers have reached their first park or while they are on the way to
//! it, still stops. The race it looks for: `stop` sets `stopping` and then
//! looks for each worker's thread to unpark it, while a worker registers
//! its thread and then reads `stopping` before it parks; if each could miss
//! the other's write, the worker would park for good and the join would
//! wait forever (see the ordering argument in `ThreadPool::stop`).
//!
//! The loop runs on its own thread so that a hang shows as a failure with
//! a message ([`HANG_GUARD`] is only a hang detector), not as a test that
//! never ends.

#![cfg(not(loom))]

use std::sync::mpsc;
use std::time::Duration;

use vigil_wake::pool::{PoolConfig, ThreadPool};

/// Generous: the whole loop takes a few seconds in a debug build.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// A pool dropped right after it is built, 10,000 times (1 to 4 workers),
/// finishes.
#[test]
fn a_pool_dropped_right_after_it_is_built_stops() {
    const POOLS: usize = 10_000;
    let (progress, pools_dropped) = mpsc::channel();
    std::thread::spawn(move || {
        for built in 0..POOLS {
            drop(ThreadPool::new(PoolConfig::new(1 + built % 4)));
            // Nobody listening: the test has failed already.
            if progress.send(built).is_err() {
                return;
            }
        }
    });
    let mut dropped = 0;
    while dropped < POOLS {
        match pools_dropped.recv_timeout(HANG_GUARD) {
            Ok(_) => dropped += 1,
            Err(_) => panic!(
                "pool {dropped} (of {POOLS}, {} workers) did not stop within {HANG_GUARD:?} \
                 of being dropped",
                1 + dropped % 4
            ),
        }
    }
}

/// The same through `shutdown`, with the counts of a pool that never ran
/// a job.
#[test]
fn a_pool_shut_down_right_after_it_is_built_reports_no_work() {
    const POOLS: usize = 200;
    let (stats_of, all_stats) = mpsc::channel();
    std::thread::spawn(move || {
        for built in 0..POOLS {
            let stats = ThreadPool::new(PoolConfig::new(1 + built % 4)).shutdown();
            if stats_of.send(stats).is_err() {
                return;
            }
        }
    });
    for built in 0..POOLS {
        let stats = all_stats
            .recv_timeout(HANG_GUARD)
            .unwrap_or_else(|_| panic!("pool {built} did not shut down within {HANG_GUARD:?}"));
        assert_eq!(stats.jobs_run, 0, "{stats:?}");
        assert_eq!(stats.wakes_sent, 0, "{stats:?}");
    }
}
