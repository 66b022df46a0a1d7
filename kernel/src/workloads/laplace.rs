//! Laplace: Jacobi iteration on an N×N grid with fixed boundary values, one
//! fork-join round per iteration over row blocks, then the residual and a
//! checksum of the final grid. The first iteration runs on the caller
//! alone and its time is the round's work; the rest run as the
//! [`RoundPlan`] for that work chooses (how many blocks, which pool).
//!
//! The arithmetic is integer fixed point so the result is bit-for-bit the
//! same at every core count and on the host (xtask recomputes it); it is
//! defined once in [`vigil_proto::laplace_grid`] (boundary values, the
//! update, the blocks and chunks, the checksum), which the Linux peer's
//! program uses too.

use crate::arch::tsc;
use crate::params::{Key, Pool, Workload};
use crate::println;
use crate::sched::fork_join::{self, Job};
use crate::sched::round_plan::RoundPlan;
use crate::sched::round_pool::RoundPool;
use crate::sched::round_trial::{TRIAL_ROUNDS_EACH, TrialOutcome};
use crate::smp::cores;
use crate::workloads::round_split::{RoundSplitMedians, RoundSplits};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};
use vigil_proto::laplace_grid::{self, Fnv1a64};
use vigil_proto::serial_line::{GridResult, GridWorkload};

/// What a Laplace run produced.
#[derive(Debug, Clone, Copy)]
pub struct LaplaceReport {
    /// Grid side.
    pub size: usize,
    /// Iterations run.
    pub iterations: usize,
    /// Row blocks per round after the first (`workers=` in the result
    /// line: the pinned pool's workers, or the stealing pool's chunks).
    pub workers: usize,
    /// Wall time of the iterations, TSC-measured, in µs.
    pub elapsed_us: u64,
    /// Sum of |new - old| over the interior in the last iteration.
    pub residual: i64,
    /// Row blocks computed over all the iterations (`VIGIL-STATS`'
    /// `blocks_run`).
    pub blocks_run: u64,
    /// FNV-1a 64 of the final grid.
    pub checksum: u64,
    /// The pooled rounds' medians of their longest row block and of the
    /// rest of their time (`None`: no pooled round, or the floor, which
    /// does not time its rounds).
    pub round_split: Option<RoundSplitMedians>,
}

impl LaplaceReport {
    /// The result line the host parses (`vigil-proto` defines its format),
    /// as printed by `workload`.
    pub fn result_line(&self, workload: GridWorkload) -> GridResult {
        GridResult {
            workload,
            size: self.size as u64,
            iterations: self.iterations as u64,
            workers: self.workers as u64,
            elapsed_us: self.elapsed_us,
            residual: self.residual,
            checksum: self.checksum,
        }
    }
}

/// The two grids and the round's parameters, shared by all workers.
pub struct Grids {
    size: usize,
    a: Vec<AtomicI64>,
    b: Vec<AtomicI64>,
    /// The iteration being computed (even: a -> b, odd: b -> a). Written by
    /// the coordinator before releasing a round; the release (the wake)
    /// publishes it to the workers.
    iteration: AtomicU64,
    /// Iteration whose residual the workers must record (u64::MAX: none).
    residual_iteration: AtomicU64,
    residuals: Vec<AtomicI64>,
    /// Row blocks of the current round (at most `residuals.len()`).
    /// Written by the coordinator between rounds, published like
    /// `iteration`.
    blocks: AtomicUsize,
    /// Row blocks computed so far, all rounds (a count: Relaxed
    /// increments, read by [`Grids::report`] after the last round, whose
    /// hand-offs to the coordinator order every increment before it).
    blocks_run: AtomicU64,
    /// The longest row block since the coordinator last took it, TSC
    /// ticks: each timed block's Relaxed `fetch_max`. The coordinator takes
    /// it (a swap with 0) after each round's join (the latch count-down,
    /// release/acquire, orders every block's `fetch_max` before it, as for
    /// `blocks_run`) and before it publishes the next round (a release, so
    /// the next round's blocks update the 0 it left).
    longest_block_ticks: AtomicU64,
}

/// The last grid workload's [`LaplaceReport::blocks_run`] (0: none ran),
/// for `VIGIL-STATS`. Relaxed: written by the main task before it prints
/// the statistics.
static BLOCKS_RUN: AtomicU64 = AtomicU64::new(0);

/// Keeps `report`'s block count for `VIGIL-STATS`.
pub fn record_blocks_run(report: &LaplaceReport) {
    BLOCKS_RUN.store(report.blocks_run, Ordering::Relaxed);
}

/// The last grid workload's row blocks computed (0: none ran).
pub fn blocks_run() -> u64 {
    BLOCKS_RUN.load(Ordering::Relaxed)
}

fn initial_grid(size: usize) -> Vec<AtomicI64> {
    (0..size * size)
        .map(|k| AtomicI64::new(laplace_grid::initial_value(size, k)))
        .collect()
}

/// Computes block `block` of the current iteration, and counts its time
/// towards the round's longest block (`Grids::longest_block_ticks`).
pub fn compute_block(g: &Grids, block: usize) {
    let started = tsc::now();
    compute_block_untimed(g, block);
    g.longest_block_ticks
        .fetch_max(tsc::now().saturating_sub(started), Ordering::Relaxed);
}

/// Computes block `block` of the current iteration, reading no clock: the
/// floor's, which keeps its critical path free of anything but the grid
/// and its IPIs (under TCG every `rdtsc` takes one of QEMU's global locks).
///
/// Page-aligned and never inlined, so that one copy of the row loop exists
/// and it lies within one page (its code, 927 bytes at 13062cf and 736 on
/// AArch64, is shorter than one; the suite checks the release build's
/// layout, `qemu-tests/tests/hot_loop_pages.rs`, and the bench warns when a
/// kernel it boots has a hot loop across a page): QEMU's TCG
/// chains a jump to its target's translation only within a guest page, and
/// a loop whose back edge crosses a page boundary looks its next block up
/// on every iteration. 13062cf's kernel with 19 lines added elsewhere put
/// this function at [0x3dd40, 0x3e0df), across 0x3e000, and a round's
/// longest row block took 88-95 µs (the boots' medians) where the
/// unchanged kernel's took 28-31 (sync-heavy 64x64 at 64 vCPUs, 8 boots
/// each, alternating).
#[rustc_align(4096)] // a page, `memory::frames::FRAME_BYTES` (the attribute takes no constant)
#[inline(never)]
pub fn compute_block_untimed(g: &Grids, block: usize) {
    let n = g.size;
    let iteration = g.iteration.load(Ordering::Relaxed);
    let blocks = g.blocks.load(Ordering::Relaxed);
    // A round whose chunks disagree with its grid split computes a block
    // that does not exist (more chunks) or leaves rows uncomputed (fewer,
    // which the checksum sees); the first is caught here.
    assert!(
        block < blocks,
        "row block {block} of a round split into {blocks}: its chunks and its split disagree"
    );
    g.blocks_run.fetch_add(1, Ordering::Relaxed);
    let (src, dst) = if iteration % 2 == 0 {
        (&g.a, &g.b)
    } else {
        (&g.b, &g.a)
    };
    let record = g.residual_iteration.load(Ordering::Relaxed) == iteration;
    let mut residual = 0i64;
    // Relaxed: a round's reads and writes are ordered against the other
    // workers' by the fork-join hand-offs (wake = release, park = acquire,
    // latch count-down = release/acquire), and within a round no two workers
    // write the same point or read a point written in the same round.
    for i in laplace_grid::block_rows(n, blocks, block) {
        for j in 1..n - 1 {
            let up = src[(i - 1) * n + j].load(Ordering::Relaxed);
            let down = src[(i + 1) * n + j].load(Ordering::Relaxed);
            let left = src[i * n + j - 1].load(Ordering::Relaxed);
            let right = src[i * n + j + 1].load(Ordering::Relaxed);
            let new = laplace_grid::relax(up, down, left, right);
            if record {
                residual += (new - src[i * n + j].load(Ordering::Relaxed)).abs();
            }
            dst[i * n + j].store(new, Ordering::Relaxed);
        }
    }
    if record {
        g.residuals[block].store(residual, Ordering::Relaxed);
    }
}

fn checksum(grid: &[AtomicI64]) -> u64 {
    let mut hash = Fnv1a64::new();
    for value in grid {
        hash.write_i64(value.load(Ordering::Relaxed));
    }
    hash.finish()
}

impl core::fmt::Debug for Grids {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Grids")
            .field("size", &self.size)
            .field("blocks", &self.blocks.load(Ordering::Relaxed))
            .finish()
    }
}

impl Grids {
    /// Fresh grids for `iterations` iterations split over `blocks` blocks
    /// (until [`Grids::set_blocks`]; never more than `max_blocks`).
    pub fn new(size: usize, iterations: usize, blocks: usize, max_blocks: usize) -> Self {
        assert!(1 <= blocks && blocks <= max_blocks);
        Self {
            size,
            a: initial_grid(size),
            b: initial_grid(size),
            iteration: AtomicU64::new(0),
            residual_iteration: AtomicU64::new(iterations as u64 - 1),
            residuals: (0..max_blocks).map(|_| AtomicI64::new(0)).collect(),
            blocks: AtomicUsize::new(blocks),
            blocks_run: AtomicU64::new(0),
            longest_block_ticks: AtomicU64::new(0),
        }
    }

    /// Selects the iteration the next round computes (before releasing it).
    pub fn set_iteration(&self, iteration: usize) {
        self.iteration.store(iteration as u64, Ordering::Relaxed);
    }

    /// The longest row block since the last take, TSC ticks, and 0 in its
    /// place (see `longest_block_ticks`).
    pub(crate) fn take_longest_block_ticks(&self) -> u64 {
        self.longest_block_ticks.swap(0, Ordering::Relaxed)
    }

    /// Splits the next rounds into `blocks` blocks (between rounds).
    pub fn set_blocks(&self, blocks: usize) {
        assert!(1 <= blocks && blocks <= self.residuals.len());
        self.blocks.store(blocks, Ordering::Relaxed);
    }

    /// The result after `iterations` rounds that took `elapsed_us`, the
    /// pooled rounds split as `round_split` says.
    pub fn report(
        &self,
        iterations: usize,
        elapsed_us: u64,
        round_split: Option<RoundSplitMedians>,
    ) -> LaplaceReport {
        let last = if iterations % 2 == 1 {
            &self.b
        } else {
            &self.a
        };
        LaplaceReport {
            size: self.size,
            iterations,
            workers: self.blocks.load(Ordering::Relaxed),
            elapsed_us,
            residual: self
                .residuals
                .iter()
                .map(|r| r.load(Ordering::Relaxed))
                .sum(),
            checksum: checksum(last),
            blocks_run: self.blocks_run.load(Ordering::Relaxed),
            round_split,
        }
    }
}

/// A run longer than this prints a progress line this often, so that a
/// slow but healthy guest (`idle-poll` with more vCPUs than host cores
/// computes for minutes) is not taken for a stuck one by the host's
/// no-output detector. Shorter runs print nothing extra.
const PROGRESS_EVERY_MS: u64 = 10_000;

/// Whether a grid of side `size` gives every core rows where `workload`
/// needs that: the pinned pool (and the floor) puts one worker on every
/// core, each with at least one interior row, so `size` must be at least
/// cores + 2; the stealing pool's chunks fit any grid. `Err` says what to
/// pass instead.
pub fn check_grid_fits(size: usize, workload: Workload) -> Result<(), alloc::string::String> {
    let cores = cores::count();
    let floor = workload == Workload::Floor;
    if !(floor || fork_join::fixed_pool() == Some(Pool::Pinned)) || size - 2 >= cores {
        return Ok(());
    }
    let pool_key = Key::Pool.name();
    let (pool, alternative) = if floor {
        ("the floor".into(), alloc::string::String::new())
    } else {
        (
            alloc::format!("{pool_key}={}", Pool::Pinned.name()),
            alloc::format!(" (or {pool_key}={})", Pool::Steal.name()),
        )
    };
    let size_key = Key::Size.name();
    Err(alloc::format!(
        "{}={} {size_key}={size} has {} interior rows for {cores} cores, and {pool} gives every core at least one row: use {size_key}={} or more{alternative}",
        Key::Workload.name(),
        workload.name(),
        size - 2,
        cores + 2,
    ))
}

/// How many workers a grid of side `size` gets on this machine.
pub fn worker_count(size: usize) -> usize {
    laplace_grid::worker_count(size, cores::count())
}

/// Runs Laplace on every core (called from a task on core 0): the first
/// two iterations on the caller alone, the second timed (the first also
/// pays for the emulator translating the code, or for cold caches), then
/// the rest as the round plan for that work says, its first rounds (and
/// later ones, while the plan wins) timed
/// against one chunk more where the plan may have split too little
/// (`sched::round_trial`). Returns the result and the plan (its chunks as
/// the trial kept them).
pub fn run(size: usize, iterations: usize) -> (LaplaceReport, RoundPlan) {
    let max_blocks = worker_count(size);
    let grids = Arc::new(Grids::new(size, iterations, 1, max_blocks));
    let start = tsc::now();
    let alone = iterations.min(2);
    let mut work_ns = 0;
    for iteration in 0..alone {
        let round_start = tsc::now();
        grids.set_iteration(iteration);
        compute_block(&grids, 0);
        fork_join::record_round_cores(1);
        work_ns = tsc::ticks_to_ns(tsc::now() - round_start);
    }
    let mut plan = crate::sched::round_plan::plan_for(work_ns, max_blocks);
    let mut trial =
        crate::sched::round_plan::trial_for(plan, max_blocks, iterations.saturating_sub(alone));
    grids.set_blocks(trial.chunks());
    // Starting the pool (the pinned pool's worker tasks) is not part of
    // the iterations' time, as it was not when the pool was started first.
    let setup_start = tsc::now();
    let pool = RoundPool::new(plan);
    let setup = tsc::now() - setup_start;
    let g = grids.clone();
    let job: Job = Arc::new(move |block| compute_block(&g, block));
    let progress_every = tsc::us_to_ticks(PROGRESS_EVERY_MS * 1000);
    let mut last_progress = start;
    let mut splits = RoundSplits::new(iterations - alone);
    // The rounds on the caller alone are not pooled rounds.
    grids.take_longest_block_ticks();
    // Where only the trial's reach keeps the plan, the rounds look again
    // at the cores the host runs at once from time to time
    // (`sched::look_again`).
    let mut looks = crate::sched::round_plan::looks_for(plan, max_blocks, tsc::now());
    for iteration in alone..iterations {
        grids.set_iteration(iteration);
        let round_start = tsc::now();
        pool.run(&job, trial.chunks());
        let now = tsc::now();
        splits.record(
            tsc::ticks_to_ns(now - round_start),
            tsc::ticks_to_ns(grids.take_longest_block_ticks()),
        );
        let chunks_before = trial.chunks();
        if let Some(outcome) = trial.record(tsc::ticks_to_ns(now - round_start)) {
            crate::sched::round_plan::keep_trial(outcome);
            plan.chunks = outcome.kept;
            print_trial(outcome);
        }
        crate::sched::look_again::between_rounds(&mut looks, &mut trial, now, |schedule| {
            let pooled = iteration + 1 - alone;
            crate::sched::round_plan::look_for_more_cores(plan, max_blocks, pooled, schedule)
        });
        if trial.chunks() != chunks_before {
            grids.set_blocks(trial.chunks());
        }
        if now - last_progress >= progress_every {
            last_progress = now;
            println!(
                "laplace progress: iteration {}/{iterations} after {} ms",
                iteration + 1,
                tsc::ticks_to_us(now - start) / 1000
            );
        }
    }
    let elapsed_us = tsc::ticks_to_us(tsc::now() - start - setup);
    pool.shutdown();
    (grids.report(iterations, elapsed_us, splits.medians()), plan)
}

/// A trial's line: both counts' median rounds, the pooled rounds it
/// timed, the count kept and when the next trial runs, if one does.
fn print_trial(outcome: TrialOutcome) {
    let (planned, planned_ns) = outcome.planned;
    let (tried, tried_ns) = outcome.tried;
    let (first, last) = outcome.rounds;
    let next = outcome
        .next_after
        .map_or_else(alloc::string::String::new, |rounds| {
            alloc::format!(", tries again after {rounds} rounds")
        });
    println!(
        "round trial: {} {} us, {} {} us (medians of {} rounds each, pooled rounds {first}-{last}): keeps {}{next}",
        chunks(planned),
        tenths_us(planned_ns),
        chunks(tried),
        tenths_us(tried_ns),
        TRIAL_ROUNDS_EACH,
        chunks(outcome.kept)
    );
}

/// "1 chunk", "2 chunks".
fn chunks(count: usize) -> alloc::string::String {
    alloc::format!("{count} chunk{}", if count == 1 { "" } else { "s" })
}

/// `ns` as microseconds with one decimal.
fn tenths_us(ns: u64) -> alloc::string::String {
    alloc::format!("{}.{}", ns / 1000, ns % 1000 / 100)
}
