//! The mutation run: the baseline (the unmutated copy runs every model the
//! chosen mutants use, and must pass), then each mutant in its own scratch
//! copy, built and run under one timeout, and classified. `jobs` mutants
//! at a time, each job with its own target directory under the run's
//! (cargo locks a target directory for a whole build, so jobs sharing one
//! would build one at a time; the dependencies are built once, in job 0,
//! and copied into the others' before the mutants start, and each copy's
//! fresh modification times make cargo rebuild the crate; a build cargo
//! reports as fresh, a reused one, is refused).

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

use crate::campaign::job_pool::run_jobs;
use crate::error::{Result, XtaskError};
use crate::guest::test_output::Counts;
use crate::guest::verdict::QemuExit;
use crate::mutants::catalogue::{self, MUTANTS, Model, Mutant};
use crate::mutants::report;
use crate::mutants::scratch::Scratch;
use crate::mutants::verdict::{self, ModelRun, Status, Verdict};
use crate::runner::process::{Echo, KilledOnDrop};
use crate::runner::workspace::cargo;

/// The environment variable that sets the per-mutant timeout (seconds).
pub const TIMEOUT_ENV: &str = "MUTANT_TIMEOUT_S";
/// The per-mutant timeout without the variable or a flag (seconds).
pub const DEFAULT_TIMEOUT_S: u64 = 600;

/// How the run builds and runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// One mutant's build and model run together (and each baseline
    /// step, and the warm-up build) must end within this; a model run
    /// again to its end gets the time its first run took on top.
    pub timeout: Duration,
    /// The run's target directory: job K builds in `job-K` under it.
    pub target_dir: PathBuf,
    /// Mutants at once.
    pub jobs: usize,
    /// Run the unmutated models first (a kill means something only if
    /// the model passes without the mutant); off when the caller has just
    /// run them.
    pub baseline: bool,
}

impl Options {
    /// Job `job`'s target directory.
    fn job_target_dir(&self, job: usize) -> PathBuf {
        self.target_dir.join(format!("job-{job}"))
    }
}

impl Options {
    /// The timeout from `flag`, else from [`TIMEOUT_ENV`], else the
    /// default.
    pub fn timeout_s(flag: Option<u64>) -> Result<u64> {
        if let Some(seconds) = flag {
            return Ok(seconds);
        }
        match std::env::var(TIMEOUT_ENV) {
            Ok(value) => value.trim().parse().map_err(|_| {
                XtaskError::usage(format!(
                    "{TIMEOUT_ENV}={value:?} is not a number of seconds"
                ))
            }),
            Err(_) => Ok(DEFAULT_TIMEOUT_S),
        }
    }
}

/// The mutants to run: those named and, with `quick`, the quick subset;
/// every mutant if neither. In catalogue order.
pub fn select(names: &[String], quick: bool) -> Result<Vec<&'static Mutant>> {
    let unknown: Vec<&String> = names
        .iter()
        .filter(|name| catalogue::find(name).is_none())
        .collect();
    if !unknown.is_empty() {
        return Err(XtaskError::usage(format!("unknown mutant(s): {unknown:?}")));
    }
    let everything = names.is_empty() && !quick;
    Ok(MUTANTS
        .iter()
        .filter(|mutant| {
            everything || (quick && mutant.quick) || names.iter().any(|name| name == mutant.name)
        })
        .collect())
}

/// What a run found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Kills passed, documented equivalents skipped, anything else failed.
    pub counts: Counts,
    /// The baseline passed and no mutant failed.
    pub succeeded: bool,
}

/// Runs the baseline and then `chosen`, printing each line as it is
/// decided; the last line is `killed K of N`.
pub fn run(chosen: &[&Mutant], options: &Options) -> Result<Summary> {
    let models: BTreeSet<Model> = chosen.iter().map(|mutant| mutant.model).collect();
    let failures = if options.baseline {
        baseline(&models, options)?
    } else {
        println!("baseline: not run again (the models passed unmutated just before)");
        Vec::new()
    };
    if !failures.is_empty() {
        for line in &failures {
            println!("{line}");
        }
        println!("{}", report::baseline_summary_line(chosen.len()));
        return Ok(Summary {
            counts: Counts::new(0, failures.len() as u64),
            succeeded: false,
        });
    }
    warm_job_target_dirs(&models, options, options.jobs.min(chosen.len()))?;
    let mut counts = Counts::default();
    let mut killed = 0;
    let mut error = None;
    // Each worker thread takes a job number (its target directory) for
    // the whole run.
    let next_job = std::sync::atomic::AtomicUsize::new(0);
    let free_jobs = std::sync::Mutex::new(Vec::<usize>::new());
    let stop = std::sync::atomic::AtomicBool::new(false);
    run_jobs(
        chosen.to_vec(),
        options.jobs,
        &stop,
        |mutant| {
            let job = free_jobs
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .pop()
                .unwrap_or_else(|| next_job.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            let outcome = run_mutant(mutant, options, &options.job_target_dir(job));
            free_jobs
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(job);
            (mutant, outcome)
        },
        |(mutant, outcome)| match outcome {
            Ok(outcome) => {
                println!("{}", report::verdict_lines(mutant, &outcome));
                counts += outcome.verdict.counts();
                if outcome.verdict == Verdict::Killed {
                    killed += 1;
                }
            }
            Err(err) => {
                error.get_or_insert(err);
                stop.store(true, std::sync::atomic::Ordering::Release);
            }
        },
    );
    if let Some(err) = error {
        return Err(err);
    }
    println!("{}", report::summary_line(killed, chosen.len()));
    Ok(Summary {
        counts,
        succeeded: counts.failed == 0,
    })
}

/// Gives each of the first `jobs` jobs' target directories the models'
/// dependencies built once: job 0's from the baseline, or else from a
/// build of an unmutated copy, then copied (times kept, so that cargo
/// finds them fresh) into every other job's that does not exist yet.
/// Without it each job built loom and its dependencies itself, all jobs
/// at once on the host's cores: 45 s of each job's first mutant in
/// `cargo xtask test` on 2 host cores. A warm-up build or a copy that
/// fails is said and left behind: the jobs then build their own, as
/// before. A job's directory that exists is kept as it is (its first
/// mutant's build brings it up to date). Each copy is made under another
/// name and renamed when whole, so that an interrupted copy never passes
/// for a job's directory.
fn warm_job_target_dirs(models: &BTreeSet<Model>, options: &Options, jobs: usize) -> Result<()> {
    let first = options.job_target_dir(0);
    if jobs < 2 || (1..jobs).all(|job| options.job_target_dir(job).exists()) {
        return Ok(());
    }
    if !options.baseline {
        println!("warm-up: building the models' dependencies once, for {jobs} jobs");
        if let (_, Err(failed)) = build_unmutated("warm-up", models, options)? {
            println!(
                "warm-up: the unmutated build {}: each job builds its own",
                failed.status.as_str()
            );
            return Ok(());
        }
    }
    for job in 1..jobs {
        let dir = options.job_target_dir(job);
        if dir.exists() {
            continue;
        }
        let partial = dir.with_extension("partial");
        // A leftover of an interrupted run: never renamed, so never used.
        let _ = std::fs::remove_dir_all(&partial);
        let copied = Command::new("cp")
            .arg("-a")
            .arg(&first)
            .arg(&partial)
            .status()
            .is_ok_and(|status| status.success())
            && std::fs::rename(&partial, &dir).is_ok();
        if !copied {
            let _ = std::fs::remove_dir_all(&partial);
            println!(
                "warm-up: could not copy {} to {}: that job builds its own",
                first.display(),
                dir.display()
            );
        }
    }
    Ok(())
}

/// Builds every model's test binary in one unmutated copy and runs each;
/// returns a `BASELINE FAILED` line per model that did not pass.
fn baseline(models: &BTreeSet<Model>, options: &Options) -> Result<Vec<String>> {
    let (scratch, built) = build_unmutated("baseline", models, options)?;
    let mut failures = Vec::new();
    for model in models {
        let run = match &built {
            Ok(executables) => run_model(
                &executables[model.test],
                model,
                scratch.path(),
                Instant::now() + options.timeout,
                false,
            )?,
            Err(failed) => failed.clone(),
        };
        println!("{}", report::baseline_line(model, &run));
        if run.status != Status::Passed {
            failures.push(report::baseline_failed_line(model, &run));
        }
    }
    Ok(failures)
}

/// Builds every model's test binary in an unmutated copy (named for
/// `label`) in job 0's target directory, within the timeout; returns the
/// copy (the models run in it) and what the build made.
fn build_unmutated(
    label: &str,
    models: &BTreeSet<Model>,
    options: &Options,
) -> Result<(Scratch, std::result::Result<Executables, ModelRun>)> {
    let scratch = Scratch::new(label).map_err(scratch_error)?;
    let tests: BTreeSet<&str> = models.iter().map(|model| model.test).collect();
    let deadline = Instant::now() + options.timeout;
    let built = build(scratch.path(), &tests, deadline, &options.job_target_dir(0))?;
    Ok((scratch, built))
}

/// Applies `mutant` to a fresh copy, builds and runs its model within the
/// timeout, and classifies the outcome.
fn run_mutant(mutant: &Mutant, options: &Options, target_dir: &Path) -> Result<verdict::Outcome> {
    let scratch = Scratch::new(mutant.name).map_err(scratch_error)?;
    if let Err(not_applied) = scratch.apply(mutant).map_err(scratch_error)? {
        return Ok(verdict::not_applied(mutant, not_applied.found));
    }
    let started = Instant::now();
    let deadline = started + options.timeout;
    let tests = BTreeSet::from([mutant.model.test]);
    let executables = match build(scratch.path(), &tests, deadline, target_dir)? {
        Ok(executables) => executables,
        Err(failed) => return Ok(verdict::classify(mutant, &failed)),
    };
    let executable = &executables[mutant.model.test];
    // The model's tests stop at the first failure (a kill needs one): in
    // the quick subset that halves the run, whose slowest mutants spent
    // most of it in tests that pass after one had already killed them. A
    // first failure that is not the mutant's assertion (loom's branch
    // limit, another check) is not yet a verdict: the model runs again to
    // its end, as it did before, and that run is classified. The rerun
    // repeats the first run's tests (loom's exploration and the tests'
    // order are the same each time), so its deadline is moved on by the
    // first run's time: the model has the budget it had before. A rerun
    // that outlives it leaves the first run's verdict.
    let first_started = Instant::now();
    let mut run = run_model(executable, &mutant.model, scratch.path(), deadline, true)?;
    if verdict::classify(mutant, &run).verdict == Verdict::WrongFailure {
        let rerun_deadline = deadline + first_started.elapsed();
        let rerun = run_model(
            executable,
            &mutant.model,
            scratch.path(),
            rerun_deadline,
            false,
        )?;
        if rerun.status != Status::TimedOut {
            run = rerun;
        }
    }
    run.seconds = started.elapsed().as_secs_f64();
    Ok(verdict::classify(mutant, &run))
}

/// The test binaries `cargo test --no-run` built, by target name.
type Executables = BTreeMap<String, PathBuf>;

/// Builds the loom test binaries `tests` in `crate_dir` (release,
/// `--cfg loom`, offline, the job's target directory) before `deadline`.
/// `Err` is the failed or timed-out build as a model run.
fn build(
    crate_dir: &Path,
    tests: &BTreeSet<&str>,
    deadline: Instant,
    target_dir: &Path,
) -> Result<std::result::Result<Executables, ModelRun>> {
    let started = Instant::now();
    let mut command = cargo();
    command
        .current_dir(crate_dir)
        .args(["test", "--offline", "--release", "--no-run"])
        .arg("--message-format=json-render-diagnostics")
        .arg("--target-dir")
        .arg(target_dir)
        .env("RUSTFLAGS", "--cfg loom")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        // Its own process group, so that a timeout kills the compilers too.
        .process_group(0);
    for test in tests {
        command.args(["--test", test]);
    }
    let (exit, stdout, stderr) = run_until(command, deadline, true)?;
    let failed = |status, output: String| ModelRun {
        status,
        seconds: started.elapsed().as_secs_f64(),
        output,
    };
    match exit {
        QemuExit::TimedOut { .. } => return Ok(Err(failed(Status::TimedOut, stderr))),
        QemuExit::Status(0) => {}
        _ => return Ok(Err(failed(Status::BuildFailed, stderr))),
    }
    let artifacts = test_artifacts(&stdout);
    let mut executables = Executables::new();
    for test in tests {
        match artifacts.get(*test) {
            Some(Artifact { fresh: true, .. }) => {
                return Ok(Err(failed(
                    Status::BuildFailed,
                    format!("cargo reused an earlier build of {test} (fresh): refused"),
                )));
            }
            Some(artifact) => {
                executables.insert((*test).to_string(), artifact.executable.clone());
            }
            None => {
                return Ok(Err(failed(
                    Status::BuildFailed,
                    format!("cargo built no executable for test {test}:\n{stderr}"),
                )));
            }
        }
    }
    Ok(Ok(executables))
}

/// One test executable in cargo's JSON messages.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Artifact {
    executable: PathBuf,
    /// Cargo did not build it (an earlier build was up to date).
    fresh: bool,
}

/// The test executables in `cargo --message-format=json` output, by
/// target name.
fn test_artifacts(messages: &str) -> BTreeMap<String, Artifact> {
    let mut artifacts = BTreeMap::new();
    for line in messages.lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
            continue;
        }
        let (Some(name), Some(executable)) = (
            message["target"]["name"].as_str(),
            message["executable"].as_str(),
        ) else {
            continue;
        };
        artifacts.insert(
            name.to_string(),
            Artifact {
                executable: PathBuf::from(executable),
                fresh: message["fresh"] == true,
            },
        );
    }
    artifacts
}

/// Runs one model's test binary in `crate_dir` (one test thread, as
/// loom's models expect) before `deadline`; with `fail_fast`, no test
/// starts after one has failed (libtest's `--fail-fast`, unstable on the
/// pinned nightly).
fn run_model(
    executable: &Path,
    model: &Model,
    crate_dir: &Path,
    deadline: Instant,
    fail_fast: bool,
) -> Result<ModelRun> {
    let started = Instant::now();
    let mut command = Command::new(executable);
    command
        .current_dir(crate_dir)
        .args(model.filter)
        .args(["--test-threads=1", "--quiet"])
        .env("RUST_BACKTRACE", "0");
    if fail_fast {
        command.args(["-Zunstable-options", "--fail-fast"]);
    }
    let (exit, stdout, stderr) = run_until(command, deadline, false)?;
    let status = match exit {
        QemuExit::Status(0) => Status::Passed,
        QemuExit::TimedOut { .. } => Status::TimedOut,
        _ => Status::Failed,
    };
    Ok(ModelRun {
        status,
        seconds: started.elapsed().as_secs_f64(),
        output: stdout + &stderr,
    })
}

/// Runs `command` (output captured) until it exits or `deadline` passes,
/// then kills it (and with `group`, its process group: `command` must
/// have been made a group leader). Returns how it ended and its stdout
/// and stderr.
fn run_until(
    command: Command,
    deadline: Instant,
    group: bool,
) -> Result<(QemuExit, String, String)> {
    let program = command.get_program().to_string_lossy().into_owned();
    let io_error =
        |what: &str, err: std::io::Error| XtaskError::failed(format!("{what} {program}: {err}"));
    let child = KilledOnDrop::spawn(command, Echo::Off, Echo::Off)
        .map_err(|err| io_error("could not run", err))?;
    let remaining = deadline.saturating_duration_since(Instant::now());
    let exited = child
        .wait_for_exit(Some(remaining))
        .map_err(|err| io_error("waiting for", err))?;
    let timed_out = (!exited).then_some(remaining.as_secs());
    if timed_out.is_some()
        && group
        && let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw)
    {
        // The group may be gone already; `finish` kills the child itself.
        let _ = kill_process_group(pid, Signal::KILL);
    }
    let finished = child
        .finish(timed_out)
        .map_err(|err| io_error("reaping", err))?;
    Ok((finished.exit, finished.stdout, finished.stderr))
}

fn scratch_error(err: std::io::Error) -> XtaskError {
    XtaskError::failed(format!(
        "could not make the scratch copy of the crate: {err}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_is_in_catalogue_order() {
        let names = [
            "steal-searchers-not-counted".to_string(),
            "skip-recheck".to_string(),
        ];
        let chosen: Vec<_> = select(&names, false)
            .unwrap()
            .iter()
            .map(|mutant| mutant.name)
            .collect();
        assert_eq!(chosen, ["skip-recheck", "steal-searchers-not-counted"]);
    }

    #[test]
    fn no_names_is_everything_and_quick_adds_the_subset() {
        assert_eq!(select(&[], false).unwrap().len(), MUTANTS.len());
        let quick = select(&[], true).unwrap();
        assert!(quick.iter().all(|mutant| mutant.quick));
        assert_eq!(quick.len(), catalogue::quick().count());
        let more = select(&["claim-by-plain-store".to_string()], true).unwrap();
        assert_eq!(more.len(), quick.len() + 1);
    }

    #[test]
    fn an_unknown_name_is_a_usage_error() {
        let err = select(&["no-such-mutant".to_string()], false).unwrap_err();
        assert!(matches!(err, XtaskError::Usage(_)), "{err:?}");
    }

    #[test]
    fn the_test_executables_are_read_from_cargos_messages() {
        let messages = concat!(
            r#"{"reason":"compiler-artifact","target":{"name":"vigil_wake","kind":["lib"]},"profile":{"test":false},"executable":null,"fresh":true}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"loom_parker","kind":["test"]},"profile":{"test":true},"executable":"/t/release/deps/loom_parker-1","fresh":false}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"name":"loom_steal","kind":["test"]},"profile":{"test":true},"executable":"/t/release/deps/loom_steal-2","fresh":true}"#,
            "\n",
            "not json\n",
            r#"{"reason":"build-finished","success":true}"#,
            "\n",
        );
        let artifacts = test_artifacts(messages);
        assert_eq!(artifacts.len(), 2);
        assert_eq!(
            artifacts["loom_parker"],
            Artifact {
                executable: "/t/release/deps/loom_parker-1".into(),
                fresh: false
            }
        );
        assert!(artifacts["loom_steal"].fresh);
    }

    #[test]
    fn a_timeout_kills_the_whole_group() {
        let mut command = Command::new("sh");
        command
            .args(["-c", "sleep 600 & echo $!; wait"])
            .process_group(0);
        let started = Instant::now();
        let (exit, stdout, _) =
            run_until(command, Instant::now() + Duration::from_millis(500), true).unwrap();
        assert!(matches!(exit, QemuExit::TimedOut { .. }), "{exit:?}");
        assert!(started.elapsed() < Duration::from_secs(30));
        let grandchild = stdout.trim();
        // Killed with its group: gone, or a zombie until it is reaped.
        let gone = || {
            std::fs::read_to_string(format!("/proc/{grandchild}/status"))
                .map(|status| status.contains("State:\tZ"))
                .unwrap_or(true)
        };
        let waited = Instant::now();
        while !gone() && waited.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(gone(), "the sleep outlived the timeout");
    }
}
