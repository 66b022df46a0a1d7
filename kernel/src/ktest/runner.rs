//! Runs registered test cases one after another, printing
//! `test <name> ... ok|FAILED` for each and a closing `N passed, M failed`.
//! A panic or CPU exception inside a test is reported with the test's name
//! (see `exit::fail`) and ends the run as a failure.

use super::registry;
use crate::println;
use alloc::string::String;
use core::sync::atomic::{AtomicUsize, Ordering};
use vigil_proto::test_line::{SuiteSummary, TestLine, TestOutcome};

/// Why a test did not pass.
#[derive(Debug, Clone)]
pub enum NotPassed {
    /// The check failed: what went wrong.
    Failed(String),
    /// The test cannot run in this configuration (e.g. needs 2 cores): why.
    Skipped(String),
}

impl From<String> for NotPassed {
    fn from(why: String) -> Self {
        Self::Failed(why)
    }
}

impl From<&str> for NotPassed {
    fn from(why: &str) -> Self {
        Self::Failed(why.into())
    }
}

/// Jobs run on other cores report plain strings.
impl From<NotPassed> for String {
    fn from(not_passed: NotPassed) -> Self {
        match not_passed {
            NotPassed::Failed(why) => why,
            NotPassed::Skipped(why) => alloc::format!("skipped: {why}"),
        }
    }
}

/// A test's verdict.
pub type TestResult = Result<(), NotPassed>;

/// One registered test.
#[derive(Debug, Clone, Copy)]
pub struct TestCase {
    /// Unique name, `area::what`.
    pub name: &'static str,
    /// The test body.
    pub run: fn() -> TestResult,
}

/// What a suite run counted.
#[derive(Debug, Clone, Copy)]
pub struct SuiteOutcome {
    /// Tests that returned `Ok`.
    pub passed: usize,
    /// Tests that failed.
    pub failed: usize,
    /// Tests that could not run in this configuration.
    pub skipped: usize,
}

/// Index + 1 into the registry of the running test (0: none). Relaxed: read
/// only by the core running the test, or on a fatal path where it is advisory.
static CURRENT: AtomicUsize = AtomicUsize::new(0);

/// Name of the test currently running, if any.
pub fn current_test() -> Option<&'static str> {
    let index = CURRENT.load(Ordering::Relaxed);
    index
        .checked_sub(1)
        .and_then(|i| registry::ALL.get(i))
        .map(|t| t.name)
}

/// Runs every test whose name contains `filter` (all if `None`).
pub fn run_suite(filter: Option<&str>) -> SuiteOutcome {
    crate::exit::set_failure_context(current_test);
    let selected = registry::ALL
        .iter()
        .enumerate()
        .filter(|(_, t)| filter.is_none_or(|f| t.name.contains(f)));
    let mut outcome = SuiteOutcome {
        passed: 0,
        failed: 0,
        skipped: 0,
    };
    for (index, test) in selected {
        CURRENT.store(index + 1, Ordering::Relaxed);
        match (test.run)() {
            Ok(()) => {
                println!("{}", line(test.name, TestOutcome::Ok));
                outcome.passed += 1;
            }
            Err(NotPassed::Failed(why)) => {
                println!("{}", line(test.name, TestOutcome::Failed(Some(&why))));
                outcome.failed += 1;
            }
            Err(NotPassed::Skipped(why)) => {
                println!("{}", line(test.name, TestOutcome::Skipped(Some(&why))));
                outcome.skipped += 1;
            }
        }
        CURRENT.store(0, Ordering::Relaxed);
    }
    println!(
        "{}",
        SuiteSummary {
            passed: outcome.passed as u64,
            failed: outcome.failed as u64,
            skipped: outcome.skipped as u64,
        }
    );
    outcome
}

/// A result line, in the one format the host parses (`vigil-proto`).
fn line<'a>(name: &'a str, outcome: TestOutcome<'a>) -> TestLine<'a> {
    TestLine { name, outcome }
}

/// Fails the test with a message naming the source line unless `cond` holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(::core::convert::From::from($crate::ktest::runner::NotPassed::Failed(alloc::format!(
                "{}:{}: {}",
                file!(),
                line!(),
                format_args!($($fmt)+)
            ))));
        }
    };
}

/// Skips the test (counted apart from passes) unless `cond` holds.
#[macro_export]
macro_rules! require {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::ktest::runner::NotPassed::Skipped(alloc::format!($($fmt)+)));
        }
    };
}
