//! Builds the kernel once per test binary and boots it through the xtask
//! runner.

use std::sync::OnceLock;

use xtask::diagnosis::stuck_cores::HALTED_WITH_WORK;
use xtask::stress::runner::StressRun;
use xtask::{BuildConfig, KernelArtifacts, RunConfig, RunOutcome};

/// The debug kernel and its images, built on first use. Tests in one
/// binary run in parallel and share this build; if it fails, every test
/// that needs it fails with the build error.
pub fn kernel() -> &'static KernelArtifacts {
    static KERNEL: OnceLock<Result<KernelArtifacts, String>> = OnceLock::new();
    let built = KERNEL.get_or_init(|| {
        xtask::runner::install::ensure_qemu(false).map_err(|err| err.to_string())?;
        xtask::build_kernel(&BuildConfig::default()).map_err(|err| err.to_string())
    });
    match built {
        Ok(kernel) => kernel,
        Err(err) => panic!("kernel build failed: {err}"),
    }
}

/// Boots the kernel with `params` on `smp` cores, killing it after
/// `timeout_s`. Panics only if QEMU could not be run at all.
pub fn boot(smp: u32, timeout_s: u64, params: &[&str]) -> RunOutcome {
    boot_with(RunConfig {
        smp,
        timeout_s: Some(timeout_s),
        registers_on_timeout: true,
        ..RunConfig::with_params(params)
    })
}

/// Boots the kernel as `config` says (machine, firmware, ...).
pub fn boot_with(config: RunConfig) -> RunOutcome {
    let kernel = kernel();
    if config.uefi {
        xtask::runner::install::ensure_qemu(true).unwrap_or_else(|err| panic!("{err}"));
    }
    xtask::run(&config, kernel).unwrap_or_else(|err| panic!("could not boot QEMU: {err}"))
}

/// Everything worth seeing when an assertion about a run fails.
pub fn describe(outcome: &RunOutcome) -> String {
    format!(
        "{}\ncommand: {}\nelapsed: {:.1} s\n--- serial ---\n{}\n--- QEMU stderr ---\n{}",
        outcome.verdict_line(),
        outcome.command_line,
        outcome.elapsed.as_secs_f64(),
        outcome.serial,
        outcome.qemu_stderr
    )
}

/// The core an IPI fault (`fault=dropped-ipi`, `misdirected-ipi`) claimed
/// in this boot: its `... fired: core M ... claimed core N` line.
pub fn claimed_core(run: &StressRun) -> u32 {
    run.record
        .serial
        .lines()
        .find_map(|line| {
            let rest = line.split(" fired: core ").nth(1)?;
            let claimed = rest.split(" claimed core ").nth(1)?;
            claimed.split_whitespace().next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("the fault did not fire:\n{}", run.record.serial))
}

/// The host's examination of a stuck boot, as it prints it.
pub fn examination_report(run: &StressRun) -> String {
    run.record
        .examination
        .as_ref()
        .expect("a stuck run is examined")
        .report()
}

/// Asserts that the host's examination of a stuck boot names exactly one
/// core halted with work, and that its line begins with `expected` (after
/// the indent); the report is printed if not.
pub fn assert_the_examination_accuses(run: &StressRun, expected: &str) {
    let report = examination_report(run);
    let accused: Vec<&str> = report
        .lines()
        .filter(|line| line.contains(HALTED_WITH_WORK))
        .collect();
    assert_eq!(accused.len(), 1, "{report}");
    assert!(
        accused[0].trim_start().starts_with(expected),
        "expected {expected:?}:\n{report}"
    );
}
