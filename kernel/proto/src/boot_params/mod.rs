//! The kernel's boot parameters, defined once: where the line comes from,
//! its keys, each key's values, ranges and defaults, the kernel's parser and
//! the host's formatter.
//!
//! The line is one run of space-separated `key=value` words. The kernel
//! finds it in QEMU's fw_cfg file when there is one (the harness's usual
//! path), otherwise in the disk image's ramdisk, written by the image
//! builder (`cargo xtask build KEY=VALUE ...`), for machines without fw_cfg
//! (Bochs, real hardware); fw_cfg wins when both exist.
//!
//! * [`FW_CFG_FILE`], [`RAMDISK_FILE`], [`ParamSource`]: the carriers;
//! * [`Key`]: every key, in the order the kernel lists them;
//! * the value sets ([`Mode`], [`Workload`], [`Fault`], [`Pool`],
//!   [`Release`], [`Switch`], [`Backoff`], [`Watchdog`]) and the numeric
//!   ranges and defaults ([`GRID_SIZE_RANGE`], [`DEFAULT_GRID_SIZE`], ...);
//! * [`parse`]: the kernel's parser, giving [`BootParams`] or a
//!   [`ParamError`];
//! * [`ParamLine`]: the host's formatter, every key optional.

mod format;
mod keys;
mod parse;
mod ranges;
mod source;
mod values;

#[cfg(test)]
mod round_trip_tests;

pub use format::ParamLine;
pub use keys::Key;
pub use parse::{BootParams, ParamError, parse};
pub use ranges::{
    BACKOFF_US_RANGE, CHUNKS_RANGE, DEFAULT_GRID_SIZE, DEFAULT_IDLE_MS, DEFAULT_ITERATIONS,
    DEFAULT_SEED, DEFAULT_WATCHDOG_MS, GRID_SIZE_RANGE, IDLE_MS_RANGE, ITERATIONS_RANGE,
    PARALLELISM_RANGE, POLLERS_RANGE, WATCHDOG_MS_RANGE,
};
pub use source::{FW_CFG_FILE, ParamSource, RAMDISK_FILE};
pub use values::{
    Backoff, Fault, Mode, OFF, POLICY_PARAMS, Pool, Release, STALLED_ROUND, STRANDED_ROUND, Switch,
    Trial, Watchdog, Workload, backoff_value,
};
