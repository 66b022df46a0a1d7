//! `cargo xtask test`: every test the project has, ending with one line
//! `N passed, M failed`.
//!
//! Steps: the lints first (`cargo fmt --check`, `cargo clippy -D warnings`
//! for the host crates and for the kernel target), each one test; then
//! (a) `cargo test` of the host crates (doctests included), the wake
//! crate's `cargo doc -D warnings` and one tiny run of each of its pool
//! benchmark examples (against itself, against rayon and tokio), each one
//! test, (b) the loom models of the
//! wake protocol, (c) the quick subset of the mutation run over those models (every mutant
//! killed by the model's own assertion), (d) the in-kernel suite
//! (`mode=test`) in each configuration of [`kernel_suites`], (e) the QEMU
//! tests. Every step runs even after a failure; output streams live.

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use vigil_proto::Policy;
use vigil_proto::boot_params::{Mode, ParamLine, Pool};

use crate::guest::settings::Feature;

use crate::cli::{MutantsArgs, TestArgs};
use crate::commands::mutants;
use crate::error::{Result, XtaskError};
use crate::guest::test_output::{Counts, KernelSuiteReport, sum_cargo_results};
use crate::guest::verdict::{QemuExit, Verdict};
use crate::runner::install::ensure_qemu_for;
use crate::runner::kernel_build::BUILD_STD_ARGS;
use crate::runner::kernel_build::{BuildConfig, KernelArtifacts, build_kernel};
use crate::runner::platform::{Apic, Arch};
use crate::runner::process::{Echo, KilledOnDrop};
use crate::runner::qemu::{self, RunConfig};
use crate::runner::workspace::{
    KERNEL_PACKAGE, cargo, display_command, kernel_target_dir, loom_target_dir,
};

/// Core counts the whole in-kernel suite is booted with (default build,
/// default policy).
pub const KERNEL_TEST_SMP: [u32; 3] = [1, 4, 32];

/// Core counts the whole in-kernel suite is also booted with in x2APIC
/// mode (`-cpu qemu64,+x2apic`): 4 (more cores in x2APIC mode are the
/// qemu-tests' 256-core boot; 32 here too cost CI about as much as the
/// Bochs replay tests gained when the boot began measuring its host).
pub const KERNEL_TEST_X2APIC_SMP: [u32; 1] = [4];

/// One boot of the in-kernel suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSuite {
    /// Step name in the summary.
    pub name: String,
    /// Kernel build to boot.
    pub build: BuildConfig,
    /// Cores.
    pub smp: u32,
    /// The CPU's local APIC interface (the kernel must say it runs in
    /// that mode).
    pub apic: Apic,
    /// Boot parameters (`mode=test` and more).
    pub params: Vec<String>,
}

impl KernelSuite {
    /// What the kernel's boot lines must say for the boot to be the one
    /// asked for: x86_64's APIC mode (a CPU flag QEMU ignored would test
    /// xAPIC twice), AArch64's interrupt controller.
    pub fn boot_line_mark(&self) -> &'static str {
        match self.build.arch {
            Arch::X86_64 => self.apic.boot_line_mode(),
            Arch::Aarch64 => "GICv3",
        }
    }
}

/// Every in-kernel suite run: the whole suite at each of
/// [`KERNEL_TEST_SMP`] in xAPIC mode, on AArch64 at the same counts, and
/// at [`KERNEL_TEST_X2APIC_SMP`] in x2APIC mode, the scheduler tests under `always-ipi` at 4 cores,
/// the scheduler tests of the stealing pool on one core (its one worker
/// is the caller; one core's default pool is the pinned one), and the
/// scheduler tests of the `idle-poll` build at 2 cores.
pub fn kernel_suites() -> Vec<KernelSuite> {
    let suite = |name: String, build: BuildConfig, smp: u32, params: ParamLine| KernelSuite {
        name,
        build,
        smp,
        apic: Apic::Xapic,
        params: ParamLine {
            mode: Some(Mode::Test),
            ..params
        }
        .tokens(),
    };
    let sched = || ParamLine {
        test_filter: Some("sched".to_string()),
        ..ParamLine::default()
    };
    let mut suites: Vec<KernelSuite> = KERNEL_TEST_SMP
        .iter()
        .map(|&smp| {
            suite(
                format!("kernel smp={smp}"),
                BuildConfig::default(),
                smp,
                ParamLine::default(),
            )
        })
        .collect();
    for smp in KERNEL_TEST_X2APIC_SMP {
        suites.push(KernelSuite {
            apic: Apic::X2apic,
            ..suite(
                format!("kernel smp={smp} x2apic"),
                BuildConfig::default(),
                smp,
                ParamLine::default(),
            )
        });
    }
    for smp in KERNEL_TEST_SMP {
        suites.push(suite(
            format!("kernel aarch64 smp={smp}"),
            BuildConfig {
                arch: Arch::Aarch64,
                ..BuildConfig::default()
            },
            smp,
            ParamLine::default(),
        ));
    }
    suites.push(suite(
        "kernel sched always-ipi smp=4".to_string(),
        BuildConfig::default(),
        4,
        ParamLine {
            policy: Some(Policy::AlwaysIpi),
            ..sched()
        },
    ));
    suites.push(suite(
        "kernel sched pool=steal smp=1".to_string(),
        BuildConfig::default(),
        1,
        ParamLine {
            pool: Some(Pool::Steal),
            ..sched()
        },
    ));
    suites.push(suite(
        "kernel sched idle-poll smp=2".to_string(),
        BuildConfig {
            release: false,
            features: vec![Feature::IdlePoll],
            arch: Arch::X86_64,
        },
        2,
        sched(),
    ));
    suites
}
/// Timeout of one in-kernel suite run.
pub const KERNEL_SUITE_TIMEOUT_S: u64 = 300;
/// Host crates tested by plain `cargo test` (the workspace's default
/// members minus qemu-tests, which is its own step).
pub const HOST_PACKAGES: [&str; 5] = [
    "vigil-wake",
    "vigil-proto",
    "vigil-boot",
    "xtask",
    "linux-laplace",
];
/// Package holding the loom models.
pub const LOOM_PACKAGE: &str = "vigil-wake";
/// Package holding the QEMU tests.
pub const QEMU_TESTS_PACKAGE: &str = "qemu-tests";
/// The QEMU tests of the Linux peer: their file, and the filter that
/// names them all (each test's name starts with it).
pub const LINUX_PEER_TESTS_FILE: &str = "qemu-tests/tests/linux_peer.rs";
/// See [`LINUX_PEER_TESTS_FILE`].
pub const LINUX_PEER_TEST_FILTER: &str = "linux_peer";

/// What one step contributed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepResult {
    /// Short name for the summary table.
    pub name: String,
    /// Tests passed and failed in this step.
    pub counts: Counts,
    /// Why the step failed beyond its test counts, if it did.
    pub problem: Option<String>,
}

/// A step and the wall time it took, its builds included: the summary
/// shows where the suite's time goes (CI has 45 minutes on 2 cores).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedStep {
    /// What the step contributed.
    pub result: StepResult,
    /// From the step's start to its result.
    pub elapsed: Duration,
}

impl TimedStep {
    /// Runs `step` and times it.
    fn run(step: impl FnOnce() -> StepResult) -> Self {
        let start = Instant::now();
        let result = step();
        Self {
            result,
            elapsed: start.elapsed(),
        }
    }

    /// The step's line of the summary: counts, whole seconds, and what
    /// went wrong beyond the counts.
    pub fn summary_line(&self) -> String {
        let Self { result, elapsed } = self;
        let problem = result
            .problem
            .as_deref()
            .map(|p| format!("  ({p})"))
            .unwrap_or_default();
        format!(
            "  {:<30} {} passed; {} failed; {} skipped; {:>5} s{problem}",
            result.name,
            result.counts.passed,
            result.counts.failed,
            result.counts.skipped,
            elapsed.as_secs()
        )
    }
}

/// Runs all steps and prints the summary.
pub fn run(_args: &TestArgs) -> Result<()> {
    let start = Instant::now();
    ensure_qemu_for(&[Arch::X86_64, Arch::Aarch64], false)?;
    let mut steps = vec![
        TimedStep::run(|| lint_step("fmt", fmt_command())),
        TimedStep::run(|| lint_step("clippy host", clippy_host_command())),
        TimedStep::run(|| lint_step("clippy kernel", clippy_kernel_command(Arch::X86_64))),
        TimedStep::run(|| {
            lint_step(
                "clippy kernel aarch64",
                clippy_kernel_command(Arch::Aarch64),
            )
        }),
        TimedStep::run(|| cargo_test_step("host crates", host_tests_command())),
        TimedStep::run(|| lint_step("wake docs", wake_docs_command())),
        TimedStep::run(|| lint_step("wake pool example", pool_example_command())),
        TimedStep::run(|| lint_step("wake peer example", peer_example_command())),
    ];
    let loom = TimedStep::run(|| cargo_test_step("loom", loom_tests_command()));
    // The loom step ran every model unmutated: when it passed, the
    // mutation run's own baseline (the same models again, about 4.5
    // minutes on 2 cores) is skipped.
    let loom_passed = loom.result.counts.failed == 0 && loom.result.problem.is_none();
    steps.push(loom);
    steps.push(TimedStep::run(|| mutants_step(loom_passed)));
    steps.extend(kernel_suite_steps());
    steps.push(TimedStep::run(qemu_tests_step));

    let mut total = Counts::default();
    println!();
    println!("xtask test summary:");
    for step in &steps {
        total += step.result.counts;
        println!("{}", step.summary_line());
    }
    println!(
        "  {:<30} {} s (QEMU and toolchain checks included)",
        "wall time",
        start.elapsed().as_secs()
    );
    // The closing line, alone, in the plain form CI reads.
    println!("{} passed, {} failed", total.passed, total.failed);
    if total.failed == 0 {
        Ok(())
    } else {
        Err(XtaskError::Reported)
    }
}

fn fmt_command() -> Command {
    let mut command = cargo();
    command.args(["fmt", "--all", "--check"]);
    command
}

fn clippy_host_command() -> Command {
    let mut command = cargo();
    command.args(["clippy", "--all-targets"]);
    for package in HOST_PACKAGES.iter().chain([&QEMU_TESTS_PACKAGE]) {
        command.args(["-p", package]);
    }
    command.args(["--", "-D", "warnings"]);
    command
}

fn clippy_kernel_command(arch: Arch) -> Command {
    let mut command = cargo();
    command
        .args([
            "clippy",
            "-p",
            KERNEL_PACKAGE,
            "--target",
            arch.kernel_target(),
        ])
        .arg("--target-dir")
        .arg(kernel_target_dir());
    if arch == Arch::Aarch64 {
        command.args(BUILD_STD_ARGS);
    }
    command.args(["--", "-D", "warnings"]);
    command
}

/// Runs a step's command to its end, its output streaming live.
fn run_streamed(name: &str, command: Command) -> std::io::Result<crate::runner::process::Finished> {
    step_banner(&format!("{name}: {}", display_command(&command)));
    let child = KilledOnDrop::spawn(command, Echo::Stdout, Echo::Stderr)?;
    child.wait_for_exit(None)?;
    child.finish(None)
}

/// A lint: one test, passed if the command exits 0 (its findings stream
/// above the summary).
fn lint_step(name: &str, command: Command) -> StepResult {
    let (counts, problem) = match run_streamed(name, command) {
        Ok(finished) if finished.exit == QemuExit::Status(0) => (Counts::new(1, 0), None),
        Ok(_) => (
            Counts::new(0, 1),
            Some("findings above (fix them; an allow needs its reason)".to_string()),
        ),
        Err(err) => (
            Counts::new(0, 1),
            Some(format!("could not run cargo: {err}")),
        ),
    };
    StepResult {
        name: name.to_string(),
        counts,
        problem,
    }
}

fn host_tests_command() -> Command {
    let mut command = cargo();
    command.args(["test", "--no-fail-fast"]);
    for package in HOST_PACKAGES {
        command.args(["-p", package]);
    }
    command
}

/// The wake crate's documentation, every feature on, with rustdoc's
/// warnings (broken links, missing docs) as errors. Its doctests ran in the
/// host step.
fn wake_docs_command() -> Command {
    let mut command = cargo();
    command
        .args(["doc", "--no-deps", "-p", LOOM_PACKAGE])
        .args(["--features", "std,fault-fixtures,test-hooks"])
        .env("RUSTDOCFLAGS", "-D warnings");
    command
}

/// The wake crate's user-space pool benchmark, once and tiny: it builds,
/// runs every workload and configuration, and exits 0 (its numbers are
/// for `--release` runs by hand, not for a test).
fn pool_example_command() -> Command {
    let mut command = cargo();
    command
        .args(["run", "-p", LOOM_PACKAGE, "--example", "pool_bench", "--"])
        .args(["--repeats", "1", "--dispatches", "200"]);
    command
}

/// The wake crate's benchmark against rayon and tokio, once and tiny:
/// every shape at 1 and 2 workers builds, runs to completion on all three
/// pools and exits 0 (no figures checked: they are for `--release` runs).
fn peer_example_command() -> Command {
    let mut command = cargo();
    command
        .args(["run", "-p", LOOM_PACKAGE, "--example", "peer_bench", "--"])
        .args(["--repeats", "1", "--jobs", "200", "--workers", "1,2"])
        .args(["--idle-ms", "20"]);
    command
}

/// The loom models: unit and integration tests under `--cfg loom`. Not the
/// doctests: outside `loom::model` they cannot use loom's atomics, and they
/// already ran in the host step.
fn loom_tests_command() -> Command {
    let mut command = cargo();
    command
        .args([
            "test",
            "--no-fail-fast",
            "--release",
            "--tests",
            "-p",
            LOOM_PACKAGE,
        ])
        .arg("--target-dir")
        .arg(loom_target_dir())
        // Each model prints what it explored (executions, preemption bound,
        // wall time); without `--nocapture` cargo hides it for a pass.
        .args(["--", "--nocapture"])
        .env("RUSTFLAGS", "--cfg loom");
    command
}

/// The mutation run's quick subset: each kill a passed test, each survivor
/// or wrong failure a failed one; a run that fails without a counted
/// failure (a scratch copy that cannot be made) is one failure.
fn mutants_step(baseline_passed: bool) -> StepResult {
    let name = "loom mutants".to_string();
    step_banner(&name);
    match mutants::run_mutants(&MutantsArgs::quick(baseline_passed)) {
        Ok((counts, succeeded)) => {
            let (counts, problem) = cargo_step_counts(Some(counts), succeeded);
            StepResult {
                name,
                counts,
                problem,
            }
        }
        Err(err) => StepResult {
            name,
            counts: Counts::new(0, 1),
            problem: Some(err.to_string()),
        },
    }
}

/// The QEMU tests; with `skip_linux_peer`, all but the Linux peer's.
fn qemu_tests_command(skip_linux_peer: bool) -> Command {
    let mut command = cargo();
    command.args(["test", "--no-fail-fast", "-p", QEMU_TESTS_PACKAGE]);
    if skip_linux_peer {
        command.args(["--", "--skip", LINUX_PEER_TEST_FILTER]);
    }
    command
}

/// The QEMU tests' step. The Linux peer's tests need Debian's kernel
/// package, fetched here first; if it cannot be had (no apt, no network)
/// they are left out and counted as skipped, with the reason, in the
/// step's line of the summary: never run to a silent pass, never a
/// failure of the project's own code.
fn qemu_tests_step() -> StepResult {
    step_banner("linux peer: Debian's kernel package");
    let problem = crate::runner::debian_kernel::ensure_debian_kernel()
        .err()
        .map(|err| err.to_string());
    if let Some(why) = &problem {
        println!("linux peer: SKIPPED: {why}");
    }
    let mut step = cargo_test_step("qemu-tests", qemu_tests_command(problem.is_some()));
    if let Some(why) = problem {
        skip_linux_peer_tests(&mut step, &why, linux_peer_test_count());
    }
    step
}

/// How many tests [`LINUX_PEER_TESTS_FILE`] has (its `#[test]` lines).
pub fn linux_peer_test_count() -> u64 {
    let path = crate::runner::workspace::workspace_root().join(LINUX_PEER_TESTS_FILE);
    std::fs::read_to_string(&path).map_or(1, |text| {
        text.lines().filter(|line| line.trim() == "#[test]").count() as u64
    })
}

/// Counts the Linux peer's `tests` left out of `step` as skipped, and says
/// why on the step's summary line.
pub fn skip_linux_peer_tests(step: &mut StepResult, why: &str, tests: u64) {
    step.counts.skipped += tests;
    let note = format!("{LINUX_PEER_TEST_FILTER} tests skipped: {why}");
    step.problem = Some(match step.problem.take() {
        Some(problem) => format!("{problem}; {note}"),
        None => note,
    });
}

/// Runs a `cargo test` command, streaming its output, and counts results
/// from its `test result:` lines.
fn cargo_test_step(name: &str, command: Command) -> StepResult {
    match run_streamed(name, command) {
        Ok(finished) => {
            // `Finished` describes any child; for cargo only status 0 is a pass.
            let succeeded = finished.exit == QemuExit::Status(0);
            let (counts, problem) =
                cargo_step_counts(sum_cargo_results(&finished.stdout), succeeded);
            StepResult {
                name: name.to_string(),
                counts,
                problem,
            }
        }
        Err(err) => StepResult {
            name: name.to_string(),
            counts: Counts::new(0, 1),
            problem: Some(format!("could not run cargo: {err}")),
        },
    }
}

/// Counts for a cargo step. A cargo that failed without a failing test
/// (a build error, a crashed test binary) still counts as one failure.
pub fn cargo_step_counts(parsed: Option<Counts>, succeeded: bool) -> (Counts, Option<String>) {
    let counts = parsed.unwrap_or_default();
    match (succeeded, counts.failed) {
        (true, _) => (counts, None),
        (false, 0) => (
            Counts::new(counts.passed, 1),
            Some("cargo failed without a failing test: see the errors above".to_string()),
        ),
        (false, _) => (counts, None),
    }
}

/// Builds each kernel variant once and boots the suites of
/// [`kernel_suites`]. A variant that does not build is one failed step; its
/// suites do not run. A variant's build is timed with its first suite.
fn kernel_suite_steps() -> Vec<TimedStep> {
    let mut builds: HashMap<String, Option<KernelArtifacts>> = HashMap::new();
    let mut steps = Vec::new();
    for suite in kernel_suites() {
        let start = Instant::now();
        let variant = suite.build.variant_name();
        let kernel = builds.entry(variant.clone()).or_insert_with(|| {
            step_banner(&format!("kernel build ({variant})"));
            match build_kernel(&suite.build) {
                Ok(kernel) => Some(kernel),
                Err(err) => {
                    steps.push(TimedStep {
                        result: StepResult {
                            name: format!("kernel build ({variant})"),
                            counts: Counts::new(0, 1),
                            problem: Some(err.to_string()),
                        },
                        elapsed: start.elapsed(),
                    });
                    None
                }
            }
        });
        if let Some(kernel) = kernel {
            let result = kernel_suite_step(&suite, kernel);
            steps.push(TimedStep {
                result,
                elapsed: start.elapsed(),
            });
        }
    }
    steps
}

/// Boots one in-kernel suite and counts its results.
fn kernel_suite_step(suite: &KernelSuite, kernel: &KernelArtifacts) -> StepResult {
    let name = suite.name.clone();
    step_banner(&format!(
        "{name}: in-kernel suite ({}, {})",
        suite.build.variant_name(),
        suite.params.join(" ")
    ));
    let config = RunConfig {
        arch: suite.build.arch,
        smp: suite.smp,
        apic: suite.apic,
        timeout_s: Some(KERNEL_SUITE_TIMEOUT_S),
        params: suite.params.clone(),
        echo: true,
        registers_on_timeout: true,
        ..RunConfig::default()
    };
    match qemu::run(&config, kernel) {
        Ok(outcome) => {
            if !outcome.serial.is_empty() && !outcome.serial.ends_with('\n') {
                println!();
            }
            println!("{}", outcome.verdict_line());
            if let Some(examination) = &outcome.examination {
                println!("registers at the timeout:\n{}", examination.registers_text);
                print!("{}", examination.report());
            }
            let report = KernelSuiteReport::parse(&outcome.serial);
            let (mut counts, problem) = kernel_suite_counts(outcome.verdict, &report);
            // The mode asked for must be the mode the kernel ran in (a CPU
            // flag QEMU ignored would test xAPIC twice).
            let mode = suite.boot_line_mark();
            let wrong_mode = (!outcome.serial.contains(mode)).then(|| {
                counts.failed += 1;
                format!("the kernel's boot line does not say `{mode}`")
            });
            StepResult {
                name,
                counts,
                problem: problem
                    .or(wrong_mode)
                    .or_else(|| (!outcome.verdict.is_success()).then(|| outcome.reason())),
            }
        }
        Err(err) => StepResult {
            name,
            counts: Counts::new(0, 1),
            problem: Some(err.to_string()),
        },
    }
}

/// Counts for one in-kernel suite run, cross-checking the kernel's summary
/// line against its verdict. A run that crashed, hung or never printed its
/// summary counts the tests it reported plus one failure for the run.
pub fn kernel_suite_counts(
    verdict: Verdict,
    report: &KernelSuiteReport,
) -> (Counts, Option<String>) {
    let lines = report.case_counts();
    let with_failure = |counts: Counts| Counts {
        failed: counts.failed + 1,
        ..counts
    };
    match (verdict, report.summary) {
        (Verdict::Success, Some(summary)) if summary.failed == 0 => (summary, None),
        (Verdict::Success, Some(summary)) => (
            summary,
            Some("kernel exited with success but its summary has failures".to_string()),
        ),
        (Verdict::CheckFailed, Some(summary)) if summary.failed > 0 => (summary, None),
        (Verdict::CheckFailed, Some(summary)) => (
            with_failure(summary),
            Some("kernel reported a test failure but its summary has none".to_string()),
        ),
        (_, Some(summary)) => (
            with_failure(summary),
            Some(format!("{verdict} after the summary line")),
        ),
        (_, None) => (
            with_failure(lines),
            Some(format!("{verdict} before the summary line")),
        ),
    }
}

fn step_banner(title: &str) {
    println!();
    println!("==> {title}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::test_output::{CaseResult, KernelTestCase};

    fn report(cases: &[(&str, bool)], summary: Option<(u64, u64)>) -> KernelSuiteReport {
        KernelSuiteReport {
            cases: cases
                .iter()
                .map(|&(name, ok)| KernelTestCase {
                    name: name.to_string(),
                    result: if ok {
                        CaseResult::Ok
                    } else {
                        CaseResult::Failed
                    },
                })
                .collect(),
            summary: summary.map(|(p, f)| Counts::new(p, f)),
        }
    }

    #[test]
    fn clean_suite_counts_its_summary() {
        let r = report(&[("a", true), ("b", true)], Some((2, 0)));
        assert_eq!(
            kernel_suite_counts(Verdict::Success, &r),
            (Counts::new(2, 0), None)
        );
    }

    #[test]
    fn failing_suite_counts_its_failures() {
        let r = report(&[("a", true), ("b", false)], Some((1, 1)));
        assert_eq!(
            kernel_suite_counts(Verdict::CheckFailed, &r),
            (Counts::new(1, 1), None)
        );
    }

    #[test]
    fn panic_mid_suite_counts_reported_cases_plus_one() {
        let r = report(&[("a", true), ("b", true)], None);
        let (counts, problem) = kernel_suite_counts(Verdict::Panic, &r);
        assert_eq!(counts, Counts::new(2, 1));
        assert!(problem.unwrap().contains("panic"));
    }

    #[test]
    fn success_without_summary_is_a_failure() {
        let (counts, problem) = kernel_suite_counts(Verdict::Success, &report(&[], None));
        assert_eq!(counts, Counts::new(0, 1));
        assert!(problem.is_some());
    }

    #[test]
    fn inconsistent_kernel_verdicts_are_failures() {
        let (counts, _) = kernel_suite_counts(Verdict::CheckFailed, &report(&[], Some((3, 0))));
        assert_eq!(counts, Counts::new(3, 1));
        let (counts, _) = kernel_suite_counts(Verdict::Timeout, &report(&[], Some((3, 0))));
        assert_eq!(counts, Counts::new(3, 1));
    }

    #[test]
    fn cargo_failure_without_failing_test_counts_one() {
        assert_eq!(
            cargo_step_counts(Some(Counts::new(5, 0)), true),
            (Counts::new(5, 0), None)
        );
        assert_eq!(cargo_step_counts(None, true), (Counts::new(0, 0), None));
        assert_eq!(
            cargo_step_counts(Some(Counts::new(5, 2)), false).0,
            Counts::new(5, 2)
        );
        let (counts, problem) = cargo_step_counts(None, false);
        assert_eq!(counts, Counts::new(0, 1));
        assert!(problem.is_some());
    }

    #[test]
    fn a_steps_summary_line_has_its_counts_and_whole_seconds() {
        let step = TimedStep {
            result: StepResult {
                name: "qemu-tests".to_string(),
                counts: Counts::new(20, 1).with_skipped(2),
                problem: Some("cargo failed".to_string()),
            },
            elapsed: Duration::from_millis(1_234_999),
        };
        assert_eq!(
            step.summary_line(),
            "  qemu-tests                     20 passed; 1 failed; 2 skipped;  1234 s  (cargo failed)"
        );
    }

    #[test]
    fn a_linux_peer_without_its_kernel_is_skipped_with_the_reason() {
        let rendered = display_command(&qemu_tests_command(true));
        assert!(
            rendered.ends_with("test --no-fail-fast -p qemu-tests -- --skip linux_peer"),
            "{rendered}"
        );
        assert!(!display_command(&qemu_tests_command(false)).contains("--skip"));
        let mut step = StepResult {
            name: "qemu-tests".to_string(),
            counts: Counts::new(20, 0),
            problem: None,
        };
        skip_linux_peer_tests(&mut step, "apt-get download failed", 1);
        assert_eq!(step.counts, Counts::new(20, 0).with_skipped(1));
        assert_eq!(
            step.problem.as_deref(),
            Some("linux_peer tests skipped: apt-get download failed")
        );
        // The file's tests are what is counted, and each is named by the
        // filter (so `--skip` leaves out exactly those).
        let count = linux_peer_test_count();
        assert!(count >= 1);
        let text = std::fs::read_to_string(
            crate::runner::workspace::workspace_root().join(LINUX_PEER_TESTS_FILE),
        )
        .unwrap();
        let names: Vec<&str> = text
            .lines()
            .filter_map(|line| line.trim().strip_prefix("fn "))
            .collect();
        assert_eq!(names.len() as u64, count, "{names:?}");
        assert!(
            names
                .iter()
                .all(|name| name.starts_with(LINUX_PEER_TEST_FILTER)),
            "{names:?}"
        );
    }

    #[test]
    fn kernel_suites_cover_the_agreed_matrix() {
        let suites = kernel_suites();
        let described: Vec<(String, u32, String)> = suites
            .iter()
            .map(|suite| {
                (
                    suite.build.variant_name(),
                    suite.smp,
                    suite.params.join(" "),
                )
            })
            .collect();
        let expected = [
            ("debug", 1, "mode=test"),
            ("debug", 4, "mode=test"),
            ("debug", 32, "mode=test"),
            ("debug", 4, "mode=test"),
            ("aarch64-debug", 1, "mode=test"),
            ("aarch64-debug", 4, "mode=test"),
            ("aarch64-debug", 32, "mode=test"),
            ("debug", 4, "mode=test test=sched policy=always-ipi"),
            ("debug", 1, "mode=test test=sched pool=steal"),
            ("debug-idle-poll", 2, "mode=test test=sched"),
        ];
        assert_eq!(
            described,
            expected
                .iter()
                .map(|&(variant, smp, params)| (variant.to_string(), smp, params.to_string()))
                .collect::<Vec<_>>()
        );
        // No policy for the idle-poll build: it would be rejected.
        assert!(suites[9].params.iter().all(|p| !p.starts_with("policy=")));
        let x2apic: Vec<u32> = suites
            .iter()
            .filter(|suite| suite.apic == Apic::X2apic)
            .map(|suite| suite.smp)
            .collect();
        assert_eq!(x2apic, [4]);
    }

    #[test]
    fn step_commands_are_the_agreed_ones() {
        let host = display_command(&host_tests_command());
        assert!(
            host.ends_with(
                "test --no-fail-fast -p vigil-wake -p vigil-proto -p vigil-boot -p xtask -p linux-laplace"
            ),
            "{host}"
        );
        let loom = loom_tests_command();
        let rendered = display_command(&loom);
        assert!(
            rendered.contains("test --no-fail-fast --release --tests -p vigil-wake --target-dir")
        );
        assert!(
            rendered.ends_with("target/loom -- --nocapture"),
            "{rendered}"
        );
        let rustflags = loom
            .get_envs()
            .find(|(key, _)| *key == "RUSTFLAGS")
            .and_then(|(_, value)| value);
        assert_eq!(rustflags, Some(std::ffi::OsStr::new("--cfg loom")));
    }
}
