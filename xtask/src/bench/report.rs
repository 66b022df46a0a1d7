//! From raw benchmark boots to what `cargo xtask bench` reports: per
//! configuration the median and min–max of each measure, ratios between
//! policies, parallel efficiency, wake latency and idle cost; rendered as
//! terminal tables and written as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::bench::plan::{BenchConfig, Section, Variant};
use crate::bench::runner::{BenchRun, BootStatus};
use vigil_proto::wake_kind::WakeKind;

use crate::campaign::per_core::PerCoreSpreads;
use crate::campaign::percentiles::Spread;
use crate::guest::pool_line::PoolLine;

/// Wake-latency kinds reported, in order (the kernel's histograms).
pub const LATENCY_KINDS: [&str; 4] = [
    WakeKind::Local.name(),
    WakeKind::Running.name(),
    WakeKind::Halting.name(),
    WakeKind::Halted.name(),
];

/// Percentiles of one wake-latency kind over a configuration's boots.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySpread {
    /// Wakes measured per boot.
    pub samples: Spread,
    /// Each boot's p50, µs.
    pub p50_us: Spread,
    /// Each boot's p99, µs.
    pub p99_us: Spread,
}

/// One configuration over all its boots.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigSummary {
    /// Workload.
    pub section: Section,
    /// Kernel configuration.
    pub variant: Variant,
    /// Cores.
    pub smp: u32,
    /// The host cores QEMU was confined to (`None`: every host core).
    pub host_cores: Option<u32>,
    /// The kernel's estimate of how many of its cores the host ran at once
    /// (`VIGIL-STATS` `host.measured_parallelism_milli`, in cores).
    pub measured_parallelism: Option<Spread>,
    /// Boots that ended ok.
    pub ok: usize,
    /// Boots killed at the limit (the configuration then stops).
    pub timed_out: usize,
    /// Boots that failed otherwise.
    pub failed: usize,
    /// The limit on the workload, s (for "timed out (> S s)"): the boot's,
    /// or the Linux peer's from its loop on.
    pub timeout_s: u64,
    /// Guest time of the grid workload, ms.
    pub time_ms: Option<Spread>,
    /// Per-core statistics.
    #[serde(flatten)]
    pub per_core: PerCoreSpreads,
    /// Wake IPIs sent (all cores) per iteration of the grid.
    pub ipis_per_iteration: Option<Spread>,
    /// Each boot's `cores_per_round_median` of its `pool:` line: distinct
    /// cores that ran a fork-join round's work (boots without the line
    /// count for nothing).
    pub cores_per_round: Option<Spread>,
    /// Each boot's chunks per round from its `pool:` line: the round
    /// plan's choice, from what that boot measured of the host.
    pub chunks_per_round: Option<Spread>,
    /// Each boot's one-core round, µs, as its image timed it at boot (the
    /// `pool:` line's `work_us`): the same source should give the same
    /// figure in every image of one commit; one far from the default's
    /// says that build runs slower under TCG (code layout), and its times
    /// are not comparable with the others'.
    pub work_us: Option<Spread>,
    /// Each boot's microseconds in the stealable pool's calls per round
    /// (summed over cores: the lock's wait, its critical section, the
    /// lock-free fast paths, and any time the vCPU was descheduled inside
    /// a call), from its `pool:` line.
    pub pool_call_us_per_round: Option<Spread>,
    /// Each boot's acquisitions of the stealable pool's lock that found it
    /// held, per round, from its `pool:` line.
    pub lock_contended_per_round: Option<Spread>,
    /// Each boot's median longest row block of a pooled round, µs, from
    /// its `pool:` line: the compute a round cannot be shorter than, which
    /// the host's speed moves.
    pub round_longest_block_us: Option<Spread>,
    /// Each boot's median of a pooled round's time less its longest block,
    /// µs, from its `pool:` line: what the pool and the wake path cost a
    /// round.
    pub round_rest_us: Option<Spread>,
    /// Wake IPIs that ended no halt with work waiting, over wake IPIs sent,
    /// both counted at the destination (the sleeper's side).
    pub needless_ipi_share: Option<Spread>,
    /// Wake latency per target state.
    pub wake_latency: BTreeMap<String, LatencySpread>,
    /// Idle workload: QEMU CPU-s per wall-s.
    pub idle_host_cpu: Option<Spread>,
    /// The Linux peer: the loop's context switches per iteration.
    pub linux_switches_per_iteration: Option<Spread>,
    /// The Linux peer: rescheduling IPIs (`RES`) per iteration (the rest
    /// of its wake IPIs, function-call ones, are in `ipis_per_iteration`).
    pub linux_res_per_iteration: Option<Spread>,
    /// The Linux peer: the cpuidle drivers its boots reported, distinct.
    pub linux_idle_drivers: Vec<String>,
    /// Boots whose result matched the host's computation, of those with a
    /// result.
    pub checksums_matched: usize,
    /// Boots with a checked result.
    pub checksums_checked: usize,
    /// Median time over the state machine's median at this core count.
    pub ratio_to_state_machine: Option<f64>,
    /// State machine rows: its median over the floor's.
    pub state_machine_over_floor: Option<f64>,
    /// Compute-heavy: `(T(1 core) / min(cores, host cores)) / T`.
    pub efficiency: Option<f64>,
}

/// Summaries of every configuration, in table order.
pub fn summarize(config: &BenchConfig, runs: &[BenchRun], host_cores: u32) -> Vec<ConfigSummary> {
    let mut summaries: Vec<ConfigSummary> = config
        .configurations()
        .iter()
        .map(|configuration| {
            let mine: Vec<&BenchRun> = runs
                .iter()
                .filter(|run| run.configuration == *configuration)
                .collect();
            let ok: Vec<&BenchRun> = mine
                .iter()
                .copied()
                .filter(|run| run.status == BootStatus::Ok)
                .collect();
            let count = |status| mine.iter().filter(|run| run.status == status).count();
            let totals: Vec<_> = ok.iter().filter_map(|run| run.totals).collect();
            ConfigSummary {
                section: configuration.section,
                variant: configuration.variant,
                smp: configuration.boot.smp,
                host_cores: configuration.boot.host_cores,
                measured_parallelism: Spread::of(ok.iter().filter_map(|run| {
                    let host = &run.record.stats.as_ref()?.host;
                    (host.parallelism > 0).then(|| host.measured_parallelism_milli as f64 / 1000.0)
                })),
                ok: ok.len(),
                timed_out: count(BootStatus::TimedOut),
                failed: count(BootStatus::Failed),
                timeout_s: configuration.boot.workload_limit_s(),
                time_ms: Spread::of(ok.iter().filter_map(|run| run.guest_ms())),
                per_core: PerCoreSpreads::of(&totals),
                ipis_per_iteration: Spread::of(
                    ok.iter().filter_map(|run| run.ipis_per_iteration()),
                ),
                cores_per_round: Spread::of(
                    ok.iter()
                        .filter_map(|run| Some(run.pool()?.cores_per_round_median as f64)),
                ),
                chunks_per_round: Spread::of(
                    ok.iter().filter_map(|run| Some(run.pool()?.chunks? as f64)),
                ),
                work_us: Spread::of(
                    ok.iter()
                        .filter_map(|run| Some(run.pool()?.work_us? as f64)),
                ),
                pool_call_us_per_round: Spread::of(
                    ok.iter()
                        .filter_map(|run| run.pool()?.pool_call_us_per_round()),
                ),
                lock_contended_per_round: Spread::of(
                    ok.iter()
                        .filter_map(|run| run.pool()?.lock_contended_per_round()),
                ),
                round_longest_block_us: Spread::of(
                    ok.iter().filter_map(|run| {
                        Some(run.pool()?.round_longest_block_ns? as f64 / 1000.0)
                    }),
                ),
                round_rest_us: Spread::of(
                    ok.iter()
                        .filter_map(|run| Some(run.pool()?.round_rest_ns? as f64 / 1000.0)),
                ),
                needless_ipi_share: Spread::of(
                    ok.iter().filter_map(|run| run.totals?.needless_ipi_share()),
                ),
                wake_latency: latency(&ok),
                idle_host_cpu: Spread::of(
                    ok.iter()
                        .filter_map(|run| run.idle.map(|idle| idle.host_cpu_per_wall)),
                ),
                linux_switches_per_iteration: Spread::of(
                    ok.iter()
                        .filter_map(|run| run.linux_costs.as_ref()?.switches_per_iteration()),
                ),
                linux_res_per_iteration: Spread::of(ok.iter().filter_map(|run| {
                    let costs = run.linux_costs.as_ref()?;
                    (costs.iterations > 0)
                        .then(|| costs.rescheduling_ipis as f64 / costs.iterations as f64)
                })),
                linux_idle_drivers: {
                    let mut drivers: Vec<String> = mine
                        .iter()
                        .filter_map(|run| Some(run.linux_costs.as_ref()?.idle_driver.clone()))
                        .collect();
                    drivers.sort();
                    drivers.dedup();
                    drivers
                },
                checksums_matched: mine
                    .iter()
                    .filter(|run| run.checksums_match == Some(true))
                    .count(),
                checksums_checked: mine
                    .iter()
                    .filter(|run| run.checksums_match.is_some())
                    .count(),
                ratio_to_state_machine: None,
                state_machine_over_floor: None,
                efficiency: None,
            }
        })
        .collect();
    // Ratios and efficiency within each host core count: its
    // configurations are contiguous (configurations() puts it outermost).
    let mut start = 0;
    while start < summaries.len() {
        let group = summaries[start].host_cores;
        let end = summaries[start..]
            .iter()
            .position(|summary| summary.host_cores != group)
            .map_or(summaries.len(), |len| start + len);
        add_ratios(&mut summaries[start..end], group.unwrap_or(host_cores));
        start = end;
    }
    summaries
}

fn latency(runs: &[&BenchRun]) -> BTreeMap<String, LatencySpread> {
    let mut out = BTreeMap::new();
    for kind in LATENCY_KINDS {
        let measured: Vec<_> = runs
            .iter()
            .filter_map(|run| {
                run.record
                    .stats
                    .as_ref()?
                    .wake_latency_us
                    .get(kind)
                    .copied()
            })
            .filter(|latency| latency.samples > 0)
            .collect();
        let spread = |pick: fn(&crate::guest::vigil_stats::LatencySummary) -> u64| {
            Spread::of(measured.iter().map(|latency| pick(latency) as f64))
        };
        if let (Some(samples), Some(p50_us), Some(p99_us)) =
            (spread(|l| l.samples), spread(|l| l.p50), spread(|l| l.p99))
        {
            out.insert(
                kind.to_string(),
                LatencySpread {
                    samples,
                    p50_us,
                    p99_us,
                },
            );
        }
    }
    out
}

fn median_time(
    summaries: &[ConfigSummary],
    section: Section,
    variant: Variant,
    smp: u32,
) -> Option<f64> {
    summaries
        .iter()
        .find(|s| s.section == section && s.variant == variant && s.smp == smp)?
        .time_ms
        .map(|spread| spread.median)
}

fn add_ratios(summaries: &mut [ConfigSummary], host_cores: u32) {
    let snapshot = summaries.to_vec();
    for summary in summaries.iter_mut() {
        let Some(time) = summary.time_ms.map(|spread| spread.median) else {
            continue;
        };
        let (section, smp) = (summary.section, summary.smp);
        let state_machine = median_time(&snapshot, section, Variant::Default, smp);
        summary.ratio_to_state_machine = state_machine.map(|sm| time / sm);
        if summary.variant == Variant::Default {
            summary.state_machine_over_floor =
                median_time(&snapshot, section, Variant::Floor, smp).map(|floor| time / floor);
        }
        if section == Section::ComputeHeavy {
            let one_core = median_time(&snapshot, section, summary.variant, 1);
            let parallel = f64::from(smp.min(host_cores.max(1)));
            summary.efficiency = one_core.map(|t1| (t1 / parallel) / time);
        }
    }
}

fn find(
    summaries: &[ConfigSummary],
    section: Section,
    variant: Variant,
    smp: u32,
) -> Option<&ConfigSummary> {
    summaries
        .iter()
        .find(|s| s.section == section && s.variant == variant && s.smp == smp)
}

/// `median [min-max]` of a spread, or why there is none.
fn cell(
    summary: Option<&ConfigSummary>,
    pick: impl Fn(&ConfigSummary) -> Option<Spread>,
    digits: usize,
) -> String {
    let Some(summary) = summary else {
        return "-".to_string();
    };
    match pick(summary) {
        Some(spread) if spread.count > 1 => format!(
            "{:.digits$} [{:.digits$}-{:.digits$}]",
            spread.median, spread.min, spread.max
        ),
        Some(spread) => format!("{:.digits$}", spread.median),
        None if summary.timed_out > 0 => format!("timed out (>{} s)", summary.timeout_s),
        None if summary.failed > 0 => "FAILED".to_string(),
        None => "-".to_string(),
    }
}

fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |ratio| format!("{ratio:.2}"))
}

fn percent(spread: Option<Spread>) -> String {
    spread.map_or_else(
        || "-".to_string(),
        |spread| format!("{:.1}%", spread.median * 100.0),
    )
}

/// The median of a spread with `digits` decimals, or `-`.
fn median(spread: Option<Spread>, digits: usize) -> String {
    spread.map_or_else(
        || "-".to_string(),
        |spread| format!("{:.digits$}", spread.median),
    )
}

/// Two figures of one line in one cell, `a/b` (each with its digits);
/// `-` when the boots had neither (a kernel that printed neither).
fn median_pair(
    (first, first_digits): (Option<Spread>, usize),
    (second, second_digits): (Option<Spread>, usize),
) -> String {
    if first.is_none() && second.is_none() {
        return "-".to_string();
    }
    format!(
        "{}/{}",
        median(first, first_digits),
        median(second, second_digits)
    )
}

/// Appends a table: the `left` columns left-aligned, the others
/// right-aligned, each as wide as its widest cell; with `group`, a blank
/// line wherever the first column changes.
fn write_table(
    out: &mut String,
    headers: &[&str],
    left: &[usize],
    group: bool,
    rows: &[Vec<String>],
) {
    let widths: Vec<usize> = (0..headers.len())
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .chain([headers[column].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let text: Vec<String> = cells
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(column, (cell, &width))| {
                if left.contains(&column) {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        format!("  {}", text.join("  ").trim_end())
    };
    let _ = writeln!(out, "{}", line(headers.to_vec()));
    for (index, row) in rows.iter().enumerate() {
        if group && index > 0 && rows[index - 1][0] != row[0] {
            let _ = writeln!(out);
        }
        let _ = writeln!(out, "{}", line(row.iter().map(String::as_str).collect()));
    }
}

/// The configurations of `section` that the benchmark ran, as rows: by core
/// count, then variant, so that the variants at one core count sit
/// together.
fn rows_of<'a>(
    config: &BenchConfig,
    summaries: &'a [ConfigSummary],
    section: Section,
    variants: &[Variant],
) -> Vec<&'a ConfigSummary> {
    config
        .scope
        .smp
        .iter()
        .flat_map(|&smp| {
            variants
                .iter()
                .filter_map(move |&variant| find(summaries, section, variant, smp))
        })
        .collect()
}

/// The legend: each variant's boot parameters besides the workload's.
fn render_variants(out: &mut String, config: &BenchConfig) {
    let _ = writeln!(
        out,
        "\nvariants (release kernels; boot parameters besides the workload's and seed=):"
    );
    let rows: Vec<Vec<String>> = config
        .booted_variants()
        .into_iter()
        .map(|variant| vec![variant.name().to_string(), variant.describe()])
        .collect();
    write_table(out, &["variant", "parameters"], &[0, 1], false, &rows);
}

/// The main table of a grid section: per configuration its guest time and
/// what it cost in cores and IPIs.
fn render_grid_table(
    out: &mut String,
    config: &BenchConfig,
    summaries: &[ConfigSummary],
    section: Section,
) {
    let compute = section == Section::ComputeHeavy;
    let mut headers = vec![
        "smp",
        "variant",
        "guest ms",
        "/default",
        "chunks",
        "cores/round",
        "round: longest block/rest µs",
        "IPIs/iter",
        "IPIs/wakeups/spurious per core",
        "needless",
        "pool µs/lock waits per round",
    ];
    if compute {
        headers.push("efficiency");
    }
    let rows: Vec<Vec<String>> = rows_of(
        config,
        summaries,
        section,
        &config.section_variants(section),
    )
    .into_iter()
    .map(|summary| {
        let floor = summary.variant == Variant::Floor;
        let per_core = if floor {
            "n/a".to_string()
        } else if summary.per_core.ipis_per_core.is_none() {
            "-".to_string()
        } else {
            format!(
                "{}/{}/{}",
                median(summary.per_core.ipis_per_core, 0),
                median(summary.per_core.wakeups_per_core, 0),
                median(summary.per_core.spurious_per_core, 0),
            )
        };
        let mut row = vec![
            summary.smp.to_string(),
            summary.variant.name().to_string(),
            cell(Some(summary), |s| s.time_ms, 1),
            ratio(summary.ratio_to_state_machine),
            median(summary.chunks_per_round, 1),
            median(summary.cores_per_round, 1),
            median_pair(
                (summary.round_longest_block_us, 1),
                (summary.round_rest_us, 1),
            ),
            if floor {
                "n/a".to_string()
            } else {
                median(summary.ipis_per_iteration, 2)
            },
            per_core,
            if floor {
                "n/a".to_string()
            } else {
                percent(summary.needless_ipi_share)
            },
            median_pair(
                (summary.pool_call_us_per_round, 1),
                (summary.lock_contended_per_round, 2),
            ),
        ];
        if compute {
            row.push(ratio(summary.efficiency));
        }
        row
    })
    .collect();
    write_table(out, &headers, &[1], true, &rows);
}

/// The ratios that are not a row's own: the state machine over the floor,
/// and the watchdog's cost.
fn render_ratios(
    out: &mut String,
    config: &BenchConfig,
    summaries: &[ConfigSummary],
    section: Section,
) {
    let variants = config.section_variants(section);
    let floor = variants.contains(&Variant::Floor);
    let watchdog = variants.contains(&Variant::WatchdogOff);
    if !floor && !watchdog || !variants.contains(&Variant::Default) {
        return;
    }
    let mut headers = vec!["smp"];
    if floor {
        headers.push("default/floor");
    }
    if watchdog {
        headers.push("watchdog cost: default/sm-watchdog-off");
    }
    let rows: Vec<Vec<String>> = config
        .scope
        .smp
        .iter()
        .map(|&smp| {
            let get = |variant| find(summaries, section, variant, smp);
            let mut row = vec![smp.to_string()];
            if floor {
                row.push(ratio(
                    get(Variant::Default).and_then(|s| s.state_machine_over_floor),
                ));
            }
            if watchdog {
                row.push(ratio(
                    get(Variant::WatchdogOff)
                        .and_then(|s| s.ratio_to_state_machine)
                        .map(|off_over_sm| 1.0 / off_over_sm),
                ));
            }
            row
        })
        .collect();
    let _ = writeln!(out, "  ratios of medians:");
    write_table(out, &headers, &[], false, &rows);
}

/// What the columns of the grid tables are.
const GRID_COLUMNS: &str = "grid tables: guest ms = guest time of the grid; /default = median over default's at the same cores;
  cores/round = distinct cores that ran a fork-join round's work (the kernel's `pool:` line);
  IPIs/iter = wake IPIs sent, all cores, per iteration (the Linux peer: its rescheduling and function-call IPIs);
  per core = IPIs sent/wakeups/spurious wakeups;
  needless = share of wake IPIs, counted at their destination, that ended no halt with work waiting;
  the floor's bare IPIs are outside the protocol's counters (n/a)";

/// The summaries of the boots QEMU ran on `group` host cores (`None`:
/// every host core).
pub fn on_host_cores(summaries: &[ConfigSummary], group: Option<u32>) -> Vec<ConfigSummary> {
    summaries
        .iter()
        .filter(|summary| summary.host_cores == group)
        .cloned()
        .collect()
}

/// The terminal report: the variants' parameters, then per host core
/// count QEMU ran on a main table per grid section, wake latency, idle
/// cost, the Linux peer; last, the kernel's parallelism estimate against
/// the truth.
pub fn render(config: &BenchConfig, summaries: &[ConfigSummary], host_cores: u32) -> String {
    let mut out = String::new();
    render_variants(&mut out, config);
    for group in config.host_core_groups() {
        let mine = on_host_cores(summaries, group);
        if let Some(count) = group {
            let _ = writeln!(
                out,
                "\n=== QEMU confined to {count} host core(s) (taskset) ==="
            );
        }
        render_on_host(&mut out, config, &mine, group.unwrap_or(host_cores));
    }
    render_estimates(&mut out, config, summaries, host_cores);
    render_comparability(&mut out, summaries, host_cores);
    out
}

/// How far an image's one-core round may be from the default's (either
/// way) before its times are called not comparable. Images of one commit
/// measured within 10% of each other; the one this check was written for
/// took 2.4 times as long.
pub const WORK_RATIO_LIMIT: f64 = 1.5;

/// Block (7): every Vigil image whose one-core round, as it timed it at
/// boot (`work_us`), is more than [`WORK_RATIO_LIMIT`] times from the
/// default's (either way) in the same section and host core count: under
/// TCG one source runs at different speeds in different builds, and such
/// an image's times say more about its build than about its variant. Each
/// image is compared at the fewest cores both it and the default timed,
/// and only at a core count the host can run at once: with more vCPUs
/// than host cores a variant's own spinning vCPUs slow the timing core
/// (idle-poll at 8 vCPUs on 2 host cores timed 4x the default's), which is
/// the variant's cost, not its build's. An image with no such count is
/// said to be not compared.
fn render_comparability(out: &mut String, summaries: &[ConfigSummary], host_cores: u32) {
    let mut rows = Vec::new();
    let mut compared = 0;
    let mut not_compared = Vec::new();
    for summary in summaries {
        if summary.variant == Variant::Default || summary.work_us.is_none() {
            continue;
        }
        let group_cores = summary.host_cores.unwrap_or(host_cores);
        let default_at = |smp: u32| {
            summaries
                .iter()
                .find(|other| {
                    other.variant == Variant::Default
                        && other.section == summary.section
                        && other.host_cores == summary.host_cores
                        && other.smp == smp
                })
                .and_then(|default| default.work_us)
                .filter(|default| default.median > 0.0)
        };
        // The core counts this image timed in this section and host core
        // count; it is compared at the fewest the host runs at once with a
        // default timing, in that row only (and said not compared, in its
        // first row, if there is none).
        let timed: Vec<u32> = summaries
            .iter()
            .filter(|other| {
                other.variant == summary.variant
                    && other.section == summary.section
                    && other.host_cores == summary.host_cores
                    && other.work_us.is_some()
            })
            .map(|other| other.smp)
            .collect();
        let first_row = timed.iter().copied().min();
        let fewest = timed
            .iter()
            .copied()
            .filter(|&smp| smp <= group_cores && default_at(smp).is_some())
            .min();
        let Some(fewest) = fewest else {
            if first_row == Some(summary.smp) {
                not_compared.push(format!(
                    "{} {}",
                    summary.section.name(),
                    summary.variant.name()
                ));
            }
            continue;
        };
        let (Some(work), Some(default)) = (summary.work_us, default_at(summary.smp)) else {
            continue;
        };
        if fewest != summary.smp {
            continue;
        }
        compared += 1;
        let ratio = work.median / default.median;
        if !(1.0 / WORK_RATIO_LIMIT..=WORK_RATIO_LIMIT).contains(&ratio) {
            rows.push(vec![
                summary.section.name().to_string(),
                summary.smp.to_string(),
                summary
                    .host_cores
                    .map_or_else(|| "all".to_string(), |cores| cores.to_string()),
                summary.variant.name().to_string(),
                format!("{:.0}", work.median),
                format!("{:.0}", default.median),
                format!("{ratio:.2}x"),
            ]);
        }
    }
    if !not_compared.is_empty() {
        let _ = writeln!(
            out,
            "\n(7) not compared (no core count at or below the host's with both its and the default's work_us): {}",
            not_compared.join(", ")
        );
    }
    if compared == 0 {
        return;
    }
    if rows.is_empty() {
        let _ = writeln!(
            out,
            "\n(7) Every image's one-core round (the pool line's work_us, at the fewest cores both it and the default ran with, at most the host's) is within {WORK_RATIO_LIMIT}x of the default's ({compared} images compared)"
        );
        return;
    }
    let _ = writeln!(
        out,
        "\n(7) NOT COMPARABLE: these images timed a one-core round at boot (the pool line's work_us, median µs, at the fewest cores both it and the default ran with, at most the host's) more than {WORK_RATIO_LIMIT}x from the default's; under TCG one source runs at different speeds in different builds, so their times above measure the build, not the variant"
    );
    write_table(
        out,
        &[
            "section",
            "smp",
            "host cores",
            "variant",
            "work_us",
            "default's",
            "ratio",
        ],
        &[0, 3],
        true,
        &rows,
    );
}

/// Block (6): per host core count and core count, the kernel's estimate of
/// how many of its cores the host ran at once (every Vigil boot measures
/// it, whatever its variant), against what the host could give: the vCPUs
/// or the host cores, the fewer.
fn render_estimates(
    out: &mut String,
    config: &BenchConfig,
    summaries: &[ConfigSummary],
    host_cores: u32,
) {
    let mut rows = Vec::new();
    for group in config.host_core_groups() {
        for &smp in &config.scope.smp {
            let estimates: Vec<f64> = summaries
                .iter()
                .filter(|summary| summary.host_cores == group && summary.smp == smp)
                .filter_map(|summary| summary.measured_parallelism)
                .flat_map(|spread| [spread.min, spread.median, spread.max])
                .collect();
            let (Some(min), Some(max)) = (
                estimates.iter().copied().reduce(f64::min),
                estimates.iter().copied().reduce(f64::max),
            ) else {
                continue;
            };
            let cores = group.unwrap_or(host_cores);
            rows.push(vec![
                cores.to_string(),
                smp.to_string(),
                smp.min(cores).to_string(),
                format!("{min:.2}-{max:.2}"),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n(6) The kernel's host parallelism estimate (VIGIL-STATS host.measured_parallelism_milli; min-max over every configuration's median, min and max) against the truth: min(vCPUs, host cores)"
    );
    write_table(
        out,
        &["host cores", "smp", "truth", "estimate"],
        &[0, 1, 2],
        true,
        &rows,
    );
}

/// The tables of one host core count.
fn render_on_host(
    out: &mut String,
    config: &BenchConfig,
    summaries: &[ConfigSummary],
    host_cores: u32,
) {
    let grids = [
        (
            Section::SyncHeavy,
            config.sync_grid,
            "(1) Laplace sync-heavy",
        ),
        (
            Section::ComputeHeavy,
            config.compute_grid,
            "(2) Laplace compute-heavy",
        ),
    ];
    if grids
        .iter()
        .any(|(section, _, _)| config.sections.contains(section))
    {
        let _ = writeln!(out, "\n{GRID_COLUMNS}");
    }
    for (section, grid, title) in grids {
        if !config.sections.contains(&section) {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{title} ({}x{}, {} iterations), medians [min-max] of {} run(s)",
            grid.size, grid.size, grid.iterations, config.scope.runs
        );
        if section == Section::ComputeHeavy {
            let _ = writeln!(
                out,
                "  efficiency = (T at 1 core / min(cores, {host_cores} host cores)) / T"
            );
        }
        render_grid_table(out, config, summaries, section);
        render_ratios(out, config, summaries, section);
    }

    if config.sections.contains(&Section::SyncHeavy) {
        render_latency(out, config, summaries);
    }
    render_idle(out, config, summaries);
    render_linux(out, config, summaries);
}

/// Block (5), if the Linux peer ran: per grid section and core count,
/// Linux's time against Vigil's default, what Linux paid per iteration,
/// its cpuidle driver and how many of its results matched the host's.
fn render_linux(out: &mut String, config: &BenchConfig, summaries: &[ConfigSummary]) {
    let linux: Vec<Variant> = config
        .booted_variants()
        .into_iter()
        .filter(|variant| variant.linux_idle().is_some())
        .collect();
    if linux.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n(5) the Linux peer (Debian's kernel, same QEMU machine): medians; /default = Linux's time over Vigil's default's;\n  wake IPIs/iter = rescheduling + function-call IPIs (all CPUs) per iteration, RES/iter the rescheduling ones alone;\n  switches/iter = the process's context switches per iteration; checksums = results matching the host's / results"
    );
    for section in [Section::SyncHeavy, Section::ComputeHeavy] {
        if !config.sections.contains(&section) {
            continue;
        }
        let _ = writeln!(out, "  {section}:");
        let mut variants = vec![Variant::Default];
        variants.extend(linux.iter().copied());
        let rows: Vec<Vec<String>> = rows_of(config, summaries, section, &variants)
            .into_iter()
            .map(|summary| {
                let is_linux = summary.variant.linux_idle().is_some();
                vec![
                    summary.smp.to_string(),
                    summary.variant.name().to_string(),
                    cell(Some(summary), |s| s.time_ms, 1),
                    ratio(summary.ratio_to_state_machine),
                    median(summary.ipis_per_iteration, 2),
                    if is_linux {
                        median(summary.linux_res_per_iteration, 2)
                    } else {
                        "n/a".to_string()
                    },
                    if is_linux {
                        median(summary.linux_switches_per_iteration, 2)
                    } else {
                        "n/a".to_string()
                    },
                    if is_linux {
                        summary.linux_idle_drivers.join(",")
                    } else {
                        "n/a".to_string()
                    },
                    format!(
                        "{}/{}",
                        summary.checksums_matched, summary.checksums_checked
                    ),
                ]
            })
            .collect();
        write_table(
            out,
            &[
                "smp",
                "variant",
                "guest ms",
                "/default",
                "wake IPIs/iter",
                "RES/iter",
                "switches/iter",
                "cpuidle driver",
                "checksums",
            ],
            &[1, 7],
            true,
            &rows,
        );
    }
}

/// Block (3): wake latency of the sync-heavy variants that wake cores.
fn render_latency(out: &mut String, config: &BenchConfig, summaries: &[ConfigSummary]) {
    let _ = writeln!(
        out,
        "\n(3) wake latency (sync-heavy), µs, p50/p99: medians over runs of each run's p50/p99, by the target's state when woken"
    );
    let variants: Vec<Variant> = config
        .section_variants(Section::SyncHeavy)
        .into_iter()
        .filter(|&variant| variant != Variant::Floor)
        .collect();
    let mut headers = vec!["smp", "variant"];
    headers.extend(LATENCY_KINDS);
    let rows: Vec<Vec<String>> = rows_of(config, summaries, Section::SyncHeavy, &variants)
        .into_iter()
        .map(|summary| {
            let mut row = vec![summary.smp.to_string(), summary.variant.name().to_string()];
            row.extend(LATENCY_KINDS.iter().map(|kind| {
                summary.wake_latency.get(*kind).map_or_else(
                    || "-".to_string(),
                    |l| format!("{:.0}/{:.0}", l.p50_us.median, l.p99_us.median),
                )
            }));
            row
        })
        .collect();
    write_table(out, &headers, &[1], true, &rows);
}

/// Block (4), if the idle section ran.
fn render_idle(out: &mut String, config: &BenchConfig, summaries: &[ConfigSummary]) {
    if !config.sections.contains(&Section::Idle) {
        return;
    }
    let _ = writeln!(
        out,
        "\n(4) idle cost ({} ms of guest idle): QEMU CPU time / wall time between `idle: start` and `idle: end`, host cores, median [min-max]",
        config.idle_ms
    );
    let rows: Vec<Vec<String>> = rows_of(
        config,
        summaries,
        Section::Idle,
        &config.section_variants(Section::Idle),
    )
    .into_iter()
    .map(|summary| {
        vec![
            summary.smp.to_string(),
            summary.variant.name().to_string(),
            cell(Some(summary), |s| s.idle_host_cpu, 3),
        ]
    })
    .collect();
    write_table(out, &["smp", "variant", "host cores"], &[1], true, &rows);
}

/// Everything a benchmark produced, as written by `--json`.
#[derive(Debug, Serialize)]
pub struct BenchJson<'a> {
    /// The benchmark's settings.
    pub config: &'a BenchConfig,
    /// Host cores (`available_parallelism`), used by the efficiency.
    pub host_cores: u32,
    /// Clock ticks per second of `/proc/<pid>/stat` (`sysconf(_SC_CLK_TCK)`).
    pub clock_ticks_per_second: u64,
    /// Wall time of the whole benchmark, s.
    pub wall_s: f64,
    /// How derived numbers are computed.
    pub definitions: BTreeMap<&'static str, &'static str>,
    /// Per configuration.
    pub summary: &'a [ConfigSummary],
    /// Every boot, raw.
    pub runs: Vec<RunJson<'a>>,
}

/// One boot in the JSON: the raw boot and its parsed `pool:` line.
#[derive(Debug, Serialize)]
pub struct RunJson<'a> {
    /// The boot.
    #[serde(flatten)]
    pub run: &'a BenchRun,
    /// The kernel's `pool:` line, if it printed one.
    pub pool: Option<PoolLine>,
}

impl<'a> RunJson<'a> {
    /// Every boot of `runs`, with its pool line.
    pub fn all(runs: &'a [BenchRun]) -> Vec<Self> {
        runs.iter()
            .map(|run| Self {
                run,
                pool: run.pool(),
            })
            .collect()
    }
}

/// How each derived number is computed (also in the JSON).
pub fn definitions() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        (
            "time_ms",
            "guest time of the grid workload (elapsed_us of the laplace:/floor: line) / 1000",
        ),
        (
            "ratio_to_state_machine",
            "median time_ms / median time_ms of default (policy=state-machine pool=steal) at the same core count",
        ),
        (
            "state_machine_over_floor",
            "median time_ms of default / median time_ms of floor",
        ),
        (
            "efficiency",
            "compute-heavy: (median time_ms at 1 core / min(cores, host_cores)) / median time_ms",
        ),
        (
            "needless_ipi_share",
            "sum over cores of needless_ipis / sum of wake_ipis_to, both per destination: wake IPIs (ICR writes) that ended no halt of their destination with work waiting, counted by the sleeper (ipi_wakes_with_work)",
        ),
        ("per_core", "sum over cores / number of cores"),
        (
            "ipis_per_iteration",
            "per boot: (wake IPIs sent (VIGIL-STATS ipis_sent summed over cores) - host.ipis_before_workload (the boot's measurements)) / iterations of the laplace:/floor: line; summarised over boots (the floor's bare IPIs are not counted); the Linux peer: (rescheduling_ipis + function_call_ipis of its linux-costs: line, /proc/interrupts' RES and CAL rows over the loop, all CPUs) / iterations",
        ),
        (
            "linux_switches_per_iteration",
            "the Linux peer, per boot: (voluntary_switches + involuntary_switches of its linux-costs: line, getrusage(RUSAGE_SELF) over the loop) / iterations",
        ),
        (
            "linux_res_per_iteration",
            "the Linux peer, per boot: rescheduling_ipis (/proc/interrupts' RES row over the loop, all CPUs) / iterations",
        ),
        (
            "cores_per_round",
            "per boot: cores_per_round_median of the kernel's `pool:` line (distinct cores that ran a fork-join round's work, median over rounds); summarised over boots with the line (Laplace only)",
        ),
        (
            "pool_call_us_per_round",
            "per boot: pool_call_us / rounds of the kernel's `pool:` line (microseconds every core spent in the stealable pool's calls, summed over cores, over the workload: the wait for its lock, its critical section, the lock-free fast paths, and any time the host descheduled the vCPU inside a call; an upper bound on the lock's wait); summarised over boots with the line (Laplace only; 0 with pool=pinned, where no call is made)",
        ),
        (
            "lock_contended_per_round",
            "per boot: lock_contended / rounds of the kernel's `pool:` line (acquisitions of the stealable pool's lock that found it held); summarised over boots with the line (Laplace only)",
        ),
        (
            "round_longest_block_us",
            "per boot: round_longest_block_ns / 1000 of the kernel's `pool:` line (median over the rounds after the first two, which run on the caller alone, of each round's longest row block, TSC-timed where it ran: the compute the round could not be shorter than; the host's speed moves it); summarised over boots with the line (Laplace only)",
        ),
        (
            "round_rest_us",
            "per boot: round_rest_ns / 1000 of the kernel's `pool:` line (median over the same rounds of each round's time less its longest row block: publishing the round, waking or finding cores, their steals and the join, what the pool and the wake path cost a round; and whole blocks where one core ran two of a round's blocks, as in round-trial rounds of one chunk more than the cores that came); summarised over boots with the line (Laplace only)",
        ),
        (
            "chunks_per_round",
            "per boot: chunks= of the kernel's `pool:` line (the round plan's chunks per round, or workers of the pinned pool, chosen from what the boot measured of the host); summarised over boots with the line (Laplace only)",
        ),
        (
            "work_us",
            "per boot: work_us= of the kernel's `pool:` line (a one-core round of the workload as the image timed it at boot, µs); summarised over boots with the line; block (7) names the images more than WORK_RATIO_LIMIT (1.5) times from the default's (Laplace only)",
        ),
        (
            "wake_latency",
            "each run's p50/p99 from VIGIL-STATS wake_latency_us (histogram bucket upper bounds), summarised over runs",
        ),
        (
            "idle_host_cpu",
            "(QEMU utime+stime at `idle: end` - at `idle: start`) / wall time between the two lines; /proc/<pid>/stat in clock ticks of sysconf(_SC_CLK_TCK)",
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::plan::Configuration;
    use crate::bench::runner::grid_boot;
    use crate::guest::vigil_stats::StatsTotals;

    fn run(
        config: &BenchConfig,
        section: Section,
        variant: Variant,
        smp: u32,
        ms: u64,
    ) -> BenchRun {
        let configuration: Configuration = config
            .configurations()
            .into_iter()
            .find(|c| c.section == section && c.variant == variant && c.boot.smp == smp)
            .unwrap();
        grid_boot(configuration, Some(ms))
    }

    #[test]
    fn ratios_and_efficiency() {
        let config = BenchConfig::standard(vec![1, 4], 1);
        let runs = vec![
            run(&config, Section::SyncHeavy, Variant::Default, 4, 200),
            run(&config, Section::SyncHeavy, Variant::AlwaysIpi, 4, 300),
            run(&config, Section::SyncHeavy, Variant::Floor, 4, 100),
            run(&config, Section::ComputeHeavy, Variant::Default, 1, 1000),
            run(&config, Section::ComputeHeavy, Variant::Default, 4, 600),
        ];
        let summaries = summarize(&config, &runs, 2);
        let get = |section, variant, smp| find(&summaries, section, variant, smp).unwrap();
        assert_eq!(
            get(Section::SyncHeavy, Variant::AlwaysIpi, 4).ratio_to_state_machine,
            Some(1.5)
        );
        assert_eq!(
            get(Section::SyncHeavy, Variant::Default, 4).state_machine_over_floor,
            Some(2.0)
        );
        // (1000 / min(4, 2)) / 600
        let efficiency = get(Section::ComputeHeavy, Variant::Default, 4)
            .efficiency
            .unwrap();
        assert!((efficiency - 500.0 / 600.0).abs() < 1e-9);
        assert_eq!(
            get(Section::ComputeHeavy, Variant::Default, 1).efficiency,
            Some(1.0)
        );
        let text = render(&config, &summaries, 2);
        assert!(
            text.contains("(1) Laplace sync-heavy (64x64, 1000 iterations)"),
            "{text}"
        );
        assert!(text.contains("(4) idle cost"), "{text}");
    }

    #[test]
    fn each_host_core_count_has_its_own_tables_ratios_and_estimate() {
        let mut config = BenchConfig::standard(vec![1, 4], 1);
        config.sections = vec![Section::ComputeHeavy];
        config.host_cores = vec![1, 2];
        let on = |host_cores: u32, variant, smp: u32, ms: u64, estimate_milli: u64| {
            let configuration = config
                .configurations()
                .into_iter()
                .find(|c| {
                    c.variant == variant
                        && c.boot.smp == smp
                        && c.boot.host_cores == Some(host_cores)
                })
                .unwrap();
            assert!(
                configuration
                    .boot
                    .reproduce
                    .starts_with(&format!("cargo xtask run --host-cores {host_cores} ")),
                "{}",
                configuration.boot.reproduce
            );
            let mut boot = grid_boot(configuration, Some(ms));
            boot.record.stats = Some(crate::guest::vigil_stats::VigilStats(
                vigil_proto::stats_line::StatsLine {
                    label: "laplace".to_string(),
                    policy: "state-machine".to_string(),
                    tsc_ticks_per_ms: 1,
                    cores: Vec::new(),
                    wake_latency_us: BTreeMap::new(),
                    host: vigil_proto::stats_line::HostStats {
                        measured_parallelism_milli: estimate_milli,
                        parallelism: estimate_milli.div_ceil(1000),
                        ..Default::default()
                    },
                },
            ));
            boot
        };
        let runs = vec![
            on(1, Variant::Default, 1, 1000, 1000),
            on(1, Variant::Default, 4, 1100, 1050),
            on(2, Variant::Default, 1, 1000, 990),
            on(2, Variant::Default, 4, 600, 1800),
        ];
        // The machine's own count (8) is not used: each group has its own.
        let summaries = summarize(&config, &runs, 8);
        let efficiency = |host_cores| {
            summaries
                .iter()
                .find(|s| {
                    s.host_cores == Some(host_cores) && s.variant == Variant::Default && s.smp == 4
                })
                .unwrap()
                .efficiency
                .unwrap()
        };
        // (1000 / min(4, 1)) / 1100 and (1000 / min(4, 2)) / 600.
        assert!((efficiency(1) - 1000.0 / 1100.0).abs() < 1e-9);
        assert!((efficiency(2) - 500.0 / 600.0).abs() < 1e-9);
        let text = render(&config, &summaries, 8);
        assert!(
            text.contains("=== QEMU confined to 1 host core(s) (taskset) ===")
                && text.contains("=== QEMU confined to 2 host core(s) (taskset) ==="),
            "{text}"
        );
        assert!(text.contains("min(cores, 2 host cores)"), "{text}");
        let estimates = &text[text.find("(6) The kernel's host parallelism").unwrap()..];
        let row = |cells: &[&str]| {
            estimates
                .lines()
                .any(|line| line.split_whitespace().collect::<Vec<_>>() == cells)
        };
        assert!(row(&["1", "4", "1", "1.05-1.05"]), "{estimates}");
        assert!(row(&["2", "4", "2", "1.80-1.80"]), "{estimates}");
        assert!(row(&["2", "1", "1", "0.99-0.99"]), "{estimates}");
    }

    #[test]
    fn an_image_whose_one_core_round_is_far_from_the_defaults_is_named() {
        let mut config = BenchConfig::standard(vec![1, 8], 1);
        config.sections = vec![Section::SyncHeavy];
        let timed = |variant, smp, work_us: u64| {
            let mut boot = run(&config, Section::SyncHeavy, variant, smp, 100);
            boot.record.serial = format!(
                "[c0] pool: kind=steal chunks=2 work_us={work_us} rounds=1000 cores_per_round_median=2 min=1 max=2 search_wakes=3\n"
            );
            boot
        };
        let runs = vec![
            timed(Variant::Default, 1, 55),
            timed(Variant::Default, 8, 56),
            // A slower build: named, at 1 core.
            timed(Variant::AlwaysIpi, 1, 134),
            timed(Variant::AlwaysIpi, 8, 135),
            // The same build as the default's; at 8 vCPUs on 2 host cores its
            // own polling vCPUs slowed the timing core: the variant's cost,
            // not named.
            timed(Variant::IdlePoll, 1, 56),
            timed(Variant::IdlePoll, 8, 230),
            // A faster build: named too.
            timed(Variant::SmStealBackoffOff, 1, 30),
            // Timed only with more vCPUs than host cores: not compared.
            timed(Variant::WatchdogOff, 8, 56),
        ];
        let summaries = summarize(&config, &runs, 2);
        let text = render(&config, &summaries, 2);
        let block = &text[text
            .find("(7) NOT COMPARABLE")
            .unwrap_or_else(|| panic!("{text}"))..];
        let rows: Vec<Vec<&str>> = block
            .lines()
            .skip(2)
            .map(|line| line.split_whitespace().collect())
            .filter(|cells: &Vec<&str>| !cells.is_empty())
            .collect();
        fn row<'a>(variant: &'a str, work: &'a str, ratio: &'a str) -> Vec<&'a str> {
            vec!["sync-heavy", "1", "all", variant, work, "55", ratio]
        }
        assert_eq!(
            rows,
            [
                row("sm-steal-backoff-off", "30", "0.55x"),
                row("always-ipi", "134", "2.44x"),
            ],
            "{block}"
        );
        assert!(
            text.contains("(7) not compared (no core count at or below the host's with both its and the default's work_us): sync-heavy sm-watchdog-off"),
            "{text}"
        );
        // Every image alike: one line that says so.
        let runs = vec![
            timed(Variant::Default, 1, 55),
            timed(Variant::IdlePoll, 1, 57),
        ];
        let text = render(&config, &summarize(&config, &runs, 2), 2);
        assert!(
            text.contains("(7) Every image's one-core round") && !text.contains("NOT COMPARABLE"),
            "{text}"
        );
    }

    #[test]
    fn cores_per_round_and_ipis_per_iteration() {
        let config = BenchConfig::standard(vec![2], 3);
        let with = |variant, cores: u64, ipis: u64| {
            let mut boot = run(&config, Section::SyncHeavy, variant, 2, 100);
            // The round split grows with the IPIs, so that each boot's
            // differs: 500 IPIs, 5.0 µs of rest a round.
            let rest_ns = ipis * 10;
            boot.record.serial = format!(
                "[c0] laplace: size=64 iterations=1000 workers=2 elapsed_us=100000 residual=0 checksum=0x0\n\
                 [c0] pool: kind=steal rounds=1000 cores_per_round_median={cores} min=1 max=2 search_wakes=3 round_longest_block_ns=40000 round_rest_ns={rest_ns}\n"
            );
            boot.totals = Some(StatsTotals {
                cores: 2,
                ipis_sent: ipis,
                ..StatsTotals::default()
            });
            boot
        };
        let mut no_line = with(Variant::Default, 0, 3000);
        no_line.record.serial = String::new();
        let runs = vec![
            with(Variant::Default, 1, 500),
            with(Variant::Default, 2, 1500),
            no_line,
            with(Variant::SmPinned, 2, 2000),
        ];
        let summaries = summarize(&config, &runs, 2);
        let steal = find(&summaries, Section::SyncHeavy, Variant::Default, 2).unwrap();
        // Median of the two boots with a pool line; the third has none.
        let cores = steal.cores_per_round.unwrap();
        assert_eq!((cores.count, cores.median), (2, 1.5));
        // 500, 1500 and 3000 IPIs over 1000 iterations.
        let ipis = steal.ipis_per_iteration.unwrap();
        assert_eq!((ipis.count, ipis.median, ipis.max), (3, 1.5, 3.0));
        // The round split of the two boots with the line: 5 and 15 µs of
        // rest, blocks of 40.
        let rest = steal.round_rest_us.unwrap();
        assert_eq!((rest.count, rest.median, rest.max), (2, 10.0, 15.0));
        assert_eq!(steal.round_longest_block_us.map(|s| s.median), Some(40.0));
        let pinned = find(&summaries, Section::SyncHeavy, Variant::SmPinned, 2).unwrap();
        assert_eq!(pinned.cores_per_round.map(|s| s.median), Some(2.0));
        assert_eq!(pinned.ipis_per_iteration.map(|s| s.median), Some(2.0));
        let never = find(&summaries, Section::SyncHeavy, Variant::AlwaysIpi, 2).unwrap();
        assert_eq!(never.cores_per_round, None);
        assert_eq!(never.ipis_per_iteration, None);

        let text = render(&config, &summaries, 2);
        let header = text
            .lines()
            .find(|line| line.trim_start().starts_with("smp") && line.contains("cores/round"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(header.contains("IPIs/iter"), "{header}");
        let row = text
            .lines()
            .find(|line| line.split_whitespace().nth(1) == Some("sm-pinned"))
            .unwrap_or_else(|| panic!("{text}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        // smp, variant, guest ms, /default, chunks (no plan printed in
        // these lines), cores/round, the round's longest block/rest,
        // IPIs/iter.
        assert_eq!(
            &cells[..8],
            [
                "2",
                "sm-pinned",
                "100.0",
                "1.00",
                "-",
                "2.0",
                "40.0/20.0",
                "2.00"
            ],
            "{row}"
        );
        assert!(
            text.contains("sm-pinned-backoff-off  policy=state-machine pool=pinned backoff=off"),
            "{text}"
        );

        let json = serde_json::to_value(BenchJson {
            config: &config,
            host_cores: 2,
            clock_ticks_per_second: 100,
            wall_s: 1.0,
            definitions: definitions(),
            summary: &summaries,
            runs: RunJson::all(&runs),
        })
        .unwrap();
        assert_eq!(json["summary"][0]["variant"], "default");
        assert_eq!(json["summary"][0]["cores_per_round"]["median"], 1.5);
        assert_eq!(json["summary"][0]["ipis_per_iteration"]["median"], 1.5);
        assert_eq!(json["runs"][0]["pool"]["cores_per_round_median"], 1);
        assert_eq!(json["runs"][0]["variant"], "default");
        assert_eq!(json["runs"][2]["pool"], serde_json::Value::Null);
        for key in [
            "cores_per_round",
            "chunks_per_round",
            "work_us",
            "ipis_per_iteration",
        ] {
            assert!(json["definitions"][key].is_string(), "{key}");
        }
    }

    #[test]
    fn timed_out_configurations_say_so() {
        let config = BenchConfig::standard(vec![4], 1);
        let mut slow = run(&config, Section::SyncHeavy, Variant::IdlePoll, 4, 0);
        slow.status = BootStatus::TimedOut;
        slow.record.result = None;
        let summaries = summarize(&config, &[slow], 2);
        let summary = find(&summaries, Section::SyncHeavy, Variant::IdlePoll, 4).unwrap();
        assert_eq!(summary.timed_out, 1);
        assert_eq!(cell(Some(summary), |s| s.time_ms, 1), "timed out (>20 s)");
    }
}
