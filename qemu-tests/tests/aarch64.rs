//! The same kernel on AArch64 (QEMU's `virt`, GICv3): a stress smoke run
//! with chaos whose wake-SGI counts QEMU's trace confirms, the racy flag's
//! lost wakeup caught by the in-guest watchdog, and a dropped wake SGI
//! found by the host's examination of the hung guest (its `wfi`-halted
//! vCPU named with work in its inbox). The in-kernel suite on AArch64 is
//! `cargo xtask test`'s own step (`kernel aarch64 smp=N`).

use std::sync::OnceLock;

use qemu_tests::{assert_the_examination_accuses, claimed_core};
use xtask::campaign::run_class::RunClass;
use xtask::stress::runner::{StressConfig, StressRun, run_stress};
use xtask::{BuildConfig, IpiFault, KernelArtifacts, Pool, WakePolicy, Watchdog};

/// Cores per boot.
const SMP: u32 = 4;
/// Laplace iterations per boot (a debug 4-vCPU AArch64 guest runs about
/// 10 a second under TCG on a loaded 2-core host).
const ITERATIONS: u32 = 100;
/// Same seeds every run.
const BASE_SEED: u64 = 2727;
/// Without output for this long a guest is stuck (a healthy guest prints a
/// progress line every 10 s).
const STALL_S: u64 = 30;

/// The AArch64 debug kernel, built once for this test binary.
fn kernel() -> &'static KernelArtifacts {
    static KERNEL: OnceLock<Result<KernelArtifacts, String>> = OnceLock::new();
    let built = KERNEL.get_or_init(|| {
        xtask::runner::install::ensure_qemu_for(&[xtask::Arch::Aarch64], false)
            .map_err(|err| err.to_string())?;
        xtask::build_kernel(&BuildConfig {
            arch: xtask::Arch::Aarch64,
            ..BuildConfig::default()
        })
        .map_err(|err| err.to_string())
    });
    match built {
        Ok(kernel) => kernel,
        Err(err) => panic!("AArch64 kernel build failed: {err}"),
    }
}

fn config(policy: WakePolicy, boots: u32) -> StressConfig {
    let mut config = StressConfig {
        iterations: Some(ITERATIONS),
        base_seed: BASE_SEED,
        stall_s: STALL_S,
        timeout_s: 600,
        jobs: 1,
        ..StressConfig::new(vec![SMP], boots, policy)
    };
    config.build.arch = xtask::Arch::Aarch64;
    config.scope.arch = xtask::Arch::Aarch64;
    config
}

fn run(config: &StressConfig) -> Vec<StressRun> {
    config.validate().unwrap_or_else(|err| panic!("{err}"));
    run_stress(config, kernel(), |_| {}).unwrap_or_else(|err| panic!("stress: {err}"))
}

fn summary(runs: &[StressRun]) -> String {
    runs.iter()
        .map(|run| format!("{:?}\n{}", run.record.class, run.record.serial))
        .collect::<Vec<_>>()
        .join("\n----\n")
}

/// The default kernel with chaos passes, and in every boot QEMU saw as many
/// wake SGIs written to `ICC_SGI1R_EL1` as the guest counted.
#[test]
fn chaos_boots_pass_and_qemu_counts_the_guests_wake_sgis() {
    let runs = run(&StressConfig {
        chaos: true,
        ipi_oracle: true,
        ..config(WakePolicy::StateMachine, 2)
    });
    for run in &runs {
        assert_eq!(run.record.class, RunClass::Passed, "{}", summary(&runs));
        let check = run.record.ipi_oracle.expect("the oracle compared");
        assert!(check.guest_wake_ipis > 0, "{}", check.describe());
        assert!(check.matches(), "{}", check.describe());
    }
}

/// The racy flag (the bug the protocol exists for) loses a wakeup in a
/// boot with chaos's holds (which keep an idle core between its re-check
/// and its commit until a waker has notified it) and the pinned pool, and
/// the in-guest watchdog reports it.
#[test]
fn the_racy_flag_loses_a_wakeup_and_the_guest_reports_it() {
    let runs = run(&StressConfig {
        chaos: true,
        pool: Some(Pool::Pinned),
        ..config(WakePolicy::RacyFlag, 1)
    });
    assert_eq!(runs.len(), 1, "{}", summary(&runs));
    assert_eq!(
        runs[0].record.class,
        RunClass::LostWakeups,
        "{}",
        summary(&runs)
    );
}

/// A dropped wake SGI with the watchdog off hangs the guest; the host's
/// examination finds the claimed core halted in `wfi` with work.
#[test]
fn a_dropped_sgi_without_watchdog_hangs_and_the_host_names_the_core() {
    let runs = run(&StressConfig {
        fault: Some(IpiFault::DroppedIpi),
        watchdog: Watchdog::Off,
        pool: Some(Pool::Pinned),
        stall_s: 15,
        ..config(WakePolicy::StateMachine, 1)
    });
    for run in &runs {
        assert_eq!(run.record.class, RunClass::Stuck, "{}", summary(&runs));
        let claimed = claimed_core(run);
        // Halted in `wfi`.
        assert_the_examination_accuses(run, &format!("core {claimed} (vCPU {claimed}): HLT=1 "));
    }
}
