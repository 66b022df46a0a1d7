//! Running a benchmark: one QEMU at a time (timings of concurrent guests
//! on two host cores would measure each other), round by round, recording
//! every boot raw. A configuration that times out is not booted again.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::bench::plan::{BenchConfig, Configuration, Section, Variant};
use crate::error::Result;
use crate::guest::pool_line::PoolLine;
use crate::guest::run_output::{GridResult, IDLE_END, IDLE_START};
use crate::guest::verdict::Verdict;
use crate::guest::vigil_stats::{StatsTotals, VigilStats};
use crate::runner::kernel_build::KernelArtifacts;
use crate::runner::qemu::{self, RunConfig, RunOutcome};

/// How a benchmark boot ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BootStatus {
    /// Success, result checked (grids) or both idle marks seen (idle).
    Ok,
    /// Killed at the configuration's limit: slower than the benchmark
    /// waits for.
    TimedOut,
    /// Anything else (a bug: wrong checksum, panic, missing output).
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
    /// How it ended.
    pub status: BootStatus,
    /// The runner's verdict line.
    pub verdict: String,
    /// Wall time of the whole boot, s.
    pub wall_s: f64,
    /// The `laplace:`/`floor:` line.
    pub result: Option<GridResult>,
    /// Whether every result matched the host's computation.
    pub checksums_match: Option<bool>,
    /// The `VIGIL-STATS` line.
    pub stats: Option<VigilStats>,
    /// Sums over cores of `stats`.
    pub totals: Option<StatsTotals>,
    /// Idle workload: what it cost the host.
    pub idle: Option<IdleCost>,
    /// Everything the kernel printed.
    pub serial: String,
}

impl BenchRun {
    /// Guest time of the grid workload, ms.
    pub fn guest_ms(&self) -> Option<f64> {
        self.result.map(|result| result.elapsed_us as f64 / 1000.0)
    }

    /// The kernel's `pool:` line (a Laplace boot prints it), from the
    /// serial log.
    pub fn pool(&self) -> Option<PoolLine> {
        PoolLine::find_in(&self.serial)
    }

    /// Wake IPIs sent (`VIGIL-STATS` `ipis_sent`, summed over cores) per
    /// iteration of the grid workload.
    pub fn ipis_per_iteration(&self) -> Option<f64> {
        let totals = self.totals?;
        let iterations = self.result?.iterations;
        (iterations > 0).then(|| totals.ipis_sent as f64 / iterations as f64)
    }
}

/// The kernels a benchmark boots, by variant.
pub type Kernels = BTreeMap<Variant, KernelArtifacts>;

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
        let kernel = kernels
            .get(&configuration.variant)
            .expect("a kernel is built for every variant");
        let run = boot(configuration, round, kernel)?;
        if run.status == BootStatus::TimedOut {
            timed_out.insert(index);
        }
        on_done(configuration, round, Some(&run));
        runs.push(run);
    }
    Ok(runs)
}

fn boot(configuration: &Configuration, round: u32, kernel: &KernelArtifacts) -> Result<BenchRun> {
    let idle = configuration.section == Section::Idle;
    let run_config = RunConfig {
        smp: configuration.smp,
        apic: configuration.apic,
        timeout_s: Some(configuration.timeout_s),
        params: configuration.params.clone(),
        marks: if idle {
            vec![IDLE_START.to_string(), IDLE_END.to_string()]
        } else {
            Vec::new()
        },
        ..RunConfig::default()
    };
    let outcome = qemu::run(&run_config, kernel)?;
    let stats = VigilStats::find_in(&outcome.serial).and_then(|stats| stats.ok());
    let idle_cost = idle_cost(&outcome);
    let result = outcome.checksum_checks.first().map(|check| check.guest);
    let checksums_match = (!outcome.checksum_checks.is_empty())
        .then(|| outcome.checksum_checks.iter().all(|check| check.matches()));
    let status = match outcome.verdict {
        Verdict::Timeout => BootStatus::TimedOut,
        Verdict::Success if idle && idle_cost.is_some() => BootStatus::Ok,
        Verdict::Success if !idle && checksums_match == Some(true) => BootStatus::Ok,
        _ => BootStatus::Failed,
    };
    Ok(BenchRun {
        configuration: configuration.clone(),
        round,
        status,
        verdict: outcome.verdict_line(),
        wall_s: outcome.elapsed.as_secs_f64(),
        result,
        checksums_match,
        totals: stats.as_ref().map(VigilStats::totals),
        stats,
        idle: idle_cost,
        serial: outcome.serial,
    })
}

/// QEMU CPU time over wall time between the idle workload's two lines.
pub fn idle_cost(outcome: &RunOutcome) -> Option<IdleCost> {
    let start = outcome.mark(IDLE_START)?;
    let end = outcome.mark(IDLE_END)?;
    let wall_s = end.at_s - start.at_s;
    let qemu_cpu_s = end.qemu_cpu_s? - start.qemu_cpu_s?;
    (wall_s > 0.0).then(|| IdleCost {
        wall_s,
        qemu_cpu_s,
        host_cpu_per_wall: qemu_cpu_s / wall_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::verdict::QemuExit;
    use crate::runner::qemu::LineMark;
    use std::time::Duration;

    fn outcome_with_marks(marks: Vec<LineMark>) -> RunOutcome {
        RunOutcome {
            verdict: Verdict::Success,
            exit: QemuExit::Status(33),
            exit_status: Some(33),
            serial: String::new(),
            qemu_stderr: String::new(),
            elapsed: Duration::from_secs(5),
            command_line: String::new(),
            registers_at_timeout: None,
            examination: None,
            checksum_checks: Vec::new(),
            marks,
            ipi_oracle: None,
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

    #[test]
    fn idle_cost_is_cpu_over_wall_between_the_marks() {
        let outcome =
            outcome_with_marks(vec![mark(IDLE_START, 2.0, 1.5), mark(IDLE_END, 5.0, 1.56)]);
        let cost = idle_cost(&outcome).unwrap();
        assert!((cost.wall_s - 3.0).abs() < 1e-9);
        assert!((cost.qemu_cpu_s - 0.06).abs() < 1e-9);
        assert!((cost.host_cpu_per_wall - 0.02).abs() < 1e-9);
        assert!(idle_cost(&outcome_with_marks(vec![mark(IDLE_START, 2.0, 1.5)])).is_none());
    }
}
