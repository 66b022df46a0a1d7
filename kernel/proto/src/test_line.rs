//! The in-kernel test suite's lines (after the `[cN] ` core prefix):
//!
//! ```text
//! test sched::fork_join ... ok
//! test smp::all_pairs_ipi ... FAILED: core 1: IPI 1->0 never acknowledged
//! test sched::storm ... FAILED
//! test x2apic::mode ... skipped (xAPIC machine)
//! 41 passed, 1 failed, 2 skipped
//! ```

use core::fmt;

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestOutcome<'a> {
    /// `ok`
    Ok,
    /// `FAILED`, with the reason when there is one (`FAILED: why`).
    Failed(Option<&'a str>),
    /// `skipped`, with the reason when there is one (`skipped (why)`).
    Skipped(Option<&'a str>),
}

/// One test's result line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestLine<'a> {
    /// The test's name.
    pub name: &'a str,
    /// How it ended.
    pub outcome: TestOutcome<'a>,
}

const PREFIX: &str = "test ";
const SEPARATOR: &str = " ... ";

impl fmt::Display for TestLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}{SEPARATOR}", self.name)?;
        match self.outcome {
            TestOutcome::Ok => f.write_str("ok"),
            TestOutcome::Failed(None) => f.write_str("FAILED"),
            TestOutcome::Failed(Some(why)) => write!(f, "FAILED: {why}"),
            TestOutcome::Skipped(None) => f.write_str("skipped"),
            TestOutcome::Skipped(Some(why)) => write!(f, "skipped ({why})"),
        }
    }
}

impl<'a> TestLine<'a> {
    /// Parses a line this type formats (trailing whitespace, a serial
    /// port's `\r`, ignored); anything else is `None`.
    #[must_use]
    pub fn parse(message: &'a str) -> Option<Self> {
        let rest = message.trim_end().strip_prefix(PREFIX)?;
        let (name, result) = rest.split_once(SEPARATOR)?;
        let outcome = match result {
            "ok" => TestOutcome::Ok,
            "FAILED" => TestOutcome::Failed(None),
            "skipped" => TestOutcome::Skipped(None),
            other => {
                if let Some(why) = other.strip_prefix("FAILED: ") {
                    TestOutcome::Failed(Some(why))
                } else {
                    let why = other.strip_prefix("skipped (")?.strip_suffix(')')?;
                    TestOutcome::Skipped(Some(why))
                }
            }
        };
        Some(Self { name, outcome })
    }
}

/// The suite's closing line: `P passed, F failed, S skipped`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SuiteSummary {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed.
    pub failed: u64,
    /// Tests that did not run.
    pub skipped: u64,
}

impl fmt::Display for SuiteSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

impl SuiteSummary {
    /// Parses the closing line (`, S skipped` optional); nothing else may be
    /// on the line.
    #[must_use]
    pub fn parse(message: &str) -> Option<Self> {
        let mut parts = message.trim_end().split(", ");
        let passed = count_of(parts.next()?, " passed")?;
        let failed = count_of(parts.next()?, " failed")?;
        let skipped = match parts.next() {
            Some(part) => count_of(part, " skipped")?,
            None => 0,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(Self {
            passed,
            failed,
            skipped,
        })
    }
}

/// `"12 passed"` with label `" passed"` gives 12; anything else (a sign,
/// a space, no digits) `None`.
fn count_of(part: &str, label: &str) -> Option<u64> {
    let digits = part.strip_suffix(label)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{SuiteSummary, TestLine, TestOutcome};
    use std::string::ToString;

    #[test]
    fn every_test_line_kind_round_trips() {
        for outcome in [
            TestOutcome::Ok,
            TestOutcome::Failed(None),
            TestOutcome::Failed(Some(
                "core 1: kernel/src/ktest/smp_tests.rs:120: IPI 1->0 never acknowledged",
            )),
            TestOutcome::Failed(Some("panic")),
            TestOutcome::Skipped(None),
            TestOutcome::Skipped(Some("needs 2 cores")),
        ] {
            let line = TestLine {
                name: "sched::fork join",
                outcome,
            };
            let text = line.to_string();
            assert_eq!(TestLine::parse(&text), Some(line), "{text}");
            // As it arrives from a serial port.
            assert_eq!(
                TestLine::parse(&(text.clone() + "\r")),
                Some(line),
                "{text}"
            );
        }
    }

    #[test]
    fn a_failed_test_with_a_reason_is_a_failed_test_by_name() {
        let line =
            TestLine::parse("test smp::all_pairs_ipi ... FAILED: IPI 1->0 never acknowledged")
                .expect("a result line");
        assert_eq!(line.name, "smp::all_pairs_ipi");
        assert_eq!(
            line.outcome,
            TestOutcome::Failed(Some("IPI 1->0 never acknowledged"))
        );
    }

    #[test]
    fn other_lines_are_not_test_lines() {
        for text in [
            "test sched::x ... maybe",
            "test sched::x",
            "testing ... ok",
            "test x ... skipped (unclosed",
        ] {
            assert_eq!(TestLine::parse(text), None, "{text}");
        }
    }

    #[test]
    fn the_summary_round_trips_and_takes_the_short_form() {
        let summary = SuiteSummary {
            passed: 41,
            failed: 1,
            skipped: 2,
        };
        assert_eq!(SuiteSummary::parse(&summary.to_string()), Some(summary));
        assert_eq!(
            SuiteSummary::parse("3 passed, 0 failed"),
            Some(SuiteSummary {
                passed: 3,
                failed: 0,
                skipped: 0
            })
        );
        assert_eq!(
            SuiteSummary::parse("3 passed, 0 failed, 1 skipped, 2 more"),
            None
        );
        assert_eq!(SuiteSummary::parse("3 passed"), None);
    }
}
