//! The run's lines: one per baseline model, one verdict line per mutant
//! (its prefix the verdict), and last `killed K of N`; and the counts
//! `cargo xtask test` reads back from them.

use crate::guest::test_output::Counts;
use crate::mutants::catalogue::{Model, Mutant};
use crate::mutants::verdict::{ModelRun, OUTPUT_TAIL, Outcome, Verdict, tail};

/// Prefix of a line for a baseline model that did not pass.
pub const BASELINE_FAILED: &str = "BASELINE FAILED";

/// `baseline loom_parker (all): passed in 143s`.
pub fn baseline_line(model: &Model, run: &ModelRun) -> String {
    format!(
        "baseline {}: {} in {:.0}s",
        model.describe(),
        run.status.as_str(),
        run.seconds
    )
}

/// The line for a baseline model that did not pass, with its output.
pub fn baseline_failed_line(model: &Model, run: &ModelRun) -> String {
    format!(
        "{BASELINE_FAILED}: {}: {}: {}",
        model.describe(),
        run.status.as_str(),
        indented(tail(&run.output, OUTPUT_TAIL))
    )
}

/// The verdict line (`killed  skip-recheck: 12s, failed ...`), and for a
/// mutant documented as equivalent, the reason on a second line.
pub fn verdict_lines(mutant: &Mutant, outcome: &Outcome) -> String {
    let mut lines = format!(
        "{}{}: {}",
        outcome.verdict.mark(),
        mutant.name,
        indented(&outcome.detail)
    );
    if let Some(reason) = mutant.equivalent {
        lines.push_str(&format!("\n      documented as equivalent: {reason}"));
    }
    lines
}

/// The last line: `killed K of N`.
pub fn summary_line(killed: usize, of: usize) -> String {
    format!("killed {killed} of {of}")
}

/// The last line when the baseline failed.
pub fn baseline_summary_line(of: usize) -> String {
    format!("killed 0 of {of} (the unmutated models do not pass: nothing is measured)")
}

/// `text` with every line after the first indented, so that quoted
/// output never starts a line the way a verdict does.
fn indented(text: &str) -> String {
    text.trim_end().replace('\n', "\n    ")
}

/// Counts the run's verdict lines: a kill passes, a documented equivalent
/// is skipped, anything else (a survivor, a wrong failure, a build
/// failure, a timeout, a mutation not applied, a failed baseline) fails.
pub fn count_verdicts(output: &str) -> Counts {
    let failing = [
        Verdict::Survived,
        Verdict::WrongFailure,
        Verdict::BuildFailed,
        Verdict::TimedOut,
        Verdict::NotApplied,
    ];
    let mut counts = Counts::default();
    for line in output.lines() {
        if line.starts_with(Verdict::Killed.mark()) {
            counts.passed += 1;
        } else if line.starts_with(Verdict::Equivalent.mark()) {
            counts.skipped += 1;
        } else if line.starts_with(BASELINE_FAILED)
            || failing
                .iter()
                .any(|verdict| line.starts_with(verdict.mark()))
        {
            counts.failed += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutants::catalogue::{self, PARKER};
    use crate::mutants::verdict::Status;

    #[test]
    fn only_kills_pass() {
        let output = "baseline loom_parker (all): passed in 5s\n\
                      killed  skip-recheck: 1s: lost wakeup: ...\n\
                      equiv.  drain-rmw-to-load-store: 7s\n\
                      \x20     documented as equivalent: the model's core never drains\n\
                      WRONG-FAILURE claim-by-plain-store: expected 'x'\n\
                      SURVIVED commit-by-plain-store: 3s\n\
                      TIMEOUT park-cas-to-load-store: 600s\n\
                      NOT-APPLIED waker-ignores-halting: \"x\" found 0 times\n\
                      BUILD-FAILED quiet-wake-ends-halt: 20s: error[E0425]\n\
                      killed 1 of 7\n";
        assert_eq!(count_verdicts(output), Counts::new(1, 5).with_skipped(1));
    }

    #[test]
    fn a_failed_baseline_is_a_failure() {
        let output = "BASELINE FAILED: loom_protocol: failed: ...\nkilled 0 of 25 (...)\n";
        assert_eq!(count_verdicts(output).failed, 1);
    }

    #[test]
    fn the_lines_count_as_their_verdicts() {
        let verdicts = [
            Verdict::Killed,
            Verdict::Equivalent,
            Verdict::Survived,
            Verdict::WrongFailure,
            Verdict::NotApplied,
            Verdict::BuildFailed,
            Verdict::TimedOut,
        ];
        let mut text = String::new();
        let mut expected = Counts::default();
        for (mutant, verdict) in catalogue::MUTANTS.iter().zip(verdicts) {
            let outcome = Outcome {
                verdict,
                detail: "killed  1s".into(),
            };
            text.push_str(&verdict_lines(mutant, &outcome));
            text.push('\n');
            expected += verdict.counts();
        }
        let failed = ModelRun {
            status: Status::Failed,
            seconds: 1.0,
            // Quoted output is indented: not read as a verdict.
            output: "x\nkilled  y\nSURVIVED z\n".into(),
        };
        text.push_str(&baseline_line(&PARKER, &failed));
        text.push('\n');
        text.push_str(&baseline_failed_line(&PARKER, &failed));
        text.push('\n');
        expected += Counts::new(0, 1);
        text.push_str(&summary_line(1, 7));
        assert_eq!(count_verdicts(&text), expected);
    }

    #[test]
    fn an_equivalent_mutant_shows_its_reason() {
        let mutant = catalogue::find("drain-rmw-to-load-store").unwrap();
        let outcome = Outcome {
            verdict: Verdict::Equivalent,
            detail: "7s".into(),
        };
        let lines = verdict_lines(mutant, &outcome);
        assert!(lines.starts_with(
            "equiv.  drain-rmw-to-load-store: 7s\n      documented as equivalent: the model's core"
        ));
    }
}
