//! SVG plots of the peer runs (plotters): one panel per shape, the worker
//! count on a log2 axis; for each pool a line through the median of every
//! repeat of every run, and a bar from the fastest repeat to the slowest.
//! Throughput panels use a log10 time axis (tokio's chained tasks run 3-10x
//! the others' times); the idle panels a linear CPU axis from zero, with
//! the no-pool floor and one parked thread drawn as the references they
//! are in the table.

use std::fs;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::bench::peer_runs::{CellAcrossRuns, NO_POOL, ONE_PARKED_THREAD, Unit, VIGIL};
use crate::bench::plots::{log_grid, log_range, log_ticks};
use crate::error::{Result, XtaskError};

/// The throughput plot's file.
pub const THROUGHPUT_SVG: &str = "peer_throughput.svg";
/// The idle plot's file.
pub const IDLE_SVG: &str = "peer_idle.svg";

/// Panels per row.
const COLUMNS: usize = 4;
/// The key's row, px.
const LEGEND_PX: u32 = 28;
/// The title's and the key's height, px.
const HEADER_PX: u32 = 30 + LEGEND_PX;
/// The narrowest figure, px (the title's length).
const MIN_WIDTH_PX: u32 = 960;
/// One panel's size, px.
const PANEL_PX: (u32, u32) = (330, 260);

/// The pools each plot draws, with their colours (the same pool the same
/// colour in both).
const THROUGHPUT_SERIES: [(&str, RGBColor); 3] = [
    (VIGIL, RGBColor(31, 119, 180)),
    ("rayon", RGBColor(214, 39, 40)),
    ("tokio", RGBColor(44, 160, 44)),
];
const IDLE_SERIES: [(&str, RGBColor); 5] = [
    (VIGIL, RGBColor(31, 119, 180)),
    ("rayon", RGBColor(214, 39, 40)),
    ("tokio", RGBColor(44, 160, 44)),
    (ONE_PARKED_THREAD, RGBColor(127, 127, 127)),
    (NO_POOL, RGBColor(0, 0, 0)),
];

/// One shape's cells, in worker order.
struct Panel<'a, 'b> {
    shape: &'a str,
    cells: Vec<&'b CellAcrossRuns<'a>>,
}

/// The cells of `unit`, grouped by shape in their first appearance's order.
fn panels<'a, 'b>(cells: &'b [CellAcrossRuns<'a>], unit: Unit) -> Vec<Panel<'a, 'b>> {
    let mut panels: Vec<Panel<'a, 'b>> = Vec::new();
    for cell in cells.iter().filter(|cell| cell.unit == unit) {
        match panels.iter_mut().find(|panel| panel.shape == cell.shape) {
            Some(panel) => panel.cells.push(cell),
            None => panels.push(Panel {
                shape: cell.shape,
                cells: vec![cell],
            }),
        }
    }
    for panel in &mut panels {
        panel.cells.sort_by_key(|cell| cell.workers);
    }
    panels
}

/// A pool at one worker count of a panel.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    /// log2 of the worker count.
    x: f64,
    /// The median of every repeat of every run.
    median: f64,
    /// The fastest repeat (the least value).
    low: f64,
    /// The slowest repeat.
    high: f64,
}

/// One pool's points in a panel, in its colour.
struct Line {
    color: RGBColor,
    points: Vec<Point>,
}

/// A pool's points in a panel.
fn points(panel: &Panel<'_, '_>, pool: &str) -> Vec<Point> {
    panel
        .cells
        .iter()
        .map(|cell| {
            let samples = cell.all_samples(pool);
            Point {
                x: f64::from(cell.workers).log2(),
                median: cell.overall_median(pool),
                low: samples.iter().copied().fold(f64::INFINITY, f64::min),
                high: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            }
        })
        .collect()
}

/// Writes the throughput and idle plots of `cells` into `dir` (a plot with
/// no cell of its kind is not written); returns the files written.
pub fn write_peer_plots(
    dir: &Path,
    cells: &[CellAcrossRuns<'_>],
    runs: usize,
) -> Result<Vec<PathBuf>> {
    fs::create_dir_all(dir)
        .map_err(|err| XtaskError::failed(format!("creating {}: {err}", dir.display())))?;
    let mut written = Vec::new();
    for (unit, file, series) in [
        (Unit::NsPerJob, THROUGHPUT_SVG, &THROUGHPUT_SERIES[..]),
        (Unit::CpuPerWall, IDLE_SVG, &IDLE_SERIES[..]),
    ] {
        let panels = panels(cells, unit);
        if panels.is_empty() {
            continue;
        }
        let path = dir.join(file);
        draw(&path, &panels, unit, series, runs)
            .map_err(|err| XtaskError::failed(format!("drawing {}: {err}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

fn draw(
    path: &Path,
    panels: &[Panel<'_, '_>],
    unit: Unit,
    series: &[(&str, RGBColor)],
    runs: usize,
) -> Result<(), String> {
    let columns = COLUMNS.min(panels.len());
    let rows = panels.len().div_ceil(columns);
    let size = (
        (PANEL_PX.0 * columns as u32).max(MIN_WIDTH_PX),
        PANEL_PX.1 * rows as u32 + HEADER_PX,
    );
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(|err| err.to_string())?;
    let what = match unit {
        Unit::NsPerJob => "time per job, ns (log axis)",
        Unit::CpuPerWall => "process CPU s per wall s",
    };
    let root = root
        .titled(
            &format!(
                "The pool against rayon and tokio: {what}; median of every repeat of {runs} run(s), bar: fastest to slowest"
            ),
            ("sans-serif", 15),
        )
        .map_err(|err| err.to_string())?;
    let (legend, body) = root.split_vertically(LEGEND_PX);
    draw_legend(&legend, series)?;
    for (panel, area) in panels.iter().zip(body.split_evenly((rows, columns))) {
        draw_panel(&area, panel, unit, series)?;
    }
    root.present().map_err(|err| err.to_string())
}

/// The colours' key, in one row above the panels (a key inside a panel
/// hides its lines).
fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    series: &[(&str, RGBColor)],
) -> Result<(), String> {
    let y = LEGEND_PX as i32 / 2;
    for (index, &(pool, color)) in series.iter().enumerate() {
        let x = 60 + index as i32 * 180;
        area.draw(&PathElement::new(
            vec![(x, y), (x + 24, y)],
            color.stroke_width(3),
        ))
        .map_err(|err| err.to_string())?;
        area.draw(&Text::new(
            pool,
            (x + 30, y - 7),
            ("sans-serif", 13).into_font(),
        ))
        .map_err(|err| err.to_string())?;
    }
    Ok(())
}

fn draw_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    panel: &Panel<'_, '_>,
    unit: Unit,
    series: &[(&str, RGBColor)],
) -> Result<(), String> {
    let lines: Vec<Line> = series
        .iter()
        .map(|&(pool, color)| Line {
            color,
            points: points(panel, pool),
        })
        .collect();
    let x_max = lines
        .iter()
        .flat_map(|line| line.points.iter().map(|p| p.x))
        .fold(1.0f64, f64::max);
    let values = || {
        lines
            .iter()
            .flat_map(|line| line.points.iter().flat_map(|p| [p.low, p.high]))
    };
    let mut builder = ChartBuilder::on(area);
    builder
        .caption(panel.shape, ("sans-serif", 14))
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(48);
    let x_axis = -0.3..x_max + 0.3;
    let x_labels = x_max as usize + 1;
    match unit {
        Unit::NsPerJob => {
            let range = log_range(values()).unwrap_or(1.0..1000.0);
            let axis = range
                .clone()
                .log_scale()
                .with_key_points(log_ticks(&range))
                .with_light_points(log_grid(&range));
            let mut chart = builder
                .build_cartesian_2d(x_axis, axis)
                .map_err(|err| err.to_string())?;
            draw_mesh(&mut chart, x_labels, &|y| format!("{y:.0}"))?;
            draw_lines(&mut chart, &lines)
        }
        Unit::CpuPerWall => {
            let top = values().fold(0.0f64, f64::max).max(1e-4) * 1.1;
            let mut chart = builder
                .build_cartesian_2d(x_axis, 0.0..top)
                .map_err(|err| err.to_string())?;
            draw_mesh(&mut chart, x_labels, &|y| format!("{y:.3}"))?;
            draw_lines(&mut chart, &lines)
        }
    }
}

/// A panel's axes: the worker count (log2) below, `y_format`'s labels on
/// the left.
fn draw_mesh<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    x_labels: usize,
    y_format: &dyn Fn(&f64) -> String,
) -> Result<(), String>
where
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    chart
        .configure_mesh()
        .x_desc("workers")
        .x_labels(x_labels)
        .x_label_formatter(&|x| format!("{}", 2f64.powf(*x).round()))
        .y_label_formatter(y_format)
        .draw()
        .map_err(|err| err.to_string())
}

fn draw_lines<'a, Y>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, Y>>,
    lines: &[Line],
) -> Result<(), String>
where
    Y: Ranged<ValueType = f64>,
{
    for line in lines {
        let color = line.color;
        chart
            .draw_series(line.points.iter().map(|p| {
                ErrorBar::new_vertical(p.x, p.low, p.median, p.high, color.stroke_width(1), 6)
            }))
            .map_err(|err| err.to_string())?;
        chart
            .draw_series(LineSeries::new(
                line.points.iter().map(|p| (p.x, p.median)),
                color.stroke_width(2),
            ))
            .map_err(|err| err.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::peer_runs::{IDLE_POOLS, PeerCell, PeerRun, line_up};

    fn run(vigil: f64) -> PeerRun {
        let throughput = |shape: &str, workers: u32| PeerCell {
            shape: shape.into(),
            workers,
            unit: Unit::NsPerJob,
            samples: [
                (VIGIL, vigil),
                ("vigil, park at once", 50.0),
                ("rayon", 40.0),
                ("tokio", 400.0),
            ]
            .into_iter()
            .map(|(pool, v)| (pool.to_string(), vec![v, v * 1.5]))
            .collect(),
            sleeps_per_job: [VIGIL, "vigil, park at once", "rayon", "tokio"]
                .into_iter()
                .map(|pool| (pool.to_string(), vec![0.0]))
                .collect(),
            vigil_unparks_per_job: vec![0.0],
        };
        let idle = PeerCell {
            shape: "idle-1ms".into(),
            workers: 1,
            unit: Unit::CpuPerWall,
            samples: [
                (VIGIL, 0.02),
                ("vigil, park at once", 0.02),
                ("rayon", 0.04),
                ("tokio", 0.03),
                (NO_POOL, 0.01),
                (ONE_PARKED_THREAD, 0.02),
            ]
            .into_iter()
            .map(|(pool, v)| (pool.to_string(), vec![v]))
            .collect(),
            sleeps_per_job: IDLE_POOLS
                .into_iter()
                .map(|pool| (pool.to_string(), vec![1.0]))
                .collect(),
            vigil_unparks_per_job: vec![1.0],
        };
        PeerRun {
            repeats: 2,
            jobs: 10,
            idle_ms: 10,
            host_cores: 2,
            cells: vec![
                throughput("ping-pong", 1),
                throughput("ping-pong", 8),
                throughput("join-tree", 2),
                idle,
            ],
        }
    }

    #[test]
    fn both_plots_are_written_with_a_panel_per_shape() {
        let runs = [run(30.0), run(60.0)];
        let cells = line_up(&runs).unwrap();
        let dir = std::env::temp_dir().join(format!("peer-plots-{}", std::process::id()));
        let written = write_peer_plots(&dir, &cells, runs.len()).unwrap();
        assert_eq!(written, [dir.join(THROUGHPUT_SVG), dir.join(IDLE_SVG)]);
        let svg = std::fs::read_to_string(&written[0]).unwrap();
        for text in ["ping-pong", "join-tree", "2 run(s)", "vigil-wake", "tokio"] {
            assert!(
                svg.contains(text),
                "{text} missing from the throughput plot"
            );
        }
        let idle = std::fs::read_to_string(&written[1]).unwrap();
        assert!(idle.contains("idle-1ms") && idle.contains(NO_POOL));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_pools_points_are_the_median_and_extremes_of_every_repeat() {
        let runs = [run(30.0), run(60.0)];
        let cells = line_up(&runs).unwrap();
        let panels = panels(&cells, Unit::NsPerJob);
        assert_eq!(panels.len(), 2);
        assert_eq!(panels[0].shape, "ping-pong");
        // Samples 30, 45, 60, 90 at 1 worker: median 52.5.
        let vigil = points(&panels[0], VIGIL);
        assert_eq!(
            vigil[0],
            Point {
                x: 0.0,
                median: 52.5,
                low: 30.0,
                high: 90.0
            }
        );
        assert_eq!(vigil[1].x, 3.0);
    }
}
