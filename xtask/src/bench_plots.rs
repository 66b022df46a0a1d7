//! SVG plots of a benchmark (plotters): one line per policy against the
//! core count (log2 axis), medians only.

use std::fs;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::bench_plan::{BenchConfig, Section, Variant};
use crate::bench_report::ConfigSummary;
use crate::error::{Result, XtaskError};
use crate::percentiles::Spread;

/// One plot: a title, a y-axis label, and what to plot per configuration.
struct PlotSpec {
    file: &'static str,
    title: String,
    y_label: &'static str,
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
            y_label: "ms (median)",
            section: Section::SyncHeavy,
            value: |s| s.time_ms,
        },
        PlotSpec {
            file: "laplace_compute_time.svg",
            title: format!(
                "Laplace compute-heavy {0}x{0}, {1} iterations: guest time",
                config.compute_grid.size, config.compute_grid.iterations
            ),
            y_label: "ms (median)",
            section: Section::ComputeHeavy,
            value: |s| s.time_ms,
        },
        PlotSpec {
            file: "ipis_per_core.svg",
            title: "Laplace sync-heavy: wake IPIs sent per core".to_string(),
            y_label: "IPIs per core (median)",
            section: Section::SyncHeavy,
            value: |s| s.ipis_per_core,
        },
        PlotSpec {
            file: "idle_host_cpu.svg",
            title: format!("Idle guest ({} ms): host CPU used by QEMU", config.idle_ms),
            y_label: "host cores (CPU-s per s, median)",
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

fn series(spec: &PlotSpec, summaries: &[ConfigSummary]) -> Vec<(Variant, Vec<(f64, f64)>)> {
    spec.section
        .variants()
        .iter()
        .map(|&variant| {
            let points = summaries
                .iter()
                .filter(|s| s.section == spec.section && s.variant == variant)
                .filter_map(|s| Some((f64::from(s.smp).log2(), (spec.value)(s)?.median)))
                .collect();
            (variant, points)
        })
        .collect()
}

fn plot(
    path: &Path,
    spec: &PlotSpec,
    config: &BenchConfig,
    summaries: &[ConfigSummary],
) -> Result<(), String> {
    let series = series(spec, summaries);
    let max_smp = config.smp.iter().copied().max().unwrap_or(1).max(2);
    let x_max = f64::from(max_smp).log2();
    let y_max = series
        .iter()
        .flat_map(|(_, points)| points.iter().map(|&(_, y)| y))
        .fold(0.0f64, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.1 } else { 1.0 };

    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|err| err.to_string())?;
    let mut chart = ChartBuilder::on(&root)
        .caption(&spec.title, ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(-0.2..x_max + 0.2, 0.0..y_max)
        .map_err(|err| err.to_string())?;
    chart
        .configure_mesh()
        .x_desc("cores (log2 axis)")
        .y_desc(spec.y_label)
        .x_labels(x_max as usize + 1)
        .x_label_formatter(&|x| format!("{}", 2f64.powf(*x).round()))
        .draw()
        .map_err(|err| err.to_string())?;
    for (index, (variant, points)) in series.into_iter().enumerate() {
        if points.is_empty() {
            continue;
        }
        let color = Palette99::pick(index).to_rgba();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|err| err.to_string())?
            .label(variant.name())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(
                points
                    .iter()
                    .map(|&point| Circle::new(point, 4, color.filled())),
            )
            .map_err(|err| err.to_string())?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|err| err.to_string())?;
    root.present().map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench_report::summarize;

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
}
