//! The Laplace workload computes what the host computes, bit for bit.

use qemu_tests::{boot, boot_with, describe};
use vigil_proto::stats_line::HostStats;
use xtask::guest::laplace_check::ChecksumCheck;
use xtask::guest::vigil_stats::VigilStats;
use xtask::{RunConfig, RunOutcome, Verdict};

/// Debug kernel, 4 vCPUs on 2 host cores: seconds, with room to spare.
const LAPLACE_TIMEOUT_S: u64 = 300;

/// The vCPUs of [`boot_matching_the_host`]'s boots.
const LAPLACE_VCPUS: u32 = 4;

/// Boots Laplace with `params` at 4 vCPUs and checks that it succeeded
/// with one result line, the host's bit for bit (`what` names the boot in
/// a failure): the outcome and that line's check.
fn boot_matching_the_host(params: &[&str], what: &str) -> (RunOutcome, ChecksumCheck) {
    let outcome = boot(LAPLACE_VCPUS, LAPLACE_TIMEOUT_S, params);
    assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
    let [check] = outcome.checksum_checks.as_slice() else {
        panic!(
            "{what}: expected one checked result line, got {:?}\n{}",
            outcome.checksum_checks,
            describe(&outcome)
        );
    };
    let check = *check;
    assert!(
        check.matches(),
        "{what}: {}\n{}",
        check.describe(),
        describe(&outcome)
    );
    (outcome, check)
}

/// The boot's `VIGIL-STATS` host half and its `round trial:` lines, one a
/// trial, in order.
fn host_stats_and_trial_lines(outcome: &RunOutcome) -> (HostStats, Vec<&str>) {
    let stats = VigilStats::find_in(&outcome.serial)
        .expect("a VIGIL-STATS line")
        .expect("a VIGIL-STATS line that parses");
    let trial_lines = outcome
        .serial
        .lines()
        .filter(|line| line.contains("round trial:"))
        .collect();
    (stats.0.host, trial_lines)
}

/// Both pools, one boot each: the pinned pool splits the grid into one
/// block per core, the stealing pool into the chunks `chunks=` fixes (its
/// default count depends on the host); the result is the same, bit for
/// bit, and the host's.
#[test]
fn laplace_at_4_cores_passes_with_the_host_checksum_verified() {
    for (pool, blocks) in [("pool=pinned", 4), ("pool=steal chunks=3", 3)] {
        let mut params = vec!["workload=laplace", "size=64", "iterations=1000"];
        params.extend(pool.split(' '));
        let (outcome, check) = boot_matching_the_host(&params, pool);
        assert_eq!(
            check.guest.workers,
            blocks,
            "{pool}: {}",
            describe(&outcome)
        );
        // The kernel's known answer for 64x64 after 1000 iterations.
        assert_eq!(check.guest.checksum, 0x8619_c703_5439_8c3d);
        assert_eq!(check.guest.residual, 252_862_090);
        assert_eq!(
            check.describe(),
            "vigil: laplace checksum matches the host (0x8619c70354398c3d)"
        );
    }
}

/// The workload's looks again end to end, default settings, on one host
/// core (QEMU under `taskset`, as `bench --host-cores 1`), where no two
/// vCPUs run at once: the boot's window sees one core, the plan runs one
/// chunk, and only the round trial's reach keeps it there
/// (`sched::look_again`). So the workload looks again once its rounds
/// have run 64 windows' worth (128 ms; the debug kernel's 1000 rounds
/// take about 2.5 s here, and a look needs 128 rounds left after it, so
/// a host up to about 10x faster still looks), each look sees one core at once, as many `looked
/// again` lines as `VIGIL-STATS` counts looks, and no trial runs. Fails
/// where looks never run (0 looks counted with `looks_for` returning
/// none), and where a look starts a trial. (A look counting any advance
/// as beside is the boot window's ktest's to catch: in a look's 2 ms one
/// host core seldom switches vCPUs, so this boot's looks saw 1.000 with
/// that mutation too.)
#[test]
fn on_one_host_core_the_workload_looks_again_and_sees_one_core() {
    let params = ["workload=laplace", "size=64", "iterations=1000"];
    let outcome = boot_with(RunConfig {
        smp: 2,
        timeout_s: Some(LAPLACE_TIMEOUT_S),
        registers_on_timeout: true,
        host_cores: Some(1),
        ..RunConfig::with_params(&params)
    });
    assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
    assert!(
        outcome.checksum_checks.len() == 1 && outcome.checksum_checks[0].matches(),
        "{:?}\n{}",
        outcome.checksum_checks,
        describe(&outcome)
    );
    let (host, trial_lines) = host_stats_and_trial_lines(&outcome);
    let look_lines = outcome
        .serial
        .lines()
        .filter(|line| line.contains("host: looked again before pooled round"))
        .count() as u64;
    assert!(
        host.looks_run >= 1 && look_lines == host.looks_run,
        "{} look(s) counted, {look_lines} line(s): {host:?}\n{}",
        host.looks_run,
        describe(&outcome)
    );
    assert!(
        (1_000..1_500).contains(&host.looks_seen_milli),
        "one host core, a look saw {} thousandths of a core at once: {host:?}\n{}",
        host.looks_seen_milli,
        describe(&outcome)
    );
    assert!(
        host.plan_chunks == 1 && host.trials_run == 0 && trial_lines.is_empty(),
        "one host core: one chunk, no trial: {host:?}\n{}",
        describe(&outcome)
    );
}

/// The round trial end to end on the default stealing pool: with
/// `trial=always` and `parallelism=1` (the plan runs 1 chunk whatever the
/// host, and `auto` would reach no further, so only `always` tries 2),
/// the first rounds (and later ones, while 1 chunk wins) alternate 1 chunk
/// and 2, the result is still the
/// host's bit for bit, and VIGIL-STATS says what was timed and which
/// count the rest of the rounds ran; with `trial=off`, none. The row
/// blocks computed (`blocks_run`) add up to the trial's rounds at each
/// count and the rest at the kept one: the trial's rounds ran the counts
/// it timed (the checksum alone cannot say so: it does not depend on the
/// split). 398 pooled rounds leave room for three trials (rounds 0, 80 and
/// 224) while each keeps the plan, and the rounds between run the count
/// the last one kept. Which count is kept, and so how many trials run,
/// depends on the host's timing; that the lines, the statistics' count
/// and the blocks agree, does not.
#[test]
fn the_round_trial_runs_end_to_end_and_keeps_one_of_its_two_counts() {
    for trial in ["trial=always", "trial=off"] {
        let params = [
            "workload=laplace",
            "size=24",
            "iterations=400",
            "parallelism=1",
            trial,
        ];
        let (outcome, check) = boot_matching_the_host(&params, trial);
        let (ref host, trial_lines) = host_stats_and_trial_lines(&outcome);
        assert_eq!(host.plan_pool, "steal", "{trial}: {}", describe(&outcome));
        assert_eq!(
            check.guest.workers,
            host.plan_chunks,
            "{trial}: the rounds after the trial run the count it kept\n{}",
            describe(&outcome)
        );
        let iterations = 400;
        if trial == "trial=off" {
            assert_eq!(
                (
                    host.trial_planned_chunks,
                    host.trial_tried_chunks,
                    host.trials_run,
                    trial_lines.len()
                ),
                (0, 0, 0, 0),
                "trial=off: {}",
                describe(&outcome)
            );
            assert_eq!(
                host.blocks_run,
                expected_blocks(host, &[], iterations),
                "trial=off: every pool round ran the plan's count: {host:?}"
            );
            continue;
        }
        assert!(
            host.trial_planned_chunks == 1
                && host.trial_tried_chunks == 2
                && host.trial_planned_round_ns > 0
                && host.trial_tried_round_ns > 0,
            "{trial}: one more chunk than the plan's, both timed: {host:?}\n{}",
            describe(&outcome)
        );
        assert!(
            [host.trial_planned_chunks, host.trial_tried_chunks].contains(&host.plan_chunks),
            "{trial}: kept one of the two counts: {host:?}"
        );
        assert!(
            !trial_lines.is_empty() && host.trials_run == trial_lines.len() as u64,
            "{trial}: {} `round trial:` line(s), {} trial(s) in VIGIL-STATS\n{}",
            trial_lines.len(),
            host.trials_run,
            describe(&outcome)
        );
        assert_eq!(
            host.blocks_run,
            expected_blocks(host, &trial_lines, iterations),
            "{trial}: the trials' rounds at each count, the kept count between and after: {host:?}\n{trial_lines:#?}"
        );
        // Whichever count was kept, `parallelism=1` is not revised.
        assert_eq!(
            (host.parallelism, host.parallelism_shown_by_rounds),
            (1, 0),
            "{trial}: parallelism=1 revised by the rounds: {host:?}"
        );
    }
}

/// The host parallelism in force agrees with what the boot measured and
/// the rounds showed (`round_trial::parallelism_shown`), in a boot of
/// [`LAPLACE_VCPUS`] without `parallelism=`: a trial that kept one chunk
/// more than the rounded reading, where the boot's window saw that many
/// cores at once (`round_trial::reach`), raised it to that
/// count and said so (`host: the rounds ran faster on N cores`);
/// otherwise it is the reading rounded.
fn assert_revision_agrees(outcome: &RunOutcome, host: &HostStats) {
    let lines: Vec<&str> = outcome
        .serial
        .lines()
        .filter(|line| line.contains("host: the rounds ran faster on"))
        .collect();
    let shown = host.parallelism_shown_by_rounds;
    // Thousandths of a core as whole cores (`host_parallelism::whole_cores`).
    let whole_cores = |milli: u64| ((milli + 500) / 1000).clamp(1, u64::from(LAPLACE_VCPUS));
    let rounded = whole_cores(host.measured_parallelism_milli);
    // The kernel's reach: the cores the window saw at once, rounded.
    let reach = rounded.max(whole_cores(host.parallelism_seen_milli));
    if shown == 0 {
        assert!(
            lines.is_empty() && host.parallelism == rounded,
            "no revision in VIGIL-STATS: the reading rounded in force, no line: {host:?}\n{lines:?}"
        );
        return;
    }
    assert_eq!(
        (
            lines.len(),
            host.parallelism,
            host.plan_chunks,
            host.trial_tried_chunks
        ),
        (1, shown, shown, shown),
        "the rounds showed {shown} cores: one line, that many in force, the trial's tried count kept: {host:?}\n{lines:?}"
    );
    assert!(
        shown == rounded + 1 && shown <= reach,
        "the rounds showed {shown}: not one more than the reading rounded ({rounded}) within its reach ({reach}): {host:?}"
    );
}

/// The default plan (`trial=auto`, the parallelism measured) end to end:
/// whether the trial runs depends on the host's timing, but either way the
/// row blocks computed add up to what the plan, or the trial's rounds and
/// the count it kept, say, and the result is the host's.
#[test]
fn the_default_plan_runs_the_blocks_its_plan_or_trial_says() {
    let iterations = 200;
    let params = ["workload=laplace", "size=24", "iterations=200"];
    let (outcome, _) = boot_matching_the_host(&params, "default plan");
    let (ref host, trial_lines) = host_stats_and_trial_lines(&outcome);
    assert_eq!(
        host.trials_run,
        trial_lines.len() as u64,
        "default plan: {host:?}\n{trial_lines:#?}"
    );
    assert_eq!(
        host.blocks_run,
        expected_blocks(host, &trial_lines, iterations),
        "default plan: {host:?}\n{trial_lines:#?}"
    );
    assert_revision_agrees(&outcome, host);
}

/// The row blocks a Laplace run of `iterations` computes: the first two
/// iterations on one core, one block each; then, for each trial (its
/// line), its rounds at each of its two counts, the rounds before it at
/// the count in force (the previous trial's kept count) and the rounds
/// after the last at the count it kept; without a trial, every round at
/// the plan's count.
fn expected_blocks(host: &HostStats, trial_lines: &[&str], iterations: u64) -> u64 {
    let alone = 2;
    let pooled = iterations - alone;
    let trials: Vec<TrialLine> = trial_lines
        .iter()
        .map(|line| TrialLine::parse(line))
        .collect();
    let Some(first) = trials.first() else {
        return alone + pooled * host.plan_chunks;
    };
    let (mut blocks, mut next_round, mut count) = (alone, 0, first.planned);
    for trial in &trials {
        assert_eq!(
            trial.last + 1 - trial.first,
            2 * trial.rounds_each,
            "a trial times its rounds each of its counts: {trial:?}"
        );
        blocks += (trial.first - next_round) * count;
        blocks += trial.rounds_each * (trial.planned + trial.tried);
        (next_round, count) = (trial.last + 1, trial.kept);
    }
    assert_eq!(count, host.plan_chunks, "the last trial's kept count");
    blocks + (pooled - next_round) * count
}

/// One `round trial:` line: `round trial: 1 chunk 57.0 us, 2 chunks 162.0
/// us (medians of 8 rounds each, pooled rounds 0-15): keeps 1 chunk[,
/// tries again after 64 rounds]`.
#[derive(Debug)]
struct TrialLine {
    planned: u64,
    tried: u64,
    rounds_each: u64,
    first: u64,
    last: u64,
    kept: u64,
}

impl TrialLine {
    fn parse(line: &str) -> Self {
        let number_after = |marker: &str| -> u64 {
            line.split_once(marker)
                .and_then(|(_, rest)| {
                    rest.split(|c: char| !c.is_ascii_digit())
                        .next()
                        .and_then(|n| n.parse().ok())
                })
                .unwrap_or_else(|| panic!("no number after {marker:?} in {line:?}"))
        };
        Self {
            planned: number_after("round trial: "),
            tried: number_after(" us, "),
            rounds_each: number_after("(medians of "),
            first: number_after("pooled rounds "),
            last: number_after(&format!(
                "pooled rounds {}-",
                number_after("pooled rounds ")
            )),
            kept: number_after("): keeps "),
        }
    }
}
