//! What one model run of a mutant means: killed only if loom failed with
//! an assertion named for the mutant; a build error, a timeout, a deadlock
//! or any other panic is not a kill.

use crate::guest::test_output::Counts;
use crate::mutants::catalogue::Mutant;

/// How much of a failed run's output a verdict line quotes (bytes).
pub const OUTPUT_TAIL: usize = 1500;
/// How much output a kill or wrong failure quotes when no panic was found.
pub const SHORT_TAIL: usize = 500;

/// How a build-and-run of one loom model ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every test passed.
    Passed,
    /// The test binary failed (a panic, a signal, a non-zero exit).
    Failed,
    /// Cargo could not build the test binary.
    BuildFailed,
    /// The build or the run outlived the timeout and was killed.
    TimedOut,
}

impl Status {
    /// How baseline lines name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::BuildFailed => "build-failed",
            Self::TimedOut => "timeout",
        }
    }
}

/// One build-and-run of a loom model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRun {
    /// How it ended.
    pub status: Status,
    /// Wall time, build and run.
    pub seconds: f64,
    /// What the build (if it failed) or the test binary printed.
    pub output: String,
}

/// A mutant's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Loom failed with an assertion named for the mutant.
    Killed,
    /// Survived, and documented as equivalent.
    Equivalent,
    /// Every model passed.
    Survived,
    /// Loom failed, but not with an assertion named for the mutant.
    WrongFailure,
    /// The mutant's find-text is not in its file exactly once.
    NotApplied,
    /// The mutated crate does not build.
    BuildFailed,
    /// The build or the model outlived the timeout.
    TimedOut,
}

impl Verdict {
    /// The verdict line's prefix (what [`crate::mutants::report::count_verdicts`]
    /// reads back).
    pub fn mark(self) -> &'static str {
        match self {
            Self::Killed => "killed  ",
            Self::Equivalent => "equiv.  ",
            Self::Survived => "SURVIVED ",
            Self::WrongFailure => "WRONG-FAILURE ",
            Self::NotApplied => "NOT-APPLIED ",
            Self::BuildFailed => "BUILD-FAILED ",
            Self::TimedOut => "TIMEOUT ",
        }
    }

    /// A kill passes, a documented equivalent is skipped, anything else
    /// fails.
    pub fn counts(self) -> Counts {
        match self {
            Self::Killed => Counts::new(1, 0),
            Self::Equivalent => Counts::default().with_skipped(1),
            _ => Counts::new(0, 1),
        }
    }
}

/// A verdict and what the line says after the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The verdict.
    pub verdict: Verdict,
    /// Time, failed tests, panic messages or output.
    pub detail: String,
}

/// The verdict of a mutant whose find-text was found `found` times.
pub fn not_applied(mutant: &Mutant, found: usize) -> Outcome {
    Outcome {
        verdict: Verdict::NotApplied,
        detail: format!("{:?} found {found} times in {}", mutant.find, mutant.file),
    }
}

/// The verdict of `mutant` from its model run.
pub fn classify(mutant: &Mutant, run: &ModelRun) -> Outcome {
    let seconds = format!("{:.0}s", run.seconds);
    let (verdict, detail) = match run.status {
        Status::Passed if mutant.equivalent.is_some() => (Verdict::Equivalent, seconds),
        Status::Passed => (Verdict::Survived, seconds),
        Status::BuildFailed => (
            Verdict::BuildFailed,
            format!("{seconds}: {}", tail(&run.output, OUTPUT_TAIL)),
        ),
        Status::TimedOut => (
            Verdict::TimedOut,
            format!("{seconds}: {}", tail(&run.output, OUTPUT_TAIL)),
        ),
        Status::Failed => {
            let panics = panic_messages(&run.output);
            let failed = failed_tests(&run.output);
            let failed = if failed.is_empty() {
                "?".to_string()
            } else {
                failed.join(", ")
            };
            let shown = if panics.is_empty() {
                tail(&run.output, SHORT_TAIL).to_string()
            } else {
                panics.join("; ")
            };
            let detail = format!("{seconds}, failed {failed}: {shown}");
            let killed = panics.iter().any(|message| {
                mutant
                    .killed_by
                    .iter()
                    .any(|wanted| message.contains(wanted))
            });
            if killed {
                (Verdict::Killed, detail)
            } else {
                (
                    Verdict::WrongFailure,
                    format!("expected {:?}; {detail}", mutant.killed_by),
                )
            }
        }
    };
    Outcome { verdict, detail }
}

/// The panic messages in a test binary's output: the line after each
/// `panicked at <file>:<line>:<column>:`, sorted, each once.
pub fn panic_messages(output: &str) -> Vec<String> {
    let mut messages: Vec<String> = output
        .lines()
        .zip(output.lines().skip(1))
        .filter(|(line, _)| line.contains("panicked at "))
        .map(|(_, message)| message.to_string())
        .collect();
    messages.sort();
    messages.dedup();
    messages
}

/// The tests a libtest run lists as failed: the indented names in each
/// `failures:` block that is only names (the other `failures:` block
/// holds each failure's output), sorted, each once.
pub fn failed_tests(output: &str) -> Vec<String> {
    let lines: Vec<&str> = output.lines().collect();
    let mut names = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if *line != "failures:" {
            continue;
        }
        let block: Vec<&str> = lines[at + 1..]
            .iter()
            .take_while(|line| is_test_name_line(line))
            .copied()
            .collect();
        names.extend(block.iter().map(|line| line.trim().to_string()));
    }
    names.sort();
    names.dedup();
    names
}

/// `    name`: four spaces and one word.
fn is_test_name_line(line: &str) -> bool {
    line.strip_prefix("    ")
        .is_some_and(|name| !name.is_empty() && !name.contains(char::is_whitespace))
}

/// The last `bytes` bytes of `text` (fewer, to start on a character).
pub fn tail(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutants::catalogue::{self, DOUBLE_IPI, LOST_WAKEUP};

    /// What a failing loom test binary prints under `--quiet`.
    fn failing_output(message: &str) -> String {
        format!(
            "\nrunning 2 tests\n.F\nfailures:\n\n---- state_machine_two_wakers stdout ----\n\
             \nthread 'state_machine_two_wakers' panicked at tests/model/run.rs:210:9:\n\
             {message}\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\
             \n\nfailures:\n    state_machine_two_wakers\n\n\
             test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 3.02s\n\n"
        )
    }

    fn failed(message: &str) -> ModelRun {
        ModelRun {
            status: Status::Failed,
            seconds: 12.4,
            output: failing_output(message),
        }
    }

    fn mutant(killed_by: &'static [&'static str]) -> Mutant {
        Mutant {
            name: "m",
            file: "src/inbox.rs",
            find: "x",
            replace: "y",
            killed_by,
            ..Mutant::BASE
        }
    }

    #[test]
    fn the_named_assertion_kills() {
        let outcome = classify(
            &mutant(&[LOST_WAKEUP]),
            &failed("lost wakeup: core 0 halted with 1 item(s)"),
        );
        assert_eq!(outcome.verdict, Verdict::Killed);
        assert_eq!(
            outcome.detail,
            "12s, failed state_machine_two_wakers: lost wakeup: core 0 halted with 1 item(s)"
        );
    }

    #[test]
    fn any_of_the_named_assertions_kills() {
        let outcome = classify(&mutant(DOUBLE_IPI), &failed("IPI sent to a running core"));
        assert_eq!(outcome.verdict, Verdict::Killed);
    }

    #[test]
    fn another_panic_is_a_wrong_failure() {
        for message in [
            "two IPIs for one halt",
            "deadlock; threads = [(0, Blocked)]",
            "attempt to subtract with overflow",
        ] {
            let outcome = classify(&mutant(&[LOST_WAKEUP]), &failed(message));
            assert_eq!(outcome.verdict, Verdict::WrongFailure, "{message}");
            assert!(
                outcome
                    .detail
                    .starts_with("expected [\"lost wakeup\"]; 12s"),
                "{}",
                outcome.detail
            );
        }
    }

    #[test]
    fn a_failure_without_a_panic_is_a_wrong_failure() {
        let run = ModelRun {
            status: Status::Failed,
            seconds: 1.0,
            output: "lost wakeup, but printed, not panicked\n".into(),
        };
        let outcome = classify(&mutant(&[LOST_WAKEUP]), &run);
        assert_eq!(outcome.verdict, Verdict::WrongFailure);
        assert!(
            outcome
                .detail
                .contains("failed ?: lost wakeup, but printed")
        );
    }

    #[test]
    fn builds_and_timeouts_are_not_kills_even_with_the_message() {
        for (status, verdict) in [
            (Status::BuildFailed, Verdict::BuildFailed),
            (Status::TimedOut, Verdict::TimedOut),
        ] {
            let run = ModelRun {
                status,
                seconds: 600.0,
                output: failing_output("lost wakeup"),
            };
            assert_eq!(classify(&mutant(&[LOST_WAKEUP]), &run).verdict, verdict);
        }
    }

    #[test]
    fn a_survivor_fails_unless_documented_equivalent() {
        let run = ModelRun {
            status: Status::Passed,
            seconds: 7.0,
            output: String::new(),
        };
        assert_eq!(
            classify(&mutant(&[LOST_WAKEUP]), &run).verdict,
            Verdict::Survived
        );
        let equivalent = catalogue::find("drain-rmw-to-load-store").unwrap();
        assert_eq!(classify(equivalent, &run).verdict, Verdict::Equivalent);
        assert_eq!(classify(equivalent, &run).detail, "7s");
    }

    #[test]
    fn the_failed_tests_are_read_from_the_name_block_only() {
        let output = format!(
            "{}{}",
            failing_output("lost wakeup"),
            "failures:\n    always_ipi_timer_wakes\n    state_machine_two_wakers\n"
        );
        assert_eq!(
            failed_tests(&output),
            ["always_ipi_timer_wakes", "state_machine_two_wakers"]
        );
    }

    #[test]
    fn panic_messages_are_each_listed_once() {
        let output = format!("{}{}", failing_output("b"), failing_output("a"));
        let twice = format!("{output}{}", failing_output("a"));
        assert_eq!(panic_messages(&twice), ["a", "b"]);
    }

    #[test]
    fn the_tail_starts_on_a_character() {
        assert_eq!(tail("abc", 10), "abc");
        assert_eq!(tail("abc", 2), "bc");
        assert_eq!(tail("aé", 1), "");
        assert_eq!(tail("aéb", 2), "b");
    }
}
