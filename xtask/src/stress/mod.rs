//! `cargo xtask stress`: the planner and runner, the report, shards and their merge, and
//! the replay of a recorded Bochs boot and its explanation.

pub mod explain;
pub mod replay;
pub mod report;
pub mod runner;
pub mod shard;
