//! Booting the BIOS image under Bochs (`--emulator bochs`): an x86
//! implementation independent of QEMU. Bochs has no fw_cfg and no
//! `isa-debug-exit`, so the image carries its boot parameters (the
//! bootloader's ramdisk, see `kernel_build::build_kernel_with_params`) and
//! the kernel ends the run with an ACPI power-off after printing its
//! verdict line (`vigil: exit 0x10 (success)`), which is the result read
//! here.
//!
//! Debian's Bochs needs an X display for the bootloader's VESA mode (run
//! under `xvfb-run`) and is built with its debugger, which waits for a
//! command at start: `-rc` feeds it `continue`.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use vigil_proto::exit_code::{ExitCode, ExitLine};

use crate::error::{Result, XtaskError};
use crate::guest::laplace_check::{self, ChecksumCheck};
use crate::guest::test_output::strip_core_prefix;
use crate::runner::install::find_in_path;

/// Debian packages a Bochs boot needs, with the binary each provides.
pub const BOCHS_PACKAGES: [(&str, &str); 2] = [("bochs", "bochs"), ("xvfb", "xvfb-run")];
/// Where Debian's `bochsbios` and `vgabios` put the ROMs.
pub const BIOS_ROM: &str = "/usr/share/bochs/BIOS-bochs-latest";
/// The VGA ROM (`vgabios`).
pub const VGA_ROM: &str = "/usr/share/bochs/VGABIOS-lgpl-latest";
/// How long Bochs may take to power off after the kernel's verdict line.
pub const POWER_OFF_GRACE: Duration = Duration::from_secs(20);

/// Every package to install for a Bochs boot.
pub const BOCHS_INSTALL: &str = "bochs bochsbios vgabios bochs-x xvfb";

/// One Bochs boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BochsConfig {
    /// Cores.
    pub smp: u32,
    /// Kill Bochs after this long.
    pub timeout_s: u64,
    /// Print the serial port as it comes.
    pub echo: bool,
}

/// How a Bochs boot ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BochsOutcome {
    /// Everything the kernel printed on the serial port.
    pub serial: String,
    /// The kernel's verdict line, if it printed one.
    pub exit: Option<ExitCode>,
    /// Whether we killed Bochs at the timeout.
    pub timed_out: bool,
    /// Whether the kernel printed its verdict but Bochs did not power off
    /// within [`POWER_OFF_GRACE`] (we killed it then).
    pub no_power_off: bool,
    /// Wall time from start to exit.
    pub elapsed: Duration,
    /// Laplace/floor results checked against the host.
    pub checksum_checks: Vec<ChecksumCheck>,
}

impl BochsOutcome {
    /// Success: the kernel said so, and every checksum matched the host.
    pub fn is_success(&self) -> bool {
        self.exit == Some(ExitCode::Success)
            && self.checksum_checks.iter().all(ChecksumCheck::matches)
    }

    /// The closing line: `vigil: ok (...)` or `vigil: FAILED (...)`.
    pub fn verdict_line(&self) -> String {
        let why = match (self.exit, self.timed_out) {
            (None, true) => "Bochs killed at the timeout, no verdict line".to_string(),
            (None, false) => "Bochs ended without the kernel's verdict line".to_string(),
            (Some(code), _) => format!(
                "{}: exit code {:#04x}{}",
                code.label(),
                code.code(),
                if self.no_power_off {
                    "; the machine did not power off"
                } else {
                    ""
                }
            ),
        };
        let mismatch = laplace_check::first_mismatch(&self.checksum_checks).is_some();
        if self.is_success() {
            format!("vigil: ok ({why}, under Bochs)")
        } else if mismatch && self.exit == Some(ExitCode::Success) {
            format!("vigil: FAILED (checksum mismatch; {why}, under Bochs)")
        } else {
            format!("vigil: FAILED ({why}, under Bochs)")
        }
    }
}

/// What is missing for a Bochs boot: `None` if nothing, else the message
/// naming the packages.
pub fn missing() -> Option<String> {
    let missing: Vec<&str> = BOCHS_PACKAGES
        .iter()
        .filter(|(_, binary)| find_in_path(binary).is_none())
        .map(|(package, _)| *package)
        .chain(
            [(BIOS_ROM, "bochsbios"), (VGA_ROM, "vgabios")]
                .iter()
                .filter(|(rom, _)| !Path::new(rom).is_file())
                .map(|(_, package)| *package),
        )
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "a Bochs boot needs {}; install them with `apt-get install {BOCHS_INSTALL}`",
            missing.join(", ")
        )
    })
}

/// The `bochsrc` for `smp` cores booting `image` with the serial port in
/// `serial` (guest memory as under QEMU: 128 MiB + 4 MiB per core).
pub fn bochsrc(smp: u32, image: &Path, serial: &Path, log: &Path) -> String {
    let megs = 128 + 4 * smp;
    format!(
        "megs: {megs}\n\
         cpu: count={smp}, ips=50000000, reset_on_triple_fault=0\n\
         romimage: file={BIOS_ROM}\n\
         vgaromimage: file={VGA_ROM}\n\
         ata0-master: type=disk, path=\"{}\", mode=flat\n\
         boot: disk\n\
         com1: enabled=1, mode=file, dev=\"{}\"\n\
         log: \"{}\"\n\
         display_library: x\n\
         clock: sync=none, time0=local\n",
        image.display(),
        serial.display(),
        log.display()
    )
}

/// Boots `bios_image` (which must carry its parameters) under Bochs.
pub fn run(config: &BochsConfig, bios_image: &Path) -> Result<BochsOutcome> {
    if let Some(why) = missing() {
        return Err(XtaskError::usage(why));
    }
    let scratch = tempfile::tempdir()
        .map_err(|err| XtaskError::failed(format!("creating a scratch directory: {err}")))?;
    let dir = scratch.path();
    // A copy: Bochs locks its disk image, and a killed Bochs leaves the lock.
    let image = dir.join("vigil-bios.img");
    fs::copy(bios_image, &image)
        .map_err(|err| XtaskError::failed(format!("copying {}: {err}", bios_image.display())))?;
    let serial_path = dir.join("serial.txt");
    let log_path: PathBuf = dir.join("bochs.log");
    let rc = dir.join("bochsrc");
    let commands = dir.join("debugger-commands");
    let write = |path: &Path, text: &str| {
        fs::write(path, text)
            .map_err(|err| XtaskError::failed(format!("writing {}: {err}", path.display())))
    };
    write(&rc, &bochsrc(config.smp, &image, &serial_path, &log_path))?;
    write(&serial_path, "")?;
    write(&commands, "continue\n")?;

    let mut command = Command::new("xvfb-run");
    command
        .args(["-a", "bochs", "-q", "-f"])
        .arg(&rc)
        .arg("-rc")
        .arg(&commands)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own process group: xvfb-run starts Xvfb and Bochs, and a
        // timeout kills all three.
        .process_group(0);
    eprintln!(
        "xtask: booting under Bochs ({} cores): xvfb-run -a bochs -q -f {} -rc {}",
        config.smp,
        rc.display(),
        commands.display()
    );
    let started = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|err| XtaskError::failed(format!("could not start xvfb-run: {err}")))?;
    let mut deadline = started + Duration::from_secs(config.timeout_s);
    let mut verdict_seen = false;
    let mut serial_file = fs::File::open(&serial_path)
        .map_err(|err| XtaskError::failed(format!("opening {}: {err}", serial_path.display())))?;
    let mut serial = String::new();
    let mut timed_out = false;
    let mut killed = false;
    loop {
        let exited = child
            .try_wait()
            .map_err(|err| XtaskError::failed(format!("waiting for Bochs: {err}")))?
            .is_some();
        let fresh = read_new(&mut serial_file, &mut serial);
        if config.echo && !fresh.is_empty() {
            print!("{fresh}");
            let _ = std::io::stdout().flush();
        }
        if exited {
            break;
        }
        if !verdict_seen && exit_line(&serial).is_some() {
            // The kernel is done; the power-off should follow at once.
            verdict_seen = true;
            deadline = deadline.min(Instant::now() + POWER_OFF_GRACE);
        }
        if Instant::now() >= deadline {
            timed_out = !verdict_seen;
            let group = rustix::process::Pid::from_raw(child.id() as i32);
            if let Some(group) = group {
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            let _ = child.wait();
            killed = true;
            break;
        }
        // Polling the serial file (Bochs writes it as the guest prints).
        std::thread::sleep(Duration::from_millis(100));
    }
    let elapsed = started.elapsed();
    let fresh = read_new(&mut serial_file, &mut serial);
    if config.echo {
        print!("{fresh}");
        if !serial.is_empty() && !serial.ends_with('\n') {
            println!();
        }
        let _ = std::io::stdout().flush();
    }
    let exit = exit_line(&serial);
    let no_power_off = verdict_seen && !timed_out && killed;
    Ok(BochsOutcome {
        no_power_off,
        checksum_checks: laplace_check::check_serial(&serial),
        serial,
        exit,
        timed_out,
        elapsed,
    })
}

/// The kernel's verdict, from its exit line.
fn exit_line(serial: &str) -> Option<ExitCode> {
    serial
        .lines()
        .filter_map(strip_core_prefix)
        .find_map(|(_core, message)| ExitLine::parse(message))
        .map(|line| line.0)
}

/// Appends what `file` gained since the last call to `serial` and returns
/// it (lossy UTF-8; a serial port may cut a character).
fn read_new(file: &mut fs::File, serial: &mut String) -> String {
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    let fresh = String::from_utf8_lossy(&bytes).into_owned();
    serial.push_str(&fresh);
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bochsrc_names_the_cores_memory_image_and_serial_file() {
        let rc = bochsrc(
            4,
            Path::new("/tmp/x/vigil-bios.img"),
            Path::new("/tmp/x/serial.txt"),
            Path::new("/tmp/x/bochs.log"),
        );
        assert!(rc.contains("megs: 144\n"), "{rc}");
        assert!(rc.contains("cpu: count=4,"), "{rc}");
        assert!(rc.contains("path=\"/tmp/x/vigil-bios.img\""), "{rc}");
        assert!(
            rc.contains("com1: enabled=1, mode=file, dev=\"/tmp/x/serial.txt\""),
            "{rc}"
        );
    }

    #[test]
    fn the_verdict_comes_from_the_kernel_line_and_the_checksums() {
        let outcome = |exit, timed_out| BochsOutcome {
            serial: String::new(),
            exit,
            timed_out,
            no_power_off: false,
            elapsed: Duration::ZERO,
            checksum_checks: Vec::new(),
        };
        assert!(outcome(Some(ExitCode::Success), false).is_success());
        assert!(!outcome(Some(ExitCode::Panic), false).is_success());
        assert!(!outcome(None, true).is_success());
        assert_eq!(
            outcome(Some(ExitCode::Success), false).verdict_line(),
            "vigil: ok (success: exit code 0x10, under Bochs)"
        );
        assert!(outcome(None, true).verdict_line().contains("timeout"));
    }
}
