//! The round plan's choices from given measurements (`sched::round_plan`):
//! the chunks follow the host's parallelism, the core count and the
//! work's length against a round's cost; the pinned pool only where every
//! core has a host core and its round is cheaper; boot parameters win. And
//! the host's parallelism the plan reads, from given counts.

use super::runner::{TestCase, TestResult};
use crate::arch::tsc;
use crate::ensure;
use crate::params::{Pool, Trial};
use crate::sched::host_parallelism::{
    self, ChunkCount, ChunksCounted, SOLO_RUN_CHUNKS, count_chunks, counted_chunk, estimate_milli,
    in_force_of, kept_milli, seen_milli, wants_second_window, whole_cores,
};
use crate::sched::poll_slots;
use crate::sched::round_plan::{
    CALIBRATION_ROUNDS, FIRST_HANDOFF_WORK_US, Fixed, HANDOFF_PROBE_ROUNDS, MAX_HANDOFF_WORK_US,
    RevisedParallelism, RoundCosts, RoundPlan, calibration_work_us, every_round_hands_off,
    handoff_work_us, median_cost_ns, raise_parallelism, revise_parallelism, wake_steps,
};
use crate::sched::round_trial::{
    FIRST_RETRIAL_GAP, RoundTrial, TRIAL_BLOCK_ROUNDS, TRIAL_ROUNDS_EACH, TrialOutcome,
    alternative, parallelism_shown, reach,
};
use crate::smp::cores;
use crate::smp::remote_call;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

pub const CHOICES: TestCase = TestCase {
    name: "sched::round_plan_choices",
    run: choices,
};

pub const TRIAL: TestCase = TestCase {
    name: "sched::round_trial_tries_one_more_chunk_and_keeps_the_faster",
    run: trial,
};

pub const CALIBRATION_PRICES_BEYOND_THE_WORK: TestCase = TestCase {
    name: "sched::round_plan_calibration_works_its_chunks_and_prices_the_rest",
    run: calibration_prices_beyond_the_work,
};

pub const CALIBRATION_WORK_FROM_THE_HANDOFF: TestCase = TestCase {
    name: "sched::round_plan_calibration_chunks_are_the_measured_handoff",
    run: calibration_work_from_the_handoff,
};

pub const HANDOFF_SEEN: TestCase = TestCase {
    name: "sched::round_plan_handoff_probe_sees_which_core_ran_a_chunk",
    run: handoff_seen,
};

pub const RAISED_BY_ROUNDS: TestCase = TestCase {
    name: "sched::round_trial_that_keeps_more_cores_raises_the_parallelism",
    run: raised_by_rounds,
};

pub const SECOND_WINDOW: TestCase = TestCase {
    name: "sched::host_estimate_measures_again_where_it_saw_one_core_or_counted_fewer",
    run: second_window_where_one_seen_or_fewer_counted,
};

pub const LOOKS_WITHIN_THE_WINDOW: TestCase = TestCase {
    name: "sched::host_estimate_counts_only_the_looks_taken_while_the_window_is_open",
    run: looks_within_the_window,
};

pub const SEEN_BESIDE: TestCase = TestCase {
    name: "sched::host_estimate_sees_the_cores_that_ran_beside_each_chunk",
    run: seen_beside,
};

pub const ESTIMATE_FASTER_SOLO: TestCase = TestCase {
    name: "sched::host_estimate_keeps_the_faster_solo_rate",
    run: estimate_faster_solo,
};

/// A trial's outcome with `planned` chunks against one more, keeping
/// `kept`.
fn outcome_keeping(planned: usize, kept: usize) -> TrialOutcome {
    TrialOutcome {
        planned: (planned, 40_000),
        tried: (planned + 1, 30_000),
        kept,
        rounds: (0, 15),
        next_after: None,
    }
}

/// Puts back this boot's figures (what rounds had shown, the poll slots)
/// when dropped: on every path out of a test that revises them.
struct RestoreRevision {
    shown: Option<usize>,
    slots: usize,
}

impl RestoreRevision {
    fn save() -> Self {
        Self {
            shown: host_parallelism::shown_by_rounds(),
            slots: poll_slots::slots(),
        }
    }
}

impl Drop for RestoreRevision {
    fn drop(&mut self) {
        host_parallelism::restore_shown_by_rounds(self.shown);
        poll_slots::set(self.slots);
    }
}

/// A trial that kept one chunk more than the host parallelism in force,
/// within the reach, showed that many cores run at once: the parallelism
/// in force and the poll slots rise to it (not above the cores), the
/// watches' waits keep the boot reading; a trial that kept the plan, or
/// kept no more than the parallelism in force, or kept a count beyond the
/// reach (`trial=always`), or ran under `parallelism=`, revises nothing.
fn raised_by_rounds() -> TestResult {
    for (planned, kept, in_force, reach, fixed, expected) in [
        (1, 2, 1, 2, false, Some(2)),
        (2, 3, 2, 3, false, Some(3)),
        // The plan kept.
        (1, 1, 1, 2, false, None),
        (2, 2, 1, 2, false, None),
        // One more, but within what is in force (a plan under its cap).
        (1, 2, 2, 2, false, None),
        // Beyond the reach: a `trial=always` win where the reading says
        // the host runs one core.
        (1, 2, 1, 1, false, None),
        // `parallelism=` is not revised.
        (1, 2, 1, 2, true, None),
    ] {
        let got = parallelism_shown(outcome_keeping(planned, kept), in_force, reach, fixed);
        ensure!(
            got == expected,
            "{planned} planned, {kept} kept, {in_force} in force, reach {reach}, fixed {fixed}: shown {got:?}, not {expected:?}"
        );
    }
    // What is in force: `parallelism=` as given; the reading, or the
    // rounds' count where more, never above the cores; every core before
    // the reading.
    for (fixed, measured, shown, count, expected) in [
        (Some(3), Some(1), 4, 8, 3),
        (None, Some(1), 0, 8, 1),
        (None, Some(1), 2, 8, 2),
        (None, Some(3), 2, 8, 3),
        (None, Some(2), 9, 4, 4),
        (None, None, 2, 8, 8),
    ] {
        let got = in_force_of(fixed, measured, shown, count);
        ensure!(
            got == expected,
            "in force with parallelism= {fixed:?}, reading {measured:?}, rounds {shown}, {count} cores: {got}, not {expected}"
        );
    }
    // Applied to this boot's own figures, put back on every path.
    let _restore = RestoreRevision::save();
    if host_parallelism::is_fixed() {
        let revised = revise_parallelism(outcome_keeping(1, 2));
        ensure!(
            revised.is_none(),
            "parallelism= fixed, yet a trial revised it: {revised:?}"
        );
        return Ok(());
    }
    let before = host_parallelism::in_force();
    let slots_before = poll_slots::slots();
    let waits_before = host_parallelism::cores_per_host_core();
    let count = cores::count();
    // Keeping the plan at the parallelism in force revises nothing.
    let unrevised = revise_parallelism(outcome_keeping(before, before));
    ensure!(
        unrevised.is_none() && host_parallelism::in_force() == before,
        "a trial that kept the plan revised the parallelism: {unrevised:?}"
    );
    // One more than in force, where the window saw it at once: the
    // window's reach, as the trial's.
    let seen = host_parallelism::measured().map(|m| whole_cores(m.seen_milli, m.cores));
    let within_reach = reach(before, seen) > before;
    let revised = revise_parallelism(outcome_keeping(before, before + 1));
    if !within_reach {
        ensure!(
            revised.is_none() && host_parallelism::in_force() == before,
            "{before} in force, {seen:?} seen at once: a count beyond the reach revised it: {revised:?}"
        );
        // The revision itself, as a trial within the reach makes it.
        raise_parallelism(before + 1);
    }
    let after = host_parallelism::in_force();
    let slots_after = poll_slots::slots();
    let waits_after = host_parallelism::cores_per_host_core();
    let shown = host_parallelism::shown_by_rounds();
    let expected_at_once = (before + 1).min(count);
    let expected_slots = if poll_slots::is_fixed() {
        slots_before
    } else {
        expected_at_once
    };
    if within_reach {
        ensure!(
            revised
                == Some(RevisedParallelism {
                    before,
                    shown: before + 1,
                    at_once: expected_at_once,
                    poll_slots: expected_slots,
                }),
            "{count} cores, {before} in force: a trial that kept {} chunks revised {revised:?}",
            before + 1
        );
    }
    ensure!(
        after == expected_at_once && slots_after == expected_slots,
        "after the revision {after} in force and {slots_after} poll slots, not {expected_at_once} and {expected_slots}"
    );
    ensure!(
        shown == Some(expected_at_once),
        "the rounds' count kept for the statistics: {shown:?}"
    );
    ensure!(
        waits_after == waits_before,
        "the watches' waits moved with the revision: {waits_before} vCPUs per host core, then {waits_after}"
    );
    Ok(())
}

/// The boot's round costs are timed with chunks that work (so that the
/// stealing pool's published chunk is handed off, not taken back by its
/// caller), and a round's cost is what it took beyond its longest chunk:
/// a "round" that is its one chunk run on the caller works at least
/// `CHUNK_WORK_US` in every timed round and costs less than that.
fn calibration_prices_beyond_the_work() -> TestResult {
    const CHUNK_WORK_US: u64 = 20;
    let work_ticks = tsc::us_to_ticks(CHUNK_WORK_US);
    let mut shortest_ticks = u64::MAX;
    let mut rounds = 0;
    let cost_ns = median_cost_ns(CHUNK_WORK_US, |job| {
        let start = tsc::now();
        job(0);
        shortest_ticks = shortest_ticks.min(tsc::now() - start);
        rounds += 1;
    });
    ensure!(rounds == CALIBRATION_ROUNDS, "{rounds} rounds timed");
    ensure!(
        shortest_ticks >= work_ticks,
        "a chunk worked {shortest_ticks} ticks, under {work_ticks}: empty chunks price a round without its hand-off"
    );
    ensure!(
        cost_ns < CHUNK_WORK_US * 1000,
        "a round of one chunk on its caller cost {cost_ns} ns beyond its work: the work was counted as cost"
    );
    Ok(())
}

/// The timed rounds' chunks work the hand-off, the shortest length,
/// doubling from [`FIRST_HANDOFF_WORK_US`], at which the probe saw the
/// published chunk handed off, times the wake steps to the round's cores
/// (`ceil(log2(cores))`), at most [`MAX_HANDOFF_WORK_US`]; the longest
/// length where none was; and nothing is probed where the pools are not
/// compared (the chunks stay empty).
fn calibration_work_from_the_handoff() -> TestResult {
    let steps: Vec<u64> = [1, 2, 3, 4, 5, 8, 9, 64].map(wake_steps).to_vec();
    ensure!(
        steps == [1, 1, 2, 2, 3, 3, 4, 6],
        "wake steps to 1, 2, 3, 4, 5, 8, 9, 64 cores: {steps:?}"
    );
    // A host where a hand-off takes between 4 and 8 µs.
    let mut tried = Vec::new();
    let (work_us, handoff_us) = calibration_work_us(true, 2, |us| {
        tried.push(us);
        us >= 8
    });
    ensure!(
        tried == [1, 2, 4, 8],
        "probed {tried:?}: not doubling from {FIRST_HANDOFF_WORK_US} to the first that hands off"
    );
    ensure!(
        (work_us, handoff_us) == (8, Some(8)),
        "2 cores: chunks of {work_us} µs, hand-off {handoff_us:?}: not the 8 µs that handed off"
    );
    let (work_us, _) = calibration_work_us(true, 64, |us| us >= 8);
    ensure!(
        work_us == 48,
        "64 cores: chunks of {work_us} µs: not 8 µs times 6 wake steps"
    );
    let (work_us, _) = calibration_work_us(true, 64, |us| us >= 512);
    ensure!(
        work_us == MAX_HANDOFF_WORK_US,
        "64 cores, a 512 µs hand-off: chunks of {work_us} µs, past the longest"
    );
    // A host whose other cores never take a published chunk.
    let mut longest = 0;
    let (work_us, handoff_us) = calibration_work_us(true, 2, |us| {
        longest = longest.max(us);
        false
    });
    ensure!(
        longest == MAX_HANDOFF_WORK_US && (work_us, handoff_us) == (MAX_HANDOFF_WORK_US, None),
        "no hand-off: probed up to {longest} µs, chunks of {work_us} µs, hand-off {handoff_us:?}"
    );
    ensure!(
        handoff_work_us(|us| us >= MAX_HANDOFF_WORK_US) == Some(MAX_HANDOFF_WORK_US),
        "the longest length is not tried"
    );
    // Fewer cores at once than cores: empty chunks, no probe.
    let mut probed = false;
    let empty = calibration_work_us(false, 2, |_| {
        probed = true;
        true
    });
    ensure!(
        empty == (0, None) && !probed,
        "not compared: {empty:?}, probed {probed}"
    );
    Ok(())
}

/// The probe counts a round as handed off only when every published
/// chunk ran on a core other than the caller's, and says the length hands
/// off only when every one of [`HANDOFF_PROBE_ROUNDS`] rounds did: both
/// chunks on the caller (taken back) is no hand-off, and the probe stops
/// there; chunk 1 on another core in all rounds but the last is not
/// enough; in all of them it is.
fn handoff_seen() -> TestResult {
    // The probe's chunks work the length probed: two on the caller take
    // at least twice it (a millisecond each, so that what the two take
    // without working, QEMU translating their code the first time
    // included, 62 µs in one boot, cannot pass for it).
    const PROBE_WORK_US: u64 = 1000;
    let mut rounds = 0;
    let mut round_ticks = 0;
    let taken_back = every_round_hands_off(PROBE_WORK_US, 2, |job| {
        rounds += 1;
        let start = tsc::now();
        job(0);
        job(1);
        round_ticks = tsc::now() - start;
    });
    ensure!(
        round_ticks >= 2 * tsc::us_to_ticks(PROBE_WORK_US),
        "two probe chunks of {PROBE_WORK_US} µs ran in {round_ticks} ticks"
    );
    ensure!(
        !taken_back,
        "both chunks ran on the caller and the probe saw a hand-off"
    );
    ensure!(
        rounds == 1,
        "{rounds} rounds run after one that did not hand off"
    );
    if cores::count() < 2 {
        return Ok(());
    }
    let other = usize::from(crate::arch::percpu::current_index() == 0);
    for handed in [HANDOFF_PROBE_ROUNDS - 1, HANDOFF_PROBE_ROUNDS] {
        let mut rounds = 0;
        let mut failed = None;
        let seen = every_round_hands_off(0, 2, |job| {
            rounds += 1;
            job(0);
            if rounds > handed {
                job(1);
                return;
            }
            let job = job.clone();
            let ran = remote_call::run_on(
                other,
                Arc::new(move |_| {
                    job(1);
                    Ok(())
                }),
            );
            failed = failed.take().or(ran.err());
        });
        if let Some(why) = failed {
            ensure!(false, "core {other} did not run chunk 1: {why}");
        }
        ensure!(
            rounds == HANDOFF_PROBE_ROUNDS && seen == (handed == HANDOFF_PROBE_ROUNDS),
            "chunk 1 ran on core {other} in {handed} of {rounds} rounds and the probe saw {seen}"
        );
    }
    Ok(())
}

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

/// A first window that saw no second core at once, or counted fewer
/// cores than it saw, is measured again, the higher reading kept; one
/// that counted as many as it saw, from two up, or a single core, is not
/// (from given readings).
fn second_window_where_one_seen_or_fewer_counted() -> TestResult {
    for (count_milli, seen_milli, cores, expected) in [
        // One host core: no second core seen.
        (985, 1_000, 64, true),
        (1_008, 1_017, 2, true),
        (1_499, 1_499, 2, true),
        // Two seen, two counted.
        (1_600, 1_500, 2, false),
        (1_914, 1_992, 64, false),
        // Two seen, one counted: a neighbour took part of a host core.
        (1_409, 1_866, 32, true),
        (938, 1_900, 64, true),
        // Counted more than seen: not measured again for that.
        (2_600, 1_990, 32, false),
        (700, 1_000, 1, false),
    ] {
        let got = wants_second_window(count_milli, seen_milli, cores);
        ensure!(
            got == expected,
            "{count_milli} counted, {seen_milli} seen on {cores} cores: second window {got}, not {expected}"
        );
    }
    let kept = kept_milli(938, Some(1953));
    ensure!(kept == 1953, "0.938 then 1.953: kept {kept}");
    let kept = kept_milli(1200, Some(900));
    ensure!(kept == 1200, "1.200 then 0.900: kept {kept}");
    let kept = kept_milli(1983, None);
    ensure!(kept == 1983, "one window of 1.983: kept {kept}");
    Ok(())
}

/// A core's chunks in the window (`count_chunks`), with another core
/// that finishes a chunk beside each of this core's from the second on,
/// and a window that closes at the fifth chunk: five chunks, and of the
/// looks only the four taken while the window was open, which saw the
/// other core beside three times (the first look is at the counts the
/// window opened with). The look after the close, which also saw it
/// beside, does not count: with more vCPUs than host cores every look
/// after a chunk finished after the close would.
fn looks_within_the_window() -> TestResult {
    const CLOSES_AT: u64 = 5;
    let progress = host_parallelism::chunk_counts(2);
    let mut last = [0u64; 2];
    let mut asked = 0;
    let counted = count_chunks(0, &progress, &mut last, || {
        asked += 1;
        // Core 1 finishes a chunk beside core 0's next one.
        progress[1].0.fetch_add(1, Ordering::Relaxed);
        asked < CLOSES_AT
    });
    let expected = ChunksCounted {
        chunks: CLOSES_AT,
        looks: CLOSES_AT - 1,
        beside: CLOSES_AT - 2,
    };
    ensure!(
        counted == expected && asked == CLOSES_AT,
        "a window closing at chunk {CLOSES_AT} (asked {asked} times): {counted:?}, not {expected:?}"
    );
    Ok(())
}

/// The window's look at the other cores (`counted_chunk`), from given
/// counts: a core that finished one or two chunks since the last look
/// ran beside this one; none, or a time slice's worth, did not; this
/// core's own count is published and not counted. And the cores seen
/// from the looks: the mean rounded, within the cores.
fn seen_beside() -> TestResult {
    let progress: Vec<ChunkCount> = [5, 10, 20, 30, 40, 50]
        .into_iter()
        .map(|count| ChunkCount(AtomicU64::new(count)))
        .collect();
    // Core 0's last look: core 1 has since finished 1 chunk, core 2 two,
    // core 3 three, core 4 none, core 5 forty.
    let mut last = [5, 9, 18, 27, 40, 10];
    let beside = counted_chunk(0, 6, &progress, &mut last);
    ensure!(
        beside == 2,
        "1, 2, 3, 0 and 40 chunks finished since: {beside} beside, not 2 (cores 1 and 2)"
    );
    let published = progress[0].0.load(Ordering::Relaxed);
    ensure!(published == 6, "core 0's count published as {published}");
    ensure!(
        last == [6, 10, 20, 30, 40, 50],
        "the look's counts kept for the next: {last:?}"
    );
    // Nothing has moved since: nobody beside.
    let again = counted_chunk(0, 6, &progress, &mut last);
    ensure!(again == 0, "no count moved: {again} beside");
    for (looks, beside, cores, expected_milli, expected_cores) in [
        (1000, 0, 4, 1000, 1),
        (1000, 17, 256, 1017, 1),
        (1000, 854, 32, 1854, 2),
        (1000, 1136, 256, 2136, 2),
        (1000, 3000, 2, 4000, 2),
    ] {
        let milli = seen_milli(looks, beside);
        let seen = whole_cores(milli, cores);
        ensure!(
            (milli, seen) == (expected_milli, expected_cores),
            "{beside} beside in {looks} looks on {cores} cores: {milli} ({seen} cores), not {expected_milli} ({expected_cores})"
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
        chunk_work_us: 16,
        handoff_work_us: Some(8),
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
            ..free
        },
    );
    ensure!(fixed.chunks == 3, "chunks=3: {fixed:?}");
    let fixed_pinned = plan(
        WORK_NS,
        1,
        costs(1_000, None),
        Fixed {
            pool: Some(Pool::Pinned),
            ..free
        },
    );
    ensure!(
        fixed_pinned.pool == Pool::Pinned && fixed_pinned.chunks == n,
        "pool=pinned: {fixed_pinned:?}"
    );
    Ok(())
}

/// The round trial from given readings and round times
/// (`sched::round_trial`): which count it tries, in which order, and what
/// it keeps.
fn trial() -> TestResult {
    // How far it reaches: the cores the boot's window saw at once, where
    // more than in force (two host cores whose count read 1.485 once, one
    // core in force, saw two); `parallelism=` (nothing seen) holds.
    for (in_force, seen, expected) in [
        (1, Some(1), 1),
        (1, Some(2), 2),
        (2, Some(2), 2),
        (2, Some(1), 2),
        (2, Some(3), 3),
        (1, None, 1),
        (2, None, 2),
    ] {
        let got = reach(in_force, seen);
        ensure!(
            got == expected,
            "reach({in_force}, {seen:?}) = {got}, not {expected}"
        );
    }
    // What it tries: one more chunk for a stealing plan, within the reach,
    // the cores and the work's rows; nothing for the pinned pool or fixed
    // chunks.
    let steal = |chunks| RoundPlan {
        pool: Pool::Steal,
        chunks,
        work_ns: WORK_NS,
    };
    let free = Fixed::default();
    let always = Fixed {
        trial: Trial::Always,
        ..free
    };
    let off = Fixed {
        trial: Trial::Off,
        ..free
    };
    for (plan, max_chunks, cores, reach, fixed, expected) in [
        (steal(1), 62, 32, 2, free, Some(2)),
        (steal(2), 62, 32, 3, free, Some(3)),
        (steal(2), 62, 32, 2, free, None),
        (steal(1), 1, 32, 2, free, None),
        (steal(1), 62, 1, 2, free, None),
        (
            steal(1),
            62,
            32,
            2,
            Fixed {
                chunks: Some(1),
                ..free
            },
            None,
        ),
        // `trial=always`: past the reach, not past the cores or rows;
        // `trial=off`: never.
        (steal(2), 62, 32, 2, always, Some(3)),
        (steal(2), 62, 2, 8, always, None),
        (steal(2), 2, 32, 8, always, None),
        (
            steal(1),
            62,
            32,
            2,
            Fixed {
                chunks: Some(1),
                ..always
            },
            None,
        ),
        (steal(1), 62, 32, 2, off, None),
        (
            RoundPlan {
                pool: Pool::Pinned,
                ..steal(1)
            },
            62,
            32,
            2,
            free,
            None,
        ),
    ] {
        let got = alternative(plan, max_chunks, cores, reach, fixed);
        ensure!(
            got == expected,
            "alternative({plan:?}, {max_chunks}, {cores}, {reach}) = {got:?}, not {expected:?}"
        );
    }
    // Too few rounds left: no trial, every round the plan's.
    let short = RoundTrial::new(1, Some(2), 100);
    ensure!(
        !short.running() && short.chunks() == 1,
        "100 rounds left: {short:?}"
    );
    // Blocks alternate, the tried count's first; the faster median is
    // kept, a tie keeps the plan, and one slow round in a count's eight
    // does not decide.
    for (tried_ns, planned_ns, kept) in [
        (36_000, 55_000, 2),
        (55_000, 36_000, 1),
        (40_000, 40_000, 1),
    ] {
        let mut trial = RoundTrial::new(1, Some(2), 998);
        let mut order = alloc::vec::Vec::new();
        let mut outcome = None;
        for round in 0..2 * TRIAL_ROUNDS_EACH {
            ensure!(trial.running(), "round {round}: the trial stopped early");
            let chunks = trial.chunks();
            order.push(chunks);
            let mut ns = if chunks == 2 { tried_ns } else { planned_ns };
            if round == 1 {
                ns *= 10;
            }
            outcome = trial.record(ns);
            ensure!(
                outcome.is_none() == (round + 1 < 2 * TRIAL_ROUNDS_EACH),
                "round {round}: outcome {outcome:?}"
            );
        }
        let expected_order: alloc::vec::Vec<usize> = (0..2 * TRIAL_ROUNDS_EACH)
            .map(|round| {
                if (round / TRIAL_BLOCK_ROUNDS) % 2 == 0 {
                    2
                } else {
                    1
                }
            })
            .collect();
        ensure!(order == expected_order, "order {order:?}");
        ensure!(outcome.is_some(), "no outcome after the trial's rounds");
        let outcome = outcome.unwrap_or(TrialOutcome {
            planned: (0, 0),
            tried: (0, 0),
            kept: 0,
            rounds: (0, 0),
            next_after: None,
        });
        // The plan kept: tried again after FIRST_RETRIAL_GAP rounds.
        let next_after = (kept == 1).then_some(FIRST_RETRIAL_GAP);
        ensure!(
            outcome.kept == kept
                && outcome.tried == (2, tried_ns)
                && outcome.planned == (1, planned_ns)
                && outcome.rounds == (0, 2 * TRIAL_ROUNDS_EACH - 1)
                && outcome.next_after == next_after,
            "{tried_ns} ns against {planned_ns} ns: {outcome:?}, not {kept} kept"
        );
        ensure!(
            !trial.running() && trial.chunks() == kept && trial.record(1).is_none(),
            "after the trial: {trial:?}"
        );
    }
    retrials()
}

/// A trial that keeps the plan runs again after [`FIRST_RETRIAL_GAP`]
/// rounds, then at doubling gaps while enough rounds are left; the rounds
/// between run the kept count; a trial that keeps the alternative is the
/// last. Rounds are timed as a host whose second core is slow until round
/// `slow_until` would time them.
fn retrials() -> TestResult {
    let rounds = 998;
    for (slow_until, expected_trials, expected_kept) in [
        // The alternative always slower: four trials in 998 rounds, at
        // rounds 0, 80, 224 and 496 (gaps 64, 128, 256), none after.
        (usize::MAX, [0, 80, 224, 496].as_slice(), 1),
        // The host's second core slow for the first 50 rounds: the
        // second trial keeps 2 chunks, and no trial follows.
        (50, [0, 80].as_slice(), 2),
    ] {
        let mut trial = RoundTrial::new(1, Some(2), rounds);
        let mut starts = alloc::vec::Vec::new();
        let mut last_kept = 1;
        let mut was_running = false;
        for round in 0..rounds {
            let running = trial.running();
            if running && !was_running {
                starts.push(round);
            }
            was_running = running;
            let chunks = trial.chunks();
            ensure!(
                running || chunks == last_kept,
                "round {round} outside a trial ran {chunks} chunks, not the kept {last_kept}"
            );
            let ns = match (chunks, round < slow_until) {
                (2, true) => 160_000,
                (2, false) => 30_000,
                _ => 57_000,
            };
            if let Some(outcome) = trial.record(ns) {
                last_kept = outcome.kept;
                let first = *starts.last().unwrap_or(&usize::MAX);
                ensure!(
                    outcome.rounds == (first, round),
                    "trial from {first}: {outcome:?} at round {round}"
                );
            }
        }
        ensure!(
            starts == expected_trials && last_kept == expected_kept,
            "slow until {slow_until}: trials from {starts:?}, kept {last_kept}; expected {expected_trials:?}, {expected_kept}"
        );
    }
    Ok(())
}
