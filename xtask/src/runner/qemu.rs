//! Booting the kernel under QEMU: the runner API shared by `cargo xtask run`,
//! `cargo xtask test` and the qemu-tests crate.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::diagnosis::ipi_oracle::IpiOracleCheck;
use crate::diagnosis::stuck_cores::{self, GuestExamination};
use crate::error::{Result, XtaskError};
use crate::guest::laplace_check::{self, ChecksumCheck};
use crate::guest::run_output::{DebugTableLocation, parse_debug_table_line};
use crate::guest::test_output::strip_core_prefix;
use crate::guest::verdict::{self, QemuExit, Verdict};
use crate::guest::vigil_stats::VigilStats;
use crate::runner::install;
use crate::runner::kernel_build::KernelArtifacts;
use crate::runner::linux_peer::{LinuxPeerArtifacts, kernel_cmdline};
use crate::runner::monitor::Monitor;
use crate::runner::platform::{Apic, Arch, Emulator, Machine};
use crate::runner::process::{Echo, KilledOnDrop, LineObserver};
use crate::runner::process_cpu_time;
use crate::runner::qemu_command::{BootMedia, QemuArgs, qemu_args};
use crate::runner::workspace::display_command;
use vigil_proto::linux_peer::{LinuxIdle, PEER_KEYS};

/// Default number of vCPUs.
pub const DEFAULT_SMP: u32 = 4;
/// Default run timeout.
pub const DEFAULT_TIMEOUT_S: u64 = 300;
/// How long the monitor may take to answer when we examine a hung guest.
const MONITOR_TIMEOUT: Duration = Duration::from_secs(20);

/// One boot of the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunConfig {
    /// The architecture (the kernel booted must be built for it).
    pub arch: Arch,
    /// Number of vCPUs, in [`crate::runner::platform::SMP_RANGE`].
    pub smp: u32,
    /// QEMU machine model.
    pub machine: Machine,
    /// The CPU's local APIC interface.
    pub apic: Apic,
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
    /// On timeout, examine the guest through the monitor (`info registers
    /// -a`, the debug table) before killing it.
    pub registers_on_timeout: bool,
    /// The host's stuck-core detector: when the guest prints nothing for
    /// this many seconds, examine it through the monitor and kill it (the
    /// run ends [`Verdict::Stuck`]). `None`: only the timeout applies.
    pub stall_s: Option<u64>,
    /// Serial lines to time: when a line containing one of these appears,
    /// record when (since QEMU started) and how much CPU time QEMU had used
    /// ([`RunOutcome::marks`]).
    pub marks: Vec<String>,
    /// Count the wake IPIs QEMU delivers (its trace of LAPIC writes) and
    /// compare them with the guest's count ([`RunOutcome::ipi_oracle`]); a
    /// difference turns a success into [`Verdict::IpiCountMismatch`].
    pub ipi_oracle: bool,
    /// A second limit, counted from the first line containing the mark
    /// (which is then timed as one of [`Self::marks`]): the run is killed
    /// [`MarkLimit::limit_s`] after it, as at the timeout. The Linux peer's
    /// workload limit starts at its loop, after Linux's boot.
    pub limit_after_mark: Option<MarkLimit>,
    /// Confine QEMU to the first this many host cores xtask may use
    /// (`taskset`; `None`: every core).
    pub host_cores: Option<u32>,
}

/// A limit that starts when a serial line appears.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MarkLimit {
    /// Text of the line that starts it.
    pub mark: String,
    /// Seconds from that line.
    pub limit_s: u64,
}

/// What a boot runs.
#[derive(Debug, Clone, Copy)]
pub enum Guest<'a> {
    /// Vigil's kernel (its disk images).
    Vigil(&'a KernelArtifacts),
    /// The Linux peer: Debian's kernel, the initramfs with the peer's
    /// program, and Linux's idle choice.
    LinuxPeer(&'a LinuxPeerArtifacts, LinuxIdle),
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            arch: Arch::X86_64,
            smp: DEFAULT_SMP,
            machine: Machine::Pc,
            apic: Apic::Xapic,
            uefi: false,
            timeout_s: Some(DEFAULT_TIMEOUT_S),
            gdb: false,
            params: Vec::new(),
            echo: false,
            registers_on_timeout: false,
            stall_s: None,
            marks: Vec::new(),
            ipi_oracle: false,
            limit_after_mark: None,
            host_cores: None,
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

    /// Checks what clap checks for the command line: core count (and that
    /// the machine and APIC mode can boot that many), timeout and the shape
    /// of each parameter. Errors are [`XtaskError::Usage`].
    pub fn validate(&self) -> Result<()> {
        crate::runner::platform::check_smp(self.smp).map_err(XtaskError::Usage)?;
        crate::runner::platform::check_arch(
            self.arch,
            self.machine,
            self.apic,
            self.uefi,
            Emulator::Qemu,
        )
        .map_err(XtaskError::Usage)?;
        if self.arch == Arch::X86_64 {
            crate::runner::platform::check_platform(self.smp, self.machine, self.apic)
                .map_err(XtaskError::Usage)?;
        }
        if let Some(timeout_s) = self.timeout_s {
            crate::runner::platform::parse_timeout_s(&timeout_s.to_string())
                .map_err(XtaskError::Usage)?;
        }
        if let Some(stall_s) = self.stall_s {
            crate::runner::platform::parse_stall_s(&stall_s.to_string())
                .map_err(XtaskError::Usage)?;
        }
        for param in &self.params {
            crate::guest::settings::parse_param(param).map_err(XtaskError::Usage)?;
        }
        if let Some(limit) = &self.limit_after_mark {
            crate::runner::platform::parse_timeout_s(&limit.limit_s.to_string())
                .map_err(XtaskError::Usage)?;
        }
        if let Some(count) = self.host_cores {
            crate::runner::host_cores::parse_host_cores(&count.to_string())
                .map_err(XtaskError::Usage)?;
            crate::runner::host_cores::cpu_list(
                count,
                &crate::runner::host_cores::allowed_cores()?,
            )?;
        }
        Ok(())
    }

    /// [`Self::validate`], and what the Linux peer cannot do: UEFI, gdb,
    /// the IPI oracle (it reads Vigil's statistics), and the parameters
    /// its program does not take (it has no policy, fault, chaos, backoff
    /// or watchdog).
    pub fn validate_for_linux_peer(&self) -> Result<()> {
        self.validate()?;
        let refuse = |what: &str| {
            Err(XtaskError::usage(format!(
                "--peer linux boots Debian's kernel with QEMU's loader: no {what}"
            )))
        };
        if self.arch != Arch::X86_64 {
            return refuse("--arch aarch64 (the peer is Debian's amd64 kernel)");
        }
        if self.uefi {
            return refuse("--uefi (the loader boots it directly)");
        }
        if self.gdb {
            return refuse("--gdb (debug Vigil's kernel with it)");
        }
        if self.ipi_oracle {
            return refuse("--ipi-oracle (it counts Vigil's wake IPIs)");
        }
        for param in &self.params {
            let key = param.split_once('=').map_or(param.as_str(), |(key, _)| key);
            if !PEER_KEYS.iter().any(|peer_key| peer_key.name() == key) {
                let keys: Vec<&str> = PEER_KEYS.iter().map(|key| key.name()).collect();
                return Err(XtaskError::usage(format!(
                    "--peer linux: `{param}` is Vigil's; the peer takes {}",
                    keys.join(", ")
                )));
            }
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
    /// `info registers -a` taken at the timeout or stall, if asked for (or
    /// why it could not be taken).
    pub registers_at_timeout: Option<String>,
    /// The stuck-core examination made before a stalled (or, if asked,
    /// timed-out) guest was killed.
    pub examination: Option<GuestExamination>,
    /// Every `laplace:`/`floor:` result checked against the host's
    /// computation; a mismatch turns a success into
    /// [`Verdict::ChecksumMismatch`].
    pub checksum_checks: Vec<ChecksumCheck>,
    /// The lines [`RunConfig::marks`] asked to time, in order.
    pub marks: Vec<LineMark>,
    /// QEMU's count of wake IPIs against the guest's, when
    /// [`RunConfig::ipi_oracle`] asked for it and the guest printed its
    /// statistics (either APIC mode).
    pub ipi_oracle: Option<IpiOracleCheck>,
}

/// When a marked serial line appeared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LineMark {
    /// The [`RunConfig::marks`] text it contains.
    pub mark: String,
    /// The whole line.
    pub line: String,
    /// Seconds since QEMU was spawned.
    pub at_s: f64,
    /// QEMU's CPU time (user + system, all threads) at that moment, s.
    pub qemu_cpu_s: Option<f64>,
}

impl RunOutcome {
    /// One-line reason, e.g. `panic: exit code 0x12` or `checksum
    /// mismatch: ...`.
    pub fn reason(&self) -> String {
        match (
            self.verdict,
            laplace_check::first_mismatch(&self.checksum_checks),
        ) {
            (Verdict::ChecksumMismatch, Some(check)) => {
                format!("checksum mismatch: {}", check.describe())
            }
            (Verdict::IpiCountMismatch, _) => format!(
                "IPI count mismatch: {}",
                self.ipi_oracle
                    .map_or_else(|| "no comparison".to_string(), |check| check.describe())
            ),
            _ => verdict::reason(self.exit),
        }
    }

    /// `vigil: ok (...)` or `vigil: FAILED (...)`.
    pub fn verdict_line(&self) -> String {
        if self.verdict.is_success() {
            format!("vigil: ok ({})", self.reason())
        } else {
            format!("vigil: FAILED ({})", self.reason())
        }
    }

    /// The first [`LineMark`] for `mark`.
    pub fn mark(&self, mark: &str) -> Option<&LineMark> {
        self.marks.iter().find(|line_mark| line_mark.mark == mark)
    }
}

/// What the serial reader learns while the guest runs.
#[derive(Debug)]
struct LiveRun {
    last_output: Instant,
    /// A serial line came (the bootloader's or the kernel's): from then on
    /// the stall limit is the configured one (see [`stall_limit`]).
    printed_anything: bool,
    debug_table: Option<DebugTableLocation>,
    marks: Vec<LineMark>,
}

impl LiveRun {
    /// A run that has printed nothing yet, started at `started`.
    fn new(started: Instant) -> Self {
        Self {
            last_output: started,
            printed_anything: false,
            debug_table: None,
            marks: Vec::new(),
        }
    }
}

fn lock(live: &Mutex<LiveRun>) -> MutexGuard<'_, LiveRun> {
    live.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The serial observer: notes the time of every line, the debug table's
/// address, and the marked lines (with QEMU's CPU time, sampled right
/// there on the reader thread).
fn observe_serial(
    live: Arc<Mutex<LiveRun>>,
    marks: Vec<String>,
    started: Instant,
    pid: u32,
) -> LineObserver {
    Box::new(move |line: &str| {
        let now = Instant::now();
        let message = strip_core_prefix(line).map(|(_core, message)| message.trim_end());
        let location = message.and_then(parse_debug_table_line);
        let hits: Vec<&String> = marks
            .iter()
            .filter(|mark| line.contains(mark.as_str()))
            .collect();
        let qemu_cpu_s = (!hits.is_empty())
            .then(|| process_cpu_time::cpu_time(pid).ok())
            .flatten()
            .map(|cpu| cpu.as_secs_f64());
        let mut live = lock(&live);
        live.last_output = now;
        live.printed_anything = true;
        if location.is_some() {
            live.debug_table = location;
        }
        for mark in hits {
            live.marks.push(LineMark {
                mark: mark.clone(),
                line: line.trim_end().to_string(),
                at_s: now.duration_since(started).as_secs_f64(),
                qemu_cpu_s,
            });
        }
    })
}

/// Boots `kernel` as `config` says and waits for it to end. Errors are
/// reserved for not being able to run QEMU at all; everything the guest
/// does (including hanging) is a [`RunOutcome`].
pub fn run(config: &RunConfig, kernel: &KernelArtifacts) -> Result<RunOutcome> {
    run_guest(config, Guest::Vigil(kernel))
}

/// Boots `guest` as `config` says and waits for it to end, as [`run`]
/// does. A Linux peer is never examined through the monitor (the
/// examination reads Vigil's debug table) and has no IPI oracle.
pub fn run_guest(config: &RunConfig, guest: Guest<'_>) -> Result<RunOutcome> {
    match guest {
        Guest::Vigil(kernel) => {
            config.validate()?;
            if kernel.arch != config.arch {
                return Err(XtaskError::usage(format!(
                    "a kernel built for {} cannot boot as {}",
                    kernel.arch, config.arch
                )));
            }
        }
        Guest::LinuxPeer(..) => config.validate_for_linux_peer()?,
    }
    let qemu = install::find_in_path(config.arch.qemu_binary()).ok_or_else(|| {
        XtaskError::usage(format!(
            "{} not found: install the Debian package {}",
            config.arch.qemu_binary(),
            config.arch.qemu_package()
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
    // AArch64 boots the ELF itself (`-kernel`, read once, never locked).
    let disk_image = match (guest, config.arch) {
        (Guest::Vigil(kernel), Arch::X86_64) => {
            let disk_image = run_dir.path().join("disk.img");
            let source_image = kernel.image(config.uefi);
            fs::copy(source_image, &disk_image).map_err(|err| {
                XtaskError::failed(format!("copying {}: {err}", source_image.display()))
            })?;
            disk_image
        }
        (Guest::Vigil(kernel), Arch::Aarch64) => kernel.image_elf.clone(),
        (Guest::LinuxPeer(..), _) => PathBuf::new(),
    };
    let linux_cmdline = match guest {
        Guest::Vigil(_) => String::new(),
        Guest::LinuxPeer(_, idle) => kernel_cmdline(idle, &config.params),
    };
    let boot = match guest {
        Guest::Vigil(_) => BootMedia::Disk(&disk_image),
        Guest::LinuxPeer(peer, _) => BootMedia::LinuxKernel {
            kernel: &peer.kernel,
            initrd: &peer.initramfs,
            cmdline: &linux_cmdline,
        },
    };
    let monitor_socket = run_dir.path().join("monitor.sock");
    let trace_file = run_dir.path().join("qemu-trace.log");

    let mut command = crate::runner::host_cores::command_on(&qemu, config.host_cores)?;
    command.args(qemu_args(&QemuArgs {
        arch: config.arch,
        smp: config.smp,
        machine: config.machine,
        apic: config.apic,
        boot,
        ovmf: ovmf.as_deref(),
        monitor_socket: &monitor_socket,
        params: &config.params,
        gdb: config.gdb,
        ipi_trace: config.ipi_oracle.then(|| {
            (
                trace_file.as_path(),
                crate::diagnosis::ipi_oracle::trace_event(config.arch),
            )
        }),
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
    let live = Arc::new(Mutex::new(LiveRun::new(started)));
    let mut marks = config.marks.clone();
    if let Some(limit) = &config.limit_after_mark
        && !marks.contains(&limit.mark)
    {
        marks.push(limit.mark.clone());
    }
    let child = KilledOnDrop::spawn_observed(command, echo_serial, echo_stderr, |pid| {
        observe_serial(Arc::clone(&live), marks, started, pid)
    })
    .map_err(|err| XtaskError::failed(format!("could not start QEMU: {err}")))?;
    let our_kill = wait_for_end(&child, config, started, &live)
        .map_err(|err| XtaskError::failed(format!("waiting for QEMU: {err}")))?;
    let examine = match our_kill {
        Some(QemuExit::Stalled { .. }) => true,
        Some(_) => config.registers_on_timeout,
        None => false,
    };
    let examination = match guest {
        Guest::Vigil(kernel) if examine => {
            let location = lock(&live).debug_table;
            Some(examine_guest(
                &monitor_socket,
                location,
                &kernel.elf,
                config.arch,
            ))
        }
        _ => None,
    };
    let finished = child
        .finish_as(our_kill)
        .map_err(|err| XtaskError::failed(format!("reaping QEMU: {err}")))?;
    let elapsed = started.elapsed();

    let checksum_checks = laplace_check::check_serial(&finished.stdout);
    let ipi_oracle = if config.ipi_oracle && matches!(guest, Guest::Vigil(_)) {
        ipi_oracle_check(config.arch, &trace_file, &finished.stdout)?
    } else {
        None
    };
    let verdict = match Verdict::from_exit(finished.exit) {
        Verdict::Success if laplace_check::first_mismatch(&checksum_checks).is_some() => {
            Verdict::ChecksumMismatch
        }
        Verdict::Success if ipi_oracle.is_some_and(|check| !check.matches()) => {
            Verdict::IpiCountMismatch
        }
        verdict => verdict,
    };
    let marks = std::mem::take(&mut lock(&live).marks);
    Ok(RunOutcome {
        verdict,
        exit: finished.exit,
        exit_status: match finished.exit {
            QemuExit::Status(status) => Some(status),
            _ => None,
        },
        serial: finished.stdout,
        qemu_stderr: finished.stderr,
        elapsed,
        command_line,
        registers_at_timeout: examination
            .as_ref()
            .map(|examination| examination.registers_text.clone()),
        examination,
        checksum_checks,
        marks,
        ipi_oracle,
    })
}

/// Compares QEMU's trace with the guest's statistics: `None` when the
/// guest printed none (a failed boot).
fn ipi_oracle_check(arch: Arch, trace_file: &Path, serial: &str) -> Result<Option<IpiOracleCheck>> {
    let Some(Ok(stats)) = VigilStats::find_in(serial) else {
        return Ok(None);
    };
    let trace = fs::read_to_string(trace_file).map_err(|err| {
        XtaskError::failed(format!(
            "reading QEMU's trace {}: {err} (does this QEMU have the log trace backend?)",
            trace_file.display()
        ))
    })?;
    Ok(Some(IpiOracleCheck::new(arch, &trace, &stats)))
}

/// The shortest stall limit before the guest's first line: the firmware
/// and the bootloader's loading of the image print nothing, and took over
/// 30 s at 16 and 32 vCPUs (the guest still in SeaBIOS, real mode, when
/// it was examined: 2 of 60 boots of a busy-searcher campaign, one QEMU at
/// a time on the 2-core host).
pub const FIRST_LINE_GRACE: Duration = Duration::from_secs(120);

/// The quiet period after which a guest counts as stalled: the configured
/// limit once it has printed a line, at least [`FIRST_LINE_GRACE`] before.
fn stall_limit(limit: Duration, printed_anything: bool) -> Duration {
    if printed_anything {
        limit
    } else {
        limit.max(FIRST_LINE_GRACE)
    }
}

/// When the guest counts as stalled if it prints nothing more, and the
/// quiet period that is then (the configured limit, or the first-line
/// grace): read from one snapshot of the live run (one lock, released
/// before returning).
fn stall_deadline(live: &Mutex<LiveRun>, limit: Duration) -> (Instant, Duration) {
    let (last_output, printed_anything) = {
        let live = lock(live);
        (live.last_output, live.printed_anything)
    };
    let limit = stall_limit(limit, printed_anything);
    (last_output + limit, limit)
}

/// Waits until QEMU exits (`None`), the timeout passes or the guest has
/// printed nothing for the stall limit (`Some(how we will kill it)`).
fn wait_for_end(
    child: &KilledOnDrop,
    config: &RunConfig,
    started: Instant,
    live: &Mutex<LiveRun>,
) -> std::io::Result<Option<QemuExit>> {
    let deadline = config
        .timeout_s
        .map(|timeout_s| started + Duration::from_secs(timeout_s));
    let stall = config.stall_s.map(Duration::from_secs);
    loop {
        // Before the first line the stall deadline is FIRST_LINE_GRACE
        // away, but a line may come at any moment and make it the
        // configured limit: the wait is cut to that limit, so the deadline
        // is read again at least that often (no line wakes this wait).
        let now = Instant::now();
        let stall_at = stall.map(|limit| stall_deadline(live, limit).0.min(now + limit));
        // The same for the limit after a mark: until its line comes, the
        // wait is cut to MARK_POLL, so the limit starts at most that late.
        let after_mark = config
            .limit_after_mark
            .as_ref()
            .map(|limit| mark_deadline(live, started, limit).unwrap_or(now + MARK_POLL));
        let next = deadline.into_iter().chain(stall_at).chain(after_mark).min();
        let wait = next.map(|next| next.saturating_duration_since(Instant::now()));
        if child.wait_for_exit(wait)? {
            return Ok(None);
        }
        let now = Instant::now();
        if let (Some(deadline), Some(timeout_s)) = (deadline, config.timeout_s)
            && now >= deadline
        {
            return Ok(Some(QemuExit::TimedOut { timeout_s }));
        }
        if let Some(limit) = &config.limit_after_mark
            && mark_deadline(live, started, limit).is_some_and(|at| now >= at)
        {
            return Ok(Some(QemuExit::TimedOut {
                timeout_s: limit.limit_s,
            }));
        }
        if let Some(limit) = stall {
            // Output may have arrived while we waited: only a full quiet
            // period counts, measured again from a fresh snapshot. The
            // report gives the quiet period that applied (the grace, for a
            // guest that never printed).
            let (stall_at, quiet) = stall_deadline(live, limit);
            if now >= stall_at {
                return Ok(Some(QemuExit::Stalled {
                    stall_s: quiet.as_secs(),
                }));
            }
        }
    }
}

/// How often the wait looks for the line a [`MarkLimit`] starts at.
const MARK_POLL: Duration = Duration::from_secs(1);

/// When `limit` runs out: its mark's time plus its seconds (`None`: the
/// line has not come yet).
fn mark_deadline(live: &Mutex<LiveRun>, started: Instant, limit: &MarkLimit) -> Option<Instant> {
    let at_s = lock(live)
        .marks
        .iter()
        .find(|mark| mark.mark == limit.mark)?
        .at_s;
    Some(started + Duration::from_secs_f64(at_s) + Duration::from_secs(limit.limit_s))
}

/// Stops a hung guest and examines it (registers, debug table, symbols).
fn examine_guest(
    monitor_socket: &Path,
    location: Option<DebugTableLocation>,
    elf: &Path,
    arch: Arch,
) -> GuestExamination {
    match Monitor::connect(monitor_socket, MONITOR_TIMEOUT) {
        Ok(mut monitor) => stuck_cores::examine(&mut monitor, location, elf, arch),
        Err(err) => GuestExamination {
            registers_text: format!("<could not read registers from the monitor: {err}>"),
            notes: vec![format!("could not connect to the monitor: {err}")],
            ..GuestExamination::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::process::Command;

    #[test]
    fn the_stall_limit_waits_for_the_first_line_then_is_the_configured_one() {
        let limit = Duration::from_secs(20);
        assert_eq!(stall_limit(limit, false), FIRST_LINE_GRACE);
        assert_eq!(stall_limit(limit, true), limit);
        let long = Duration::from_secs(600);
        assert_eq!(stall_limit(long, false), long);
        let started = Instant::now();
        let live = Arc::new(Mutex::new(LiveRun::new(started)));
        assert_eq!(
            stall_deadline(&live, limit),
            (started + FIRST_LINE_GRACE, FIRST_LINE_GRACE)
        );
        let mut observe = observe_serial(Arc::clone(&live), Vec::new(), started, 0);
        observe("vigil: booting\n");
        // The line's time, from one snapshot (a second lock of the live
        // run in the same expression would deadlock here).
        let last_output = lock(&live).last_output;
        assert_eq!(stall_deadline(&live, limit), (last_output + limit, limit));
    }

    /// `wait_for_end` on `sh -c script` standing in for QEMU, its stdout
    /// watched as the guest's serial port; also whether a line was seen.
    fn wait_for_script(script: &str, timeout_s: u64, stall_s: u64) -> (Option<QemuExit>, bool) {
        let config = RunConfig {
            timeout_s: Some(timeout_s),
            stall_s: Some(stall_s),
            ..RunConfig::default()
        };
        let started = Instant::now();
        let live = Arc::new(Mutex::new(LiveRun::new(started)));
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        let child = KilledOnDrop::spawn_observed(command, Echo::Off, Echo::Off, |pid| {
            observe_serial(Arc::clone(&live), Vec::new(), started, pid)
        })
        .unwrap();
        let exit = wait_for_end(&child, &config, started, &live).unwrap();
        let printed = lock(&live).printed_anything;
        (exit, printed)
    }

    /// A child that prints one line and then nothing: a stall, caught
    /// after the configured limit, not after the first-line grace (which
    /// is longer than this run's timeout, so a wait that missed the line
    /// would end as a timeout instead).
    #[test]
    fn a_guest_that_printed_a_line_and_went_quiet_is_stalled_not_timed_out() {
        let timeout_s = FIRST_LINE_GRACE.as_secs() / 2;
        let (exit, printed) =
            wait_for_script("echo 'vigil: booting'; exec sleep 600", timeout_s, 1);
        assert_eq!(exit, Some(QemuExit::Stalled { stall_s: 1 }));
        assert!(printed);
    }

    /// A child that prints nothing (firmware still loading the kernel) is
    /// not stalled after the configured limit: within the first-line grace
    /// only the timeout ends it.
    #[test]
    fn a_guest_that_never_printed_is_not_stalled_within_the_grace() {
        let (exit, printed) = wait_for_script("exec sleep 600", 3, 1);
        assert_eq!(exit, Some(QemuExit::TimedOut { timeout_s: 3 }));
        assert!(!printed);
    }

    /// A limit counted from a line: a child that prints the line and then
    /// runs on is killed after the limit, as timed out at that limit, not
    /// at the overall timeout; one that never prints it runs to the
    /// overall timeout.
    #[test]
    fn a_limit_after_a_mark_starts_at_its_line() {
        let run = |script: &str| {
            let config = RunConfig {
                timeout_s: Some(30),
                limit_after_mark: Some(MarkLimit {
                    mark: "loop starts".to_string(),
                    limit_s: 1,
                }),
                ..RunConfig::default()
            };
            let started = Instant::now();
            let live = Arc::new(Mutex::new(LiveRun::new(started)));
            let mut command = Command::new("sh");
            command.args(["-c", script]);
            let marks = vec!["loop starts".to_string()];
            let child = KilledOnDrop::spawn_observed(command, Echo::Off, Echo::Off, |pid| {
                observe_serial(Arc::clone(&live), marks, started, pid)
            })
            .unwrap();
            wait_for_end(&child, &config, started, &live).unwrap()
        };
        assert_eq!(
            run("echo '[c0] booting'; echo '[c0] loop starts'; exec sleep 600"),
            Some(QemuExit::TimedOut { timeout_s: 1 })
        );
        assert_eq!(run("echo '[c0] loop starts'; exit 0"), None);
    }

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
        assert!(matches!(bad_smp.validate(), Err(XtaskError::Usage(m)) if m.contains("1..=256")));
        let xapic_200 = RunConfig {
            smp: 200,
            machine: Machine::Q35,
            ..RunConfig::default()
        };
        assert!(
            matches!(xapic_200.validate(), Err(XtaskError::Usage(m)) if m.contains("--apic x2apic"))
        );
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
            arch: Arch::X86_64,
            elf: PathBuf::from("/nonexistent/vigil-kernel"),
            image_elf: PathBuf::from("/nonexistent/vigil-kernel"),
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
