//! Faults on application processors are reported with the core that took
//! them.

use qemu_tests::{boot, describe};
use xtask::Verdict;

const FAULT_TIMEOUT_S: u64 = 120;

/// Core 1 recurses until its stack runs into the guard page below it: the
/// double fault (the page fault cannot push its frame on the exhausted
/// stack) is reported by core 1, names the guard page, and fails the run.
#[test]
fn ap_stack_overflow_hits_the_guard_page_and_names_the_core() {
    let outcome = boot(2, FAULT_TIMEOUT_S, &["fault=ap-stack-overflow"]);
    assert_eq!(
        outcome.verdict,
        Verdict::Exception,
        "{}",
        describe(&outcome)
    );
    let report = outcome
        .serial
        .lines()
        .find(|line| line.contains("DOUBLE FAULT"))
        .unwrap_or_else(|| panic!("no DOUBLE FAULT line\n{}", describe(&outcome)));
    assert!(
        report.starts_with("[c1] "),
        "reported by the wrong core: {report}"
    );
    assert!(
        report.contains("guard page of"),
        "guard page not named: {report}"
    );
}

/// The same injection on a single core is a bad parameter, not a hang.
#[test]
fn ap_stack_overflow_needs_two_cores() {
    let outcome = boot(1, FAULT_TIMEOUT_S, &["fault=ap-stack-overflow"]);
    assert_eq!(outcome.verdict, Verdict::BadParam, "{}", describe(&outcome));
    assert!(
        outcome.serial.contains("needs at least 2 cores"),
        "{}",
        describe(&outcome)
    );
}
