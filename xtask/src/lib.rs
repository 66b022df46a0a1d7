//! Vigil's host tasks as a library: the `cargo xtask` binary and the
//! qemu-tests crate share the kernel build and the QEMU runner.

pub mod args;
pub mod bench_plan;
pub mod bench_plots;
pub mod bench_report;
pub mod bench_runner;
pub mod bochs;
pub mod boot_progress;
pub mod cli;
pub mod commands;
pub mod debug_table;
pub mod error;
pub mod guest_registers;
pub mod install;
pub mod ipi_oracle;
pub mod job_pool;
pub mod kernel_build;
pub mod kernel_params;
pub mod laplace_check;
pub mod laplace_reference;
pub mod monitor;
pub mod percentiles;
pub mod pool_line;
pub mod process;
pub mod process_cpu_time;
pub mod qemu;
pub mod qemu_command;
pub mod reproduce;
pub mod run_class;
pub mod run_output;
pub mod seeds;
pub mod stress_report;
pub mod stress_runner;
pub mod stress_shard;
pub mod strip_debug;
pub mod stuck_cores;
pub mod symbolize;
pub mod test_output;
pub mod verdict;
pub mod vigil_stats;
pub mod workspace;

pub use args::{Apic, Backoff, Emulator, Feature, IpiFault, Machine, Pool, WakePolicy, Watchdog};
pub use error::{Result, XtaskError};
pub use kernel_build::{BuildConfig, KernelArtifacts, build_kernel, build_kernel_with_params};
pub use qemu::{RunConfig, RunOutcome, run};
pub use verdict::{ExitCode, QemuExit, Verdict};
