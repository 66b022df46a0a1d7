//! Kernel boot parameters.
//!
//! Carrier: QEMU fw_cfg file `opt/vigil/cmdline` (xtask passes
//! `-fw_cfg name=opt/vigil/cmdline,string=...`), so one image runs any
//! configuration without a rebuild. Format: space-separated `key=value`
//! tokens. Every key may appear at most once; an unknown key, a token without
//! `=`, or a value out of range is an error that the kernel prints and exits
//! on with [`ExitCode::BadParameter`](crate::exit::ExitCode::BadParameter).
//!
//! The keys, their values, ranges and defaults and the parser are
//! `vigil_proto::boot_params`'s, defined there once for the kernel and the
//! host.

pub use vigil_proto::boot_params::{
    BootParams, FW_CFG_FILE, Fault, Key, Mode, ParamError, Pool, Release, Trial, Workload, parse,
};
