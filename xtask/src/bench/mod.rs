//! `cargo xtask bench`: the plan, the runner, the report and the plots;
//! and `cargo xtask peer-bench`'s runs and plots.

pub mod peer_plots;
pub mod peer_runs;
pub mod plan;
pub mod plots;
pub mod report;
pub mod runner;
