//! The floor: the same Laplace grid and iterations with no tasks, no
//! scheduler and no protocol on the critical path. One bare worker per core
//! waits in the arch `sti; hlt`; core 0 releases every round with a direct
//! IPI to each, computes its own block, and halts until the last worker to
//! finish IPIs it back. What is left is the platform's own cost of a
//! fork-join round released by IPIs to halted cores.

use super::laplace::{self, Grids, LaplaceReport};

use crate::arch::{halt, interrupts, tsc};
use crate::sched::{wake_ipi, wakeup};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

const STOP: u64 = u64::MAX;

struct Floor {
    grids: Grids,
    /// Round number being released (STOP: workers exit). Release store by
    /// core 0 before its IPIs; Acquire loads by the workers.
    round: AtomicU64,
    /// Workers done with the current round (AcqRel counting; the last one
    /// IPIs core 0).
    done: AtomicU64,
    workers: usize,
}

/// Halts this core until `ready()` holds, re-checking with interrupts off
/// before each `sti; hlt` so an IPI sent after the check ends the halt.
fn halt_until(ready: impl Fn() -> bool) {
    loop {
        interrupts::disable();
        if ready() {
            return;
        }
        halt::enable_interrupts_and_halt();
    }
}

fn worker(floor: &Floor, block: usize) {
    let mut seen = 0;
    loop {
        halt_until(|| floor.round.load(Ordering::Acquire) != seen);
        seen = floor.round.load(Ordering::Acquire);
        if seen == STOP {
            return;
        }
        laplace::compute_block_untimed(&floor.grids, block);
        if floor.done.fetch_add(1, Ordering::AcqRel) + 1 == floor.workers as u64 - 1 {
            wake_ipi::send(0);
        }
    }
}

/// Runs the floor workload from the main task on core 0.
pub fn run(size: usize, iterations: usize) -> LaplaceReport {
    let workers = laplace::worker_count(size);
    let floor = Arc::new(Floor {
        grids: Grids::new(size, iterations, workers, workers),
        round: AtomicU64::new(0),
        done: AtomicU64::new(0),
        workers,
    });
    // Each bare worker occupies its core for the whole run (as a task that
    // never blocks, so the scheduler is out of the way).
    let handles: Vec<_> = (1..workers)
        .map(|block| {
            let floor = floor.clone();
            wakeup::spawn_on(block, move || worker(&floor, block))
        })
        .collect();
    let start = tsc::now();
    for iteration in 0..iterations {
        floor.grids.set_iteration(iteration);
        floor.done.store(0, Ordering::Relaxed);
        floor.round.store(iteration as u64 + 1, Ordering::Release);
        for core in 1..workers {
            wake_ipi::send(core);
        }
        laplace::compute_block_untimed(&floor.grids, 0);
        halt_until(|| floor.done.load(Ordering::Acquire) == workers as u64 - 1);
    }
    let elapsed_us = tsc::ticks_to_us(tsc::now() - start);
    interrupts::disable();
    floor.round.store(STOP, Ordering::Release);
    for core in 1..workers {
        wake_ipi::send(core);
    }
    for handle in handles {
        handle.join();
    }
    floor.grids.report(iterations, elapsed_us, None)
}
