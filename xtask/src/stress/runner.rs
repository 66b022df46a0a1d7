//! Stress campaigns as a library: boot the Laplace workload many times per
//! core count, in parallel, each boot with its own seed, and classify every
//! run (used by `cargo xtask stress` and by the QEMU tests).

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::args::{self, Apic, Feature, IpiFault, Pool, WakePolicy, Watchdog};
use crate::campaign::job_pool::run_jobs;
use crate::campaign::reproduce::reproduce_command;
use crate::campaign::run_class::{RunClass, classify, explain};
use crate::campaign::seeds::run_seed;
use crate::diagnosis::ipi_oracle::IpiOracleCheck;
use crate::diagnosis::stuck_cores::GuestExamination;
use crate::error::{Result, XtaskError};
use crate::guest::kernel_params::{GuestWorkload, KernelParams};
use crate::guest::laplace_check::ChecksumCheck;
use crate::guest::run_output::{GridResult, LostWakeups};
use crate::guest::vigil_stats::VigilStats;
use crate::runner::kernel_build::{BuildConfig, KernelArtifacts};
use crate::runner::qemu::{self, RunConfig};
use crate::stress::shard::Shard;

/// The first fork-join round `fault=stranded-steal` may strand, and the
/// kernel's default Laplace grid side (`size=`): vigil-proto's.
pub use vigil_proto::boot_params::{DEFAULT_GRID_SIZE, STRANDED_ROUND};

/// Default seconds without serial output before a guest counts as stuck.
pub const DEFAULT_STALL_S: u64 = 60;
/// Default limit on one boot, however chatty.
pub const DEFAULT_RUN_TIMEOUT_S: u64 = 1800;

/// A stress campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StressConfig {
    /// The kernel build the runs boot (for the reproduce commands; the
    /// caller builds it).
    #[serde(skip)]
    pub build: BuildConfig,
    /// Core counts, each booted `runs` times.
    pub smp: Vec<u32>,
    /// Boots per core count.
    pub runs: u32,
    /// `policy=`; must be `None` for an `idle-poll` build.
    pub policy: Option<WakePolicy>,
    /// `chaos=on`.
    pub chaos: bool,
    /// `watchdog=`.
    pub watchdog: Watchdog,
    /// `fault=`: an IPI fault in every boot.
    pub fault: Option<IpiFault>,
    /// Compare every boot's wake-IPI count with QEMU's trace (the oracle).
    pub ipi_oracle: bool,
    /// `pool=` (kernel default when `None`).
    pub pool: Option<Pool>,
    /// `size=` (kernel default when `None`).
    pub size: Option<u32>,
    /// `iterations=` (kernel default when `None`).
    pub iterations: Option<u32>,
    /// Seed every run's seed derives from.
    pub base_seed: u64,
    /// Seconds without serial output after which a run is stuck.
    pub stall_s: u64,
    /// Limit on one boot.
    pub timeout_s: u64,
    /// QEMUs at once.
    pub jobs: usize,
    /// Start no further boot once one has failed (runs already going
    /// finish).
    pub stop_at_first_failure: bool,
    /// Boot only this slice of the plan (`--shard K/N`).
    pub shard: Option<Shard>,
    /// The CPU's local APIC interface in every boot.
    pub apic: Apic,
}

impl StressConfig {
    /// Defaults for `smp` × `runs` boots of `policy` (debug build, no
    /// chaos, the kernel's default watchdog, one job per host core).
    pub fn new(smp: Vec<u32>, runs: u32, policy: WakePolicy) -> Self {
        Self {
            build: BuildConfig::default(),
            smp,
            runs,
            policy: Some(policy),
            chaos: false,
            watchdog: Watchdog::Ms(args::DEFAULT_WATCHDOG_MS),
            fault: None,
            ipi_oracle: false,
            size: None,
            iterations: None,
            pool: None,
            base_seed: 1,
            stall_s: DEFAULT_STALL_S,
            timeout_s: DEFAULT_RUN_TIMEOUT_S,
            jobs: default_jobs(),
            stop_at_first_failure: false,
            shard: None,
            apic: Apic::Xapic,
        }
    }

    /// The policy the kernel will report: `poll` for an idle-poll build.
    pub fn policy_name(&self) -> &'static str {
        match self.policy {
            Some(policy) => policy.kernel_name(),
            None => "poll",
        }
    }

    /// Whether every failure is a bug (all but `racy-flag` and injected
    /// faults, whose failures are the point).
    pub fn expects_no_failures(&self) -> bool {
        self.fault.is_none() && self.policy.is_none_or(WakePolicy::is_correct)
    }

    /// Checks what the command line checks; errors are usage errors.
    pub fn validate(&self) -> Result<()> {
        if self.smp.is_empty() {
            return Err(XtaskError::usage("--smp needs at least one core count"));
        }
        for &smp in &self.smp {
            args::check_smp(smp).map_err(XtaskError::Usage)?;
            // Stress boots QEMU's default machine, pc.
            args::check_platform(smp, args::Machine::Pc, self.apic).map_err(XtaskError::Usage)?;
        }
        if self.runs == 0 {
            return Err(XtaskError::usage("--runs must be at least 1"));
        }
        if self.jobs == 0 {
            return Err(XtaskError::usage("--jobs must be at least 1"));
        }
        let idle_poll = self.build.features.contains(&Feature::IdlePoll);
        if idle_poll && self.policy.is_some() {
            return Err(XtaskError::usage(
                "an idle-poll build has its own policy (poll): leave out --policy",
            ));
        }
        if !idle_poll && self.policy.is_none() {
            return Err(XtaskError::usage(
                "a policy is needed unless the build has --features idle-poll",
            ));
        }
        if self.fault == Some(IpiFault::StrandedSteal) {
            if self.pool == Some(Pool::Pinned) {
                return Err(XtaskError::usage(
                    "--fault stranded-steal strands stealable work: it needs the stealing pool, not --pool pinned",
                ));
            }
            if self.smp.contains(&1) {
                return Err(XtaskError::usage(
                    "--fault stranded-steal needs at least 2 cores (a publisher and an idle core): leave 1 out of --smp",
                ));
            }
            if idle_poll {
                return Err(XtaskError::usage(
                    "--fault stranded-steal needs cores that halt: an idle-poll build's spinning cores take the chunks",
                ));
            }
            if self
                .iterations
                .is_some_and(|iterations| u64::from(iterations) < STRANDED_ROUND)
            {
                return Err(XtaskError::usage(format!(
                    "--fault stranded-steal strands a round from round {STRANDED_ROUND} on: --iterations must be at least {STRANDED_ROUND}"
                )));
            }
        }
        if self.pool == Some(Pool::Pinned) {
            let size = self.size.unwrap_or(DEFAULT_GRID_SIZE);
            if let Some(&smp) = self.smp.iter().find(|&&smp| smp + 2 > size) {
                return Err(XtaskError::usage(format!(
                    "--pool pinned gives every core a row of the grid: {smp} cores need --size {} or more (the grid is {size})",
                    smp + 2
                )));
            }
        }
        for (value, parse) in [
            (
                self.size,
                args::parse_grid_size as fn(&str) -> Result<u32, String>,
            ),
            (self.iterations, args::parse_iterations),
        ] {
            if let Some(value) = value {
                parse(&value.to_string()).map_err(XtaskError::Usage)?;
            }
        }
        args::parse_stall_s(&self.stall_s.to_string()).map_err(XtaskError::Usage)?;
        args::parse_timeout_s(&self.timeout_s.to_string()).map_err(XtaskError::Usage)?;
        Ok(())
    }

    /// Every boot of the campaign, run by run (run 1 at every core count,
    /// then run 2, ...), each with its seed; with a shard, only the boots
    /// of that slice, each with the order and seed it has in the whole
    /// plan.
    pub fn plan(&self) -> Vec<PlannedRun> {
        let mut planned = Vec::new();
        let mut order = 0u64;
        for run in 0..self.runs {
            for (position, &smp) in self.smp.iter().enumerate() {
                let this = order;
                order += 1;
                if self.shard.is_some_and(|shard| !shard.holds(run, position)) {
                    continue;
                }
                let seed = run_seed(self.base_seed, this);
                let params = KernelParams {
                    workload: Some(GuestWorkload::Laplace),
                    policy: self.policy,
                    seed: Some(seed),
                    chaos: Some(self.chaos),
                    watchdog: Some(self.watchdog),
                    size: self.size,
                    iterations: self.iterations,
                    idle_ms: None,
                    fault: self.fault,
                    pool: self.pool,
                    backoff: None,
                }
                .to_params();
                planned.push(PlannedRun {
                    order: this,
                    smp,
                    run: run + 1,
                    seed,
                    reproduce: reproduce_command(&self.build, smp, self.apic, None, &params),
                    params,
                });
            }
        }
        planned
    }
}

/// One boot to make.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedRun {
    /// Its place in the whole campaign's plan (0-based; its seed derives
    /// from it).
    pub order: u64,
    /// Cores.
    pub smp: u32,
    /// 1-based run number at this core count.
    pub run: u32,
    /// Its seed.
    pub seed: u64,
    /// Its kernel parameters.
    pub params: Vec<String>,
    /// The command that replays it.
    pub reproduce: String,
}

/// One boot, done.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StressRun {
    /// What was booted.
    #[serde(flatten)]
    pub planned: PlannedRun,
    /// What it amounts to.
    pub class: RunClass,
    /// Why (for failures), or the verdict line's reason.
    pub reason: String,
    /// The runner's verdict.
    pub verdict: String,
    /// Wall time of the boot, s.
    pub elapsed_s: f64,
    /// The `laplace:` line.
    pub result: Option<GridResult>,
    /// Host checks of every result line.
    pub checksum_checks: Vec<ChecksumCheck>,
    /// What the in-guest watchdog reported.
    pub lost_wakeups: LostWakeups,
    /// The `VIGIL-STATS` line.
    pub stats: Option<VigilStats>,
    /// Why `stats` is missing, when a line was there but did not parse.
    pub stats_error: Option<String>,
    /// The host's examination of a stuck guest.
    pub examination: Option<GuestExamination>,
    /// QEMU's count of wake IPIs against the guest's (with the oracle on).
    pub ipi_oracle: Option<IpiOracleCheck>,
    /// The QEMU command line.
    pub qemu_command: String,
    /// Everything the kernel printed.
    pub serial: String,
    /// Everything QEMU printed to stderr.
    pub qemu_stderr: String,
}

impl StressRun {
    /// A run with nothing from QEMU: no result, statistics, examination or
    /// output (a boot that could not start, or a test's stand-in).
    pub fn without_output(
        planned: PlannedRun,
        class: RunClass,
        reason: String,
        verdict: &str,
    ) -> Self {
        Self {
            planned,
            class,
            reason,
            verdict: verdict.to_string(),
            elapsed_s: 0.0,
            result: None,
            checksum_checks: Vec::new(),
            lost_wakeups: LostWakeups::default(),
            stats: None,
            stats_error: None,
            examination: None,
            ipi_oracle: None,
            qemu_command: String::new(),
            serial: String::new(),
            qemu_stderr: String::new(),
        }
    }
}

/// Jobs when none are asked for: one per host core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Runs the campaign on `kernel`; `on_done` sees each run as it finishes
/// (on the calling thread). Returns every run, in plan order.
pub fn run_stress(
    config: &StressConfig,
    kernel: &KernelArtifacts,
    mut on_done: impl FnMut(&StressRun),
) -> Result<Vec<StressRun>> {
    config.validate()?;
    let plan = config.plan();
    let stop = AtomicBool::new(false);
    let mut runs = Vec::with_capacity(plan.len());
    run_jobs(
        plan.into_iter().enumerate().collect(),
        config.jobs,
        &stop,
        |(order, planned)| (order, boot(config, kernel, planned)),
        |(order, run)| {
            if config.stop_at_first_failure && !run.class.is_pass() {
                stop.store(true, Ordering::Release);
            }
            on_done(&run);
            runs.push((order, run));
        },
    );
    runs.sort_by_key(|(order, _)| *order);
    Ok(runs.into_iter().map(|(_, run)| run).collect())
}

/// Boots one planned run and classifies it. Not being able to run QEMU at
/// all is recorded as a failed run, not an error of the campaign.
fn boot(config: &StressConfig, kernel: &KernelArtifacts, planned: PlannedRun) -> StressRun {
    let run_config = RunConfig {
        smp: planned.smp,
        timeout_s: Some(config.timeout_s),
        params: planned.params.clone(),
        registers_on_timeout: true,
        stall_s: Some(config.stall_s),
        ipi_oracle: config.ipi_oracle,
        apic: config.apic,
        ..RunConfig::default()
    };
    let outcome = match qemu::run(&run_config, kernel) {
        Ok(outcome) => outcome,
        Err(err) => {
            return StressRun::without_output(
                planned,
                RunClass::Failed,
                format!("could not boot: {err}"),
                "not run",
            );
        }
    };
    let lost_wakeups = LostWakeups::parse(&outcome.serial);
    let class = classify(&outcome, &lost_wakeups, true);
    let (stats, stats_error) = match VigilStats::find_in(&outcome.serial) {
        Some(Ok(stats)) => (Some(stats), None),
        Some(Err(why)) => (None, Some(why)),
        None => (None, None),
    };
    StressRun {
        reason: explain(&outcome, &lost_wakeups, class),
        verdict: outcome.verdict.to_string(),
        elapsed_s: outcome.elapsed.as_secs_f64(),
        result: outcome.checksum_checks.first().map(|check| check.guest),
        checksum_checks: outcome.checksum_checks,
        lost_wakeups,
        stats,
        stats_error,
        examination: outcome.examination,
        ipi_oracle: outcome.ipi_oracle,
        qemu_command: outcome.command_line,
        serial: outcome.serial,
        qemu_stderr: outcome.qemu_stderr,
        planned,
        class,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> StressConfig {
        StressConfig {
            base_seed: 99,
            jobs: 2,
            ..StressConfig::new(vec![4, 16], 3, WakePolicy::RacyFlag)
        }
    }

    #[test]
    fn the_plan_interleaves_core_counts_with_distinct_seeds() {
        let plan = config().plan();
        let order: Vec<(u32, u32)> = plan.iter().map(|run| (run.smp, run.run)).collect();
        assert_eq!(order, [(4, 1), (16, 1), (4, 2), (16, 2), (4, 3), (16, 3)]);
        let mut seeds: Vec<u64> = plan.iter().map(|run| run.seed).collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), 6);
        let first = &plan[1];
        assert_eq!(
            first.params.join(" "),
            format!(
                "workload=laplace policy=racy-flag seed={} chaos=off watchdog=20",
                first.seed
            )
        );
        assert_eq!(
            first.reproduce,
            format!(
                "cargo xtask run --smp 16 workload=laplace policy=racy-flag seed={} chaos=off watchdog=20",
                first.seed
            )
        );
    }

    #[test]
    fn idle_poll_takes_no_policy_and_others_need_one() {
        let mut poll = config();
        poll.build.features = vec![Feature::IdlePoll];
        assert_eq!(poll.validate().unwrap_err().exit_code(), 2);
        poll.policy = None;
        poll.validate().unwrap();
        assert_eq!(poll.policy_name(), "poll");
        assert!(poll.expects_no_failures());
        assert!(
            poll.plan()[0]
                .params
                .iter()
                .all(|p| !p.starts_with("policy="))
        );
        assert!(
            poll.plan()[0]
                .reproduce
                .starts_with("cargo xtask run --smp 4 --features idle-poll workload=laplace seed=")
        );
        let mut none = config();
        none.policy = None;
        assert_eq!(none.validate().unwrap_err().exit_code(), 2);
    }

    #[test]
    fn bad_campaigns_are_usage_errors() {
        for broken in [
            StressConfig {
                smp: vec![],
                ..config()
            },
            StressConfig {
                smp: vec![4, 65],
                ..config()
            },
            StressConfig {
                runs: 0,
                ..config()
            },
            StressConfig {
                jobs: 0,
                ..config()
            },
            StressConfig {
                size: Some(2),
                ..config()
            },
            StressConfig {
                stall_s: 0,
                ..config()
            },
            StressConfig {
                fault: Some(IpiFault::StrandedSteal),
                pool: Some(Pool::Pinned),
                ..config()
            },
            StressConfig {
                fault: Some(IpiFault::StrandedSteal),
                smp: vec![1, 4],
                ..config()
            },
            StressConfig {
                fault: Some(IpiFault::StrandedSteal),
                iterations: Some(9),
                ..config()
            },
            StressConfig {
                pool: Some(Pool::Pinned),
                smp: vec![4, 63],
                ..config()
            },
            StressConfig {
                pool: Some(Pool::Pinned),
                smp: vec![16],
                size: Some(17),
                ..config()
            },
        ] {
            assert_eq!(broken.validate().unwrap_err().exit_code(), 2, "{broken:?}");
        }
        assert!(!config().expects_no_failures());
    }
}
