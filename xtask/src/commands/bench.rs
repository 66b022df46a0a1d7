//! `cargo xtask bench`: release kernels, every policy at every core count,
//! boots interleaved round by round; medians with min–max in a terminal
//! report, every boot in a JSON file, SVG plots.

use std::time::Instant;

use crate::bench::plan::{BenchConfig, Configuration};
use crate::bench::plots::write_plots;
use crate::bench::report::{self as bench_report, BenchJson, RunJson};
use crate::bench::runner::{BenchGuest, BenchRun, BootStatus, Kernels, run_bench};
use crate::campaign::json_file::write_json;
use crate::cli::BenchArgs;
use crate::cli::Peer;
use crate::error::{Result, XtaskError};
use crate::runner::boot_progress::boot_progress_bar;
use crate::runner::hot_loop_pages;
use crate::runner::install::ensure_qemu_for;
use crate::runner::kernel_build::{BuildConfig, KernelArtifacts, build_kernel};
use crate::runner::linux_peer::build_linux_peer;
use crate::runner::process_cpu_time::clock_ticks_per_second;

/// The benchmark the command line asks for.
pub fn config_from_args(args: &BenchArgs) -> BenchConfig {
    let mut config = if args.quick {
        BenchConfig::quick()
    } else {
        standard_config_from_args(args)
    };
    if args.peers.contains(&Peer::Linux) {
        config.variants.extend(crate::bench::plan::Variant::LINUX);
    }
    config.host_cores = args.host_cores.clone();
    config
}

/// The benchmark of the options besides `--quick` and `--peer`.
fn standard_config_from_args(args: &BenchArgs) -> BenchConfig {
    let mut config = BenchConfig::standard(args.smp.clone(), args.runs);
    config.grid_timeout_s = args.grid_timeout_s;
    config.scope.apic = args.apic;
    config.scope.arch = args.arch;
    if !args.sections.is_empty() {
        config.sections = crate::bench::plan::Section::ALL
            .into_iter()
            .filter(|section| args.sections.contains(section))
            .collect();
    }
    if !args.variants.is_empty() {
        config.variants = crate::bench::plan::Variant::ALL
            .into_iter()
            .filter(|variant| args.variants.contains(variant))
            .collect();
    }
    config
}

/// Host cores, as the efficiency counts them.
pub fn host_cores() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// Builds, boots, reports. Fails (exit 1) if a boot failed other than by
/// running past its limit.
pub fn run(args: &BenchArgs) -> Result<()> {
    if args.peers.contains(&Peer::Linux) && args.arch != crate::runner::platform::Arch::X86_64 {
        return Err(XtaskError::usage(
            "--peer linux boots Debian's amd64 kernel: not with --arch aarch64",
        ));
    }
    let config = config_from_args(args);
    config.validate()?;
    let plot_dir = args.plot.clone();
    let json_path = args
        .json
        .clone()
        .unwrap_or_else(|| plot_dir.join("bench.json"));
    crate::runner::platform::check_arch(
        args.arch,
        crate::runner::platform::Machine::Pc,
        args.apic,
        false,
        crate::runner::platform::Emulator::Qemu,
    )
    .map_err(XtaskError::Usage)?;
    ensure_qemu_for(&[args.arch], false)?;
    let mut kernels = Kernels::new();
    let mut built: Vec<(BuildConfig, KernelArtifacts)> = Vec::new();
    let mut linux_peer = None;
    for variant in config.booted_variants() {
        if variant.linux_idle().is_some() {
            let peer = match &linux_peer {
                Some(peer) => peer,
                None => linux_peer.insert(build_linux_peer()?),
            };
            kernels.insert(variant, BenchGuest::LinuxPeer(peer.clone()));
            continue;
        }
        let build = variant.build(config.scope.arch);
        let kernel = match built.iter().find(|(done, _)| *done == build) {
            Some((_, kernel)) => kernel.clone(),
            None => {
                let kernel = build_kernel(&build)?;
                // A hot loop across a page runs several times slower
                // under TCG: every figure of this kernel would say so.
                if let Err(why) = hot_loop_pages::check(&kernel.elf, &hot_loop_pages::HOT_LOOPS) {
                    println!("bench: warning: {} kernel: {why}", build.variant_name());
                }
                built.push((build, kernel.clone()));
                kernel
            }
        };
        kernels.insert(variant, BenchGuest::Vigil(kernel));
    }

    let boots = config.schedule().len() as u64;
    let host_cores = host_cores();
    let confined = if config.host_cores.is_empty() {
        String::new()
    } else {
        format!(", QEMU confined to {:?} of them in turn", config.host_cores)
    };
    println!(
        "bench: {boots} boots at most ({} configurations x {} run(s)), one at a time, host cores {host_cores}{confined}; a grid boot past {} s is recorded as timed out and not repeated",
        config.configurations().len(),
        config.scope.runs,
        config.grid_timeout_s
    );
    let bar = boot_progress_bar(boots);
    let started = Instant::now();
    let runs = run_bench(&config, &kernels, |configuration, round, run| {
        bar.suspend(|| print_boot(configuration, round, run));
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    let wall_s = started.elapsed().as_secs_f64();

    let summaries = bench_report::summarize(&config, &runs, host_cores);
    print!("{}", bench_report::render(&config, &summaries, host_cores));
    write_json(
        &json_path,
        &BenchJson {
            config: &config,
            host_cores,
            clock_ticks_per_second: clock_ticks_per_second(),
            wall_s,
            definitions: bench_report::definitions(),
            summary: &summaries,
            runs: RunJson::all(&runs),
        },
    )?;
    println!("\nbench: every boot written to {}", json_path.display());
    for group in config.host_core_groups() {
        let mine = bench_report::on_host_cores(&summaries, group);
        let dir = match group {
            Some(count) => plot_dir.join(format!("host-cores-{count}")),
            None => plot_dir.clone(),
        };
        for plot in write_plots(&dir, &config, &mine)? {
            println!("bench: plot {}", plot.display());
        }
    }
    let failed: Vec<&BenchRun> = runs
        .iter()
        .filter(|run| run.status == BootStatus::Failed)
        .collect();
    println!(
        "bench: {} boots in {wall_s:.0} s, {} timed out, {} failed",
        runs.len(),
        runs.iter()
            .filter(|run| run.status == BootStatus::TimedOut)
            .count(),
        failed.len()
    );
    if failed.is_empty() {
        Ok(())
    } else {
        for run in failed {
            println!(
                "FAILED {} {} smp={} round {}: {}: {}\n  reproduce: {}",
                run.configuration.section,
                run.configuration.variant,
                run.configuration.boot.smp,
                run.round,
                run.record.class,
                run.record.reason,
                run.configuration.boot.reproduce
            );
        }
        Err(XtaskError::Reported)
    }
}

fn print_boot(configuration: &Configuration, round: u32, run: Option<&BenchRun>) {
    let on_host = configuration
        .boot
        .host_cores
        .map_or_else(String::new, |count| format!(" host-cores={count}"));
    let what = format!(
        "round {round} {:<13} {:<21} smp={:<2}{on_host}",
        configuration.section.name(),
        configuration.variant.name(),
        configuration.boot.smp
    );
    let Some(run) = run else {
        println!("{what}: skipped (timed out in an earlier round)");
        return;
    };
    let measured = match (run.status, run.guest_ms(), run.idle) {
        (BootStatus::Ok, Some(ms), _) => format!("{ms:.1} ms guest"),
        (BootStatus::Ok, None, Some(idle)) => format!(
            "{:.3} host cores over {:.2} s",
            idle.host_cpu_per_wall, idle.wall_s
        ),
        (BootStatus::TimedOut, _, _) => match &configuration.boot.limit_after_mark {
            Some(limit) if run.record.mark(&limit.mark).is_some() => {
                format!("timed out (its loop past {} s)", limit.limit_s)
            }
            Some(_) => format!(
                "timed out (its boot did not reach its loop in {} s)",
                configuration.boot.timeout_s
            ),
            None => format!("timed out (> {} s)", configuration.boot.timeout_s),
        },
        _ => format!("{}: {}", run.record.class, run.record.reason),
    };
    let pool = run.pool().map_or_else(String::new, |pool| {
        format!(
            ", {} core(s)/round, {} pool",
            pool.cores_per_round_median, pool.kind
        )
    });
    println!("{what}: {measured}{pool} (boot {:.1} s)", run.record.wall_s);
}
