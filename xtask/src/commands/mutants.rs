//! `cargo xtask mutants`: the wake crate's mutation run
//! (`kernel/wake/mutants.py`): a baseline of the unmutated models first,
//! then every mutant, each of which must be killed by the model's own
//! assertion. Also a step of `cargo xtask test`.

use std::process::Command;

use crate::cli::MutantsArgs;
use crate::error::{Result, XtaskError};
use crate::guest::test_output::Counts;
use crate::guest::verdict::QemuExit;
use crate::runner::process::{Echo, KilledOnDrop};
use crate::runner::workspace::{display_command, workspace_root};

/// The script, relative to the workspace root.
pub const MUTANTS_SCRIPT: &str = "kernel/wake/mutants.py";

/// The command that runs the mutation script with `names` (all if empty).
pub fn mutants_command(names: &[String]) -> Command {
    let mut command = Command::new("python3");
    command
        .arg(workspace_root().join(MUTANTS_SCRIPT))
        .args(names)
        .current_dir(workspace_root());
    command
}

/// Counts the script's verdict lines: a kill passes, a documented
/// equivalent is skipped, anything else (a survivor, a wrong failure, a
/// build failure, a timeout, a failed baseline) fails.
pub fn count_verdicts(output: &str) -> Counts {
    let mut counts = Counts::default();
    for line in output.lines() {
        if line.starts_with("killed  ") {
            counts.passed += 1;
        } else if line.starts_with("equiv.  ") {
            counts.skipped += 1;
        } else if [
            "SURVIVED ",
            "WRONG-FAILURE ",
            "BUILD-FAILED ",
            "TIMEOUT ",
            "NOT-APPLIED ",
            "BASELINE FAILED",
        ]
        .iter()
        .any(|prefix| line.starts_with(prefix))
        {
            counts.failed += 1;
        }
    }
    counts
}

/// Runs the script, streaming its output; returns its counts and whether
/// it exited 0.
pub fn run_mutants(names: &[String]) -> Result<(Counts, bool)> {
    let command = mutants_command(names);
    println!("xtask: {}", display_command(&command));
    let child = KilledOnDrop::spawn(command, Echo::Stdout, Echo::Stderr).map_err(|err| {
        XtaskError::failed(format!(
            "could not run python3 (install Debian's python3): {err}"
        ))
    })?;
    child
        .wait_for_exit(None)
        .map_err(|err| XtaskError::failed(format!("waiting for the mutation run: {err}")))?;
    let finished = child
        .finish(None)
        .map_err(|err| XtaskError::failed(format!("reaping the mutation run: {err}")))?;
    Ok((
        count_verdicts(&finished.stdout),
        finished.exit == QemuExit::Status(0),
    ))
}

/// `cargo xtask mutants [NAME ...]`.
pub fn run(args: &MutantsArgs) -> Result<()> {
    let (_, succeeded) = run_mutants(&args.names)?;
    if succeeded {
        Ok(())
    } else {
        Err(XtaskError::Reported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kills_pass() {
        let output = "baseline loom_parker (all): passed in 5s\n\
                      killed  skip-recheck: 1s: lost wakeup: ...\n\
                      equiv.  drain-rmw-to-load-store: 7s\n\
                      WRONG-FAILURE claim-by-plain-store: expected 'x'\n\
                      SURVIVED commit-by-plain-store: 3s\n\
                      TIMEOUT park-cas-to-load-store: 600s\n\
                      killed 1 of 5\n";
        assert_eq!(count_verdicts(output), Counts::new(1, 3).with_skipped(1));
    }

    #[test]
    fn a_failed_baseline_is_a_failure() {
        let output = "BASELINE FAILED: loom_protocol: failed: ...\nkilled 0 of 25 (...)\n";
        assert_eq!(count_verdicts(output).failed, 1);
    }
}
