//! From raw benchmark boots to what `cargo xtask bench` reports: per
//! configuration the median and min–max of each measure, ratios between
//! policies, parallel efficiency, wake latency and idle cost; rendered as
//! terminal tables and written as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::bench_plan::{BenchConfig, Section, Variant};
use crate::bench_runner::{BenchRun, BootStatus};
use crate::percentiles::Spread;

/// Wake-latency kinds reported, in order.
pub const LATENCY_KINDS: [&str; 4] = ["local", "running", "halting", "halted"];

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
    /// Boots that ended ok.
    pub ok: usize,
    /// Boots killed at the limit (the configuration then stops).
    pub timed_out: usize,
    /// Boots that failed otherwise.
    pub failed: usize,
    /// The limit, s (for "timed out (> S s)").
    pub timeout_s: u64,
    /// Guest time of the grid workload, ms.
    pub time_ms: Option<Spread>,
    /// Wake IPIs sent per core.
    pub ipis_per_core: Option<Spread>,
    /// Wakeups from a halt per core.
    pub wakeups_per_core: Option<Spread>,
    /// Wakeups with nothing to do per core.
    pub spurious_per_core: Option<Spread>,
    /// Wake IPIs that ended no halt with work waiting, over wake IPIs sent,
    /// both counted at the destination (the sleeper's side).
    pub needless_ipi_share: Option<Spread>,
    /// Wake latency per target state.
    pub wake_latency: BTreeMap<String, LatencySpread>,
    /// Idle workload: QEMU CPU-s per wall-s.
    pub idle_host_cpu: Option<Spread>,
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
            let per_core = |pick: fn(&crate::vigil_stats::StatsTotals) -> u64| {
                Spread::of(ok.iter().filter_map(|run| {
                    let totals = run.totals?;
                    Some(totals.per_core(pick(&totals)))
                }))
            };
            ConfigSummary {
                section: configuration.section,
                variant: configuration.variant,
                smp: configuration.smp,
                ok: ok.len(),
                timed_out: count(BootStatus::TimedOut),
                failed: count(BootStatus::Failed),
                timeout_s: configuration.timeout_s,
                time_ms: Spread::of(ok.iter().filter_map(|run| run.guest_ms())),
                ipis_per_core: per_core(|totals| totals.ipis_sent),
                wakeups_per_core: per_core(|totals| totals.wakeups),
                spurious_per_core: per_core(|totals| totals.spurious_wakeups),
                needless_ipi_share: Spread::of(
                    ok.iter().filter_map(|run| run.totals?.needless_ipi_share()),
                ),
                wake_latency: latency(&ok),
                idle_host_cpu: Spread::of(
                    ok.iter()
                        .filter_map(|run| run.idle.map(|idle| idle.host_cpu_per_wall)),
                ),
                ratio_to_state_machine: None,
                state_machine_over_floor: None,
                efficiency: None,
            }
        })
        .collect();
    add_ratios(&mut summaries, host_cores);
    summaries
}

fn latency(runs: &[&BenchRun]) -> BTreeMap<String, LatencySpread> {
    let mut out = BTreeMap::new();
    for kind in LATENCY_KINDS {
        let measured: Vec<_> = runs
            .iter()
            .filter_map(|run| run.stats.as_ref()?.wake_latency_us.get(kind).copied())
            .filter(|latency| latency.samples > 0)
            .collect();
        let spread = |pick: fn(&crate::vigil_stats::LatencySummary) -> u64| {
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
        let state_machine = median_time(&snapshot, section, Variant::StateMachine, smp);
        summary.ratio_to_state_machine = state_machine.map(|sm| time / sm);
        if summary.variant == Variant::StateMachine {
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

/// The terminal report: one block per measure.
pub fn render(config: &BenchConfig, summaries: &[ConfigSummary], host_cores: u32) -> String {
    let mut out = String::new();
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
    for (section, grid, title) in grids {
        if !config.sections.contains(&section) {
            continue;
        }
        let _ = writeln!(
            out,
            "\n{title} ({}x{}, {} iterations): guest time, ms, median [min-max] of {} run(s)",
            grid.size, grid.size, grid.iterations, config.runs
        );
        table_by_variant(&mut out, config, summaries, section, |summary| {
            cell(Some(summary), |s| s.time_ms, 1)
        });
        let _ = writeln!(out, "  ratios of medians:");
        let _ = writeln!(
            out,
            "  {:>4}  {:>16}  {:>16}  {:>16}  {:>18}{}",
            "smp",
            "always-ipi/sm",
            "idle-poll/sm",
            "sm/floor",
            "sm/watchdog-off",
            if section == Section::ComputeHeavy {
                format!(
                    "  efficiency (T1/min(cores,{host_cores}))/T: sm, always-ipi, idle-poll, floor"
                )
            } else {
                String::new()
            }
        );
        for &smp in &config.smp {
            let get = |variant| find(summaries, section, variant, smp);
            let mut line = format!(
                "  {smp:>4}  {:>16}  {:>16}  {:>16}  {:>18}",
                ratio(get(Variant::AlwaysIpi).and_then(|s| s.ratio_to_state_machine)),
                ratio(get(Variant::IdlePoll).and_then(|s| s.ratio_to_state_machine)),
                ratio(get(Variant::StateMachine).and_then(|s| s.state_machine_over_floor)),
                // The default watchdog's cost: sm over sm without it.
                ratio(
                    get(Variant::WatchdogOff)
                        .and_then(|s| s.ratio_to_state_machine)
                        .map(|off_over_sm| 1.0 / off_over_sm)
                ),
            );
            if section == Section::ComputeHeavy {
                let efficiencies: Vec<String> = section
                    .variants()
                    .iter()
                    .map(|&variant| ratio(get(variant).and_then(|s| s.efficiency)))
                    .collect();
                let _ = write!(line, "  {}", efficiencies.join(", "));
            }
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(
            out,
            "  per core, medians: IPIs sent / wakeups / spurious wakeups; needless IPIs (share of wake IPIs, counted at their destination, that ended no halt with work waiting); the floor's bare IPIs are outside the protocol's counters"
        );
        table_by_variant(&mut out, config, summaries, section, |summary| {
            let median = |spread: Option<Spread>| {
                spread.map_or_else(|| "-".to_string(), |spread| format!("{:.0}", spread.median))
            };
            if summary.variant == Variant::Floor {
                return "n/a".to_string();
            }
            if summary.ipis_per_core.is_none() {
                return cell(Some(summary), |_| None, 0);
            }
            format!(
                "{}/{}/{} {}",
                median(summary.ipis_per_core),
                median(summary.wakeups_per_core),
                median(summary.spurious_per_core),
                percent(summary.needless_ipi_share)
            )
        });
    }

    if !config.sections.contains(&Section::SyncHeavy) {
        return render_idle(out, config, summaries);
    }
    let _ = writeln!(
        out,
        "\n(3) wake latency (sync-heavy), µs, medians over runs of each run's p50/p99, by the target's state when woken"
    );
    for variant in [Variant::StateMachine, Variant::AlwaysIpi, Variant::IdlePoll] {
        let _ = writeln!(out, "  {variant}:");
        let _ = writeln!(
            out,
            "  {:>4}  {}",
            "smp",
            LATENCY_KINDS
                .iter()
                .map(|kind| format!("{kind:>16}"))
                .collect::<Vec<_>>()
                .join("  ")
        );
        for &smp in &config.smp {
            let summary = find(summaries, Section::SyncHeavy, variant, smp);
            let cells: Vec<String> = LATENCY_KINDS
                .iter()
                .map(|kind| {
                    let latency = summary.and_then(|s| s.wake_latency.get(*kind));
                    let text = latency.map_or_else(
                        || "-".to_string(),
                        |l| format!("{:.0}/{:.0}", l.p50_us.median, l.p99_us.median),
                    );
                    format!("{text:>16}")
                })
                .collect();
            let _ = writeln!(out, "  {smp:>4}  {}", cells.join("  "));
        }
    }

    render_idle(out, config, summaries)
}

/// Block (4), if the idle section ran.
fn render_idle(mut out: String, config: &BenchConfig, summaries: &[ConfigSummary]) -> String {
    if !config.sections.contains(&Section::Idle) {
        return out;
    }
    let _ = writeln!(
        out,
        "\n(4) idle cost ({} ms of guest idle): QEMU CPU time / wall time between `idle: start` and `idle: end`, host cores, median [min-max]",
        config.idle_ms
    );
    table_by_variant(&mut out, config, summaries, Section::Idle, |summary| {
        cell(Some(summary), |s| s.idle_host_cpu, 3)
    });
    out
}

fn table_by_variant(
    out: &mut String,
    config: &BenchConfig,
    summaries: &[ConfigSummary],
    section: Section,
    text: impl Fn(&ConfigSummary) -> String,
) {
    let variants = section.variants();
    let _ = writeln!(
        out,
        "  {:>4}  {}",
        "smp",
        variants
            .iter()
            .map(|variant| format!("{:>26}", variant.name()))
            .collect::<Vec<_>>()
            .join("")
    );
    for &smp in &config.smp {
        let cells: Vec<String> = variants
            .iter()
            .map(|&variant| {
                let text =
                    find(summaries, section, variant, smp).map_or_else(|| "-".to_string(), &text);
                format!("{text:>26}")
            })
            .collect();
        let _ = writeln!(out, "  {smp:>4}  {}", cells.join(""));
    }
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
    pub runs: &'a [BenchRun],
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
            "median time_ms / median time_ms of state-machine at the same core count",
        ),
        (
            "state_machine_over_floor",
            "median time_ms of state-machine / median time_ms of floor",
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
    use crate::bench_plan::Configuration;
    use crate::run_output::{GridResult, GridWorkload};

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
            .find(|c| c.section == section && c.variant == variant && c.smp == smp)
            .unwrap();
        BenchRun {
            configuration,
            round: 1,
            status: BootStatus::Ok,
            verdict: String::new(),
            wall_s: 1.0,
            result: Some(GridResult {
                workload: GridWorkload::Laplace,
                size: 64,
                iterations: 1000,
                workers: u64::from(smp),
                elapsed_us: ms * 1000,
                residual: 0,
                checksum: 0,
            }),
            checksums_match: Some(true),
            stats: None,
            totals: None,
            idle: None,
            serial: String::new(),
        }
    }

    #[test]
    fn ratios_and_efficiency() {
        let config = BenchConfig::standard(vec![1, 4], 1);
        let runs = vec![
            run(&config, Section::SyncHeavy, Variant::StateMachine, 4, 200),
            run(&config, Section::SyncHeavy, Variant::AlwaysIpi, 4, 300),
            run(&config, Section::SyncHeavy, Variant::Floor, 4, 100),
            run(
                &config,
                Section::ComputeHeavy,
                Variant::StateMachine,
                1,
                1000,
            ),
            run(
                &config,
                Section::ComputeHeavy,
                Variant::StateMachine,
                4,
                600,
            ),
        ];
        let summaries = summarize(&config, &runs, 2);
        let get = |section, variant, smp| find(&summaries, section, variant, smp).unwrap();
        assert_eq!(
            get(Section::SyncHeavy, Variant::AlwaysIpi, 4).ratio_to_state_machine,
            Some(1.5)
        );
        assert_eq!(
            get(Section::SyncHeavy, Variant::StateMachine, 4).state_machine_over_floor,
            Some(2.0)
        );
        // (1000 / min(4, 2)) / 600
        let efficiency = get(Section::ComputeHeavy, Variant::StateMachine, 4)
            .efficiency
            .unwrap();
        assert!((efficiency - 500.0 / 600.0).abs() < 1e-9);
        assert_eq!(
            get(Section::ComputeHeavy, Variant::StateMachine, 1).efficiency,
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
    fn timed_out_configurations_say_so() {
        let config = BenchConfig::standard(vec![4], 1);
        let mut slow = run(&config, Section::SyncHeavy, Variant::IdlePoll, 4, 0);
        slow.status = BootStatus::TimedOut;
        slow.result = None;
        let summaries = summarize(&config, &[slow], 2);
        let summary = find(&summaries, Section::SyncHeavy, Variant::IdlePoll, 4).unwrap();
        assert_eq!(summary.timed_out, 1);
        assert_eq!(cell(Some(summary), |s| s.time_ms, 1), "timed out (>20 s)");
    }
}
