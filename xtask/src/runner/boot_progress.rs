//! The progress bar `stress` and `bench` show while they boot.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar counting `total` boots, redrawn twice a second.
pub fn boot_progress_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} boots {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(500));
    bar
}
