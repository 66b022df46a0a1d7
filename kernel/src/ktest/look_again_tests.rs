//! A workload's looks again at the cores the host runs at once
//! (`sched::look_again`): when they are due, where they run, what widens
//! the trial's reach, the trial a look starts, and one look run for real.

use super::runner::{TestCase, TestResult};
use crate::ensure;
use crate::params::{Pool, Trial};
use crate::sched::look_again::{self, LOOK_SPACING, LookSchedule};
use crate::sched::round_plan::{Fixed, RoundPlan};
use crate::sched::round_trial::{
    MIN_ROUNDS_LEFT, RoundTrial, TRIAL_BLOCK_ROUNDS, TRIAL_ROUNDS_EACH, blocked_by_reach,
    seen_at_once,
};
use crate::smp::cores;

pub const SPACED_BY_COST: TestCase = TestCase {
    name: "sched::look_again_spaces_its_looks_by_what_they_cost",
    run: spaced_by_cost,
};

pub const WHERE_THE_REACH_BLOCKS: TestCase = TestCase {
    name: "sched::look_again_only_where_the_reach_alone_stops_a_trial",
    run: where_the_reach_blocks,
};

pub const WIDENS_THE_REACH: TestCase = TestCase {
    name: "sched::look_again_that_sees_more_widens_the_reach",
    run: widens_the_reach,
};

pub const STARTS_A_TRIAL: TestCase = TestCase {
    name: "sched::look_again_starts_a_trial_midway",
    run: starts_a_trial,
};

pub const LOOKS_FOR_REAL: TestCase = TestCase {
    name: "sched::look_again_counts_looks_on_the_cores_it_runs_on",
    run: looks_for_real,
};

/// The first look is due after [`LOOK_SPACING`] windows of the workload's
/// time, the second [`LOOK_SPACING`] times what the first took after its
/// end, and each later gap twice the last; so over a long workload whose
/// looks take what they take, the looks' share of the time stays at most
/// one part in `LOOK_SPACING + 1`, and their number grows with the
/// logarithm of its length.
fn spaced_by_cost() -> TestResult {
    let mut schedule = LookSchedule::new(1_000, 10);
    let first = 1_000 + 10 * LOOK_SPACING;
    ensure!(
        !schedule.due(first - 1) && schedule.due(first),
        "the first look is due at {first}: {schedule:?}"
    );
    schedule.looked(2_000, 2_050);
    let next = 2_050 + 50 * LOOK_SPACING;
    ensure!(
        !schedule.due(next - 1) && schedule.due(next),
        "after a look of 50 ticks ending at 2050, the next is due at {next}: {schedule:?}"
    );
    schedule.looked(6_000, 6_050);
    let doubled = 6_050 + 50 * 2 * LOOK_SPACING;
    ensure!(
        !schedule.due(doubled - 1) && schedule.due(doubled),
        "the gap after a second look doubles: due at {doubled}: {schedule:?}"
    );
    // A workload of 10^7 ticks that looks whenever due, each look taking
    // 37 ticks and each round 5.
    let mut schedule = LookSchedule::new(0, 37);
    let (mut now, mut looking) = (0u64, 0u64);
    while now < 10_000_000 {
        if schedule.due(now) {
            schedule.looked(now, now + 37);
            now += 37;
            looking += 37;
        } else {
            now += 5;
        }
    }
    ensure!(
        looking * (LOOK_SPACING + 1) <= now,
        "looks took {looking} of {now} ticks: more than one part in {}",
        LOOK_SPACING + 1
    );
    let looks = looking / 37;
    ensure!(
        looks == 13,
        "{looks} looks in {now} ticks: gaps of 64, 128, ... times 37 ticks after the first at 2368 make 13"
    );
    Ok(())
}

/// A plan of `chunks` stealing chunks (or the pinned pool's).
fn plan(pool: Pool, chunks: usize) -> RoundPlan {
    RoundPlan {
        pool,
        chunks,
        work_ns: 60_000,
    }
}

/// Looks run where the reach alone keeps a trial from trying one more
/// chunk: not where a trial runs anyway, where one more chunk does not fit
/// the cores or the work, for the pinned pool, with `chunks=` or with
/// `trial=` other than `auto`.
fn where_the_reach_blocks() -> TestResult {
    let auto = Fixed::default();
    let fixed = |chunks: Option<usize>, trial: Trial| Fixed {
        pool: None,
        chunks,
        trial,
    };
    for (what, plan, max_chunks, cores, reach, fixed, expected) in [
        (
            "reach 1, one chunk",
            plan(Pool::Steal, 1),
            62,
            4,
            1,
            auto,
            true,
        ),
        (
            "reach 2, two chunks",
            plan(Pool::Steal, 2),
            62,
            32,
            2,
            auto,
            true,
        ),
        (
            "a trial runs anyway",
            plan(Pool::Steal, 1),
            62,
            4,
            2,
            auto,
            false,
        ),
        (
            "every core in use",
            plan(Pool::Steal, 2),
            62,
            2,
            2,
            auto,
            false,
        ),
        (
            "every row block in use",
            plan(Pool::Steal, 2),
            2,
            4,
            2,
            auto,
            false,
        ),
        (
            "the pinned pool",
            plan(Pool::Pinned, 1),
            62,
            4,
            1,
            auto,
            false,
        ),
        (
            "chunks= fixed",
            plan(Pool::Steal, 1),
            62,
            4,
            1,
            fixed(Some(1), Trial::Auto),
            false,
        ),
        (
            "trial=off",
            plan(Pool::Steal, 1),
            62,
            4,
            1,
            fixed(None, Trial::Off),
            false,
        ),
        (
            "trial=always",
            plan(Pool::Steal, 1),
            62,
            4,
            1,
            fixed(None, Trial::Always),
            false,
        ),
    ] {
        let blocked = blocked_by_reach(plan, max_chunks, cores, reach, fixed);
        ensure!(
            blocked == expected,
            "{what}: blocked by the reach {blocked}, not {expected}"
        );
    }
    Ok(())
}

/// The cores seen at once that widen the reach: the boot window's, or a
/// look's where more; nothing where `parallelism=` fixed the parallelism
/// (no boot reading to widen).
fn widens_the_reach() -> TestResult {
    for (boot, looks, expected) in [
        (Some(1), None, Some(1)),
        (Some(1), Some(2), Some(2)),
        (Some(2), Some(1), Some(2)),
        (Some(3), Some(3), Some(3)),
        (None, Some(2), None),
    ] {
        let seen = seen_at_once(boot, looks);
        ensure!(
            seen == expected,
            "boot {boot:?}, looks {looks:?}: {seen:?}, not {expected:?}"
        );
    }
    Ok(())
}

/// A trial that a look starts midway runs as one given at the start: the
/// alternative's block first, blocks alternating, its outcome naming the
/// rounds it timed, and further trials at doubling gaps where it keeps the
/// plan; none starts where one was given, where one is running, or where
/// fewer rounds are left than a trial needs.
fn starts_a_trial() -> TestResult {
    let rounds = 1_000;
    let mut trial = RoundTrial::new(1, None, rounds);
    ensure!(!trial.running(), "no trial given: none running");
    for _ in 0..100 {
        trial.record(50_000);
    }
    ensure!(trial.can_start(), "900 rounds left: a trial can start");
    ensure!(trial.start(2), "a trial of 2 chunks did not start");
    ensure!(!trial.start(3), "a second trial started over the first");
    let mut outcome = None;
    for timed in 0..2 * TRIAL_ROUNDS_EACH {
        let tried_block = (timed / TRIAL_BLOCK_ROUNDS).is_multiple_of(2);
        let chunks = trial.chunks();
        ensure!(
            chunks == if tried_block { 2 } else { 1 },
            "trial round {timed}: {chunks} chunks"
        );
        // One chunk is faster: the plan is kept.
        outcome = trial.record(if chunks == 1 { 40_000 } else { 45_000 });
        ensure!(
            outcome.is_none() || timed == 2 * TRIAL_ROUNDS_EACH - 1,
            "an outcome before the trial's last round: {outcome:?}"
        );
    }
    let outcome = outcome.ok_or("no outcome after the trial's rounds")?;
    ensure!(
        outcome.kept == 1 && outcome.rounds == (100, 100 + 2 * TRIAL_ROUNDS_EACH - 1),
        "a trial from round 100 keeping 1 chunk: {outcome:?}"
    );
    ensure!(
        outcome.next_after.is_some(),
        "a trial that kept the plan with {} rounds left runs again: {outcome:?}",
        rounds - 100 - 2 * TRIAL_ROUNDS_EACH
    );
    ensure!(!trial.can_start(), "a trial was given: no other starts");
    // Given at the start: no second one starts.
    let mut given = RoundTrial::new(1, Some(2), rounds);
    ensure!(
        !given.can_start() && !given.start(2),
        "a trial given at the start started again"
    );
    // Too few rounds left.
    let mut late = RoundTrial::new(1, None, rounds);
    for _ in 0..rounds - MIN_ROUNDS_LEFT + 1 {
        late.record(50_000);
    }
    ensure!(
        !late.can_start() && !late.start(2),
        "{} rounds left, fewer than a trial needs ({MIN_ROUNDS_LEFT}): a trial started",
        MIN_ROUNDS_LEFT - 1
    );
    Ok(())
}

/// One look for real, on this core and the next: both take looks within
/// its window, and it sees at least its own core and at most both (how
/// many the host runs at once is the host's). What it saw widens what
/// looks have seen, which the test puts back.
fn looks_for_real() -> TestResult {
    if cores::count() < 2 {
        return Ok(());
    }
    let before = look_again::seen_by_looks();
    let looked = look_again::look(2);
    let widened = look_again::seen_by_looks();
    look_again::restore_seen_by_looks(before);
    let seen = looked.seen_milli();
    ensure!(looked.looks > 0, "no look counted: {looked:?}");
    ensure!(
        looked.chunks >= looked.looks,
        "more looks than chunks: {looked:?}"
    );
    ensure!(
        (1_000..=2_000).contains(&seen),
        "{seen} thousandths of 2 cores seen at once: {looked:?}"
    );
    let rounded = crate::sched::host_parallelism::whole_cores(seen, 2);
    ensure!(
        widened >= Some(rounded),
        "the look saw {rounded} core(s), looks have seen {widened:?}"
    );
    Ok(())
}
