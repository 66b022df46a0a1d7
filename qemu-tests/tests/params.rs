//! Boot parameters reach the kernel through fw_cfg, and bad ones are
//! rejected by the kernel with its own message.

use qemu_tests::{boot, describe};
use xtask::Verdict;

const PARAM_TIMEOUT_S: u64 = 120;

#[test]
fn unknown_key_is_a_bad_boot_parameter() {
    let outcome = boot(1, PARAM_TIMEOUT_S, &["bogus=1"]);
    assert_eq!(outcome.verdict, Verdict::BadParam, "{}", describe(&outcome));
    assert_eq!(outcome.exit_status, Some(39), "{}", describe(&outcome));
    assert!(
        outcome.serial.contains("[c0] bad boot parameter"),
        "{}",
        describe(&outcome)
    );
}

#[test]
fn bad_value_of_a_known_key_is_a_bad_boot_parameter() {
    let outcome = boot(1, PARAM_TIMEOUT_S, &["fault=sometimes"]);
    assert_eq!(outcome.verdict, Verdict::BadParam, "{}", describe(&outcome));
    assert!(
        outcome.serial.contains("bad boot parameter"),
        "{}",
        describe(&outcome)
    );
}

/// A pinned-pool grid with fewer interior rows than cores is refused with
/// the size that fits; the stealing pool runs the same grid.
#[test]
fn a_grid_too_small_for_the_pinned_pool_says_what_fits() {
    let outcome = boot(
        8,
        PARAM_TIMEOUT_S,
        &["workload=laplace", "size=6", "iterations=5", "pool=pinned"],
    );
    assert_eq!(outcome.verdict, Verdict::BadParam, "{}", describe(&outcome));
    assert!(
        outcome.serial.contains(
            "bad boot parameter: workload=laplace size=6 has 4 interior rows for 8 cores, and pool=pinned gives every core at least one row: use size=10 or more (or pool=steal)"
        ),
        "{}",
        describe(&outcome)
    );
    let outcome = boot(
        8,
        PARAM_TIMEOUT_S,
        &["workload=laplace", "size=6", "iterations=5", "pool=steal"],
    );
    assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
    assert!(
        !outcome.checksum_checks.is_empty()
            && outcome.checksum_checks.iter().all(|check| check.matches()),
        "{}",
        describe(&outcome)
    );
}

/// `trial=always` where no round trial can run is refused, with why,
/// instead of doing nothing.
#[test]
fn trial_always_where_no_trial_can_run_is_a_bad_boot_parameter() {
    for (params, why) in [
        (
            &["workload=laplace", "trial=always", "chunks=2"][..],
            "`chunks=` fixes the chunks",
        ),
        (
            &["workload=laplace", "trial=always", "pool=pinned"][..],
            "`pool=pinned` has no stealable chunks",
        ),
        (
            &["workload=ping-pong", "trial=always"][..],
            "only the laplace workload runs a round trial",
        ),
    ] {
        let outcome = boot(2, PARAM_TIMEOUT_S, params);
        assert_eq!(outcome.verdict, Verdict::BadParam, "{}", describe(&outcome));
        let expected = format!("bad boot parameter: `trial=always` has no effect: {why}");
        assert!(
            outcome.serial.contains(&expected),
            "{params:?}: {}",
            describe(&outcome)
        );
    }
}
