//! Parsing test results out of text: cargo's `test result:` lines and the
//! kernel's serial output in test mode (`[cN] test NAME ... ok|FAILED|
//! skipped (why)`, then `[cN] P passed, F failed[, S skipped]`).

use vigil_proto::test_line::{SuiteSummary, TestLine, TestOutcome};

/// Passed/failed/skipped counts, added up across steps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed (or steps that broke without naming a test).
    pub failed: u64,
    /// Tests that did not run (cargo's `ignored`, the kernel's `skipped`).
    pub skipped: u64,
}

impl Counts {
    /// Counts with these values and nothing skipped.
    pub const fn new(passed: u64, failed: u64) -> Self {
        Self {
            passed,
            failed,
            skipped: 0,
        }
    }

    /// The same counts with `skipped` set.
    pub const fn with_skipped(self, skipped: u64) -> Self {
        Self { skipped, ..self }
    }
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, other: Self) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
    }
}

/// Parses one of cargo's (libtest's) closing lines,
/// `test result: ok. 12 passed; 0 failed; 0 ignored; ...`.
pub fn parse_cargo_result_line(line: &str) -> Option<Counts> {
    let rest = line.trim().strip_prefix("test result: ")?;
    let rest = rest
        .strip_prefix("ok.")
        .or_else(|| rest.strip_prefix("FAILED."))?;
    let mut passed = None;
    let mut failed = None;
    let mut ignored = 0;
    for part in rest.split(';') {
        let mut words = part.split_whitespace();
        let (Some(number), Some(label)) = (words.next(), words.next()) else {
            continue;
        };
        match label {
            "passed" => passed = number.parse().ok(),
            "failed" => failed = number.parse().ok(),
            "ignored" => ignored = number.parse().unwrap_or(0),
            _ => {}
        }
    }
    Some(Counts::new(passed?, failed?).with_skipped(ignored))
}

/// Adds up every cargo `test result:` line in `output`.
pub fn sum_cargo_results(output: &str) -> Option<Counts> {
    let mut total: Option<Counts> = None;
    for counts in output.lines().filter_map(parse_cargo_result_line) {
        *total.get_or_insert_with(Counts::default) += counts;
    }
    total
}

pub use vigil_proto::serial_line::strip_core_prefix;

/// How one in-kernel test case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseResult {
    /// `... ok`
    Ok,
    /// `... FAILED`
    Failed,
    /// `... skipped` (optionally followed by the reason)
    Skipped,
}

/// Outcome of one in-kernel test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelTestCase {
    /// The test's name as the kernel printed it.
    pub name: String,
    /// How it ended.
    pub result: CaseResult,
}

/// Parses a result line of the in-kernel suite (after the core prefix), in
/// the one format `vigil-proto` defines: `test NAME ... ok`, `... FAILED`
/// (bare or with `: why`), `... skipped` (bare or with ` (why)`).
pub fn parse_kernel_test_line(message: &str) -> Option<KernelTestCase> {
    let line = TestLine::parse(message)?;
    let result = match line.outcome {
        TestOutcome::Ok => CaseResult::Ok,
        TestOutcome::Failed(_) => CaseResult::Failed,
        TestOutcome::Skipped(_) => CaseResult::Skipped,
    };
    Some(KernelTestCase {
        name: line.name.to_string(),
        result,
    })
}

/// Parses the kernel's closing line `P passed, F failed` with an optional
/// `, S skipped` (after the core prefix; nothing else may be on the line).
pub fn parse_summary_line(message: &str) -> Option<Counts> {
    let summary = SuiteSummary::parse(message)?;
    Some(Counts::new(summary.passed, summary.failed).with_skipped(summary.skipped))
}

/// What the kernel's serial output says about its test suite.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelSuiteReport {
    /// Every `test ... ok/FAILED` line, in order.
    pub cases: Vec<KernelTestCase>,
    /// The closing `P passed, F failed` line, if the kernel got that far.
    pub summary: Option<Counts>,
}

impl KernelSuiteReport {
    /// Collects test lines and the summary from a whole serial log.
    pub fn parse(serial: &str) -> Self {
        let mut report = Self::default();
        for line in serial.lines() {
            let Some((_core, message)) = strip_core_prefix(line) else {
                continue;
            };
            if let Some(case) = parse_kernel_test_line(message) {
                report.cases.push(case);
            } else if let Some(counts) = parse_summary_line(message) {
                report.summary = Some(counts);
            }
        }
        report
    }

    /// Counts from the individual test lines.
    pub fn case_counts(&self) -> Counts {
        let count = |result| {
            self.cases
                .iter()
                .filter(|case| case.result == result)
                .count() as u64
        };
        Counts::new(count(CaseResult::Ok), count(CaseResult::Failed))
            .with_skipped(count(CaseResult::Skipped))
    }

    /// Names of the tests that printed `FAILED`.
    pub fn failed_names(&self) -> Vec<&str> {
        self.cases
            .iter()
            .filter(|case| case.result == CaseResult::Failed)
            .map(|case| case.name.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_result_lines_are_parsed() {
        assert_eq!(
            parse_cargo_result_line(
                "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s"
            ),
            Some(Counts::new(12, 0).with_skipped(1))
        );
        assert_eq!(
            parse_cargo_result_line(
                "test result: FAILED. 3 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.20s"
            ),
            Some(Counts::new(3, 2))
        );
        assert_eq!(parse_cargo_result_line("test foo ... ok"), None);
        assert_eq!(parse_cargo_result_line("test result: weird"), None);
    }

    #[test]
    fn cargo_results_are_summed_over_binaries() {
        let output = "running 2 tests\ntest a ... ok\ntest b ... ok\n\n\
            test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
            running 0 tests\n\
            test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
            test result: FAILED. 4 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        assert_eq!(sum_cargo_results(output), Some(Counts::new(6, 1)));
        assert_eq!(sum_cargo_results("error: could not compile"), None);
    }

    #[test]
    fn core_prefix_is_split_off() {
        assert_eq!(
            strip_core_prefix("[c0] Vigil booting"),
            Some((0, "Vigil booting"))
        );
        assert_eq!(strip_core_prefix("[c31] x"), Some((31, "x")));
        assert_eq!(strip_core_prefix("[cx] x"), None);
        assert_eq!(strip_core_prefix("BdsDxe: loading"), None);
    }

    fn case(name: &str, result: CaseResult) -> Option<KernelTestCase> {
        Some(KernelTestCase {
            name: name.into(),
            result,
        })
    }

    #[test]
    fn kernel_test_lines_are_parsed() {
        assert_eq!(
            parse_kernel_test_line("test wake::claim ... ok"),
            case("wake::claim", CaseResult::Ok)
        );
        assert_eq!(
            parse_kernel_test_line("test sched::fork join ... FAILED\r"),
            case("sched::fork join", CaseResult::Failed)
        );
        // The kernel's runner gives the reason after a colon, the panic
        // path's exit code: both are failures of that test, by name.
        assert_eq!(
            parse_kernel_test_line(
                "test smp::all_pairs_ipi ... FAILED: core 1: kernel/src/ktest/smp_tests.rs:120: IPI 1->0 never acknowledged"
            ),
            case("smp::all_pairs_ipi", CaseResult::Failed)
        );
        assert_eq!(
            parse_kernel_test_line("test sched::storm ... FAILED: panic"),
            case("sched::storm", CaseResult::Failed)
        );
        assert_eq!(
            parse_kernel_test_line(
                "test smp::all_pairs_ipi ... skipped (needs at least 2 cores, have 1)"
            ),
            case("smp::all_pairs_ipi", CaseResult::Skipped)
        );
        assert_eq!(parse_kernel_test_line("test a ... skippedx"), None);
        assert_eq!(parse_kernel_test_line("test wake::claim ... "), None);
        assert_eq!(parse_kernel_test_line("testing ... ok"), None);
    }

    #[test]
    fn summary_line_must_be_alone() {
        assert_eq!(
            parse_summary_line("12 passed, 0 failed"),
            Some(Counts::new(12, 0))
        );
        assert_eq!(
            parse_summary_line("3 passed, 1 failed\r"),
            Some(Counts::new(3, 1))
        );
        assert_eq!(parse_summary_line("total: 3 passed, 1 failed"), None);
        assert_eq!(parse_summary_line("3 passed; 1 failed"), None);
        assert_eq!(parse_summary_line("-3 passed, 1 failed"), None);
        assert_eq!(
            parse_summary_line("15 passed, 0 failed, 3 skipped"),
            Some(Counts::new(15, 0).with_skipped(3))
        );
        assert_eq!(
            parse_summary_line("15 passed, 0 failed, 3 skipped, 1 other"),
            None
        );
        assert_eq!(
            parse_summary_line("15 passed, 0 failed, three skipped"),
            None
        );
    }

    #[test]
    fn kernel_suite_report_collects_cases_and_summary() {
        let serial = "[c0] Vigil 0.1.0 booting\n\
            [c0] test wake::a ... ok\n\
            [c1] test wake::b ... FAILED\n\
            [c1] assertion failed\n\
            [c0] test sched::c ... ok\n\
            [c0] test smp::d ... skipped (needs at least 2 cores, have 1)\n\
            [c0] 2 passed, 1 failed, 1 skipped\n";
        let report = KernelSuiteReport::parse(serial);
        assert_eq!(report.cases.len(), 4);
        assert_eq!(report.case_counts(), Counts::new(2, 1).with_skipped(1));
        assert_eq!(report.summary, Some(Counts::new(2, 1).with_skipped(1)));
        assert_eq!(report.failed_names(), vec!["wake::b"]);
    }

    #[test]
    fn kernel_suite_without_summary_has_none() {
        let report = KernelSuiteReport::parse("[c0] test a ... ok\n[c0] PANIC at x.rs:1: boom\n");
        assert_eq!(report.summary, None);
        assert_eq!(report.case_counts(), Counts::new(1, 0));
    }
}
