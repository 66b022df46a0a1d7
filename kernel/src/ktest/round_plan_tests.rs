//! The round plan's choices from given measurements (`sched::round_plan`):
//! the chunks follow the host's parallelism, the core count and the
//! work's length against a round's cost; the pinned pool only where every
//! core has a host core and its round is cheaper; boot parameters win. And
//! the host's parallelism the plan reads, from given counts.

use super::runner::{TestCase, TestResult};
use crate::ensure;
use crate::params::Pool;
use crate::sched::host_parallelism::{SOLO_RUN_CHUNKS, estimate_milli};
use crate::sched::round_plan::{Fixed, RoundCosts, RoundPlan};
use crate::smp::cores;

pub const CHOICES: TestCase = TestCase {
    name: "sched::round_plan_choices",
    run: choices,
};

pub const ESTIMATE_FASTER_SOLO: TestCase = TestCase {
    name: "sched::host_estimate_keeps_the_faster_solo_rate",
    run: estimate_faster_solo,
};

/// The plan's main input, the host's parallelism, from given counts: the
/// solo rate timed before and after the window, the faster kept, so that
/// a solo phase the host slowed (on either side) does not inflate it.
fn estimate_faster_solo() -> TestResult {
    // 100 ticks a chunk; a window of 10,000 ticks with 200 chunks done in
    // all: 2 cores at once.
    let run_ticks = 100 * SOLO_RUN_CHUNKS;
    let (chunks, window_ticks) = (200, 10_000);
    let steady = estimate_milli(chunks, [run_ticks, run_ticks], window_ticks);
    ensure!(steady == 2000, "steady solo rate: {steady}");
    for slowed in [[3 * run_ticks, run_ticks], [run_ticks, 3 * run_ticks]] {
        let estimate = estimate_milli(chunks, slowed, window_ticks);
        ensure!(
            estimate == 2000,
            "solo runs {slowed:?}: {estimate} (a slowed solo phase read as 6 cores)"
        );
    }
    Ok(())
}

/// A round of 1 ms on one core, split at most 1000 ways.
const WORK_NS: u64 = 1_000_000;
const MAX_CHUNKS: usize = 1000;

fn costs(steal_ns: u64, pinned_ns: Option<u64>) -> RoundCosts {
    RoundCosts {
        steal_cores: 2,
        steal_ns,
        pinned_ns,
    }
}

fn choices() -> TestResult {
    let n = cores::count();
    let free = Fixed::default();
    let plan = |work_ns, at_once, costs, fixed| {
        RoundPlan::for_work(work_ns, MAX_CHUNKS, at_once, costs, fixed)
    };
    // One core: nothing to split, whatever the measurements say.
    if n == 1 {
        let one = plan(WORK_NS, 1, costs(0, None), free);
        ensure!(one.chunks == 1, "1 core: {one:?}");
        return Ok(());
    }
    // The host runs one core at a time: the caller runs the round alone
    // (a split would wait for a descheduled core).
    let alone = plan(WORK_NS, 1, costs(1_000, None), free);
    ensure!(
        alone.pool == Pool::Steal && alone.chunks == 1,
        "1 core at once: {alone:?}"
    );
    // Every core at once, splitting cheap: one chunk per core.
    let wide = plan(WORK_NS, n, costs(1_000, None), free);
    ensure!(
        wide.pool == Pool::Steal && wide.chunks == n.min(MAX_CHUNKS),
        "{n} at once: {wide:?}"
    );
    // Two at once: two chunks, however many cores there are.
    let two = plan(WORK_NS, 2, costs(1_000, None), free);
    ensure!(two.chunks == 2, "2 at once: {two:?}");
    // A round barely longer than what a split costs: not split.
    let short = plan(3_000, n, costs(1_000, None), free);
    ensure!(short.chunks == 1, "short round: {short:?}");
    // Work / (2 x overhead) caps the chunks: 1 ms over 2 x 100 µs = 5.
    let capped = plan(WORK_NS, n, costs(100_000, None), free);
    ensure!(capped.chunks == n.min(5), "overhead cap: {capped:?}");
    // The pinned pool: chosen when measured (every core at once) and
    // cheaper; not when dearer.
    let pinned = plan(WORK_NS, n, costs(2_000, Some(1_000)), free);
    ensure!(
        pinned.pool == Pool::Pinned && pinned.chunks == n,
        "cheaper pinned: {pinned:?}"
    );
    let steal = plan(WORK_NS, n, costs(1_000, Some(2_000)), free);
    ensure!(steal.pool == Pool::Steal, "dearer pinned: {steal:?}");
    // Boot parameters win over every measurement.
    let fixed = plan(
        WORK_NS,
        1,
        costs(1_000, None),
        Fixed {
            pool: Some(Pool::Steal),
            chunks: Some(3),
        },
    );
    ensure!(fixed.chunks == 3, "chunks=3: {fixed:?}");
    let fixed_pinned = plan(
        WORK_NS,
        1,
        costs(1_000, None),
        Fixed {
            pool: Some(Pool::Pinned),
            chunks: None,
        },
    );
    ensure!(
        fixed_pinned.pool == Pool::Pinned && fixed_pinned.chunks == n,
        "pool=pinned: {fixed_pinned:?}"
    );
    Ok(())
}
