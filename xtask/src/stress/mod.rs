//! `cargo xtask stress`: the planner and runner, the report, shards and their merge.

pub mod report;
pub mod runner;
pub mod shard;
