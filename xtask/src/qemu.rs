//! Booting the kernel under QEMU: the runner API shared by `cargo xtask run`,
//! `cargo xtask test` and the qemu-tests crate.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::args::{self, Machine};
use crate::error::{Result, XtaskError};
use crate::install;
use crate::kernel_build::KernelArtifacts;
use crate::monitor::Monitor;
use crate::process::{Echo, KilledOnDrop};
use crate::qemu_command::{QemuArgs, qemu_args};
use crate::verdict::{self, QemuExit, Verdict};
use crate::workspace::display_command;

/// Default number of vCPUs.
pub const DEFAULT_SMP: u32 = 4;
/// Default run timeout.
pub const DEFAULT_TIMEOUT_S: u64 = 300;
/// How long the monitor may take to answer when we examine a hung guest.
const MONITOR_TIMEOUT: Duration = Duration::from_secs(20);

/// One boot of the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunConfig {
    /// Number of vCPUs, in [`args::SMP_RANGE`].
    pub smp: u32,
    /// QEMU machine model.
    pub machine: Machine,
    /// Boot the UEFI image under OVMF instead of the BIOS image.
    pub uefi: bool,
    /// Kill QEMU after this many seconds; `None` waits forever (gdb).
    pub timeout_s: Option<u64>,
    /// Start QEMU's gdb stub on :1234 and wait for gdb (`-s -S`).
    pub gdb: bool,
    /// Kernel boot parameters, `key=value` each.
    pub params: Vec<String>,
    /// Echo the serial output (to stdout) and QEMU's stderr live.
    pub echo: bool,
    /// On timeout, ask the monitor for `info registers -a` before killing.
    pub registers_on_timeout: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            smp: DEFAULT_SMP,
            machine: Machine::Pc,
            uefi: false,
            timeout_s: Some(DEFAULT_TIMEOUT_S),
            gdb: false,
            params: Vec::new(),
            echo: false,
            registers_on_timeout: false,
        }
    }
}

impl RunConfig {
    /// A default config with these kernel parameters.
    pub fn with_params(params: &[&str]) -> Self {
        Self {
            params: params.iter().map(|param| param.to_string()).collect(),
            ..Self::default()
        }
    }

    /// Checks what clap checks for the command line: core count, timeout
    /// and the shape of each parameter. Errors are [`XtaskError::Usage`].
    pub fn validate(&self) -> Result<()> {
        args::check_smp(self.smp).map_err(XtaskError::Usage)?;
        if let Some(timeout_s) = self.timeout_s {
            args::parse_timeout_s(&timeout_s.to_string()).map_err(XtaskError::Usage)?;
        }
        for param in &self.params {
            args::parse_param(param).map_err(XtaskError::Usage)?;
        }
        Ok(())
    }
}

/// The result of one boot.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// What the run amounts to.
    pub verdict: Verdict,
    /// How QEMU ended (status, signal or our timeout).
    pub exit: QemuExit,
    /// QEMU's exit status, if it exited by itself.
    pub exit_status: Option<i32>,
    /// Everything the kernel wrote to the serial port.
    pub serial: String,
    /// Everything QEMU wrote to stderr.
    pub qemu_stderr: String,
    /// Wall-clock time from spawning QEMU to its end.
    pub elapsed: Duration,
    /// The QEMU command line, ready to paste into a shell.
    pub command_line: String,
    /// `info registers -a` taken at the timeout, if asked for (or why it
    /// could not be taken).
    pub registers_at_timeout: Option<String>,
}

impl RunOutcome {
    /// One-line reason, e.g. `panic: exit code 0x12`.
    pub fn reason(&self) -> String {
        verdict::reason(self.exit)
    }

    /// `vigil: ok (...)` or `vigil: FAILED (...)`.
    pub fn verdict_line(&self) -> String {
        verdict::verdict_line(self.exit)
    }
}

/// Boots `kernel` as `config` says and waits for it to end. Errors are
/// reserved for not being able to run QEMU at all; everything the guest
/// does (including hanging) is a [`RunOutcome`].
pub fn run(config: &RunConfig, kernel: &KernelArtifacts) -> Result<RunOutcome> {
    config.validate()?;
    let qemu = install::find_in_path(install::QEMU_BINARY).ok_or_else(|| {
        XtaskError::usage(format!(
            "{} not found: install the Debian package {}",
            install::QEMU_BINARY,
            install::QEMU_PACKAGE
        ))
    })?;
    let ovmf = if config.uefi {
        Some(install::find_ovmf().ok_or_else(|| {
            XtaskError::usage(format!(
                "OVMF firmware not found (looked at {}): install the Debian package {}",
                install::OVMF_CANDIDATES.join(", "),
                install::OVMF_PACKAGE
            ))
        })?)
    } else {
        None
    };

    // A private directory per run: its own copy of the disk image (QEMU
    // locks the image it writes to; parallel runs must not share one) and
    // the monitor socket. Removed when this function returns.
    let run_dir = tempfile::Builder::new()
        .prefix("vigil-qemu-")
        .tempdir()
        .map_err(|err| XtaskError::failed(format!("creating a temporary directory: {err}")))?;
    let disk_image = run_dir.path().join("disk.img");
    let source_image = kernel.image(config.uefi);
    fs::copy(source_image, &disk_image)
        .map_err(|err| XtaskError::failed(format!("copying {}: {err}", source_image.display())))?;
    let monitor_socket = run_dir.path().join("monitor.sock");

    let mut command = Command::new(qemu);
    command.args(qemu_args(&QemuArgs {
        smp: config.smp,
        machine: config.machine,
        disk_image: &disk_image,
        ovmf: ovmf.as_deref(),
        monitor_socket: &monitor_socket,
        params: &config.params,
        gdb: config.gdb,
    }));
    let command_line = display_command(&command);
    if config.echo {
        eprintln!("xtask: booting: {command_line}");
    }
    let (echo_serial, echo_stderr) = if config.echo {
        (Echo::Stdout, Echo::Stderr)
    } else {
        (Echo::Off, Echo::Off)
    };

    let started = Instant::now();
    let child = KilledOnDrop::spawn(command, echo_serial, echo_stderr)
        .map_err(|err| XtaskError::failed(format!("could not start QEMU: {err}")))?;
    let timeout = config.timeout_s.map(Duration::from_secs);
    let exited = child
        .wait_for_exit(timeout)
        .map_err(|err| XtaskError::failed(format!("waiting for QEMU: {err}")))?;
    let registers_at_timeout = match (exited, config.registers_on_timeout) {
        (false, true) => Some(read_registers(&monitor_socket)),
        _ => None,
    };
    let timed_out = if exited { None } else { config.timeout_s };
    let finished = child
        .finish(timed_out)
        .map_err(|err| XtaskError::failed(format!("reaping QEMU: {err}")))?;
    let elapsed = started.elapsed();

    Ok(RunOutcome {
        verdict: Verdict::from_exit(finished.exit),
        exit: finished.exit,
        exit_status: match finished.exit {
            QemuExit::Status(status) => Some(status),
            _ => None,
        },
        serial: finished.stdout,
        qemu_stderr: finished.stderr,
        elapsed,
        command_line,
        registers_at_timeout,
    })
}

/// `info registers -a` from a (hung) guest, or why it could not be read.
fn read_registers(monitor_socket: &Path) -> String {
    Monitor::connect(monitor_socket, MONITOR_TIMEOUT)
        .and_then(|mut monitor| monitor.command("info registers -a"))
        .unwrap_or_else(|err| format!("<could not read registers from the monitor: {err}>"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn default_config_is_valid() {
        let config = RunConfig::default();
        assert_eq!(config.smp, 4);
        assert_eq!(config.timeout_s, Some(300));
        config.validate().unwrap();
    }

    #[test]
    fn validate_rejects_bad_smp_timeout_and_params_as_usage_errors() {
        let bad_smp = RunConfig {
            smp: 0,
            ..RunConfig::default()
        };
        assert!(matches!(bad_smp.validate(), Err(XtaskError::Usage(m)) if m.contains("1..=64")));
        let big_smp = RunConfig {
            smp: 300,
            ..RunConfig::default()
        };
        assert_eq!(big_smp.validate().unwrap_err().exit_code(), 2);
        let zero_timeout = RunConfig {
            timeout_s: Some(0),
            ..RunConfig::default()
        };
        assert_eq!(zero_timeout.validate().unwrap_err().exit_code(), 2);
        let bad_param = RunConfig::with_params(&["mode=test", "verbose"]);
        assert!(
            matches!(bad_param.validate(), Err(XtaskError::Usage(m)) if m.contains("'verbose'"))
        );
    }

    #[test]
    fn a_missing_image_is_an_error_not_a_hang() {
        let kernel = KernelArtifacts {
            elf: PathBuf::from("/nonexistent/vigil-kernel"),
            bios_image: PathBuf::from("/nonexistent/vigil-bios.img"),
            uefi_image: PathBuf::from("/nonexistent/vigil-uefi.img"),
        };
        let config = RunConfig {
            timeout_s: Some(5),
            ..RunConfig::default()
        };
        match run(&config, &kernel) {
            // Without QEMU installed the usage error comes first; both are
            // immediate errors, which is what this test is about.
            Err(XtaskError::Failed(message)) => assert!(message.contains("vigil-bios.img")),
            Err(XtaskError::Usage(message)) => assert!(message.contains("qemu-system-x86_64")),
            Err(XtaskError::Reported) => panic!("run() never reports by itself"),
            Ok(outcome) => panic!("booted a missing image: {outcome:?}"),
        }
    }
}
