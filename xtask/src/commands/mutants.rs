//! `cargo xtask mutants`: the wake crate's mutation run (the mutants are
//! in `xtask/src/mutants/catalogue.rs`): a baseline of the unmutated models
//! first, then every mutant, each of which must be killed by the model's
//! own assertion. The quick subset is a step of `cargo xtask test`.

use crate::cli::MutantsArgs;
use crate::error::{Result, XtaskError};
use crate::guest::test_output::Counts;
use crate::mutants::run::{self, Options};
use crate::runner::workspace::loom_mutants_target_dir;

/// Runs the mutants `args` choose, printing the run as it goes; returns
/// its counts (a kill passes, a documented equivalent is skipped, anything
/// else fails) and whether it succeeded.
pub fn run_mutants(args: &MutantsArgs) -> Result<(Counts, bool)> {
    let chosen = run::select(&args.names, args.quick)?;
    let options = Options {
        timeout: std::time::Duration::from_secs(Options::timeout_s(args.timeout_s)?),
        target_dir: loom_mutants_target_dir(),
        jobs: args
            .jobs
            .unwrap_or_else(crate::stress::runner::default_jobs),
        baseline: !args.skip_baseline,
    };
    println!(
        "xtask: mutation run: {} mutant(s), {} at a time, each built and run within {}s, in {}",
        chosen.len(),
        options.jobs,
        options.timeout.as_secs(),
        options.target_dir.display()
    );
    let summary = run::run(&chosen, &options)?;
    Ok((summary.counts, summary.succeeded))
}

/// `cargo xtask mutants [--quick] [NAME ...]`.
pub fn run(args: &MutantsArgs) -> Result<()> {
    let (_, succeeded) = run_mutants(args)?;
    if succeeded {
        Ok(())
    } else {
        Err(XtaskError::Reported)
    }
}
