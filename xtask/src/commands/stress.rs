//! `cargo xtask stress`: boot the Laplace workload R times per core count,
//! in parallel, each boot with its own seed; print every failure with the
//! command that replays it, then a table per core count.

use std::path::Path;
use std::time::Instant;

use crate::campaign::json_file::write_json;
use crate::campaign::run_class::RunClass;
use crate::campaign::scope::CampaignScope;
use crate::campaign::seeds::seed_from_time;
use crate::cli::{MergeArgs, StressAction, StressArgs};
use crate::error::{Result, XtaskError};
use crate::runner::boot_progress::boot_progress_bar;
use crate::runner::install::ensure_qemu_for;
use crate::runner::kernel_build::build_kernel;
use crate::runner::platform::Emulator;
use crate::stress::report::{self as stress_report, StressJson};
use crate::stress::runner::{StressConfig, StressRun, default_jobs, run_stress};
use crate::stress::shard::{merge, read_stress_file};

/// The campaign the command line asks for (not yet validated).
pub fn config_from_args(args: &StressArgs) -> StressConfig {
    let build = args.build.build_config();
    let idle_poll = build
        .features
        .contains(&crate::guest::settings::Feature::IdlePoll);
    let defaults = StressConfig::new(
        args.smp.clone(),
        args.runs,
        crate::guest::settings::WakePolicy::StateMachine,
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
        chunks: args.chunks,
        size: args.size,
        iterations: args.iterations,
        base_seed: args.seed.unwrap_or_else(seed_from_time),
        stall_s: args.stall_s,
        timeout_s: args.timeout_s,
        jobs: args.jobs.unwrap_or_else(default_jobs),
        shard: args.shard,
        scope: CampaignScope {
            apic: args.apic,
            arch: args.build.arch,
            ..defaults.scope.clone()
        },
        bochs: (args.emulator == Emulator::Bochs).then(|| args.bochs.settings()),
        ..defaults
    }
}

/// Runs the campaign (or, with `merge`, joins shards). Fails (exit 1) if
/// a run of a correct policy failed; with `racy-flag` or a fault, failures
/// are the point and it reports detection rates.
pub fn run(args: &StressArgs) -> Result<()> {
    if let Some(StressAction::Merge(merge)) = &args.action {
        return run_merge(merge);
    }
    check_shard_seed(args)?;
    args.bochs.check_emulator(args.emulator)?;
    crate::runner::platform::check_arch(
        args.build.arch,
        crate::runner::platform::Machine::Pc,
        args.apic,
        false,
        args.emulator,
    )
    .map_err(XtaskError::Usage)?;
    let config = config_from_args(args);
    config.validate()?;
    if config.bochs.is_some() {
        if let Some(why) = crate::runner::bochs::missing() {
            return Err(XtaskError::usage(why));
        }
    } else {
        ensure_qemu_for(&[config.build.arch], false)?;
    }
    let kernel = build_kernel(&config.build)?;
    let total = config.plan().len() as u64;
    let shard = config
        .shard
        .map(|shard| format!(", shard {shard} of the campaign"))
        .unwrap_or_default();
    let emulator = config
        .bochs
        .map(|settings| {
            format!(
                " under Bochs (ips={}, turns of {} instruction(s), time0={}, clock sync=none: each boot replays exactly)",
                settings.ips, settings.turn, settings.time0
            )
        })
        .unwrap_or_default();
    println!(
        "stress: {total} boots ({} per core count at {:?} cores{shard}){emulator}, {} at a time, policy {}, base seed {} (replay the campaign with --seed {})",
        config.scope.runs,
        config.scope.smp,
        config.jobs,
        config.policy_name(),
        config.base_seed,
        config.base_seed
    );

    let bar = boot_progress_bar(total);
    let started = Instant::now();
    let mut failed = 0u64;
    let runs = run_stress(&config, &kernel, |run: &StressRun| {
        if !run.record.class.is_pass() {
            failed += 1;
        }
        bar.suspend(|| print_run(run, config.scope.runs, args.json.as_deref()));
        bar.inc(1);
        bar.set_message(format!("({failed} failed)"));
    })?;
    bar.finish_and_clear();
    report(
        &config,
        &config.build.variant_name(),
        &runs,
        args.json.as_deref(),
        &format!("in {:.0} s", started.elapsed().as_secs_f64()),
    )
}

/// A shard needs the campaign's seed: with the clock's, every machine
/// would boot a slice of another campaign (and the merge refuse them
/// after the boots).
pub fn check_shard_seed(args: &StressArgs) -> Result<()> {
    match (args.shard, args.seed) {
        (Some(shard), None) => Err(XtaskError::usage(format!(
            "--shard {shard} needs --seed SEED, the same on every shard (the default seed comes from the clock, so each machine would boot another campaign)"
        ))),
        _ => Ok(()),
    }
}

/// `stress merge`: the whole campaign's table (and JSON) from its shards.
fn run_merge(args: &MergeArgs) -> Result<()> {
    let files = args
        .files
        .iter()
        .map(|path| Ok((path.clone(), read_stress_file(path)?)))
        .collect::<Result<Vec<_>>>()?;
    let shards = files.len();
    let merged = merge(files)?;
    println!(
        "stress merge: {shards} shard(s) of a campaign at {:?} cores, {} run(s) each, base seed {}",
        merged.config.scope.smp, merged.config.scope.runs, merged.config.base_seed
    );
    report(
        &merged.config,
        &merged.build,
        &merged.runs,
        args.json.as_deref(),
        "merged",
    )
}

/// The table, the detection rates, the JSON and the closing line of a
/// campaign's runs; exit 1 if a correct policy failed.
fn report(
    config: &StressConfig,
    build: &str,
    runs: &[StressRun],
    json: Option<&Path>,
    how: &str,
) -> Result<()> {
    let summaries = stress_report::summarize(&config.scope.smp, runs);
    println!();
    print!("{}", stress_report::table(config, &summaries));
    if !config.expects_no_failures() {
        print!("{}", stress_report::detection_rates(&summaries));
    }
    if let Some(path) = json {
        write_json(
            path,
            &StressJson {
                config,
                build: build.to_string(),
                summary: &summaries,
                runs,
            },
        )?;
        println!("stress: every run written to {}", path.display());
    }
    let passed = runs.iter().filter(|run| run.record.class.is_pass()).count();
    println!(
        "stress: {} boots {how}, {passed} passed, {} failed",
        runs.len(),
        runs.len() - passed
    );
    if config.expects_no_failures() && passed < runs.len() {
        Err(XtaskError::Reported)
    } else {
        Ok(())
    }
}

fn print_run(run: &StressRun, runs_per_smp: u32, json: Option<&Path>) {
    if run.record.class == RunClass::Passed {
        let laplace = run
            .record
            .result
            .map(|result| format!(", laplace {:.0} ms", result.elapsed_us as f64 / 1000.0))
            .unwrap_or_default();
        println!(
            "ok     smp={} run {}/{} seed={} ({:.1} s{laplace})",
            run.planned.boot.smp,
            run.planned.run,
            runs_per_smp,
            run.planned.seed,
            run.record.wall_s
        );
    } else {
        print!("{}", stress_report::failure_block(run, runs_per_smp));
        if let (Some(json), Some(_)) = (json, run.planned.boot.bochs) {
            println!(
                "  replay: cargo xtask replay {} --run {}",
                json.display(),
                run.planned.order
            );
        }
    }
}
