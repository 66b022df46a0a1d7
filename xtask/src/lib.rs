//! Vigil's host tasks as a library: the `cargo xtask` binary and the
//! qemu-tests crate share the kernel build and the QEMU runner.

pub mod args;
pub mod cli;
pub mod commands;
pub mod debug_table;
pub mod error;
pub mod guest_registers;
pub mod install;
pub mod kernel_build;
pub mod laplace_check;
pub mod laplace_reference;
pub mod monitor;
pub mod process;
pub mod process_cpu_time;
pub mod qemu;
pub mod qemu_command;
pub mod run_output;
pub mod stuck_cores;
pub mod symbolize;
pub mod test_output;
pub mod verdict;
pub mod vigil_stats;
pub mod workspace;

pub use args::{Feature, Machine};
pub use error::{Result, XtaskError};
pub use kernel_build::{BuildConfig, KernelArtifacts, build_kernel};
pub use qemu::{RunConfig, RunOutcome, run};
pub use verdict::{QemuExit, Verdict};
