//! `cargo xtask bench`: the plan, the runner, the report and the plots.

pub mod plan;
pub mod plots;
pub mod report;
pub mod runner;
