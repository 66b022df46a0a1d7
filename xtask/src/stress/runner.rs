//! Stress campaigns as a library: boot the Laplace workload many times per
//! core count, in parallel, each boot with its own seed, and classify every
//! run (used by `cargo xtask stress` and by the QEMU tests).

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use vigil_proto::boot_params::{Mode, ParamLine, Workload};

use crate::campaign::boot_record::BootRecord;
use crate::campaign::boot_spec::BootSpec;
use crate::campaign::job_pool::run_jobs;
use crate::campaign::plan::round_robin;
use crate::campaign::run_class::RunClass;
use crate::campaign::scope::CampaignScope;
use crate::campaign::seeds::run_seed;
use crate::error::{Result, XtaskError};
use crate::guest::settings::{Feature, IpiFault, Pool, WakePolicy, Watchdog};
use crate::runner::bochs::BochsSettings;
use crate::runner::kernel_build::{BuildConfig, KernelArtifacts};
use crate::stress::shard::Shard;

/// The first fork-join round `fault=stranded-steal` may strand, and the
/// kernel's default Laplace grid side (`size=`): vigil-proto's.
pub use vigil_proto::boot_params::{DEFAULT_GRID_SIZE, STALLED_ROUND, STRANDED_ROUND};

/// The in-kernel test `--fault busy-searcher` boots (`mode=test test=`):
/// a long pinned task on core 1 while core 0 publishes stealable chunks.
pub const BUSY_CORE_TEST: &str = "stealable_work_runs_beside_a_busy_core";
/// The line that test prints when it has run (a boot that passes must
/// print it).
pub const BUSY_CORE_TEST_LINE: &str = "stealable beside a busy core:";

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
    /// Core counts, boots per core count, APIC mode.
    #[serde(flatten)]
    pub scope: CampaignScope,
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
    /// `chunks=` (the kernel's round plan when `None`; with a fault on
    /// the stealing pool, see [`StressConfig::chunks_for`]).
    #[serde(default)]
    pub chunks: Option<u32>,
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
    /// Boot under Bochs with these settings (every boot deterministic and
    /// recorded for `cargo xtask replay`), or under QEMU (`None`).
    #[serde(default)]
    pub bochs: Option<BochsSettings>,
}

impl StressConfig {
    /// The `chunks=` of a Laplace boot at `smp` cores: `--chunks`; else,
    /// under a fault with the stealing pool (the kernel's default pool),
    /// one chunk per core, so that every round publishes work to wake
    /// cores for whatever the host's parallelism (on one host core the
    /// round plan runs a round on its caller alone, and a fault on the
    /// wake path would have no wake to act on); else the round plan's.
    pub fn chunks_for(&self, smp: u32) -> Option<u32> {
        let faulted_steal = self.fault.is_some() && self.pool != Some(Pool::Pinned);
        self.chunks.or((faulted_steal && smp > 1).then_some(smp))
    }

    /// Defaults for `smp` × `runs` boots of `policy` (debug build, no
    /// chaos, the kernel's default watchdog, one job per host core).
    pub fn new(smp: Vec<u32>, runs: u32, policy: WakePolicy) -> Self {
        Self {
            build: BuildConfig::default(),
            scope: CampaignScope::new(smp, runs),
            policy: Some(policy),
            chaos: false,
            watchdog: Watchdog::Ms(crate::guest::settings::DEFAULT_WATCHDOG_MS),
            fault: None,
            ipi_oracle: false,
            size: None,
            iterations: None,
            pool: None,
            chunks: None,
            base_seed: 1,
            stall_s: DEFAULT_STALL_S,
            timeout_s: DEFAULT_RUN_TIMEOUT_S,
            jobs: default_jobs(),
            stop_at_first_failure: false,
            shard: None,
            bochs: None,
        }
    }

    /// The policy the kernel will report: `poll` for an idle-poll build.
    pub fn policy_name(&self) -> &'static str {
        match self.policy {
            Some(policy) => policy.kernel_name(),
            None => vigil_proto::Policy::Poll.name(),
        }
    }

    /// Whether every failure is a bug (all but `racy-flag` and injected
    /// faults, whose failures are the point).
    pub fn expects_no_failures(&self) -> bool {
        self.fault.is_none() && self.policy.is_none_or(WakePolicy::is_correct)
    }

    /// Checks what the command line checks; errors are usage errors.
    pub fn validate(&self) -> Result<()> {
        self.scope.validate()?;
        if self.scope.arch != self.build.arch {
            return Err(XtaskError::usage(format!(
                "the campaign boots {} but its kernel is built for {}",
                self.scope.arch, self.build.arch
            )));
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
            if self.scope.smp.contains(&1) {
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
        if self.fault == Some(IpiFault::StalledWaker) {
            if self.scope.smp.iter().any(|&smp| smp < 3) {
                return Err(XtaskError::usage(
                    "--fault stalled-waker needs at least 3 cores (core 0, a waker and its target): leave 1 and 2 out of --smp",
                ));
            }
            if self
                .iterations
                .is_some_and(|iterations| u64::from(iterations) < STALLED_ROUND)
            {
                return Err(XtaskError::usage(format!(
                    "--fault stalled-waker stops a waker from round {STALLED_ROUND} on: --iterations must be at least {STALLED_ROUND}"
                )));
            }
        }
        if self.fault == Some(IpiFault::BusySearcher) {
            if self.scope.smp.iter().any(|&smp| smp < 3) {
                return Err(XtaskError::usage(
                    "--fault busy-searcher needs at least 3 cores (a publisher, the busy core and a halted core): leave 1 and 2 out of --smp",
                ));
            }
            if self.pool == Some(Pool::Pinned) || idle_poll {
                return Err(XtaskError::usage(
                    "--fault busy-searcher makes a busy core hold the stealable pool's search: it needs the stealing pool and cores that halt (no --pool pinned, no idle-poll)",
                ));
            }
            if self.size.is_some() || self.iterations.is_some() {
                return Err(XtaskError::usage(format!(
                    "--fault busy-searcher boots the in-kernel test {BUSY_CORE_TEST}, not Laplace: leave out --size and --iterations"
                )));
            }
        }
        if self.pool == Some(Pool::Pinned) {
            let size = self.size.unwrap_or(DEFAULT_GRID_SIZE);
            if let Some(&smp) = self.scope.smp.iter().find(|&&smp| smp + 2 > size) {
                return Err(XtaskError::usage(format!(
                    "--pool pinned gives every core a row of the grid: {smp} cores need --size {} or more (the grid is {size})",
                    smp + 2
                )));
            }
        }
        for (value, parse) in [
            (
                self.size,
                crate::guest::settings::parse_grid_size as fn(&str) -> Result<u32, String>,
            ),
            (self.iterations, crate::guest::settings::parse_iterations),
        ] {
            if let Some(value) = value {
                parse(&value.to_string()).map_err(XtaskError::Usage)?;
            }
        }
        if self.bochs.is_some() {
            if self.scope.apic != crate::runner::platform::Apic::Xapic {
                return Err(XtaskError::usage(
                    "--emulator bochs runs in xAPIC mode only (no --apic x2apic)",
                ));
            }
            if self.ipi_oracle {
                return Err(XtaskError::usage(
                    "--ipi-oracle reads QEMU's trace (not available under Bochs)",
                ));
            }
        }
        crate::runner::platform::parse_stall_s(&self.stall_s.to_string())
            .map_err(XtaskError::Usage)?;
        crate::runner::platform::parse_timeout_s(&self.timeout_s.to_string())
            .map_err(XtaskError::Usage)?;
        Ok(())
    }

    /// Every boot of the campaign, run by run (run 1 at every core count,
    /// then run 2, ...: [`round_robin`]), each with its seed; with a shard,
    /// only the boots of that slice, each with the order and seed it has in
    /// the whole plan.
    pub fn plan(&self) -> Vec<PlannedRun> {
        round_robin(self.scope.runs, self.scope.smp.len())
            .filter(|slot| {
                self.shard
                    .is_none_or(|shard| shard.holds(slot.round - 1, slot.item))
            })
            .map(|slot| {
                let smp = self.scope.smp[slot.item];
                let seed = run_seed(self.base_seed, slot.order);
                let busy_core_test = self.fault == Some(IpiFault::BusySearcher);
                let params = if busy_core_test {
                    ParamLine {
                        mode: Some(Mode::Test),
                        test_filter: Some(BUSY_CORE_TEST.to_string()),
                        policy: self.policy.map(WakePolicy::policy),
                        seed: Some(seed),
                        chaos: Some(self.chaos),
                        watchdog: Some(self.watchdog),
                        fault: self.fault.map(IpiFault::fault),
                        ..ParamLine::default()
                    }
                    .tokens()
                } else {
                    ParamLine {
                        workload: Some(Workload::Laplace),
                        policy: self.policy.map(WakePolicy::policy),
                        seed: Some(seed),
                        chaos: Some(self.chaos),
                        watchdog: Some(self.watchdog),
                        size: self.size,
                        iterations: self.iterations,
                        fault: self.fault.map(IpiFault::fault),
                        pool: self.pool.map(Pool::pool),
                        chunks: self.chunks_for(smp),
                        ..ParamLine::default()
                    }
                    .tokens()
                };
                // The limit stays out of the replay command: replaying a
                // hang wants `cargo xtask run`'s own limit and a live echo.
                let mut boot = BootSpec::new(
                    &self.build,
                    smp,
                    self.scope.apic,
                    params,
                    self.timeout_s,
                    false,
                );
                if busy_core_test {
                    // The test prints no grid result; a boot that passes
                    // must print the test's own line.
                    boot.expect_result = false;
                    boot.marks = vec![BUSY_CORE_TEST_LINE.to_string()];
                }
                boot.stall_s = Some(self.stall_s);
                boot.examine_on_timeout = true;
                boot.with_ipi_oracle = self.ipi_oracle;
                if let Some(settings) = self.bochs {
                    boot = boot.under_bochs(&self.build, settings);
                }
                PlannedRun {
                    order: slot.order,
                    run: slot.round,
                    seed,
                    boot,
                }
            })
            .collect()
    }
}

/// One boot to make.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedRun {
    /// Its place in the whole campaign's plan (0-based; its seed derives
    /// from it).
    pub order: u64,
    /// 1-based run number at this core count.
    pub run: u32,
    /// Its seed.
    pub seed: u64,
    /// What to boot (cores, parameters, limits, the replay command).
    #[serde(flatten)]
    pub boot: BootSpec,
}

/// One boot, done.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StressRun {
    /// What was booted.
    #[serde(flatten)]
    pub planned: PlannedRun,
    /// What came of it.
    #[serde(flatten)]
    pub record: BootRecord,
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
        |(order, planned)| (order, boot(kernel, planned)),
        |(order, run)| {
            if config.stop_at_first_failure && !run.record.class.is_pass() {
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
fn boot(kernel: &KernelArtifacts, planned: PlannedRun) -> StressRun {
    let record = BootRecord::boot(&planned.boot, kernel).unwrap_or_else(|err| {
        BootRecord::without_output(
            RunClass::Failed,
            format!("could not boot: {err}"),
            "not run",
        )
    });
    StressRun { planned, record }
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
    fn a_fault_on_the_stealing_pool_splits_every_round_over_every_core() {
        let plain = config();
        assert_eq!(plain.chunks_for(4), None, "no fault: the round plan's");
        let faulted = StressConfig {
            fault: Some(IpiFault::DroppedIpi),
            ..config()
        };
        assert_eq!(faulted.chunks_for(4), Some(4));
        assert_eq!(faulted.chunks_for(1), None, "one core: nothing to split");
        let given = StressConfig {
            chunks: Some(3),
            ..faulted.clone()
        };
        assert_eq!(given.chunks_for(4), Some(3), "--chunks wins");
        let pinned = StressConfig {
            pool: Some(Pool::Pinned),
            ..faulted
        };
        assert_eq!(pinned.chunks_for(4), None, "the pinned pool has no chunks");
        let plans = StressConfig {
            fault: Some(IpiFault::DroppedIpi),
            ..config()
        }
        .plan();
        assert!(
            plans.iter().all(|planned| planned
                .boot
                .params
                .contains(&format!("chunks={}", planned.boot.smp))),
            "every boot of a fault campaign names its chunks"
        );
    }

    #[test]
    fn the_plan_interleaves_core_counts_with_distinct_seeds() {
        let plan = config().plan();
        let order: Vec<(u32, u32)> = plan.iter().map(|run| (run.boot.smp, run.run)).collect();
        assert_eq!(order, [(4, 1), (16, 1), (4, 2), (16, 2), (4, 3), (16, 3)]);
        let mut seeds: Vec<u64> = plan.iter().map(|run| run.seed).collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), 6);
        let first = &plan[1];
        assert_eq!(
            first.boot.params.join(" "),
            format!(
                "workload=laplace policy=racy-flag seed={} chaos=off watchdog=20",
                first.seed
            )
        );
        assert_eq!(
            first.boot.reproduce,
            format!(
                "cargo xtask run --smp 16 workload=laplace policy=racy-flag seed={} chaos=off watchdog=20",
                first.seed
            )
        );
    }

    #[test]
    fn a_bochs_campaign_records_its_settings_in_every_boot_and_reproduce_command() {
        let bochs = StressConfig {
            bochs: Some(BochsSettings::default()),
            ..config()
        };
        bochs.validate().unwrap();
        let plan = bochs.plan();
        assert_eq!(plan.len(), 6);
        for run in &plan {
            assert_eq!(run.boot.bochs, Some(BochsSettings::default()));
            assert!(
                run.boot.reproduce.starts_with(&format!(
                    "cargo xtask run --emulator bochs --bochs-ips 50000000 --bochs-quantum 16 --bochs-turn 1 --bochs-time0 946684800 --smp {} workload=laplace policy=racy-flag seed={} chaos=off",
                    run.boot.smp, run.seed
                )),
                "{}",
                run.boot.reproduce
            );
        }
        // The same seeds as under QEMU: only the emulator differs.
        let seeds = |plan: &[PlannedRun]| plan.iter().map(|run| run.seed).collect::<Vec<_>>();
        assert_eq!(seeds(&plan), seeds(&config().plan()));
        for broken in [
            StressConfig {
                ipi_oracle: true,
                ..bochs.clone()
            },
            StressConfig {
                scope: CampaignScope {
                    apic: crate::runner::platform::Apic::X2apic,
                    ..bochs.scope.clone()
                },
                ..bochs.clone()
            },
        ] {
            assert_eq!(broken.validate().unwrap_err().exit_code(), 2);
        }
        // An older file without the key reads as a QEMU campaign.
        let mut json = serde_json::to_value(config()).unwrap();
        json.as_object_mut().unwrap().remove("bochs");
        let back: StressConfig = serde_json::from_value(json).unwrap();
        assert_eq!(back.bochs, None);
    }

    #[test]
    fn a_busy_searcher_campaign_boots_the_busy_core_test_and_needs_three_halting_cores() {
        let busy = StressConfig {
            fault: Some(IpiFault::BusySearcher),
            policy: Some(WakePolicy::StateMachine),
            ..config()
        };
        busy.validate().unwrap();
        let run = &busy.plan()[0];
        assert_eq!(
            run.boot.params.join(" "),
            format!(
                "mode=test test={BUSY_CORE_TEST} policy=state-machine seed={} chaos=off watchdog=20 fault=busy-searcher",
                run.seed
            )
        );
        assert!(!run.boot.expect_result);
        assert_eq!(run.boot.marks, [BUSY_CORE_TEST_LINE]);
        for broken in [
            StressConfig {
                scope: CampaignScope {
                    smp: vec![2, 4],
                    ..busy.scope.clone()
                },
                ..busy.clone()
            },
            StressConfig {
                pool: Some(Pool::Pinned),
                ..busy.clone()
            },
            StressConfig {
                iterations: Some(100),
                ..busy.clone()
            },
            StressConfig {
                size: Some(64),
                ..busy.clone()
            },
        ] {
            assert_eq!(broken.validate().unwrap_err().exit_code(), 2, "{broken:?}");
        }
    }

    #[test]
    fn a_run_reads_back_from_its_json() {
        // What `stress merge` does with a shard's file.
        let planned = config().plan().remove(0);
        let run = StressRun {
            planned: planned.clone(),
            record: BootRecord::without_output(RunClass::Stuck, "why".to_string(), "stuck"),
        };
        let text = serde_json::to_string(&run).unwrap();
        let back: StressRun =
            serde_json::from_str(&text).unwrap_or_else(|err| panic!("{err}: {text}"));
        assert_eq!(back.planned, planned);
        assert_eq!(
            (back.record.class, back.record.reason),
            (RunClass::Stuck, "why".to_string())
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
                .boot
                .params
                .iter()
                .all(|p| !p.starts_with("policy="))
        );
        assert!(
            poll.plan()[0]
                .boot
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
                scope: CampaignScope {
                    smp: vec![],
                    ..config().scope
                },
                ..config()
            },
            StressConfig {
                scope: CampaignScope {
                    smp: vec![4, 65],
                    ..config().scope
                },
                ..config()
            },
            StressConfig {
                scope: CampaignScope {
                    runs: 0,
                    ..config().scope
                },
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
                scope: CampaignScope {
                    smp: vec![1, 4],
                    ..config().scope
                },
                ..config()
            },
            StressConfig {
                fault: Some(IpiFault::StrandedSteal),
                iterations: Some(9),
                ..config()
            },
            StressConfig {
                pool: Some(Pool::Pinned),
                scope: CampaignScope {
                    smp: vec![4, 63],
                    ..config().scope
                },
                ..config()
            },
            StressConfig {
                pool: Some(Pool::Pinned),
                scope: CampaignScope {
                    smp: vec![16],
                    ..config().scope
                },
                size: Some(17),
                ..config()
            },
        ] {
            assert_eq!(broken.validate().unwrap_err().exit_code(), 2, "{broken:?}");
        }
        assert!(!config().expects_no_failures());
    }
}
