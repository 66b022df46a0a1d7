//! `cargo xtask peer-bench`: the wake crate's pool against rayon and tokio
//! (`kernel/wake/examples/peer_bench.rs`), run several times in a row, and
//! the README's two tables and two plots written from every run's samples.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::bench::peer_plots::write_peer_plots;
use crate::bench::peer_runs::{PeerRun, idle_table, line_up, sleeps_table, throughput_table};
use crate::cli::PeerBenchArgs;
use crate::error::{Result, XtaskError};
use crate::guest::settings::{in_range, parse_count};
use crate::runner::workspace::{cargo, display_command, workspace_root};

/// `--runs`: runs of the whole example.
pub const RUNS_RANGE: RangeInclusive<u32> = 1..=20;
/// `--repeats`: repeats of each cell within a run.
pub const REPEATS_RANGE: RangeInclusive<u32> = 1..=100;
/// `--jobs`: jobs per throughput repeat.
pub const JOBS_RANGE: RangeInclusive<u32> = 100..=10_000_000;
/// `--idle-ms`: length of each idle repeat, ms.
pub const IDLE_MS_RANGE: RangeInclusive<u32> = 100..=60_000;
/// `--workers`: each worker count.
pub const WORKERS_RANGE: RangeInclusive<u32> = 1..=256;

/// Parses `--runs`.
pub fn parse_runs(text: &str) -> std::result::Result<u32, String> {
    in_range(parse_count(text, "run count")?, &RUNS_RANGE, "--runs")
}

/// Parses `--repeats`.
pub fn parse_repeats(text: &str) -> std::result::Result<u32, String> {
    in_range(
        parse_count(text, "repeat count")?,
        &REPEATS_RANGE,
        "--repeats",
    )
}

/// Parses `--jobs`.
pub fn parse_jobs(text: &str) -> std::result::Result<u32, String> {
    in_range(parse_count(text, "job count")?, &JOBS_RANGE, "--jobs")
}

/// Parses `--idle-ms`.
pub fn parse_idle_ms(text: &str) -> std::result::Result<u32, String> {
    in_range(
        parse_count(text, "length in ms")?,
        &IDLE_MS_RANGE,
        "--idle-ms",
    )
}

/// Parses one of `--workers`.
pub fn parse_workers(text: &str) -> std::result::Result<u32, String> {
    in_range(
        parse_count(text, "worker count")?,
        &WORKERS_RANGE,
        "--workers",
    )
}

/// The target directory the example is built in, named on the build's
/// command line (a `CARGO_TARGET_DIR` or `build.target-dir` elsewhere
/// would otherwise leave this command running an older binary).
fn example_target_dir() -> PathBuf {
    workspace_root().join("target")
}

/// The example's binary once built.
fn example_binary() -> PathBuf {
    example_target_dir()
        .join("release")
        .join("examples")
        .join("peer_bench")
}

/// Run `index`'s sample file (1-based) in `dir`.
fn run_json(dir: &Path, index: u32) -> PathBuf {
    dir.join(format!("run_{index}.json"))
}

/// `cargo xtask peer-bench`.
pub fn run(args: &PeerBenchArgs) -> Result<()> {
    let dir = if args.out.is_absolute() {
        args.out.clone()
    } else {
        workspace_root().join(&args.out)
    };
    if args.render_only {
        if let Some(missing) = (1..=args.runs)
            .map(|index| run_json(&dir, index))
            .find(|path| !path.is_file())
        {
            return Err(XtaskError::usage(format!(
                "--render-only: no {} (the runs are written by peer-bench without --render-only; --runs says how many to read)",
                missing.display()
            )));
        }
    } else {
        measure(args, &dir)?;
    }
    let runs = (1..=args.runs)
        .map(|index| PeerRun::read(&run_json(&dir, index)))
        .collect::<Result<Vec<_>>>()?;
    let cells = line_up(&runs)?;
    let first = &runs[0];
    let tables = format!(
        "{} run(s) of `peer_bench --repeats {} --jobs {} --idle-ms {}` on {} host cores; each cell: each run's median.\n\n{}\n{}\nBlocking sleeps per job of the pool's threads (their voluntary context switches; the spawning and pacing thread's not counted):\n\n{}",
        runs.len(),
        first.repeats,
        first.jobs,
        first.idle_ms,
        first.host_cores,
        throughput_table(&cells),
        idle_table(&cells),
        sleeps_table(&cells)
    );
    let tables_path = dir.join("tables.md");
    std::fs::write(&tables_path, &tables)
        .map_err(|err| XtaskError::failed(format!("writing {}: {err}", tables_path.display())))?;
    print!("{tables}");
    println!("xtask: tables in {}", tables_path.display());
    for plot in write_peer_plots(&dir, &cells, runs.len())? {
        println!("xtask: plot {}", plot.display());
    }
    Ok(())
}

/// Builds the example and runs it `args.runs` times, one after another
/// (each run interleaves the pools itself), its samples into `dir`.
fn measure(args: &PeerBenchArgs, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|err| XtaskError::failed(format!("creating {}: {err}", dir.display())))?;
    // An earlier invocation's runs, tables and plots go first: a run that
    // fails must not leave older ones to be read with the new
    // (`--render-only`), or to stand as this invocation's.
    let entries = std::fs::read_dir(dir)
        .map_err(|err| XtaskError::failed(format!("reading {}: {err}", dir.display())))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = (name.starts_with("run_") && name.ends_with(".json"))
            || name == "tables.md"
            || name.ends_with(".svg");
        if ours {
            std::fs::remove_file(entry.path()).map_err(|err| {
                XtaskError::failed(format!("removing {}: {err}", entry.path().display()))
            })?;
        }
    }
    let mut build = cargo();
    build.args([
        "build",
        "--release",
        "-p",
        "vigil-wake",
        "--example",
        "peer_bench",
    ]);
    build.arg("--target-dir").arg(example_target_dir());
    println!("xtask: {}", display_command(&build));
    let status = build
        .status()
        .map_err(|err| XtaskError::failed(format!("running cargo: {err}")))?;
    if !status.success() {
        return Err(XtaskError::failed("building peer_bench failed"));
    }
    let workers: Vec<String> = args.workers.iter().map(u32::to_string).collect();
    for index in 1..=args.runs {
        let mut bench = std::process::Command::new(example_binary());
        bench
            .args(["--repeats", &args.repeats.to_string()])
            .args(["--jobs", &args.jobs.to_string()])
            .args(["--idle-ms", &args.idle_ms.to_string()])
            .args(["--workers", &workers.join(",")])
            .arg("--json")
            .arg(run_json(dir, index))
            .stdout(Stdio::inherit());
        println!(
            "xtask: run {index} of {}: {}",
            args.runs,
            display_command(&bench)
        );
        let status = bench
            .status()
            .map_err(|err| XtaskError::failed(format!("running peer_bench: {err}")))?;
        if !status.success() {
            return Err(XtaskError::failed(format!(
                "peer_bench run {index} failed ({status})"
            )));
        }
    }
    Ok(())
}
