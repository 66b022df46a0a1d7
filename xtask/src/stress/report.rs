//! What a stress campaign prints: a block per failed run (with the command
//! that replays it), a table per core count, and the JSON file of every
//! run.

use std::fmt::Write as _;

use serde::Serialize;

use crate::campaign::per_core::PerCoreSpreads;
use crate::campaign::percentiles::Spread;
use crate::campaign::run_class::RunClass;
use crate::stress::runner::{StressConfig, StressRun};

/// The rows of one core count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmpSummary {
    /// Cores.
    pub smp: u32,
    /// Boots made.
    pub runs: usize,
    /// Boots that passed.
    pub passed: usize,
    /// Boots the host found stuck.
    pub stuck: usize,
    /// Boots in which the watchdog caught lost wakeups.
    pub lost_wakeup_runs: usize,
    /// Boots the guest did not report that the host found lost, from the
    /// final statistics: a core halted with work in its inbox at the end.
    pub lost_found_by_host: usize,
    /// Boots the in-guest strand watch ended (stealable work stranded).
    pub stranded: usize,
    /// Stuck boots in which the host found stealable work stranded (every
    /// core halted) or held by a busy core.
    pub stranded_found_by_host: usize,
    /// Lost wakeups caught, all boots.
    pub lost_wakeups: u64,
    /// Boots with a result that differs from the host's.
    pub checksum_failures: usize,
    /// Boots whose wake-IPI count differs from QEMU's (the oracle on).
    pub ipi_count_mismatches: usize,
    /// Boots the oracle compared (and found equal or not).
    pub ipi_oracle_checked: usize,
    /// Boots killed at the limit while still printing.
    pub timed_out: usize,
    /// Boots that failed otherwise.
    pub other_failures: usize,
    /// Boots a detector caught ([`RunClass::is_detection`]), over boots.
    pub detected: usize,
    /// `detected` over boots.
    pub detection_rate: f64,
    /// Laplace time (guest, ms), over boots that printed it.
    pub laplace_ms: Option<Spread>,
    /// Per-core statistics, over boots that printed them.
    #[serde(flatten)]
    pub per_core: PerCoreSpreads,
}

/// Summarises the runs of each core count, in `smp` order.
pub fn summarize(smp: &[u32], runs: &[StressRun]) -> Vec<SmpSummary> {
    smp.iter()
        .map(|&smp| {
            let mine: Vec<&StressRun> = runs
                .iter()
                .filter(|run| run.planned.boot.smp == smp)
                .collect();
            let count = |class| mine.iter().filter(|run| run.record.class == class).count();
            let detected = mine.iter().filter(|run| caught(&run.record)).count();
            let totals: Vec<_> = mine
                .iter()
                .filter_map(|run| Some(run.record.stats.as_ref()?.totals()))
                .collect();
            SmpSummary {
                smp,
                runs: mine.len(),
                passed: count(RunClass::Passed),
                stuck: count(RunClass::Stuck),
                stranded: count(RunClass::StrandedWork),
                stranded_found_by_host: mine
                    .iter()
                    .filter(|run| {
                        run.record.examination.as_ref().is_some_and(|examination| {
                            examination.stranded_stealable().is_some()
                                || examination.busy_search_holder().is_some()
                        })
                    })
                    .count(),
                lost_found_by_host: mine
                    .iter()
                    .filter(|run| {
                        run.record.class == RunClass::LostWakeups
                            && run.record.lost_wakeups.count() == 0
                    })
                    .count(),
                lost_wakeup_runs: mine
                    .iter()
                    .filter(|run| run.record.lost_wakeups.count() > 0)
                    .count(),
                lost_wakeups: mine.iter().map(|run| run.record.lost_wakeups.count()).sum(),
                checksum_failures: mine
                    .iter()
                    .filter(|run| {
                        run.record
                            .checksum_checks
                            .iter()
                            .any(|check| !check.matches())
                    })
                    .count(),
                ipi_count_mismatches: count(RunClass::IpiCountMismatch),
                ipi_oracle_checked: mine
                    .iter()
                    .filter(|run| run.record.ipi_oracle.is_some())
                    .count(),
                timed_out: count(RunClass::TimedOut),
                other_failures: count(RunClass::Failed),
                detected,
                detection_rate: if mine.is_empty() {
                    0.0
                } else {
                    detected as f64 / mine.len() as f64
                },
                laplace_ms: Spread::of(
                    mine.iter()
                        .filter_map(|run| run.record.result)
                        .map(|result| result.elapsed_us as f64 / 1000.0),
                ),
                per_core: PerCoreSpreads::of(&totals),
            }
        })
        .collect()
}

/// Whether a detector caught the boot: its class is a detection
/// ([`RunClass::is_detection`]), and a stuck boot's examination found
/// what a lost wakeup leaves (a core halted with work in its inbox,
/// stealable work stranded or held by a busy core: a guest that merely
/// printed nothing for the stall limit is not caught), or the guest's
/// stuck-round watch ended it (a check failure classed as failed, with
/// the watch's report).
pub fn caught(record: &crate::campaign::boot_record::BootRecord) -> bool {
    match record.class {
        RunClass::Stuck => record.examination.as_ref().is_some_and(|examination| {
            !examination.halted_with_work().is_empty()
                || examination.stranded_stealable().is_some()
                || examination.busy_search_holder().is_some()
        }),
        RunClass::Failed => crate::guest::run_output::stuck_round_dump(&record.serial).is_some(),
        class => class.is_detection(),
    }
}

/// The block printed for a failed run: what happened, the host's
/// examination of a stuck guest, the first watchdog report, and the
/// command that replays it.
pub fn failure_block(run: &StressRun, runs_per_smp: u32) -> String {
    let planned = &run.planned;
    let mut out = format!(
        "FAILED smp={} run {}/{} seed={}: {}: {}\n",
        planned.boot.smp,
        planned.run,
        runs_per_smp,
        planned.seed,
        run.record.class,
        run.record.reason
    );
    if let Some(examination) = &run.record.examination {
        out.push_str(&examination.report());
    }
    if let Some(first) = run.record.lost_wakeups.reports.first() {
        let _ = writeln!(out, "  first report: {first}");
    }
    let _ = writeln!(out, "  reproduce: {}", planned.boot.reproduce);
    out
}

/// The table: one row per core count.
pub fn table(config: &StressConfig, summaries: &[SmpSummary]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "stress: policy {}, chaos {}, watchdog {}, base seed {}",
        config.policy_name(),
        vigil_proto::boot_params::Switch::from_bool(config.chaos).name(),
        config.watchdog,
        config.base_seed
    );
    let _ = writeln!(
        out,
        "{:>4} {:>5} {:>6} {:>5} {:>13} {:>8} {:>8} {:>9} {:>7} {:>5}  {:>17}  {:>9} {:>9} {:>9}",
        "smp",
        "runs",
        "passed",
        "stuck",
        "lost(runs)",
        "stranded",
        "checksum",
        "ipi-count",
        "timeout",
        "other",
        "laplace ms med/p90",
        "ipis/core",
        "wake/core",
        "spur/core"
    );
    for row in summaries {
        let laplace = row.laplace_ms.map_or_else(
            || "-".to_string(),
            |spread| format!("{:.0}/{:.0}", spread.median, spread.p90),
        );
        let median = |spread: Option<Spread>| {
            spread.map_or_else(|| "-".to_string(), |spread| format!("{:.1}", spread.median))
        };
        let _ = writeln!(
            out,
            "{:>4} {:>5} {:>6} {:>5} {:>13} {:>8} {:>8} {:>9} {:>7} {:>5}  {:>17}  {:>9} {:>9} {:>9}",
            row.smp,
            row.runs,
            row.passed,
            row.stuck,
            // In-guest reports (boots), and boots the host found lost.
            format!(
                "{}({})+{}h",
                row.lost_wakeups, row.lost_wakeup_runs, row.lost_found_by_host
            ),
            // In-guest reports, and stuck boots the host found stranded.
            format!("{}+{}h", row.stranded, row.stranded_found_by_host),
            row.checksum_failures,
            if row.ipi_oracle_checked == 0 {
                "-".to_string()
            } else {
                format!("{}/{}", row.ipi_count_mismatches, row.ipi_oracle_checked)
            },
            row.timed_out,
            row.other_failures,
            laplace,
            median(row.per_core.ipis_per_core),
            median(row.per_core.wakeups_per_core),
            median(row.per_core.spurious_per_core),
        );
    }
    out
}

/// `detection rate at 16 cores: 5/6 runs (83%)` lines, for a policy that
/// is expected to fail.
pub fn detection_rates(summaries: &[SmpSummary]) -> String {
    let mut out = String::new();
    for row in summaries {
        let _ = writeln!(
            out,
            "detection rate at {} cores: {}/{} runs ({:.0}%)",
            row.smp,
            row.detected,
            row.runs,
            row.detection_rate * 100.0
        );
    }
    out
}

/// Everything a campaign produced, as written by `--json`.
#[derive(Debug, Serialize)]
pub struct StressJson<'a> {
    /// The campaign's settings.
    pub config: &'a StressConfig,
    /// Build profile and features.
    pub build: String,
    /// Per core count.
    pub summary: &'a [SmpSummary],
    /// Every run, raw.
    pub runs: &'a [StressRun],
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::boot_record::BootRecord;
    use crate::campaign::boot_spec::BootSpec;
    use crate::guest::laplace_check::check_serial;
    use crate::guest::run_output::LostWakeups;
    use crate::guest::settings::WakePolicy;
    use crate::runner::platform::Apic;
    use crate::stress::runner::PlannedRun;

    fn run(smp: u32, class: RunClass, serial: &str) -> StressRun {
        let checks = check_serial(serial);
        let build = crate::runner::kernel_build::BuildConfig::default();
        let params = vec!["seed=5".to_string()];
        StressRun {
            planned: PlannedRun {
                order: 0,
                run: 1,
                seed: 5,
                boot: BootSpec::new(&build, smp, Apic::Xapic, params, 60, false),
            },
            record: BootRecord {
                wall_s: 1.0,
                result: checks.first().map(|check| check.guest),
                checksum_checks: checks,
                lost_wakeups: LostWakeups::parse(serial),
                serial: serial.to_string(),
                ..BootRecord::without_output(class, "why".to_string(), "v")
            },
        }
    }

    const OK: &str = "[c0] laplace: size=64 iterations=300 workers=4 elapsed_us=2000 residual=759484750 checksum=0x22b50accc8dd2c19\n";

    #[test]
    fn rows_count_each_class() {
        let lost = "[c1] LOST WAKEUP on core 1: x\n[c0] vigil: FAILED: 2 lost wakeup(s) detected by the watchdog\n";
        let runs = vec![
            run(4, RunClass::Passed, OK),
            run(4, RunClass::LostWakeups, &format!("{lost}{OK}")),
            // Stuck but never examined: no detector named anything.
            run(4, RunClass::Stuck, ""),
            // The guest's stuck-round watch: a detection classed failed.
            run(
                4,
                RunClass::Failed,
                "[c3] STUCK ROUND: a fork-join round has not finished after 20000 ms\n[c3]   worker 2 (task 3): parker parked\n",
            ),
            run(4, RunClass::Failed, "[c0] PANIC: x\n"),
            run(
                8,
                RunClass::ChecksumMismatch,
                &OK.replace("0x22b5", "0x22b6"),
            ),
        ];
        let rows = summarize(&[4, 8], &runs);
        assert_eq!(rows[0].runs, 5);
        assert_eq!(rows[0].passed, 1);
        assert_eq!(rows[0].stuck, 1);
        assert_eq!((rows[0].lost_wakeup_runs, rows[0].lost_wakeups), (1, 2));
        assert_eq!(rows[0].laplace_ms.unwrap().median, 2.0);
        assert_eq!(rows[0].detected, 2);
        assert!((rows[0].detection_rate - 2.0 / 5.0).abs() < 1e-9);
        assert_eq!(rows[1].checksum_failures, 1);
        let config = StressConfig::new(vec![4, 8], 3, WakePolicy::RacyFlag);
        let table = table(&config, &rows);
        assert!(table.contains("policy racy-flag"), "{table}");
        assert!(
            detection_rates(&rows).contains("detection rate at 4 cores: 2/5 runs (40%)"),
            "{}",
            detection_rates(&rows)
        );
    }

    #[test]
    fn failure_block_has_the_reproduce_command() {
        let block = failure_block(&run(16, RunClass::Stuck, ""), 10);
        assert!(block.starts_with("FAILED smp=16 run 1/10 seed=5: stuck: why\n"));
        assert!(block.contains("  reproduce: cargo xtask run --smp 16 seed=5\n"));
    }
}
