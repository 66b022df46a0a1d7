//! A workload's looks again at the cores the host runs at once
//! (`sched::look_again`): when they are due, where they run, what widens
//! the trial's reach, the trial a look starts, and one look run for real.

use super::runner::{TestCase, TestResult};
use crate::ensure;
use crate::params::{Pool, Trial};
use crate::sched::host_parallelism;
use crate::sched::look_again::{self, LOOK_SPACING, LookSchedule, between_rounds};
use crate::sched::round_plan::{self, Fixed, RoundPlan};
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

pub const WIDENED_REACH_RUNS_A_TRIAL: TestCase = TestCase {
    name: "sched::look_again_that_widens_the_reach_lets_the_plan_be_tried",
    run: widened_reach_runs_a_trial,
};

pub const BETWEEN_ROUNDS: TestCase = TestCase {
    name: "sched::look_again_between_rounds_starts_the_trial_it_allows",
    run: between_rounds_starts_the_trial,
};

pub const LOOKS_FOR_REAL: TestCase = TestCase {
    name: "sched::look_again_counts_looks_on_the_cores_it_runs_on",
    run: looks_for_real,
};

/// The first look is due after [`LOOK_SPACING`] windows of the
/// workload's time; each later one once the workload has run twice as
/// long as at the last look's end and `LOOK_SPACING + 1` times as long as
/// its looks took in all. So over a long workload whose looks cost what
/// they cost (here 5 to 300 ticks, against a first gap of 64 x 37), at
/// the start of every look the looks before it took at most one part in
/// `LOOK_SPACING + 1` of the time, and their number grows with the
/// logarithm of its length (12 in 10^7 ticks).
fn spaced_by_cost() -> TestResult {
    let mut schedule = LookSchedule::new(1_000, 10);
    let first = 1_000 + 10 * LOOK_SPACING;
    ensure!(
        !schedule.due(first - 1) && schedule.due(first),
        "the first look is due at {first}: {schedule:?}"
    );
    // A look of 50 ticks ending 1050 after the start: 65 x 50 is later
    // than twice 1050.
    schedule.looked(2_000, 2_050);
    let by_cost = 1_000 + (LOOK_SPACING + 1) * 50;
    ensure!(
        !schedule.due(by_cost - 1) && schedule.due(by_cost),
        "after a look of 50 ticks, the next is due at {by_cost}: {schedule:?}"
    );
    // A look of 10 ticks ending 4010 after the start: twice that is later
    // than 65 x 60.
    schedule.looked(5_000, 5_010);
    let doubled = 1_000 + 2 * 4_010;
    ensure!(
        !schedule.due(doubled - 1) && schedule.due(doubled),
        "after a look ending 4010 ticks in, the next is due at {doubled}: {schedule:?}"
    );
    // A workload of 10^7 ticks in rounds of 5 that looks whenever due,
    // its looks taking 37, 5, 300 and 11 ticks in turn.
    let costs = [37, 5, 300, 11];
    let mut schedule = LookSchedule::new(0, 37);
    let (mut now, mut looks) = (0u64, 0usize);
    while now < 10_000_000 {
        if schedule.due(now) {
            let before = schedule.looking_ticks();
            ensure!(
                before * (LOOK_SPACING + 1) <= now,
                "look {looks} at {now}: the looks before it took {before} ticks, more than one part in {}",
                LOOK_SPACING + 1
            );
            let took = costs[looks % costs.len()];
            schedule.looked(now, now + took);
            now += took;
            looks += 1;
        } else {
            now += 5;
        }
    }
    ensure!(
        looks == 12,
        "{looks} looks in {now} ticks, not 12 (the first at 2368, then each once the time run has doubled or is 65 times the looks')"
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
    let (one_chunk, off, always) = (
        fixed(Some(1), Trial::Auto),
        fixed(None, Trial::Off),
        fixed(None, Trial::Always),
    );
    let steal = |chunks| plan(Pool::Steal, chunks);
    let pinned = plan(Pool::Pinned, 1);
    for (what, plan, max_chunks, cores, reach, fixed, expected) in [
        ("reach 1, one chunk", steal(1), 62, 4, 1, auto, true),
        ("reach 2, two chunks", steal(2), 62, 32, 2, auto, true),
        ("a trial runs anyway", steal(1), 62, 4, 2, auto, false),
        ("every core in use", steal(2), 62, 2, 2, auto, false),
        ("every row block in use", steal(2), 2, 4, 2, auto, false),
        ("pinned pool", pinned, 62, 4, 1, auto, false),
        ("chunks= fixed", steal(1), 62, 4, 1, one_chunk, false),
        ("trial=off", steal(1), 62, 4, 1, off, false),
        ("trial=always", steal(1), 62, 4, 1, always, false),
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

/// On this boot's figures: a plan of as many stealing chunks as the
/// trial's reach (`round_plan::trial_reach`), on more cores than that,
/// gets no trial and takes looks; once looks have seen one core more
/// (set here, put back after), the same plan gets a trial of one more
/// chunk and no looks. Skipped where nothing can widen (`parallelism=`,
/// or every core already within the reach).
fn widened_reach_runs_a_trial() -> TestResult {
    if host_parallelism::is_fixed() {
        return Ok(());
    }
    let reach = round_plan::trial_reach();
    let cores = cores::count();
    if reach >= cores {
        return Ok(());
    }
    let plan = plan(Pool::Steal, reach);
    let rounds = 1_000;
    let before = look_again::seen_by_looks();
    let blocked = round_plan::trial_for(plan, cores, rounds);
    let looks_blocked = round_plan::looks_for(plan, cores, 0);
    look_again::restore_seen_by_looks(Some(reach + 1));
    let widened = round_plan::trial_for(plan, cores, rounds);
    let looks_widened = round_plan::looks_for(plan, cores, 0);
    look_again::restore_seen_by_looks(before);
    ensure!(
        !blocked.running() && looks_blocked.is_some(),
        "{reach} chunks within a reach of {reach} on {cores} cores: a trial {} and looks {looks_blocked:?}",
        blocked.running()
    );
    ensure!(
        widened.running() && widened.chunks() == reach + 1 && looks_widened.is_none(),
        "looks saw {} cores: a trial running {} of {} chunks, looks {looks_widened:?}",
        reach + 1,
        widened.running(),
        widened.chunks()
    );
    Ok(())
}

/// Between rounds (`look_again::between_rounds`), with a look that
/// returns a count to try: nothing before the look is due; when due, the
/// look runs and the trial starts with that count, and the looks end; a
/// look that allows no trial leaves the trial idle and the looks going;
/// no look runs while a trial could not start.
fn between_rounds_starts_the_trial() -> TestResult {
    let due_at = 10 * LOOK_SPACING;
    let mut trial = RoundTrial::new(1, None, 1_000);
    let mut looks = Some(LookSchedule::new(0, 10));
    let mut ran = 0;
    let early = between_rounds(&mut looks, &mut trial, due_at - 1, |_| {
        ran += 1;
        Some(2)
    });
    ensure!(!early && ran == 0, "a look ran before it was due");
    let nothing = between_rounds(&mut looks, &mut trial, due_at, |schedule| {
        ran += 1;
        schedule.looked(due_at, due_at + 10);
        None
    });
    ensure!(
        !nothing && ran == 1 && !trial.running() && looks.is_some(),
        "a look that allows no trial: started {nothing}, ran {ran}, trial {}, looks {looks:?}",
        trial.running()
    );
    let later = 4 * due_at;
    let started = between_rounds(&mut looks, &mut trial, later, |schedule| {
        ran += 1;
        schedule.looked(later, later + 10);
        Some(2)
    });
    ensure!(
        started && ran == 2 && trial.running() && trial.chunks() == 2 && looks.is_none(),
        "a look that allows 2 chunks: started {started}, ran {ran}, trial {} of {} chunks, looks {looks:?}",
        trial.running(),
        trial.chunks()
    );
    // A trial given at the start: no look runs.
    let mut given = RoundTrial::new(1, Some(2), 1_000);
    let mut looks = Some(LookSchedule::new(0, 10));
    let none = between_rounds(&mut looks, &mut given, later, |_| {
        ran += 1;
        Some(2)
    });
    ensure!(
        !none && ran == 2,
        "a look ran beside a trial given at the start"
    );
    Ok(())
}

/// One look for real, on this core and the next: the core that keeps
/// its time runs at least one chunk, and what it saw widens what looks
/// have seen (put back after). How many it saw at once, and whether the
/// other core ran within its 2 ms, is the host's.
fn looks_for_real() -> TestResult {
    if cores::count() < 2 {
        return Ok(());
    }
    let before = look_again::seen_by_looks();
    let looked = look_again::look(2);
    let widened = look_again::seen_by_looks();
    look_again::restore_seen_by_looks(before);
    ensure!(looked.chunks >= 1, "no chunk counted: {looked:?}");
    let rounded = crate::sched::host_parallelism::whole_cores(looked.seen_milli(), 2);
    ensure!(
        widened >= Some(rounded),
        "the look saw {rounded} core(s), looks have seen {widened:?}"
    );
    Ok(())
}
