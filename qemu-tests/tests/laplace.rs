//! The Laplace workload computes what the host computes, bit for bit.

use qemu_tests::{boot, describe};
use vigil_proto::stats_line::HostStats;
use xtask::guest::laplace_check::ChecksumCheck;
use xtask::guest::vigil_stats::VigilStats;
use xtask::{RunOutcome, Verdict};

/// Debug kernel, 4 vCPUs on 2 host cores: seconds, with room to spare.
const LAPLACE_TIMEOUT_S: u64 = 300;

/// Boots Laplace with `params` at 4 vCPUs and checks that it succeeded
/// with one result line, the host's bit for bit (`what` names the boot in
/// a failure): the outcome and that line's check.
fn boot_matching_the_host(params: &[&str], what: &str) -> (RunOutcome, ChecksumCheck) {
    let outcome = boot(4, LAPLACE_TIMEOUT_S, params);
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

/// The boot's `VIGIL-STATS` host half and its `round trial:` line, if any.
fn host_stats_and_trial_line(outcome: &RunOutcome) -> (HostStats, Option<&str>) {
    let stats = VigilStats::find_in(&outcome.serial)
        .expect("a VIGIL-STATS line")
        .expect("a VIGIL-STATS line that parses");
    let trial_line = outcome
        .serial
        .lines()
        .find(|line| line.contains("round trial:"));
    (stats.0.host, trial_line)
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

/// The round trial end to end on the default stealing pool: with
/// `trial=always` and `parallelism=1` (the plan runs 1 chunk whatever the
/// host, and `auto` would reach no further, so only `always` tries 2),
/// the first rounds alternate 1 chunk and 2, the result is still the
/// host's bit for bit, and VIGIL-STATS says what was timed and which
/// count the rest of the rounds ran; with `trial=off`, none. The row
/// blocks computed (`blocks_run`) add up to the trial's rounds at each
/// count and the rest at the kept one: the trial's rounds ran the counts
/// it timed (the checksum alone cannot say so: it does not depend on the
/// split). Which count is kept depends on the host's timing; that one of
/// the two is, and that the workers and the blocks match it, does not.
#[test]
fn the_round_trial_runs_end_to_end_and_keeps_one_of_its_two_counts() {
    for trial in ["trial=always", "trial=off"] {
        let params = [
            "workload=laplace",
            "size=24",
            "iterations=200",
            "parallelism=1",
            trial,
        ];
        let (outcome, check) = boot_matching_the_host(&params, trial);
        let (ref host, trial_line) = host_stats_and_trial_line(&outcome);
        assert_eq!(host.plan_pool, "steal", "{trial}: {}", describe(&outcome));
        assert_eq!(
            check.guest.workers,
            host.plan_chunks,
            "{trial}: the rounds after the trial run the count it kept\n{}",
            describe(&outcome)
        );
        let iterations = 200;
        if trial == "trial=off" {
            assert_eq!(
                (
                    host.trial_planned_chunks,
                    host.trial_tried_chunks,
                    trial_line
                ),
                (0, 0, None),
                "trial=off: {}",
                describe(&outcome)
            );
            assert_eq!(
                host.blocks_run,
                expected_blocks(host, None, iterations),
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
        let Some(trial_line) = trial_line else {
            panic!("{trial}: no `round trial:` line\n{}", describe(&outcome));
        };
        assert_eq!(
            host.blocks_run,
            expected_blocks(host, Some(trial_line), iterations),
            "{trial}: the trial's rounds at each count, then the kept count: {host:?}\n{trial_line}"
        );
    }
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
    let (ref host, trial_line) = host_stats_and_trial_line(&outcome);
    assert_eq!(
        host.blocks_run,
        expected_blocks(host, trial_line, iterations),
        "default plan: {host:?}\n{trial_line:?}"
    );
}

/// The row blocks a Laplace run of `iterations` computes: the first two
/// iterations on one core, one block each; then, if a trial ran (its
/// line), its rounds at each of its two counts and the rest at the count
/// it kept, else every round at the plan's count.
fn expected_blocks(host: &HostStats, trial_line: Option<&str>, iterations: u64) -> u64 {
    let alone = 2;
    let Some(trial_line) = trial_line else {
        return alone + (iterations - alone) * host.plan_chunks;
    };
    let rounds_each = rounds_each(trial_line);
    alone
        + rounds_each * (host.trial_planned_chunks + host.trial_tried_chunks)
        + (iterations - alone - 2 * rounds_each) * host.plan_chunks
}

/// The trial's rounds at each count, from its line: `round trial: ...
/// (medians of 8 rounds each): keeps ...`.
fn rounds_each(trial_line: &str) -> u64 {
    trial_line
        .split_once("(medians of ")
        .and_then(|(_, rest)| rest.split_once(' '))
        .and_then(|(count, _)| count.parse().ok())
        .unwrap_or_else(|| panic!("no round count in {trial_line:?}"))
}
