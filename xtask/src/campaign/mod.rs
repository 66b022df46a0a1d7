//! What stress and bench share: their core counts and rounds ([`scope`]),
//! the boot a planner makes ([`boot_spec`]),
//! the order of boots ([`plan`]), the classified record of a boot
//! ([`boot_record`], [`run_class`]), seeds, parallel boots, reproduce
//! commands, percentiles, per-core statistics and the JSON file.

pub mod boot_record;
pub mod boot_spec;
pub mod job_pool;
pub mod json_file;
pub mod per_core;
pub mod percentiles;
pub mod plan;
pub mod reproduce;
pub mod run_class;
pub mod scope;
pub mod seeds;
