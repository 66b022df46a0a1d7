//! SVG plots of a benchmark (plotters): one line per policy against the
//! core count (log2 axis), medians only. Guest-time plots use a log10 time
//! axis, so one very slow configuration does not flatten the others. A
//! configuration with a boot that timed out (or failed) is marked at the top
//! of the axis at its core count, in its series' colour; a line is broken
//! where a core count has no median rather than drawn across the gap.

use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::bench::plan::{BenchConfig, Section, Variant};
use crate::bench::report::ConfigSummary;
use crate::campaign::percentiles::Spread;
use crate::error::{Result, XtaskError};

/// How the y axis is scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum YScale {
    /// From zero, linear.
    Linear,
    /// Log10, from the data (values in ms).
    LogMs,
}

/// One plot: a title, a y-axis label, and what to plot per configuration.
struct PlotSpec {
    file: &'static str,
    title: String,
    y_label: &'static str,
    y_scale: YScale,
    section: Section,
    value: fn(&ConfigSummary) -> Option<Spread>,
}

/// Writes every plot into `dir`; returns the files written.
pub fn write_plots(
    dir: &Path,
    config: &BenchConfig,
    summaries: &[ConfigSummary],
) -> Result<Vec<PathBuf>> {
    fs::create_dir_all(dir)
        .map_err(|err| XtaskError::failed(format!("creating {}: {err}", dir.display())))?;
    let specs = [
        PlotSpec {
            file: "laplace_time.svg",
            title: format!(
                "Laplace sync-heavy {0}x{0}, {1} iterations: guest time",
                config.sync_grid.size, config.sync_grid.iterations
            ),
            y_label: "ms (median, log axis)",
            y_scale: YScale::LogMs,
            section: Section::SyncHeavy,
            value: |s| s.time_ms,
        },
        PlotSpec {
            file: "laplace_compute_time.svg",
            title: format!(
                "Laplace compute-heavy {0}x{0}, {1} iterations: guest time",
                config.compute_grid.size, config.compute_grid.iterations
            ),
            y_label: "ms (median, log axis)",
            y_scale: YScale::LogMs,
            section: Section::ComputeHeavy,
            value: |s| s.time_ms,
        },
        PlotSpec {
            file: "ipis_per_core.svg",
            title: "Laplace sync-heavy: wake IPIs sent per core".to_string(),
            y_label: "IPIs per core (median)",
            y_scale: YScale::Linear,
            section: Section::SyncHeavy,
            value: |s| s.per_core.ipis_per_core,
        },
        PlotSpec {
            file: "idle_host_cpu.svg",
            title: format!("Idle guest ({} ms): host CPU used by QEMU", config.idle_ms),
            y_label: "host cores (CPU-s per s, median)",
            y_scale: YScale::Linear,
            section: Section::Idle,
            value: |s| s.idle_host_cpu,
        },
    ];
    let mut written = Vec::new();
    for spec in &specs {
        let path = dir.join(spec.file);
        plot(&path, spec, config, summaries)
            .map_err(|why| XtaskError::failed(format!("plotting {}: {why}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// Why a configuration is marked on a plot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    /// A boot was killed at the limit, s (`ConfigSummary::timed_out > 0`).
    TimedOut { limit_s: u64 },
    /// A boot failed otherwise (`ConfigSummary::failed > 0`).
    Failed,
}

/// One configuration of a series: its core count, its median if one was
/// measured, and whether a boot of it timed out or failed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sample {
    smp: u32,
    median: Option<f64>,
    mark: Option<Mark>,
}

impl Sample {
    /// The configuration's sample for `value`. Timed out wins over failed,
    /// as in the report's tables; a median from the rounds that did end is
    /// kept (and still marked).
    fn of(summary: &ConfigSummary, value: fn(&ConfigSummary) -> Option<Spread>) -> Self {
        let mark = if summary.timed_out > 0 {
            Some(Mark::TimedOut {
                limit_s: summary.timeout_s,
            })
        } else if summary.failed > 0 {
            Some(Mark::Failed)
        } else {
            None
        };
        Self {
            smp: summary.smp,
            median: value(summary).map(|spread| spread.median),
            mark,
        }
    }
}

/// A series as drawn: lines through consecutive measured points, and the
/// core counts (as x, log2 cores) to mark.
#[derive(Debug, Clone, Default, PartialEq)]
struct Shape {
    /// Runs of consecutive core counts with a (plottable) median; a core
    /// count without one ends a run.
    segments: Vec<Vec<(f64, f64)>>,
    /// Core counts with a timed-out boot.
    timed_out: Vec<f64>,
    /// Core counts with a failed boot (and none timed out).
    failed: Vec<f64>,
}

impl Shape {
    fn is_empty(&self) -> bool {
        self.segments.is_empty() && self.timed_out.is_empty() && self.failed.is_empty()
    }

    fn points(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.segments.iter().flatten().copied()
    }
}

/// Splits `samples` (any order) into line segments at core counts without a
/// median (or, with `positive_only`, without a median > 0, which a log axis
/// cannot show), and collects the core counts to mark.
fn shape(samples: &[Sample], positive_only: bool) -> Shape {
    let mut samples = samples.to_vec();
    samples.sort_by_key(|sample| sample.smp);
    let mut shape = Shape::default();
    let mut current: Vec<(f64, f64)> = Vec::new();
    for sample in samples {
        let x = f64::from(sample.smp).log2();
        let median = sample
            .median
            .filter(|&y| y.is_finite() && (!positive_only || y > 0.0));
        match median {
            Some(y) => current.push((x, y)),
            None if !current.is_empty() => shape.segments.push(std::mem::take(&mut current)),
            None => {}
        }
        match sample.mark {
            Some(Mark::TimedOut { .. }) => shape.timed_out.push(x),
            Some(Mark::Failed) => shape.failed.push(x),
            None => {}
        }
    }
    if !current.is_empty() {
        shape.segments.push(current);
    }
    shape
}

/// Each variant's samples, in the section's variant order.
fn samples(spec: &PlotSpec, summaries: &[ConfigSummary]) -> Vec<(Variant, Vec<Sample>)> {
    spec.section
        .variants()
        .iter()
        .map(|&variant| {
            let samples = summaries
                .iter()
                .filter(|s| s.section == spec.section && s.variant == variant)
                .map(|s| Sample::of(s, spec.value))
                .collect();
            (variant, samples)
        })
        .collect()
}

/// Headroom factor on each side of the data on a log axis.
const LOG_MARGIN: f64 = 1.5;

/// A log axis range holding every positive finite value with a
/// [`LOG_MARGIN`] factor either side; `None` without such a value.
pub(crate) fn log_range(values: impl IntoIterator<Item = f64>) -> Option<Range<f64>> {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |range: Option<(f64, f64)>, v| match range {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })?;
    Some(lo / LOG_MARGIN..hi * LOG_MARGIN)
}

/// Tick values for a log axis over `range`: 1-2-5 per decade, thinned to
/// powers of ten over a wide range, thickened to 1..9 over a narrow one.
pub(crate) fn log_ticks(range: &Range<f64>) -> Vec<f64> {
    let decade_ticks = |multiples: &[f64]| -> Vec<f64> {
        let first = range.start.log10().floor() as i32;
        let last = range.end.log10().ceil() as i32;
        (first..=last)
            .flat_map(|exp| multiples.iter().map(move |m| m * 10f64.powi(exp)))
            .filter(|v| range.contains(v))
            .collect()
    };
    let ticks = decade_ticks(&[1.0, 2.0, 5.0]);
    if ticks.len() > 12 {
        decade_ticks(&[1.0])
    } else if ticks.len() < 3 {
        decade_ticks(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    } else {
        ticks
    }
}

/// The light grid lines of a log axis: 1..9 per decade.
pub(crate) fn log_grid(range: &Range<f64>) -> Vec<f64> {
    let first = range.start.log10().floor() as i32;
    let last = range.end.log10().ceil() as i32;
    (first..=last)
        .flat_map(|exp| (1..=9).map(move |m| f64::from(m) * 10f64.powi(exp)))
        .filter(|v| range.contains(v))
        .collect()
}

/// A tick label in ms: whole ms from 1 ms up, else as few decimals as the
/// value needs.
fn format_ms(ms: f64) -> String {
    if ms >= 1.0 {
        format!("{ms:.0}")
    } else {
        let text = format!("{ms:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn plot(
    path: &Path,
    spec: &PlotSpec,
    config: &BenchConfig,
    summaries: &[ConfigSummary],
) -> Result<(), String> {
    let positive_only = spec.y_scale == YScale::LogMs;
    let shapes: Vec<(Variant, Shape)> = samples(spec, summaries)
        .into_iter()
        .map(|(variant, samples)| (variant, shape(&samples, positive_only)))
        .collect();
    let limits: Vec<u64> = summaries
        .iter()
        .filter(|s| s.section == spec.section && s.timed_out > 0)
        .map(|s| s.timeout_s)
        .collect();
    let max_smp = config.scope.smp.iter().copied().max().unwrap_or(1).max(2);
    let x_max = f64::from(max_smp).log2();
    let values = || {
        shapes
            .iter()
            .flat_map(|(_, shape)| shape.points().map(|(_, y)| y))
    };

    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|err| err.to_string())?;
    let chart = Chart {
        spec,
        shapes: &shapes,
        timeout_limits: &limits,
        x_max,
    };
    match spec.y_scale {
        YScale::LogMs => {
            let range = log_range(values()).unwrap_or(1.0..1000.0);
            let ticks = log_ticks(&range);
            let grid = log_grid(&range);
            let top = range.end;
            let axis = range
                .log_scale()
                .with_key_points(ticks)
                .with_light_points(grid);
            chart.draw(&root, axis, top, Some(&|y| format_ms(*y)))?;
        }
        YScale::Linear => {
            let y_max = values().fold(0.0f64, f64::max);
            let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };
            chart.draw(&root, 0.0..y_max, y_max, None)?;
        }
    }
    root.present().map_err(|err| err.to_string())
}

/// What one plot draws, whatever its y axis.
struct Chart<'a> {
    spec: &'a PlotSpec,
    shapes: &'a [(Variant, Shape)],
    /// The limits of the section's timed-out configurations, s.
    timeout_limits: &'a [u64],
    x_max: f64,
}

impl Chart<'_> {
    /// Draws onto `root` with `y_axis`, whose top is `y_top`; tick labels
    /// by `y_format`, or plotters' own.
    fn draw<Y>(
        &self,
        root: &DrawingArea<SVGBackend<'_>, Shift>,
        y_axis: Y,
        y_top: f64,
        y_format: Option<&dyn Fn(&f64) -> String>,
    ) -> Result<(), String>
    where
        Y: AsRangedCoord<Value = f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let x_max = self.x_max;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.spec.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.2..x_max + 0.2, y_axis)
            .map_err(|err| err.to_string())?;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc("cores (log2 axis)")
            .y_desc(self.spec.y_label)
            .x_labels(x_max as usize + 1)
            .x_label_formatter(&|x| format!("{}", 2f64.powf(*x).round()));
        if let Some(y_format) = y_format {
            mesh.y_label_formatter(y_format);
        }
        mesh.draw().map_err(|err| err.to_string())?;
        let count = self.shapes.len();
        for (index, (variant, shape)) in self.shapes.iter().enumerate() {
            if shape.is_empty() {
                continue;
            }
            let color = Palette99::pick(index).to_rgba();
            for segment in shape.segments.iter().filter(|segment| segment.len() > 1) {
                chart
                    .draw_series(LineSeries::new(segment.clone(), color.stroke_width(2)))
                    .map_err(|err| err.to_string())?;
            }
            chart
                .draw_series(
                    shape
                        .points()
                        .map(|point| Circle::new(point, 4, color.filled())),
                )
                .map_err(|err| err.to_string())?;
            // Marks hang just under the top of the axis, spread sideways by
            // series so that two at one core count stay apart.
            let dx = ((2 * index) as i32 - count as i32 + 1) * 5;
            chart
                .draw_series(shape.timed_out.iter().map(|&x| {
                    EmptyElement::at((x, y_top)) + Cross::new((dx, 10), 6, color.stroke_width(2))
                }))
                .map_err(|err| err.to_string())?;
            chart
                .draw_series(shape.failed.iter().map(|&x| {
                    EmptyElement::at((x, y_top)) + TriangleMarker::new((dx, 10), 6, color.filled())
                }))
                .map_err(|err| err.to_string())?;
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(|err| err.to_string())?
                .label(variant.name())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        if self
            .shapes
            .iter()
            .any(|(_, shape)| !shape.timed_out.is_empty())
        {
            let label = match self.timeout_limits {
                [first, rest @ ..] if rest.iter().all(|limit| limit == first) => {
                    format!("timed out (> {first} s), at the top")
                }
                _ => "timed out, at the top".to_string(),
            };
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(|err| err.to_string())?
                .label(label)
                .legend(|(x, y)| Cross::new((x + 10, y), 6, BLACK.stroke_width(2)));
        }
        if self
            .shapes
            .iter()
            .any(|(_, shape)| !shape.failed.is_empty())
        {
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(|err| err.to_string())?
                .label("failed, at the top")
                .legend(|(x, y)| TriangleMarker::new((x + 10, y), 6, BLACK.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            // Upper left, below the band where the marks hang.
            .position(SeriesLabelPosition::Coordinate(8, 24))
            .draw()
            .map_err(|err| err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::summarize;
    use crate::bench::runner::{BenchRun, grid_boot};

    #[test]
    fn plots_are_written_even_with_no_data() {
        let dir = tempfile::tempdir().unwrap();
        let config = BenchConfig::quick();
        let summaries = summarize(&config, &[], 2);
        let files = write_plots(dir.path(), &config, &summaries).unwrap();
        assert_eq!(files.len(), 4);
        for file in files {
            let svg = fs::read_to_string(&file).unwrap();
            assert!(svg.starts_with("<svg"), "{}", file.display());
        }
    }

    #[test]
    fn log_range_holds_every_value_with_margin() {
        let range = log_range([100.0, 200.0, 11_000.0]).unwrap();
        assert!(range.start > 0.0);
        assert!(range.start < 100.0 && range.end > 11_000.0, "{range:?}");
        for v in [100.0, 200.0, 11_000.0] {
            assert!(range.contains(&v));
        }
        // Zeros and NaN cannot sit on a log axis; one value still gets room.
        let range = log_range([0.0, f64::NAN, 50.0]).unwrap();
        assert!(range.start > 0.0 && range.start < 50.0 && range.end > 50.0);
        assert_eq!(log_range([0.0, -1.0]), None);
        assert_eq!(log_range([]), None);
    }

    #[test]
    fn log_ticks_are_readable_ms() {
        let range = log_range([100.0, 200.0, 11_000.0]).unwrap();
        let ticks = log_ticks(&range);
        let labels: Vec<String> = ticks.iter().map(|&t| format_ms(t)).collect();
        assert_eq!(
            labels,
            ["100", "200", "500", "1000", "2000", "5000", "10000"]
        );
        // A narrow range still gets a few ticks.
        let ticks = log_ticks(&log_range([120.0, 130.0]).unwrap());
        assert!(ticks.len() >= 2, "{ticks:?}");
        // A wide one is thinned to decades.
        let ticks = log_ticks(&log_range([0.01, 1e6]).unwrap());
        assert_eq!(ticks.len(), 9, "{ticks:?}");
        assert_eq!(format_ms(0.25), "0.25");
        assert_eq!(format_ms(0.5), "0.5");
    }

    fn sample(smp: u32, median: Option<f64>, mark: Option<Mark>) -> Sample {
        Sample { smp, median, mark }
    }

    #[test]
    fn a_timed_out_middle_point_breaks_the_line_and_is_marked() {
        let timed_out = Some(Mark::TimedOut { limit_s: 20 });
        let shape = shape(
            &[
                sample(1, Some(100.0), None),
                sample(2, Some(150.0), None),
                sample(4, None, timed_out),
                sample(8, Some(300.0), None),
            ],
            true,
        );
        assert_eq!(
            shape.segments,
            vec![vec![(0.0, 100.0), (1.0, 150.0)], vec![(3.0, 300.0)]]
        );
        assert_eq!(shape.timed_out, vec![2.0]);
        assert!(shape.failed.is_empty());
    }

    #[test]
    fn shape_sorts_keeps_partial_medians_and_drops_non_positive_on_log() {
        let shape = shape(
            &[
                sample(4, Some(0.0), None),
                sample(1, Some(100.0), Some(Mark::Failed)),
                sample(2, Some(90.0), Some(Mark::TimedOut { limit_s: 20 })),
            ],
            true,
        );
        // 1 and 2 cores measured (and marked); 0 ms at 4 cores is a gap.
        assert_eq!(shape.segments, vec![vec![(0.0, 100.0), (1.0, 90.0)]]);
        assert_eq!(shape.timed_out, vec![1.0]);
        assert_eq!(shape.failed, vec![0.0]);
    }

    fn boot(config: &BenchConfig, variant: Variant, smp: u32, ms: Option<u64>) -> BenchRun {
        let configuration = config
            .configurations()
            .into_iter()
            .find(|c| c.section == Section::SyncHeavy && c.variant == variant && c.boot.smp == smp)
            .unwrap();
        grid_boot(configuration, ms)
    }

    #[test]
    fn timed_out_configurations_are_marked_in_the_svg() {
        let config = BenchConfig::standard(vec![1, 2, 4], 1);
        let runs = vec![
            boot(&config, Variant::IdlePoll, 1, Some(100)),
            boot(&config, Variant::IdlePoll, 2, None),
            boot(&config, Variant::IdlePoll, 4, Some(11_000)),
            boot(&config, Variant::Default, 1, Some(120)),
            boot(&config, Variant::Default, 4, Some(200)),
        ];
        let summaries = summarize(&config, &runs, 2);
        let spec = PlotSpec {
            file: "t.svg",
            title: "t".to_string(),
            y_label: "ms",
            y_scale: YScale::LogMs,
            section: Section::SyncHeavy,
            value: |s| s.time_ms,
        };
        let shapes: Vec<(Variant, Shape)> = samples(&spec, &summaries)
            .into_iter()
            .map(|(variant, samples)| (variant, shape(&samples, true)))
            .collect();
        let idle_poll = &shapes
            .iter()
            .find(|(v, _)| *v == Variant::IdlePoll)
            .unwrap()
            .1;
        assert_eq!(idle_poll.segments.len(), 2);
        assert_eq!(idle_poll.timed_out, vec![1.0]);

        let dir = tempfile::tempdir().unwrap();
        let files = write_plots(dir.path(), &config, &summaries).unwrap();
        let svg = fs::read_to_string(dir.path().join("laplace_time.svg")).unwrap();
        assert!(files.iter().any(|f| f.ends_with("laplace_time.svg")));
        assert!(svg.contains("timed out (&gt; 20 s)"), "{svg}");
        assert!(svg.contains("\n10000\n</text>"), "{svg}");
    }
}
