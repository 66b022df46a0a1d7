//! The runs of the wake crate's pool against rayon and tokio
//! (`kernel/wake/examples/peer_bench.rs --json`), read back and summarised:
//! each run's median per pool and cell, the ratios the README quotes, and
//! the two tables (throughput, idle CPU) with one value per run in every
//! cell, so the spread between runs stays in sight.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Result, XtaskError};

/// vigil-wake's pool, the column every ratio is of.
pub const VIGIL: &str = "vigil-wake";
/// The pools a throughput cell holds, in the tables' order.
pub const THROUGHPUT_POOLS: [&str; 4] = [VIGIL, "vigil, park at once", "rayon", "tokio"];
/// The pools an idle cell holds, in the tables' order.
pub const IDLE_POOLS: [&str; 6] = [
    VIGIL,
    "vigil, park at once",
    "rayon",
    "tokio",
    NO_POOL,
    ONE_PARKED_THREAD,
];
/// The peers a ratio is against (the faster of them).
const PEERS: [&str; 2] = ["rayon", "tokio"];
/// The idle shapes' floor: the pacing thread alone.
pub const NO_POOL: &str = "no pool";
/// The idle shapes' least cost of sleeping between jobs.
pub const ONE_PARKED_THREAD: &str = "one parked thread";

/// What a cell measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Unit {
    /// Time per job (a node, for the trees), ns.
    #[serde(rename = "ns_per_job")]
    NsPerJob,
    /// Process CPU seconds per wall second.
    #[serde(rename = "cpu_s_per_wall_s")]
    CpuPerWall,
}

/// One shape at one worker count, in one run: every repeat's value per
/// pool.
#[derive(Debug, Clone, Deserialize)]
pub struct PeerCell {
    pub shape: String,
    pub workers: u32,
    pub unit: Unit,
    pub samples: BTreeMap<String, Vec<f64>>,
    /// Every repeat's sleeps per job per pool: the voluntary context
    /// switches of every thread of the process over the measured part.
    pub sleeps_per_job: BTreeMap<String, Vec<f64>>,
    pub vigil_unparks_per_job: Vec<f64>,
}

/// One run of the example.
#[derive(Debug, Clone, Deserialize)]
pub struct PeerRun {
    pub repeats: u32,
    pub jobs: u32,
    pub idle_ms: u64,
    pub host_cores: u32,
    pub cells: Vec<PeerCell>,
}

impl PeerRun {
    /// Reads a run the example wrote with `--json`.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| XtaskError::failed(format!("reading {}: {err}", path.display())))?;
        let run: Self = serde_json::from_str(&text)
            .map_err(|err| XtaskError::failed(format!("parsing {}: {err}", path.display())))?;
        for cell in &run.cells {
            cell.check()
                .map_err(|err| XtaskError::failed(format!("{}: {err}", path.display())))?;
        }
        Ok(run)
    }
}

impl PeerCell {
    /// The pools this cell's unit asks for.
    pub fn pools(&self) -> &'static [&'static str] {
        match self.unit {
            Unit::NsPerJob => &THROUGHPUT_POOLS,
            Unit::CpuPerWall => &IDLE_POOLS,
        }
    }

    /// Every pool of its unit there with at least one finite sample, and
    /// no other.
    fn check(&self) -> Result<(), String> {
        let at = || format!("{} at {} workers", self.shape, self.workers);
        for (what, map) in [("samples", &self.samples), ("sleeps", &self.sleeps_per_job)] {
            for pool in self.pools() {
                let values = map
                    .get(*pool)
                    .ok_or_else(|| format!("{}: no {what} of `{pool}`", at()))?;
                if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
                    return Err(format!(
                        "{}: `{pool}` has no {what} or a non-finite one",
                        at()
                    ));
                }
            }
            if let Some(other) = map.keys().find(|k| !self.pools().contains(&k.as_str())) {
                return Err(format!("{}: unknown pool `{other}` in {what}", at()));
            }
        }
        let unparks = &self.vigil_unparks_per_job;
        if unparks.is_empty() || unparks.iter().any(|v| !v.is_finite()) {
            return Err(format!(
                "{}: vigil's unparks per job missing or not finite",
                at()
            ));
        }
        Ok(())
    }

    /// The median of `pool`'s repeats.
    pub fn median(&self, pool: &str) -> f64 {
        median(&self.samples[pool])
    }

    /// vigil-wake's median over the faster peer's; for the idle shapes,
    /// each less the no-pool floor (their own costs). `None` when the
    /// peer's own cost is not above the floor.
    pub fn vigil_over_best_peer(&self) -> Option<f64> {
        let floor = self.floor();
        let best = PEERS
            .iter()
            .map(|peer| self.median(peer))
            .fold(f64::INFINITY, f64::min)
            - floor;
        (best > 0.0).then(|| (self.median(VIGIL) - floor) / best)
    }

    /// Idle shapes: vigil-wake's own cost over one parked thread's own;
    /// `None` for a throughput cell, or when the parked thread read at or
    /// below the floor.
    pub fn vigil_over_parked_thread(&self) -> Option<f64> {
        if self.unit != Unit::CpuPerWall {
            return None;
        }
        let floor = self.floor();
        let parked = self.median(ONE_PARKED_THREAD) - floor;
        (parked > 0.0).then(|| (self.median(VIGIL) - floor) / parked)
    }

    /// The no-pool floor (0 for a throughput cell).
    fn floor(&self) -> f64 {
        match self.unit {
            Unit::NsPerJob => 0.0,
            Unit::CpuPerWall => self.median(NO_POOL),
        }
    }

    /// The median of vigil's unparks per job.
    pub fn unparks_per_job(&self) -> f64 {
        median(&self.vigil_unparks_per_job)
    }

    /// The median of `pool`'s sleeps per job.
    pub fn sleeps(&self, pool: &str) -> f64 {
        median(&self.sleeps_per_job[pool])
    }
}

/// The median of `values` (the mean of the middle two for an even count);
/// 0 for none.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// One shape at one worker count across the runs (a cell of each).
#[derive(Debug, Clone)]
pub struct CellAcrossRuns<'a> {
    pub shape: &'a str,
    pub workers: u32,
    pub unit: Unit,
    pub runs: Vec<&'a PeerCell>,
}

impl CellAcrossRuns<'_> {
    /// Every repeat of every run of `pool`.
    pub fn all_samples(&self, pool: &str) -> Vec<f64> {
        self.runs
            .iter()
            .flat_map(|cell| cell.samples[pool].iter().copied())
            .collect()
    }

    /// The median over every repeat of every run of `pool`.
    pub fn overall_median(&self, pool: &str) -> f64 {
        median(&self.all_samples(pool))
    }
}

/// The runs' cells lined up: every run must hold the same cells in the
/// same order (one invocation's arguments).
pub fn line_up(runs: &[PeerRun]) -> Result<Vec<CellAcrossRuns<'_>>> {
    let Some(first) = runs.first() else {
        return Err(XtaskError::failed("no peer_bench runs to summarise"));
    };
    let mut cells: Vec<CellAcrossRuns<'_>> = first
        .cells
        .iter()
        .map(|cell| CellAcrossRuns {
            shape: &cell.shape,
            workers: cell.workers,
            unit: cell.unit,
            runs: Vec::new(),
        })
        .collect();
    let settings = |run: &PeerRun| (run.repeats, run.jobs, run.idle_ms, run.host_cores);
    for (index, run) in runs.iter().enumerate() {
        if settings(run) != settings(first) {
            return Err(XtaskError::failed(format!(
                "run {} was made with other settings than run 1 (repeats, jobs, idle ms, host cores: {:?} against {:?})",
                index + 1,
                settings(run),
                settings(first)
            )));
        }
        let same =
            run.cells.len() == cells.len()
                && run.cells.iter().zip(&cells).all(|(cell, lined)| {
                    cell.shape == lined.shape && cell.workers == lined.workers
                });
        if !same {
            return Err(XtaskError::failed(format!(
                "run {} holds other cells than run 1 (runs to summarise together come from one set of arguments)",
                index + 1
            )));
        }
        for (cell, lined) in run.cells.iter().zip(&mut cells) {
            lined.runs.push(cell);
        }
    }
    Ok(cells)
}

/// Each run's value of a cell, comma-separated.
fn per_run(cell: &CellAcrossRuns<'_>, value: impl Fn(&PeerCell) -> String) -> String {
    cell.runs
        .iter()
        .map(|run| value(run))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_string(), |r| format!("{r:.2}"))
}

/// A per-run column after the pools': its heading and each run's text.
type Column<'f> = (&'f str, &'f dyn Fn(&PeerCell) -> String);

/// A table of `cells`, one row each: per pool in `pools` each run's
/// `value` ("-" where the cell's unit has no such pool), then `columns`.
fn table<'c, 'a: 'c>(
    cells: impl Iterator<Item = &'c CellAcrossRuns<'a>>,
    pools: &[&str],
    value: impl Fn(&PeerCell, &str) -> String,
    columns: &[Column<'_>],
) -> String {
    let headings: Vec<&str> = pools
        .iter()
        .copied()
        .chain(columns.iter().map(|column| column.0))
        .collect();
    let mut table = format!(
        "| shape | workers | {} |\n|---|---:|{}\n",
        headings.join(" | "),
        "---:|".repeat(headings.len())
    );
    for cell in cells {
        let mut row = format!("| {} | {} |", cell.shape, cell.workers);
        for pool in pools {
            let text = if cell.runs[0].pools().contains(pool) {
                per_run(cell, |run| value(run, pool))
            } else {
                "-".to_string()
            };
            let _ = write!(row, " {text} |");
        }
        for (_, column) in columns {
            let _ = write!(row, " {} |", per_run(cell, column));
        }
        row.push('\n');
        table.push_str(&row);
    }
    table
}

/// The throughput table: each run's median per pool (ns per job), vigil
/// over the faster peer, and vigil's unparks per job.
pub fn throughput_table(cells: &[CellAcrossRuns<'_>]) -> String {
    table(
        cells.iter().filter(|c| c.unit == Unit::NsPerJob),
        &THROUGHPUT_POOLS,
        |run, pool| format!("{:.0}", run.median(pool)),
        &[
            ("vigil / faster peer", &|run| {
                ratio(run.vigil_over_best_peer())
            }),
            ("vigil unparks/job", &|run| {
                format!("{:.3}", run.unparks_per_job())
            }),
        ],
    )
}

/// The idle table: each run's median per pool (CPU seconds per wall
/// second), then vigil's own cost over the better peer's own and over one
/// parked thread's own.
pub fn idle_table(cells: &[CellAcrossRuns<'_>]) -> String {
    table(
        cells.iter().filter(|c| c.unit == Unit::CpuPerWall),
        &IDLE_POOLS,
        |run, pool| format!("{:.4}", run.median(pool)),
        &[
            ("vigil's own / best peer's own", &|run| {
                ratio(run.vigil_over_best_peer())
            }),
            ("vigil's own / parked thread's own", &|run| {
                ratio(run.vigil_over_parked_thread())
            }),
        ],
    )
}

/// The sleeps table: each run's median sleeps per job per pool (the
/// voluntary context switches of the pool's threads over the measured
/// part), the throughput shapes and then the idle ones (with the two
/// references: no pool, no thread to sleep; one parked thread, one sleep
/// a job).
pub fn sleeps_table(cells: &[CellAcrossRuns<'_>]) -> String {
    let throughput = cells.iter().filter(|c| c.unit == Unit::NsPerJob);
    let idle = cells.iter().filter(|c| c.unit == Unit::CpuPerWall);
    table(
        throughput.chain(idle),
        &IDLE_POOLS,
        |run, pool| format!("{:.3}", run.sleeps(pool)),
        &[],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(shape: &str, workers: u32, unit: Unit, pools: &[(&str, &[f64])]) -> PeerCell {
        PeerCell {
            shape: shape.to_string(),
            workers,
            unit,
            samples: pools
                .iter()
                .map(|(pool, values)| ((*pool).to_string(), values.to_vec()))
                .collect(),
            sleeps_per_job: pools
                .iter()
                .map(|(pool, values)| ((*pool).to_string(), vec![values[0] / 100.0]))
                .collect(),
            vigil_unparks_per_job: vec![0.0],
        }
    }

    fn with_unparks(mut cell: PeerCell, unparks: &[f64]) -> PeerCell {
        cell.vigil_unparks_per_job = unparks.to_vec();
        cell
    }

    fn throughput(workers: u32, vigil: &[f64], rayon: &[f64], tokio: &[f64]) -> PeerCell {
        cell(
            "join-tree",
            workers,
            Unit::NsPerJob,
            &[
                (VIGIL, vigil),
                ("vigil, park at once", &[1.0]),
                ("rayon", rayon),
                ("tokio", tokio),
            ],
        )
    }

    fn idle(vigil: f64, rayon: f64, tokio: f64, floor: f64, parked: f64) -> PeerCell {
        let mut idle = cell(
            "idle-1ms",
            2,
            Unit::CpuPerWall,
            &[
                (VIGIL, &[vigil]),
                ("vigil, park at once", &[vigil]),
                ("rayon", &[rayon]),
                ("tokio", &[tokio]),
                (NO_POOL, &[floor]),
                (ONE_PARKED_THREAD, &[parked]),
            ],
        );
        // Sleeps a job: one worker woken per job, tokio two, rayon three;
        // the references none and one.
        for (pool, sleeps) in IDLE_POOLS.into_iter().zip([1.0, 1.0, 3.0, 2.0, 0.0, 1.0]) {
            idle.sleeps_per_job.insert(pool.to_string(), vec![sleeps]);
        }
        idle
    }

    fn run(cells: Vec<PeerCell>) -> PeerRun {
        PeerRun {
            repeats: 3,
            jobs: 100,
            idle_ms: 10,
            host_cores: 2,
            cells,
        }
    }

    #[test]
    fn medians_take_the_middle_or_the_mean_of_the_middle_two() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn a_ratio_is_over_the_faster_peer_and_an_idle_one_over_own_costs() {
        let tree = throughput(2, &[30.0, 40.0, 50.0], &[20.0, 20.0, 90.0], &[100.0]);
        assert_eq!(tree.vigil_over_best_peer(), Some(2.0));
        assert_eq!(tree.vigil_over_parked_thread(), None);
        // Own costs: vigil 0.005, rayon 0.02, tokio 0.01, parked 0.004.
        let sparse = idle(0.015, 0.03, 0.02, 0.01, 0.014);
        let over_peer = sparse.vigil_over_best_peer().unwrap();
        assert!((over_peer - 0.5).abs() < 1e-9, "{over_peer}");
        let over_parked = sparse.vigil_over_parked_thread().unwrap();
        assert!((over_parked - 1.25).abs() < 1e-9, "{over_parked}");
        // A parked thread at the floor has no own cost to divide by.
        assert_eq!(
            idle(0.015, 0.03, 0.02, 0.01, 0.01).vigil_over_parked_thread(),
            None
        );
    }

    #[test]
    fn the_tables_give_each_runs_median_per_cell() {
        let runs = [
            run(vec![
                with_unparks(
                    throughput(1, &[15.0, 16.0, 40.0], &[19.0], &[170.0]),
                    &[0.009, 0.0, 0.0],
                ),
                idle(0.015, 0.03, 0.02, 0.01, 0.014),
            ]),
            run(vec![
                with_unparks(throughput(1, &[19.0], &[19.0], &[180.0]), &[0.004, 0.002]),
                idle(0.016, 0.03, 0.02, 0.01, 0.01),
            ]),
        ];
        let cells = line_up(&runs).unwrap();
        let table = throughput_table(&cells);
        assert!(
            table.contains(
                "| join-tree | 1 | 16, 19 | 1, 1 | 19, 19 | 170, 180 | 0.84, 1.00 | 0.000, 0.003 |"
            ),
            "{table}"
        );
        let sleeps = sleeps_table(&cells);
        assert!(
            sleeps.contains(
                "| join-tree | 1 | 0.150, 0.190 | 0.010, 0.010 | 0.190, 0.190 | 1.700, 1.800 | - | - |"
            ),
            "{sleeps}"
        );
        assert!(
            sleeps.contains("| idle-1ms | 2 | 1.000, 1.000 | 1.000, 1.000 | 3.000, 3.000 | 2.000, 2.000 | 0.000, 0.000 | 1.000, 1.000 |"),
            "{sleeps}"
        );
        let idle = idle_table(&cells);
        assert!(
            idle.contains("| idle-1ms | 2 | 0.0150, 0.0160 |")
                && idle.contains("| 0.50, 0.60 | 1.25, - |"),
            "{idle}"
        );
        assert_eq!(cells[0].overall_median(VIGIL), 17.5);
    }

    #[test]
    fn runs_of_other_cells_and_cells_missing_a_pool_are_refused() {
        let one = run(vec![throughput(1, &[1.0], &[1.0], &[1.0])]);
        let other = run(vec![throughput(2, &[1.0], &[1.0], &[1.0])]);
        let error = line_up(&[one.clone(), other]).unwrap_err();
        assert!(
            error.to_string().contains("run 2 holds other cells"),
            "{error}"
        );
        let mut longer = one.clone();
        longer.jobs *= 2;
        let error = line_up(&[one.clone(), longer]).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("run 2 was made with other settings"),
            "{error}"
        );
        let mut no_unparks = one.cells[0].clone();
        no_unparks.vigil_unparks_per_job.clear();
        assert!(no_unparks.check().unwrap_err().contains("unparks"));
        assert!(line_up(&[]).is_err());
        let mut missing = one.cells[0].clone();
        missing.samples.remove("tokio");
        assert!(
            missing
                .check()
                .unwrap_err()
                .contains("no samples of `tokio`")
        );
        let mut unknown = one.cells[0].clone();
        unknown.samples.insert("crossbeam".into(), vec![1.0]);
        assert!(
            unknown
                .check()
                .unwrap_err()
                .contains("unknown pool `crossbeam`")
        );
    }

    #[test]
    fn a_run_the_example_wrote_is_read_back() {
        let dir = std::env::temp_dir().join(format!("peer-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.json");
        std::fs::write(
            &path,
            r#"{"repeats": 1, "jobs": 10, "idle_ms": 5, "host_cores": 2, "cells": [
  {"shape": "ping-pong", "workers": 2, "unit": "ns_per_job", "samples": {"vigil-wake": [60.5], "vigil, park at once": [61], "rayon": [84], "tokio": [409]}, "sleeps_per_job": {"vigil-wake": [0.001], "vigil, park at once": [0.002], "rayon": [0.5], "tokio": [0.25]}, "vigil_unparks_per_job": [0]}
]}"#,
        )
        .unwrap();
        let read = PeerRun::read(&path).unwrap();
        assert_eq!(read.cells[0].median("rayon"), 84.0);
        assert_eq!(read.cells[0].sleeps("tokio"), 0.25);
        std::fs::write(&path, "{").unwrap();
        assert!(
            PeerRun::read(&path)
                .unwrap_err()
                .to_string()
                .contains("parsing")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
