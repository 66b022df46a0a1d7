//! `cargo xtask stress`: boot the Laplace workload R times per core count,
//! in parallel, each boot with its own seed; print every failure with the
//! command that replays it, then a table per core count.

use std::time::Instant;

use crate::boot_progress::boot_progress_bar;
use crate::cli::StressArgs;
use crate::error::{Result, XtaskError};
use crate::install::ensure_qemu;
use crate::kernel_build::build_kernel;
use crate::run_class::RunClass;
use crate::seeds::seed_from_time;
use crate::stress_report::{self, StressJson};
use crate::stress_runner::{StressConfig, StressRun, default_jobs, run_stress};

/// The campaign the command line asks for (not yet validated).
pub fn config_from_args(args: &StressArgs) -> StressConfig {
    let build = args.build.build_config();
    let idle_poll = build.features.contains(&crate::args::Feature::IdlePoll);
    let defaults = StressConfig::new(
        args.smp.clone(),
        args.runs,
        crate::args::WakePolicy::StateMachine,
    );
    StressConfig {
        build,
        // An idle-poll build takes no policy; a normal one defaults to the
        // state machine. A policy given with idle-poll is kept so that
        // validation rejects it.
        policy: match (args.policy, idle_poll) {
            (None, true) => None,
            (None, false) => defaults.policy,
            (given, _) => given,
        },
        chaos: args.chaos,
        watchdog: args.watchdog_ms.unwrap_or(defaults.watchdog),
        fault: args.fault,
        ipi_oracle: args.ipi_oracle,
        pool: args.pool,
        size: args.size,
        iterations: args.iterations,
        base_seed: args.seed.unwrap_or_else(seed_from_time),
        stall_s: args.stall_s,
        timeout_s: args.timeout_s,
        jobs: args.jobs.unwrap_or_else(default_jobs),
        ..defaults
    }
}

/// Runs the campaign. Fails (exit 1) if a run of a correct policy failed;
/// with `racy-flag` failures are the point and it reports detection rates.
pub fn run(args: &StressArgs) -> Result<()> {
    let config = config_from_args(args);
    config.validate()?;
    ensure_qemu(false)?;
    let kernel = build_kernel(&config.build)?;
    let total = config.smp.len() as u64 * u64::from(config.runs);
    println!(
        "stress: {total} boots ({} per core count at {:?} cores), {} at a time, policy {}, base seed {} (replay the campaign with --seed {})",
        config.runs,
        config.smp,
        config.jobs,
        config.policy_name(),
        config.base_seed,
        config.base_seed
    );

    let bar = boot_progress_bar(total);
    let started = Instant::now();
    let mut failed = 0u64;
    let runs = run_stress(&config, &kernel, |run: &StressRun| {
        if !run.class.is_pass() {
            failed += 1;
        }
        bar.suspend(|| print_run(run, config.runs));
        bar.inc(1);
        bar.set_message(format!("({failed} failed)"));
    })?;
    bar.finish_and_clear();

    let summaries = stress_report::summarize(&config.smp, &runs);
    println!();
    print!("{}", stress_report::table(&config, &summaries));
    if !config.expects_no_failures() {
        print!("{}", stress_report::detection_rates(&summaries));
    }
    if let Some(path) = &args.json {
        stress_report::write_json(
            path,
            &StressJson {
                config: &config,
                build: config.build.variant_name(),
                summary: &summaries,
                runs: &runs,
            },
        )?;
        println!("stress: every run written to {}", path.display());
    }
    let passed = runs.iter().filter(|run| run.class.is_pass()).count();
    println!(
        "stress: {} boots in {:.0} s, {passed} passed, {} failed",
        runs.len(),
        started.elapsed().as_secs_f64(),
        runs.len() - passed
    );
    if config.expects_no_failures() && passed < runs.len() {
        Err(XtaskError::Reported)
    } else {
        Ok(())
    }
}

fn print_run(run: &StressRun, runs_per_smp: u32) {
    if run.class == RunClass::Passed {
        let laplace = run
            .result
            .map(|result| format!(", laplace {:.0} ms", result.elapsed_us as f64 / 1000.0))
            .unwrap_or_default();
        println!(
            "ok     smp={} run {}/{} seed={} ({:.1} s{laplace})",
            run.planned.smp, run.planned.run, runs_per_smp, run.planned.seed, run.elapsed_s
        );
    } else {
        print!("{}", stress_report::failure_block(run, runs_per_smp));
    }
}
