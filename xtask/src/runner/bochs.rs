//! Booting the BIOS image under Bochs (`--emulator bochs`): an x86
//! implementation independent of QEMU. Bochs has no fw_cfg and no
//! `isa-debug-exit`, so the image carries its boot parameters (the
//! bootloader's ramdisk, see `kernel_build::build_kernel_with_params`) and
//! the kernel ends the run with an ACPI power-off after printing its
//! verdict line (`vigil: exit 0x10 (success)`), which is the result read
//! here.
//!
//! Debian's Bochs needs an X display for the bootloader's VESA mode (an
//! `Xvfb` xtask starts and ends with the boot, [`super::bochs_processes`])
//! and is built with its debugger, which waits for a
//! command at start: `-rc` feeds it the commands that run the machine.
//!
//! With the debugger compiled in, Bochs's own SMP loop (the one that reads
//! `cpu: quantum=`) never runs: the debugger's commands run the CPUs
//! (Bochs 2.7, `bx_debug/dbg_main.cc`). `continue` gives each CPU a turn
//! of 5 instructions (`BX_DBG_DEFAULT_ICOUNT_QUANTUM`, fixed at build
//! time), CPU 0 first, then advances the clock by the longest turn; `s
//! all N` gives each CPU a turn of 1 instruction and advances the clock
//! by 1, N times. Either stops after the turn in which a breakpoint or
//! watchpoint fired, but `continue` cuts that CPU's turn short and starts
//! the next turns from CPU 0 again, so every stop moves the interleaving;
//! with 1-instruction turns a stop falls between two rounds of turns and
//! moves nothing. [`BochsSettings::turn`] picks the schedule; the default
//! is 1, so that `replay --explain` watches the very execution recorded.
//!
//! A Bochs boot is deterministic: with `clock: sync=none` the emulated
//! clock advances with the instructions executed (`ips` per emulated
//! second), never with the host's, CPUs take turns of a fixed length, and
//! `time0` fixes the CMOS clock's start, so the same image, core count and
//! [`BochsSettings`] print the same serial output byte for byte, however
//! loaded the host. The settings are recorded with every boot (and
//! carried by its reproduce command): `cargo xtask replay` boots it again
//! and compares.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use vigil_proto::exit_code::{ExitCode, ExitLine};

use crate::error::{Result, XtaskError};
use crate::guest::laplace_check::{self, ChecksumCheck};
use crate::guest::test_output::strip_core_prefix;
use crate::guest::verdict::{QemuExit, Verdict};
use crate::runner::bochs_processes::BootProcesses;
use crate::runner::install::find_in_path;
use crate::runner::qemu::RunOutcome;

/// Debian packages a Bochs boot needs, with the binary each provides.
pub const BOCHS_PACKAGES: [(&str, &str); 2] = [("bochs", "bochs"), ("xvfb", "Xvfb")];
/// Where Debian's `bochsbios` and `vgabios` put the ROMs.
pub const BIOS_ROM: &str = "/usr/share/bochs/BIOS-bochs-latest";
/// The VGA ROM (`vgabios`).
pub const VGA_ROM: &str = "/usr/share/bochs/VGABIOS-lgpl-latest";
/// How long Bochs may take to power off after the kernel's verdict line.
pub const POWER_OFF_GRACE: Duration = Duration::from_secs(20);

/// Every package to install for a Bochs boot.
pub const BOCHS_INSTALL: &str = "bochs bochsbios vgabios bochs-x xvfb";

/// The emulator settings that, with the image and the core count,
/// determine a Bochs boot's every instruction (the `bochsrc` always has
/// `clock: sync=none`: emulated time follows the instruction count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BochsSettings {
    /// Emulated instructions per emulated second (`cpu: ips=`): how far
    /// the guest's timers run per instruction.
    pub ips: u64,
    /// `cpu: quantum=` (Bochs's default 16): what Bochs's own SMP loop
    /// would run per turn, a loop a debugger build (Debian's) never runs,
    /// so it changes nothing here (measured: 1, 5 and 16 printed the same
    /// bytes). Kept in the `bochsrc` and reproduce commands for builds
    /// without the debugger.
    pub quantum: u32,
    /// Instructions each CPU runs per turn under the debugger that runs
    /// the machine: 1 (`s all`, the default) or 5 (`continue`). It moves
    /// the interleaving. Recordings made before this setting existed ran
    /// `continue` (hence the default when a file lacks it).
    #[serde(default = "continue_turn")]
    pub turn: u32,
    /// The CMOS clock's start, seconds since 1970 (`clock: time0=`;
    /// `local` would make a boot depend on the date).
    pub time0: u64,
}

/// 2000-01-01T00:00:00Z.
pub const DEFAULT_TIME0: u64 = 946_684_800;

/// The turn of the debugger's `continue` (`BX_DBG_DEFAULT_ICOUNT_QUANTUM`
/// in Bochs 2.7).
pub const CONTINUE_TURN: u32 = 5;

/// The turn of the debugger's `s all N`.
pub const STEP_TURN: u32 = 1;

/// What `--bochs-turn` takes.
pub const TURNS: [u32; 2] = [STEP_TURN, CONTINUE_TURN];

/// Rounds of turns one `s all` command runs (its count is 32 bits): at
/// the default `ips` over 80 emulated seconds, past any boot's timeout.
const STEP_ROUNDS: u64 = 4_000_000_000;

/// How many `s all` commands a plain boot is fed (5120 emulated seconds
/// at the default `ips`: a stuck boot ends at the host's stall limit, as
/// under `continue`).
const STEP_COMMANDS: usize = 64;

fn continue_turn() -> u32 {
    CONTINUE_TURN
}

impl Default for BochsSettings {
    fn default() -> Self {
        Self {
            ips: 50_000_000,
            quantum: 16,
            turn: STEP_TURN,
            time0: DEFAULT_TIME0,
        }
    }
}

impl BochsSettings {
    /// The command-line options that select these settings (for reproduce
    /// commands; every one is named, so a changed default cannot change
    /// the replay).
    pub fn options(&self) -> Vec<String> {
        vec![
            "--bochs-ips".to_string(),
            self.ips.to_string(),
            "--bochs-quantum".to_string(),
            self.quantum.to_string(),
            "--bochs-turn".to_string(),
            self.turn.to_string(),
            "--bochs-time0".to_string(),
            self.time0.to_string(),
        ]
    }

    /// The debugger command that runs a machine of `smp` CPUs until the
    /// next breakpoint or watchpoint (or the end) with these settings'
    /// turn. One CPU has no turns: `continue` (Bochs 2.7's `s all` takes
    /// CPU -1 for its only CPU there and crashes).
    pub fn resume_command(&self, smp: u32) -> String {
        if self.turn == CONTINUE_TURN || smp == 1 {
            "continue".to_string()
        } else {
            format!("s all {STEP_ROUNDS}")
        }
    }

    /// The debugger commands of a plain boot of `smp` CPUs: run to the
    /// end.
    pub fn run_commands(&self, smp: u32) -> String {
        let resume = self.resume_command(smp);
        let count = if resume == "continue" {
            1
        } else {
            STEP_COMMANDS
        };
        format!("{resume}\n").repeat(count)
    }
}

/// Parses `--bochs-turn`: 1 (`s all`) or 5 (`continue`).
pub fn parse_turn(text: &str) -> std::result::Result<u32, String> {
    let turn: u32 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number (--bochs-turn)"))?;
    if TURNS.contains(&turn) {
        Ok(turn)
    } else {
        Err(format!(
            "--bochs-turn must be {STEP_TURN} (`s all`) or {CONTINUE_TURN} (`continue`): the two turns Bochs's debugger runs CPUs in"
        ))
    }
}

/// Parses `--bochs-ips`: 1 000 000 to 4 000 000 000.
pub fn parse_ips(text: &str) -> std::result::Result<u64, String> {
    parse_in(text, 1_000_000..=4_000_000_000, "--bochs-ips")
}

/// Parses `--bochs-quantum`: 1 to 32 (Bochs's limit).
pub fn parse_quantum(text: &str) -> std::result::Result<u32, String> {
    parse_in(
        text,
        u64::from(*QUANTUM_RANGE.start())..=u64::from(*QUANTUM_RANGE.end()),
        "--bochs-quantum",
    )
    .map(|quantum| quantum as u32)
}

/// What `--bochs-quantum` takes.
pub const QUANTUM_RANGE: std::ops::RangeInclusive<u32> = 1..=32;

/// Parses `--bochs-time0`: seconds since 1970, up to 2100.
pub fn parse_time0(text: &str) -> std::result::Result<u64, String> {
    parse_in(text, 0..=4_102_444_800, "--bochs-time0")
}

fn parse_in(
    text: &str,
    range: std::ops::RangeInclusive<u64>,
    option: &str,
) -> std::result::Result<u64, String> {
    let value: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number ({option})"))?;
    crate::guest::settings::in_range(value, &range, option)
}

/// One Bochs boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BochsConfig {
    /// Cores.
    pub smp: u32,
    /// Kill Bochs after this long.
    pub timeout_s: u64,
    /// Kill Bochs when the guest, once it has printed, prints nothing for
    /// this long (`None`: only the timeout).
    pub stall_s: Option<u64>,
    /// Print the serial port as it comes.
    pub echo: bool,
    /// The settings that fix the interleaving.
    pub settings: BochsSettings,
    /// Bochs debugger commands to run instead of a plain `continue`
    /// (breakpoints, watchpoints, memory reads); what the debugger prints
    /// comes back in [`BochsOutcome::debugger_log`].
    pub debugger_commands: Option<String>,
}

impl BochsConfig {
    /// `smp` cores, `timeout_s`, quiet, no stall limit, default settings.
    pub fn new(smp: u32, timeout_s: u64) -> Self {
        Self {
            smp,
            timeout_s,
            stall_s: None,
            echo: false,
            settings: BochsSettings::default(),
            debugger_commands: None,
        }
    }
}

/// How a Bochs boot ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BochsOutcome {
    /// Everything the kernel printed on the serial port (lossy UTF-8 of
    /// [`Self::serial_bytes`]).
    pub serial: String,
    /// The serial port's bytes, exactly.
    pub serial_bytes: Vec<u8>,
    /// The kernel's verdict line, if it printed one.
    pub exit: Option<ExitCode>,
    /// Whether we killed Bochs at the timeout.
    pub timed_out: bool,
    /// Whether we killed Bochs because the guest printed nothing for the
    /// stall limit.
    pub stalled: bool,
    /// Whether the kernel printed its verdict but Bochs did not power off
    /// within [`POWER_OFF_GRACE`] (we killed it then).
    pub no_power_off: bool,
    /// Wall time from start to exit.
    pub elapsed: Duration,
    /// Laplace/floor results checked against the host.
    pub checksum_checks: Vec<ChecksumCheck>,
    /// The `bochsrc` it ran with (its paths in a scratch directory, gone).
    pub bochsrc: String,
    /// What the debugger printed (`-dbglog`), when the boot ran
    /// [`BochsConfig::debugger_commands`].
    pub debugger_log: Option<String>,
}

/// How xtask starts Bochs (in a scratch directory holding `bochsrc` and
/// the debugger's commands).
pub fn command_line() -> &'static str {
    "bochs -q -f bochsrc -rc debugger-commands (DISPLAY: an Xvfb of its own)"
}

impl BochsOutcome {
    /// Success: the kernel said so, and every checksum matched the host.
    pub fn is_success(&self) -> bool {
        self.exit == Some(ExitCode::Success)
            && self.checksum_checks.iter().all(ChecksumCheck::matches)
    }

    /// The outcome in the QEMU runner's terms, for the campaigns' classes:
    /// the kernel's verdict line stands for QEMU's exit status.
    pub fn run_outcome(&self, config: &BochsConfig, command_line: String) -> RunOutcome {
        let exit = match (self.exit, self.stalled, self.timed_out) {
            (Some(code), _, _) => QemuExit::Status(i32::from(code.code()) << 1 | 1),
            (None, true, _) => QemuExit::Stalled {
                stall_s: config.stall_s.unwrap_or(config.timeout_s),
            },
            (None, false, true) => QemuExit::TimedOut {
                timeout_s: config.timeout_s,
            },
            // Powered off or reset without the verdict line: a triple
            // fault under QEMU's terms.
            (None, false, false) => QemuExit::Status(0),
        };
        let mut verdict = Verdict::from_exit(exit);
        if verdict.is_success() && laplace_check::first_mismatch(&self.checksum_checks).is_some() {
            verdict = Verdict::ChecksumMismatch;
        }
        RunOutcome {
            verdict,
            exit,
            exit_status: None,
            serial: self.serial.clone(),
            qemu_stderr: String::new(),
            elapsed: self.elapsed,
            command_line,
            registers_at_timeout: None,
            examination: None,
            checksum_checks: self.checksum_checks.clone(),
            marks: Vec::new(),
            ipi_oracle: None,
        }
    }

    /// The closing line: `vigil: ok (...)` or `vigil: FAILED (...)`.
    pub fn verdict_line(&self) -> String {
        let why = match (self.exit, self.timed_out) {
            (None, _) if self.stalled => {
                "Bochs killed: no serial output for the stall limit, no verdict line".to_string()
            }
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
pub fn bochsrc(
    smp: u32,
    settings: &BochsSettings,
    image: &Path,
    serial: &Path,
    log: &Path,
) -> String {
    let megs = 128 + 4 * smp;
    let BochsSettings {
        ips,
        quantum,
        time0,
        turn: _,
    } = settings;
    format!(
        "megs: {megs}\n\
         cpu: count={smp}, ips={ips}, quantum={quantum}, reset_on_triple_fault=0\n\
         romimage: file={BIOS_ROM}\n\
         vgaromimage: file={VGA_ROM}\n\
         ata0-master: type=disk, path=\"{}\", mode=flat\n\
         boot: disk\n\
         com1: enabled=1, mode=file, dev=\"{}\"\n\
         log: \"{}\"\n\
         display_library: x\n\
         clock: sync=none, time0={time0}\n",
        image.display(),
        serial.display(),
        log.display()
    )
}

/// Times xtask starts Bochs before giving up when it exits at once with
/// no output (it failed before the guest ran: Bochs's own start, or its
/// display going away).
const START_ATTEMPTS: u32 = 3;

/// Boots `bios_image` (which must carry its parameters) under Bochs. A
/// Bochs that ends without printing anything and with a failure status
/// (it never started the guest) is started again, up to
/// [`START_ATTEMPTS`] times, then an error naming what it said.
pub fn run(config: &BochsConfig, bios_image: &Path) -> Result<BochsOutcome> {
    if let Some(why) = missing() {
        return Err(XtaskError::usage(why));
    }
    let mut attempt = 1;
    loop {
        match boot_once(config, bios_image)? {
            Boot::Ran(outcome) => return Ok(outcome),
            Boot::DidNotStart(why) if attempt < START_ATTEMPTS => {
                eprintln!("xtask: Bochs did not start ({why}); starting it again");
                attempt += 1;
                std::thread::sleep(Duration::from_secs(2));
            }
            Boot::DidNotStart(why) => {
                return Err(XtaskError::failed(format!(
                    "Bochs did not start in {START_ATTEMPTS} attempts: {why}"
                )));
            }
        }
    }
}

/// One start of Bochs.
enum Boot {
    /// The guest ran (whatever it printed).
    Ran(BochsOutcome),
    /// Bochs failed before the guest printed anything: what it said on
    /// stderr.
    DidNotStart(String),
}

fn boot_once(config: &BochsConfig, bios_image: &Path) -> Result<Boot> {
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
    let rc_text = bochsrc(
        config.smp,
        &config.settings,
        &image,
        &serial_path,
        &log_path,
    );
    write(&rc, &rc_text)?;
    write(&serial_path, "")?;
    let run_commands = config.settings.run_commands(config.smp);
    write(
        &commands,
        config.debugger_commands.as_deref().unwrap_or(&run_commands),
    )?;
    let debugger_log_path = dir.join("debugger.log");

    // Xvfb first (Debian's Bochs draws on an X display), then Bochs on
    // it; both die with this boot, however it ends (`bochs_processes`).
    let stderr_path = dir.join("xvfb.stderr");
    let mut processes = BootProcesses::start_xvfb(&stderr_path)?;
    let bochs_stderr_path = dir.join("bochs.stderr");
    let bochs_stderr = fs::File::create(&bochs_stderr_path).map_err(|err| {
        XtaskError::failed(format!("creating {}: {err}", bochs_stderr_path.display()))
    })?;
    let mut command = Command::new("bochs");
    command
        .args(["-q", "-f"])
        .arg(&rc)
        .arg("-rc")
        .arg(&commands);
    if config.debugger_commands.is_some() {
        command.arg("-dbglog").arg(&debugger_log_path);
    }
    command
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(bochs_stderr);
    eprintln!(
        "xtask: booting under Bochs ({} cores) on X display {}: bochs -q -f {} -rc {}",
        config.smp,
        processes.display(),
        rc.display(),
        commands.display()
    );
    let started = Instant::now();
    processes.start_bochs(command)?;
    let mut deadline = started + Duration::from_secs(config.timeout_s);
    let mut verdict_seen = false;
    let mut serial_file = fs::File::open(&serial_path)
        .map_err(|err| XtaskError::failed(format!("opening {}: {err}", serial_path.display())))?;
    let mut serial = Vec::new();
    let mut last_output = started;
    let mut stalled = false;
    let mut timed_out = false;
    let mut killed = false;
    let mut status;
    loop {
        status = processes.try_wait_bochs()?;
        let exited = status.is_some();
        let fresh = read_new(&mut serial_file, &mut serial);
        if !fresh.is_empty() {
            last_output = Instant::now();
        }
        if config.echo && !fresh.is_empty() {
            print!("{}", String::from_utf8_lossy(&fresh));
            let _ = std::io::stdout().flush();
        }
        if exited {
            break;
        }
        if !verdict_seen && exit_line(&String::from_utf8_lossy(&serial)).is_some() {
            // The kernel is done; the power-off should follow at once.
            verdict_seen = true;
            deadline = deadline.min(Instant::now() + POWER_OFF_GRACE);
        }
        // The stall clock starts at the kernel's first line: before it,
        // the BIOS and the bootloader read the kernel through the disk
        // (over a minute at 8 cores on a loaded host, printing nothing),
        // which only the timeout bounds.
        let silent = !serial.is_empty()
            && config
                .stall_s
                .is_some_and(|stall_s| last_output.elapsed() >= Duration::from_secs(stall_s));
        if Instant::now() >= deadline || (silent && !verdict_seen) {
            stalled = silent && !verdict_seen && Instant::now() < deadline;
            timed_out = !verdict_seen && !stalled;
            processes.end();
            killed = true;
            break;
        }
        // Polling the serial file (Bochs writes it as the guest prints).
        std::thread::sleep(Duration::from_millis(100));
    }
    let elapsed = started.elapsed();
    if !killed && processes.xvfb_has_exited() {
        // Bochs lost its display: whatever the guest printed, it was cut
        // by the host.
        let said = fs::read_to_string(&stderr_path).unwrap_or_default();
        let last = said.lines().rev().find(|line| !line.trim().is_empty());
        return Err(XtaskError::failed(format!(
            "Xvfb, the boot's X display, exited during the boot{}: the boot is no verdict on the guest",
            last.map(|line| format!(" (it said: {})", line.trim()))
                .unwrap_or_default()
        )));
    }
    let fresh = read_new(&mut serial_file, &mut serial);
    if config.echo {
        print!("{}", String::from_utf8_lossy(&fresh));
        if !serial.is_empty() && !serial.ends_with(b"\n") {
            println!();
        }
        let _ = std::io::stdout().flush();
    }
    if serial.is_empty() && !killed && status.is_some_and(|status| !status.success()) {
        let said = fs::read_to_string(&bochs_stderr_path).unwrap_or_default();
        let last = said.lines().rev().find(|line| !line.trim().is_empty());
        return Ok(Boot::DidNotStart(format!(
            "{}{}",
            status.map_or_else(String::new, |status| status.to_string()),
            last.map(|line| format!(": {}", line.trim()))
                .unwrap_or_default()
        )));
    }
    let text = String::from_utf8_lossy(&serial).into_owned();
    let exit = exit_line(&text);
    let no_power_off = verdict_seen && !timed_out && killed;
    Ok(Boot::Ran(BochsOutcome {
        no_power_off,
        checksum_checks: laplace_check::check_serial(&text),
        serial: text,
        serial_bytes: serial,
        exit,
        timed_out,
        stalled,
        elapsed,
        bochsrc: rc_text,
        debugger_log: config.debugger_commands.is_some().then(|| {
            String::from_utf8_lossy(&fs::read(&debugger_log_path).unwrap_or_default()).into_owned()
        }),
    }))
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
/// it (bytes: a read may cut a UTF-8 character, which is decoded only once
/// the whole output is in).
fn read_new(file: &mut fs::File, serial: &mut Vec<u8>) -> Vec<u8> {
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    serial.extend_from_slice(&bytes);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bochsrc_names_the_cores_memory_image_and_serial_file() {
        let rc = bochsrc(
            4,
            &BochsSettings::default(),
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
    fn the_bochsrc_pins_every_setting_that_moves_the_interleaving() {
        let settings = BochsSettings {
            ips: 20_000_000,
            quantum: 5,
            turn: 5,
            time0: 1_000_000,
        };
        let rc = bochsrc(
            8,
            &settings,
            Path::new("a.img"),
            Path::new("s"),
            Path::new("l"),
        );
        assert!(
            rc.contains("cpu: count=8, ips=20000000, quantum=5, reset_on_triple_fault=0\n"),
            "{rc}"
        );
        assert!(rc.contains("clock: sync=none, time0=1000000\n"), "{rc}");
        assert!(!rc.contains("local"), "{rc}");
        assert_eq!(
            settings.options().join(" "),
            "--bochs-ips 20000000 --bochs-quantum 5 --bochs-turn 5 --bochs-time0 1000000"
        );
        assert_eq!(settings.run_commands(4), "continue\n");
        assert_eq!(BochsSettings::default().run_commands(1), "continue\n");
        assert_eq!(
            BochsSettings::default().run_commands(4),
            "s all 4000000000\n".repeat(64)
        );
    }

    #[test]
    fn a_bochs_boot_classes_as_a_qemu_boot_with_the_same_verdict() {
        use crate::campaign::boot_spec::BootSpec;
        use crate::campaign::run_class::{RunClass, classify};
        use crate::guest::run_output::LostWakeups;
        let serial = "[c1] LOST WAKEUP on core 1: x\n[c0] vigil: FAILED: 1 lost wakeup(s) detected by the watchdog\n[c0] vigil: exit 0x11 (check failed)\n";
        let config = BochsConfig {
            stall_s: Some(30),
            ..BochsConfig::new(4, 600)
        };
        let outcome = |exit, stalled, timed_out| BochsOutcome {
            serial: serial.to_string(),
            serial_bytes: serial.as_bytes().to_vec(),
            exit,
            timed_out,
            stalled,
            no_power_off: false,
            elapsed: Duration::ZERO,
            checksum_checks: Vec::new(),
            bochsrc: String::new(),
            debugger_log: None,
        };
        let spec = BootSpec::new(
            &crate::runner::kernel_build::BuildConfig::default(),
            4,
            crate::runner::platform::Apic::Xapic,
            Vec::new(),
            600,
            false,
        );
        let class = |bochs: &BochsOutcome| {
            let run = bochs.run_outcome(&config, command_line().to_string());
            classify(&run, &LostWakeups::parse(&run.serial), &spec)
        };
        let lost = outcome(Some(ExitCode::CheckFailed), false, false);
        assert_eq!(
            lost.run_outcome(&config, String::new()).exit,
            QemuExit::Status(35)
        );
        assert_eq!(class(&lost), RunClass::LostWakeups);
        let stalled = outcome(None, true, false);
        assert_eq!(
            stalled.run_outcome(&config, String::new()).exit,
            QemuExit::Stalled { stall_s: 30 }
        );
        assert_eq!(class(&stalled), RunClass::Stuck);
        let timed_out = BochsOutcome {
            serial: String::new(),
            ..outcome(None, false, true)
        };
        assert_eq!(class(&timed_out), RunClass::TimedOut);
    }

    #[test]
    fn settings_parse_in_range() {
        assert_eq!(parse_ips("50000000"), Ok(50_000_000));
        assert!(parse_ips("10").unwrap_err().contains("--bochs-ips"));
        assert_eq!(parse_quantum("1"), Ok(1));
        assert!(parse_quantum("0").is_err() && parse_quantum("33").is_err());
        assert_eq!(parse_time0("946684800"), Ok(DEFAULT_TIME0));
        assert!(parse_time0("local").unwrap_err().contains("whole number"));
        assert_eq!(parse_turn("1"), Ok(1));
        assert_eq!(parse_turn("5"), Ok(5));
        assert!(
            parse_turn("3")
                .unwrap_err()
                .contains("--bochs-turn must be 1")
        );
    }

    #[test]
    fn the_verdict_comes_from_the_kernel_line_and_the_checksums() {
        let outcome = |exit, timed_out| BochsOutcome {
            serial: String::new(),
            serial_bytes: Vec::new(),
            exit,
            timed_out,
            stalled: false,
            no_power_off: false,
            elapsed: Duration::ZERO,
            checksum_checks: Vec::new(),
            bochsrc: String::new(),
            debugger_log: None,
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
