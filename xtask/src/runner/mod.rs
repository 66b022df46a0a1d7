//! Booting the kernel: what can be booted (platform), the kernel build
//! and its images, the QEMU command and process (on some of the host's
//! cores), its monitor, the Bochs runner, the installer.

pub mod bochs;
pub mod bochs_processes;
pub mod boot_progress;
pub mod debian_kernel;
pub mod host_cores;
pub mod hot_loop_pages;
pub mod initramfs;
pub mod install;
pub mod kernel_build;
pub mod linux_peer;
pub mod monitor;
pub mod platform;
pub mod process;
pub mod process_cpu_time;
pub mod qemu;
pub mod qemu_command;
pub mod strip_debug;
pub mod workspace;
