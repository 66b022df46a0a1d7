//! Vigil's host tasks as a library: the `cargo xtask` binary and the
//! qemu-tests crate share the kernel build and the QEMU runner.

pub mod bench;
pub mod campaign;
pub mod cli;
pub mod commands;
pub mod diagnosis;
pub mod docs;
pub mod error;
pub mod guest;
pub mod mutants;
pub mod runner;
pub mod stress;

pub use error::{Result, XtaskError};
pub use guest::settings::{Backoff, Feature, IpiFault, Pool, WakePolicy, Watchdog};
pub use guest::verdict::{ExitCode, QemuExit, Verdict};
pub use runner::kernel_build::{
    BuildConfig, KernelArtifacts, build_kernel, build_kernel_with_params,
};
pub use runner::platform::{Apic, Arch, Emulator, Machine};
pub use runner::qemu::{RunConfig, RunOutcome, run};
