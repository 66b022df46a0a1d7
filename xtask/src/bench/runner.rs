//! Running a benchmark: one QEMU at a time (timings of concurrent guests
//! on two host cores would measure each other), round by round, recording
//! every boot raw. A configuration that times out is not booted again.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::bench::plan::{BenchConfig, Configuration, Section, Variant};
use crate::campaign::boot_record::BootRecord;
use crate::campaign::run_class::RunClass;
use crate::error::Result;
use crate::guest::laplace_check::ChecksumCheck;
use crate::guest::linux_costs::{LinuxCosts, find_linux_costs};
use crate::guest::pool_line::PoolLine;
use crate::guest::run_output::{IDLE_END, IDLE_START};
use crate::guest::vigil_stats::{StatsTotals, VigilStats};
use crate::runner::kernel_build::KernelArtifacts;
use crate::runner::linux_peer::LinuxPeerArtifacts;
use crate::runner::qemu::Guest;

/// What a benchmark boot gives the measurements: its class
/// ([`RunClass`]) seen from the bench.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BootStatus {
    /// Passed (result checked, or both idle lines seen and timed): a
    /// measurement.
    Ok,
    /// Killed at the configuration's limit: slower than the benchmark
    /// waits for.
    TimedOut,
    /// Any other class (a bug: wrong checksum, lost wakeup, panic,
    /// missing output).
    Failed,
}

/// What idling cost the host.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IdleCost {
    /// Wall time between `idle: start` and `idle: end`, s.
    pub wall_s: f64,
    /// QEMU's CPU time (user + system) over that time, s.
    pub qemu_cpu_s: f64,
    /// `qemu_cpu_s / wall_s`: host cores kept busy by the idle guest.
    pub host_cpu_per_wall: f64,
}

/// One benchmark boot, raw.
#[derive(Debug, Clone, Serialize)]
pub struct BenchRun {
    /// Which configuration.
    #[serde(flatten)]
    pub configuration: Configuration,
    /// 1-based round.
    pub round: u32,
    /// How it ended, for the measurements.
    pub status: BootStatus,
    /// Whether every result matched the host's computation.
    pub checksums_match: Option<bool>,
    /// Sums over cores of the record's statistics.
    pub totals: Option<StatsTotals>,
    /// Idle workload: what it cost the host.
    pub idle: Option<IdleCost>,
    /// The Linux peer: what Linux paid over the loop (its cost line).
    pub linux_costs: Option<LinuxCosts>,
    /// The classified boot (the one record stress keeps too).
    #[serde(flatten)]
    pub record: BootRecord,
}

impl BenchRun {
    /// The measurements of `record`, a boot of `configuration` in `round`.
    pub fn of(configuration: &Configuration, round: u32, mut record: BootRecord) -> Self {
        let idle = idle_cost(&record);
        let linux_costs = find_linux_costs(&record.serial);
        // A Linux boot that passed is a measurement only with its cost line,
        // from the Linux it was meant to boot (its idle choice read back
        // from /proc/cmdline).
        let linux_problem = configuration
            .boot
            .linux_idle
            .and_then(|idle| match &linux_costs {
                None => Some("the Linux peer printed no cost line".to_string()),
                Some(costs) if costs.idle != idle => Some(format!(
                    "the Linux peer ran with idle={}, not idle={}",
                    costs.idle.name(),
                    idle.name()
                )),
                Some(_) => None,
            });
        if record.class == RunClass::Passed
            && let Some(problem) = linux_problem
        {
            record.class = RunClass::Failed;
            record.reason = problem;
        }
        let status = match record.class {
            // An idle boot that passed but could not be measured (no CPU
            // time for QEMU) is no measurement.
            RunClass::Passed if configuration.section != Section::Idle || idle.is_some() => {
                BootStatus::Ok
            }
            RunClass::TimedOut => BootStatus::TimedOut,
            _ => BootStatus::Failed,
        };
        Self {
            linux_costs,
            configuration: configuration.clone(),
            round,
            status,
            checksums_match: (!record.checksum_checks.is_empty())
                .then(|| record.checksum_checks.iter().all(ChecksumCheck::matches)),
            totals: record.stats.as_ref().map(VigilStats::totals),
            idle,
            record,
        }
    }

    /// Guest time of the grid workload, ms.
    pub fn guest_ms(&self) -> Option<f64> {
        self.record
            .result
            .map(|result| result.elapsed_us as f64 / 1000.0)
    }

    /// The kernel's `pool:` line (a Laplace boot prints it), from the
    /// serial log.
    pub fn pool(&self) -> Option<PoolLine> {
        PoolLine::find_in(&self.record.serial)
    }

    /// Wake IPIs sent (`VIGIL-STATS` `ipis_sent`, summed over cores, less
    /// its `host.ipis_before_workload`) per iteration of the grid workload; for the Linux peer, its rescheduling
    /// IPIs (all CPUs) per iteration.
    pub fn ipis_per_iteration(&self) -> Option<f64> {
        if let Some(costs) = &self.linux_costs {
            return costs.ipis_per_iteration();
        }
        let totals = self.totals?;
        let iterations = self.record.result?.iterations;
        // The counters count from boot: the boot's own measurements (the
        // host parallelism window, the timed rounds) are not the
        // workload's.
        let before = self
            .record
            .stats
            .as_ref()
            .map_or(0, |stats| stats.host.ipis_before_workload);
        (iterations > 0).then(|| totals.ipis_sent.saturating_sub(before) as f64 / iterations as f64)
    }
}

/// What a benchmark variant boots.
#[derive(Debug, Clone)]
pub enum BenchGuest {
    /// A Vigil kernel build.
    Vigil(KernelArtifacts),
    /// The Linux peer (its idle choice is the variant's).
    LinuxPeer(LinuxPeerArtifacts),
}

/// The guests a benchmark boots, by variant.
pub type Kernels = BTreeMap<Variant, BenchGuest>;

/// Boots the schedule; `on_done` sees each boot as it ends (`None` for a
/// boot skipped because its configuration timed out earlier).
pub fn run_bench(
    config: &BenchConfig,
    kernels: &Kernels,
    mut on_done: impl FnMut(&Configuration, u32, Option<&BenchRun>),
) -> Result<Vec<BenchRun>> {
    let configurations = config.configurations();
    let mut timed_out: HashSet<usize> = HashSet::new();
    let mut runs = Vec::new();
    for (round, index) in config.schedule() {
        let configuration = &configurations[index];
        if timed_out.contains(&index) {
            on_done(configuration, round, None);
            continue;
        }
        let guest = match kernels
            .get(&configuration.variant)
            .expect("a guest is built for every variant")
        {
            BenchGuest::Vigil(kernel) => Guest::Vigil(kernel),
            BenchGuest::LinuxPeer(peer) => Guest::LinuxPeer(
                peer,
                configuration
                    .variant
                    .linux_idle()
                    .expect("a Linux variant has its idle choice"),
            ),
        };
        // Not being able to run QEMU ends the benchmark: every later boot
        // would fail the same way.
        let run = BenchRun::of(
            configuration,
            round,
            BootRecord::boot_guest(&configuration.boot, guest)?,
        );
        if run.status == BootStatus::TimedOut {
            timed_out.insert(index);
        }
        on_done(configuration, round, Some(&run));
        runs.push(run);
    }
    Ok(runs)
}

/// QEMU CPU time over wall time between the idle workload's two lines.
pub fn idle_cost(record: &BootRecord) -> Option<IdleCost> {
    let start = record.mark(IDLE_START)?;
    let end = record.mark(IDLE_END)?;
    let wall_s = end.at_s - start.at_s;
    let qemu_cpu_s = end.qemu_cpu_s? - start.qemu_cpu_s?;
    (wall_s > 0.0).then(|| IdleCost {
        wall_s,
        qemu_cpu_s,
        host_cpu_per_wall: qemu_cpu_s / wall_s,
    })
}

/// A grid boot of `configuration` that measured `elapsed_ms` of guest
/// time, or timed out (`None`): the reports' tests build their runs with
/// it.
#[cfg(test)]
pub fn grid_boot(configuration: Configuration, elapsed_ms: Option<u64>) -> BenchRun {
    use crate::guest::run_output::{GridResult, GridWorkload};
    use crate::guest::verdict::Verdict;
    let class = if elapsed_ms.is_some() {
        RunClass::Passed
    } else {
        RunClass::TimedOut
    };
    let record = BootRecord {
        wall_s: 1.0,
        result: elapsed_ms.map(|ms| GridResult {
            workload: GridWorkload::Laplace,
            size: 64,
            iterations: 1000,
            workers: u64::from(configuration.boot.smp),
            elapsed_us: ms * 1000,
            residual: 0,
            checksum: 0,
        }),
        ..BootRecord::without_output(class, String::new(), &Verdict::Success.to_string())
    };
    BenchRun::of(&configuration, 1, record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::qemu::LineMark;

    fn record_with_marks(marks: Vec<LineMark>) -> BootRecord {
        BootRecord {
            marked_lines: marks,
            ..BootRecord::without_output(RunClass::Passed, String::new(), "success")
        }
    }

    fn mark(mark: &str, at_s: f64, cpu: f64) -> LineMark {
        LineMark {
            mark: mark.to_string(),
            line: format!("[c0] {mark}"),
            at_s,
            qemu_cpu_s: Some(cpu),
        }
    }

    /// A Linux boot that passed is a measurement only with its cost line,
    /// from the idle choice its variant asked for.
    #[test]
    fn a_linux_boot_needs_its_cost_line_with_its_idle_choice() {
        use crate::bench::plan::{BenchConfig, Section, Variant};
        let mut config = BenchConfig::standard(vec![2], 1);
        config.variants = Variant::LINUX.to_vec();
        let configuration = config
            .configurations()
            .into_iter()
            .find(|c| c.section == Section::SyncHeavy && c.variant == Variant::LinuxPollPinned)
            .unwrap();
        let costs = |idle: &str| {
            format!(
                "[c0] linux-costs: idle_choice={idle} idle_driver=none cpus=2 iterations=1000 voluntary_switches=2000 involuntary_switches=0 rescheduling_ipis=1 function_call_ipis=1999\n"
            )
        };
        let with_serial = |serial: String| {
            // grid_boot's record is a passed boot (its own run, judged
            // without a cost line, is not what this test looks at).
            let mut record = grid_boot(configuration.clone(), Some(100)).record;
            record.class = RunClass::Passed;
            record.serial = serial;
            BenchRun::of(&configuration, 1, record)
        };
        let none = with_serial(String::new());
        assert_eq!(none.status, BootStatus::Failed);
        assert_eq!(none.record.reason, "the Linux peer printed no cost line");
        let wrong = with_serial(costs("default"));
        assert_eq!(wrong.status, BootStatus::Failed);
        assert_eq!(
            wrong.record.reason,
            "the Linux peer ran with idle=default, not idle=poll"
        );
        let right = with_serial(costs("poll"));
        assert_eq!(right.status, BootStatus::Ok);
        assert_eq!(right.ipis_per_iteration(), Some(2.0));
    }

    #[test]
    fn idle_cost_is_cpu_over_wall_between_the_marks() {
        let record = record_with_marks(vec![mark(IDLE_START, 2.0, 1.5), mark(IDLE_END, 5.0, 1.56)]);
        let cost = idle_cost(&record).unwrap();
        assert!((cost.wall_s - 3.0).abs() < 1e-9);
        assert!((cost.qemu_cpu_s - 0.06).abs() < 1e-9);
        assert!((cost.host_cpu_per_wall - 0.02).abs() < 1e-9);
        assert!(idle_cost(&record_with_marks(vec![mark(IDLE_START, 2.0, 1.5)])).is_none());
    }
}
