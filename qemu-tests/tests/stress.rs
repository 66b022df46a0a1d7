//! Stress campaigns through the xtask library: the racy flag's lost
//! wakeups are caught (by the in-guest watchdog, or, with the watchdog
//! off, by the host's stuck-core detector), and the state machine survives
//! the same boots.
//!
//! Each campaign is bounded: at most [`MAX_BOOTS`] boots of 16 cores, one
//! QEMU at a time per test (the test harness runs two tests at once).
//!
//! The racy flag's loss does not rest on the host's timing: chaos's holds
//! keep an idle core between its re-check and its commit until a waker has
//! notified it, which `racy-flag` loses every time (a few holds per core per
//! boot). Random delays alone once caught nothing in 6 boots on a CI
//! machine that caught a loss per boot here.

use qemu_tests::{assert_the_examination_accuses, claimed_core, examination_report, kernel};
use xtask::campaign::run_class::RunClass;
use xtask::diagnosis::stuck_cores::{HALTED_WITH_WORK, STRANDED_STEALABLE};
use xtask::stress::runner::{StressConfig, StressRun, run_stress};
use xtask::{Apic, IpiFault, Pool, WakePolicy, Watchdog};

/// Boots per campaign.
const MAX_BOOTS: u32 = 6;
/// Cores per boot: enough holds per boot (14 to 16 in all at 16 cores and
/// 300 iterations, measured on debug boots) that the first boot of a racy
/// campaign fails.
const SMP: u32 = 16;
/// Same campaign, same seeds, for every policy.
const BASE_SEED: u64 = 4004;
/// Laplace iterations per boot (the kernel's default grid, 64×64).
const ITERATIONS: u32 = 300;
/// Without output for this long a guest is stuck: generous, because a
/// healthy 16-vCPU debug guest computes silently for several seconds and
/// another test's QEMU shares the two host cores.
const STALL_S: u64 = 30;

fn campaign(policy: WakePolicy, watchdog: Watchdog, stop_at_first_failure: bool) -> Vec<StressRun> {
    let config = StressConfig {
        chaos: true,
        watchdog,
        iterations: Some(ITERATIONS),
        base_seed: BASE_SEED,
        stall_s: STALL_S,
        timeout_s: 900,
        jobs: 1,
        stop_at_first_failure,
        // The pinned pool: every round wakes every core, the racy flag's
        // loss needs those wakes.
        pool: Some(Pool::Pinned),
        ..StressConfig::new(vec![SMP], MAX_BOOTS, policy)
    };
    run_stress(&config, kernel(), |_| {}).unwrap_or_else(|err| panic!("stress: {err}"))
}

/// Boots per IPI-fault campaign, and their cores: every boot must be caught.
const FAULT_BOOTS: u32 = 3;
const FAULT_SMP: u32 = 4;
/// A 4-vCPU debug guest prints its result within a second or two; the
/// margin covers a loaded CI host.
const FAULT_STALL_S: u64 = 15;

/// A small state-machine campaign at [`FAULT_SMP`] cores with the pinned
/// pool (every round wakes every core: the IPI faults need those wakes).
fn small_campaign(fault: Option<IpiFault>, watchdog: Watchdog, ipi_oracle: bool) -> Vec<StressRun> {
    fault_campaign(fault, watchdog, ipi_oracle, Pool::Pinned, FAULT_BOOTS)
}

/// [`small_campaign`] in x2APIC mode, 2 boots.
fn small_x2apic_campaign(fault: Option<IpiFault>) -> Vec<StressRun> {
    let mut config = fault_config(fault, Watchdog::Ms(20), true, Pool::Pinned, 2);
    config.scope.apic = Apic::X2apic;
    let runs = run_stress(&config, kernel(), |_| {}).unwrap_or_else(|err| panic!("stress: {err}"));
    for run in &runs {
        assert!(
            run.record.serial.contains("x2APIC mode"),
            "{}",
            run.record.serial
        );
    }
    runs
}

/// `boots` state-machine boots at [`FAULT_SMP`] cores, 100 iterations.
fn fault_campaign(
    fault: Option<IpiFault>,
    watchdog: Watchdog,
    ipi_oracle: bool,
    pool: Pool,
    boots: u32,
) -> Vec<StressRun> {
    let config = fault_config(fault, watchdog, ipi_oracle, pool, boots);
    run_stress(&config, kernel(), |_| {}).unwrap_or_else(|err| panic!("stress: {err}"))
}

fn fault_config(
    fault: Option<IpiFault>,
    watchdog: Watchdog,
    ipi_oracle: bool,
    pool: Pool,
    boots: u32,
) -> StressConfig {
    StressConfig {
        watchdog,
        fault,
        ipi_oracle,
        iterations: Some(100),
        base_seed: BASE_SEED,
        stall_s: FAULT_STALL_S,
        timeout_s: 300,
        jobs: 1,
        pool: Some(pool),
        // The round plan's chunk count depends on the host's timing (its
        // parallelism, a round's measured work); fixed at one chunk per
        // core, every boot publishes the same rounds on every host, and
        // search wakes fan out (what the faults drop or misdirect).
        chunks: (pool == Pool::Steal).then_some(FAULT_SMP),
        ..StressConfig::new(vec![FAULT_SMP], boots, WakePolicy::StateMachine)
    }
}

fn assert_caught_in_guest(fault: IpiFault) {
    assert_every_boot_reports_the_claimed_core(&small_campaign(
        Some(fault),
        Watchdog::Ms(20),
        false,
    ));
}

/// Every boot of `runs` is a lost wakeup whose report names the core the
/// fault claimed.
fn assert_every_boot_reports_the_claimed_core(runs: &[StressRun]) {
    assert_eq!(runs.len(), FAULT_BOOTS as usize);
    for run in runs {
        assert_eq!(run.record.class, RunClass::LostWakeups, "{}", summary(runs));
        let victim = claimed_core(run);
        let named = format!("LOST WAKEUP on core {victim}: ");
        assert!(
            run.record
                .lost_wakeups
                .reports
                .iter()
                .any(|report| report.starts_with(&named)),
            "no report names core {victim}:\n{}",
            run.record.serial
        );
    }
}

fn assert_caught_by_the_host(fault: IpiFault) {
    let runs = small_campaign(Some(fault), Watchdog::Off, false);
    assert_eq!(runs.len(), FAULT_BOOTS as usize);
    for run in &runs {
        assert_eq!(run.record.class, RunClass::Stuck, "{}", summary(&runs));
        let victim = claimed_core(run);
        assert_the_examination_accuses(run, &format!("core {victim} "));
    }
}

/// `fault=stranded-steal` at [`FAULT_SMP`] cores with the stealing pool:
/// one round's chunks left queued with every core halted.
fn stranded_steal_campaign(watchdog: Watchdog, boots: u32) -> Vec<StressRun> {
    fault_campaign(
        Some(IpiFault::StrandedSteal),
        watchdog,
        false,
        Pool::Steal,
        boots,
    )
}

/// The round the fault stranded, from its `fault: stranded-steal: round N`
/// line (the fault fired).
fn stranded_round(run: &StressRun) -> u64 {
    run.record
        .serial
        .lines()
        .find_map(|line| {
            let rest = line.split("fault: stranded-steal: round ").nth(1)?;
            rest.split(':').next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("the fault did not fire:\n{}", run.record.serial))
}

#[test]
fn stranded_stealable_work_is_reported_in_guest_in_every_boot() {
    let runs = stranded_steal_campaign(Watchdog::Ms(20), FAULT_BOOTS);
    assert_eq!(runs.len(), FAULT_BOOTS as usize);
    for run in &runs {
        assert_eq!(
            run.record.class,
            RunClass::StrandedWork,
            "{}",
            summary(&runs)
        );
        stranded_round(run);
        assert!(
            run.record.reason.starts_with("STRANDED STEALABLE WORK: "),
            "{}",
            run.record.reason
        );
    }
}

/// With the watchdog off nothing in the guest looks: the boot hangs with
/// every core halted, and the host's examination reads the pool's queued
/// count through the debug table and says the work is stranded.
#[test]
fn stranded_stealable_work_without_watchdog_hangs_and_the_host_finds_it() {
    let boots = 2;
    let runs = stranded_steal_campaign(Watchdog::Off, boots);
    assert_eq!(runs.len(), boots as usize);
    for run in &runs {
        assert_eq!(run.record.class, RunClass::Stuck, "{}", summary(&runs));
        stranded_round(run);
        let examination = run
            .record
            .examination
            .as_ref()
            .expect("a stuck run is examined");
        let report = examination.report();
        assert!(
            examination
                .stranded_stealable()
                .is_some_and(|queued| queued > 0),
            "{report}"
        );
        assert!(report.contains(STRANDED_STEALABLE), "{report}");
        assert!(!report.contains(HALTED_WITH_WORK), "{report}");
    }
}

/// QEMU's own count of wake-vector ICR writes equals the guest's in every
/// boot; a guest that leaves one IPI out of its count fails every boot as
/// an IPI count mismatch, off by exactly one. In both APIC modes (QEMU 10
/// traces x2APIC's MSR writes to the ICR too).
#[test]
fn qemu_counts_the_same_wake_ipis_as_the_guest_and_catches_one_miscounted() {
    let mut honest = small_campaign(None, Watchdog::Ms(20), true);
    honest.extend(small_x2apic_campaign(None));
    for run in &honest {
        assert_eq!(run.record.class, RunClass::Passed, "{}", summary(&honest));
        let check = run.record.ipi_oracle.expect("the oracle compared");
        assert!(check.guest_wake_ipis > 0, "{}", check.describe());
        assert!(check.matches(), "{}", check.describe());
    }
    let mut miscounted = small_campaign(Some(IpiFault::MiscountedIpi), Watchdog::Ms(20), true);
    miscounted.extend(small_x2apic_campaign(Some(IpiFault::MiscountedIpi)));
    for run in &miscounted {
        assert_eq!(
            run.record.class,
            RunClass::IpiCountMismatch,
            "{}",
            summary(&miscounted)
        );
        let check = run.record.ipi_oracle.expect("the oracle compared");
        assert_eq!(check.qemu_wake_ipis, check.guest_wake_ipis + 1);
    }
}

#[test]
fn a_dropped_ipi_is_reported_in_guest_naming_the_core_in_every_boot() {
    assert_caught_in_guest(IpiFault::DroppedIpi);
}

#[test]
fn a_misdirected_ipi_is_reported_in_guest_naming_the_core_in_every_boot() {
    assert_caught_in_guest(IpiFault::MisdirectedIpi);
}

#[test]
fn a_dropped_ipi_without_watchdog_hangs_and_the_host_names_the_core() {
    assert_caught_by_the_host(IpiFault::DroppedIpi);
}

#[test]
fn a_misdirected_ipi_without_watchdog_hangs_and_the_host_names_the_core() {
    assert_caught_by_the_host(IpiFault::MisdirectedIpi);
}

/// The IPI faults with the default (stealing) pool at [`FAULT_SMP`]
/// cores: a search wake is what the fault drops or misdirects, and the
/// fork-join caller, which then runs every chunk itself, never halts. The
/// scan no longer waits for it to: it runs on the caller's rounds.
fn default_pool_campaign(fault: IpiFault, watchdog: Watchdog) -> Vec<StressRun> {
    fault_campaign(Some(fault), watchdog, false, Pool::Steal, FAULT_BOOTS)
}

fn assert_caught_in_guest_with_the_default_pool(fault: IpiFault) {
    assert_every_boot_reports_the_claimed_core(&default_pool_campaign(fault, Watchdog::Ms(20)));
}

/// With the watchdog off the boot either hangs (the host's examination
/// names the halted core with work) or finishes because the caller did
/// every chunk, and then the final statistics show the core halted with
/// work in its inbox: either way the host names the claimed core.
fn assert_caught_by_the_host_with_the_default_pool(fault: IpiFault) {
    let runs = default_pool_campaign(fault, Watchdog::Off);
    assert_eq!(runs.len(), FAULT_BOOTS as usize);
    for run in &runs {
        let victim = claimed_core(run);
        match run.record.class {
            RunClass::Stuck => {
                let report = examination_report(run);
                assert!(
                    report.lines().any(|line| line.contains(HALTED_WITH_WORK)
                        && line.trim_start().starts_with(&format!("core {victim} "))),
                    "expected core {victim}:\n{report}"
                );
            }
            RunClass::LostWakeups => {
                assert_eq!(run.record.lost_wakeups.count(), 0, "the watchdog is off");
                assert!(
                    run.record.reason.contains("at the end of the run")
                        && run.record.reason.contains(&format!("core {victim} (")),
                    "expected core {victim}: {}",
                    run.record.reason
                );
            }
            _ => panic!("not caught:\n{}", summary(&runs)),
        }
    }
}

#[test]
fn a_dropped_ipi_with_the_default_pool_is_reported_in_guest_in_every_boot() {
    assert_caught_in_guest_with_the_default_pool(IpiFault::DroppedIpi);
}

#[test]
fn a_misdirected_ipi_with_the_default_pool_is_reported_in_guest_in_every_boot() {
    assert_caught_in_guest_with_the_default_pool(IpiFault::MisdirectedIpi);
}

#[test]
fn a_dropped_ipi_with_the_default_pool_and_no_watchdog_is_found_by_the_host() {
    assert_caught_by_the_host_with_the_default_pool(IpiFault::DroppedIpi);
}

#[test]
fn a_misdirected_ipi_with_the_default_pool_and_no_watchdog_is_found_by_the_host() {
    assert_caught_by_the_host_with_the_default_pool(IpiFault::MisdirectedIpi);
}

fn summary(runs: &[StressRun]) -> String {
    runs.iter()
        .map(|run| {
            format!(
                "run {} seed={}: {}: {}\n  {}\n",
                run.planned.run,
                run.planned.seed,
                run.record.class,
                run.record.reason,
                run.planned.boot.reproduce
            )
        })
        .collect()
}

#[test]
fn racy_flag_with_chaos_at_16_cores_loses_wakeups_the_watchdog_catches() {
    let runs = campaign(WakePolicy::RacyFlag, Watchdog::Ms(20), true);
    let caught = runs
        .iter()
        .find(|run| run.record.class == RunClass::LostWakeups)
        .unwrap_or_else(|| {
            panic!(
                "no lost wakeup in {} boots:\n{}",
                runs.len(),
                summary(&runs)
            )
        });
    assert!(caught.record.lost_wakeups.count() > 0, "{}", summary(&runs));
    assert!(
        caught.record.lost_wakeups.reports[0].starts_with("LOST WAKEUP on core "),
        "{}",
        caught.record.lost_wakeups.reports[0]
    );
    assert!(
        caught
            .planned
            .boot
            .reproduce
            .contains(&format!("seed={}", caught.planned.seed))
    );
}

#[test]
fn racy_flag_without_watchdog_hangs_and_the_host_names_a_halted_core_with_work() {
    let runs = campaign(WakePolicy::RacyFlag, Watchdog::Off, true);
    let stuck = runs
        .iter()
        .find(|run| run.record.class == RunClass::Stuck)
        .unwrap_or_else(|| panic!("no hang in {} boots:\n{}", runs.len(), summary(&runs)));
    let report = examination_report(stuck);
    let accused: Vec<&str> = report
        .lines()
        .filter(|line| line.contains(HALTED_WITH_WORK))
        .collect();
    assert!(!accused.is_empty(), "no core accused:\n{report}");
    for line in accused {
        // `core N (vCPU N): HLT=1 RIP=0x... state=... inbox=K  <- HALTED WITH WORK`, K > 0.
        assert!(line.trim_start().starts_with("core "), "{line}");
        assert!(line.contains("HLT=1"), "{line}");
        assert!(line.contains("RIP=0x"), "{line}");
        let inbox: u64 = line
            .split_whitespace()
            .find_map(|word| word.strip_prefix("inbox="))
            .and_then(|len| len.parse().ok())
            .unwrap_or_else(|| panic!("no inbox length in {line}"));
        assert!(inbox > 0, "{line}");
    }
    assert!(
        report.contains("halted with work in their inbox"),
        "{report}"
    );
}

#[test]
fn state_machine_survives_the_same_stress() {
    let runs = campaign(WakePolicy::StateMachine, Watchdog::Ms(20), false);
    assert_eq!(runs.len(), MAX_BOOTS as usize);
    let failed: Vec<&StressRun> = runs
        .iter()
        .filter(|run| !run.record.class.is_pass())
        .collect();
    assert!(failed.is_empty(), "failures:\n{}", summary(&runs));
    for run in &runs {
        assert!(
            run.record
                .checksum_checks
                .iter()
                .all(|check| check.matches())
        );
        assert_eq!(run.record.lost_wakeups.count(), 0);
    }
}

/// The stealing pool under chaos: no lost wakeup, no stuck core, no
/// stranded chunk, in every boot (search wakes and the round's join wake
/// go through the same protocol). 8 chunks a round (fixed: the round
/// plan's count depends on the host), so that searchers chain.
#[test]
fn state_machine_with_the_stealing_pool_survives_chaos() {
    let config = StressConfig {
        chaos: true,
        watchdog: Watchdog::Ms(20),
        size: Some(128),
        iterations: Some(100),
        base_seed: BASE_SEED,
        stall_s: STALL_S,
        timeout_s: 900,
        jobs: 1,
        pool: Some(Pool::Steal),
        chunks: Some(8),
        ..StressConfig::new(vec![SMP], 3, WakePolicy::StateMachine)
    };
    let runs = run_stress(&config, kernel(), |_| {}).unwrap_or_else(|err| panic!("stress: {err}"));
    assert!(
        runs.iter().all(|run| run.record.class == RunClass::Passed),
        "{}",
        summary(&runs)
    );
}
