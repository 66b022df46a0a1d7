//! What stress and bench share: seeds, parallel boots, run classes, reproduce commands, percentiles.

pub mod job_pool;
pub mod json_file;
pub mod percentiles;
pub mod reproduce;
pub mod run_class;
pub mod seeds;
