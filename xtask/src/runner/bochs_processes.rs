//! The processes of one Bochs boot: an X server (`Xvfb`: Debian's Bochs
//! draws the bootloader's VESA mode on an X display) and Bochs on it, both
//! started by xtask, so that neither outlives the boot whichever way it
//! ends:
//!
//! - both are in one process group of their own (a Ctrl-C at the terminal
//!   reaches xtask, not Bochs's debugger, which would take it as a request
//!   to stop the guest), and [`BootProcesses`] kills that group and reaps
//!   both when it is dropped: at the end of a boot, at its timeout or stall
//!   limit, on an error returned early and on a panic;
//! - each gets SIGKILL from the kernel if the xtask thread that started it
//!   dies first (`PR_SET_PDEATHSIG`): xtask killed by SIGKILL, by SIGTERM,
//!   or by a Ctrl-C.
//!
//! Bochs used to run under `xvfb-run -a`, in a process group of its own
//! and without a death signal. Killed, xtask took nothing with it: Bochs
//! ran on, and a stray `Xvfb` (once `xvfb-run` was gone) kept the lock
//! file descriptors it inherited, `/work/locks/machine` for 50 minutes.
//! `xvfb-run` starts Xvfb in the background of a shell that only kills it
//! on a normal exit, so it cannot be trusted with its own children; and
//! `-displayfd` lets Xvfb choose a free display itself (xvfb-run's `-a`
//! could lose the race for a display number to another X server).

use std::fs;
use std::io::{self, PipeReader, Read};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, PidfdFlags, Signal, kill_process_group, pidfd_open};

use crate::error::{Result, XtaskError};

/// How long Xvfb may take to say which display it serves.
pub const XVFB_READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long Xvfb may take to exit on SIGTERM (it then removes its lock
/// file and socket) before the group gets SIGKILL.
pub const XVFB_EXIT_GRACE: Duration = Duration::from_secs(5);

/// The X server's screen (as `xvfb-run` had it).
const XVFB_SCREEN: &str = "1280x1024x24";

/// Xvfb and Bochs of one boot, killed and reaped on drop.
#[derive(Debug)]
pub struct BootProcesses {
    group: Pid,
    xvfb: Child,
    xvfb_exited: OwnedFd,
    bochs: Option<Child>,
    display: u32,
    /// Whether [`BootProcesses::end`] ran (both are reaped: their pids
    /// are no longer theirs to signal).
    ended: bool,
}

impl BootProcesses {
    /// Starts Xvfb (its stderr into `stderr`) in a new process group and
    /// waits until it serves a display.
    pub fn start_xvfb(stderr: &Path) -> Result<Self> {
        let stderr_file = fs::File::create(stderr)
            .map_err(|err| XtaskError::failed(format!("creating {}: {err}", stderr.display())))?;
        let (mut ready, ready_writer) = io::pipe()
            .map_err(|err| XtaskError::failed(format!("creating a pipe for Xvfb: {err}")))?;
        let mut command = Command::new("Xvfb");
        command
            .args(["-displayfd", "1", "-screen", "0", XVFB_SCREEN])
            .args(["-nolisten", "tcp"])
            .stdin(Stdio::null())
            .stdout(ready_writer)
            .stderr(stderr_file)
            .process_group(0);
        crate::runner::process::killed_with_this_thread(&mut command);
        let mut xvfb = command
            .spawn()
            .map_err(|err| XtaskError::failed(format!("could not start Xvfb: {err}")))?;
        // Our copy of the pipe's writing end goes with the command, so
        // that Xvfb's exit reads as the end of the pipe.
        drop(command);
        let xvfb_exited = match pidfd_open(Pid::from_child(&xvfb), PidfdFlags::empty()) {
            Ok(pidfd) => pidfd,
            Err(err) => {
                let _ = xvfb.kill();
                let _ = xvfb.wait();
                return Err(XtaskError::failed(format!("pidfd_open(Xvfb): {err}")));
            }
        };
        let mut processes = Self {
            group: Pid::from_child(&xvfb),
            xvfb,
            xvfb_exited,
            bochs: None,
            display: 0,
            ended: false,
        };
        match read_display(&mut ready, XVFB_READY_TIMEOUT) {
            Ok(display) => {
                processes.display = display;
                Ok(processes)
            }
            Err(why) => {
                // Dropping `processes` kills and reaps it.
                let said = fs::read_to_string(stderr).unwrap_or_default();
                let last = said.lines().rev().find(|line| !line.trim().is_empty());
                Err(XtaskError::failed(format!(
                    "Xvfb did not start: {why}{}",
                    last.map(|line| format!(" (it said: {})", line.trim()))
                        .unwrap_or_default()
                )))
            }
        }
    }

    /// The X display Xvfb serves (`:N`).
    pub fn display(&self) -> String {
        format!(":{}", self.display)
    }

    /// The process group both run in.
    pub fn group(&self) -> Pid {
        self.group
    }

    /// Starts `command` (Bochs) on the display, in the group.
    pub fn start_bochs(&mut self, mut command: Command) -> Result<()> {
        command
            .env("DISPLAY", self.display())
            .process_group(self.group.as_raw_nonzero().get());
        crate::runner::process::killed_with_this_thread(&mut command);
        let bochs = command
            .spawn()
            .map_err(|err| XtaskError::failed(format!("could not start Bochs: {err}")))?;
        self.bochs = Some(bochs);
        Ok(())
    }

    /// Whether Xvfb has exited (a boot whose display went away ended for
    /// the host's reasons, not the guest's).
    pub fn xvfb_has_exited(&self) -> bool {
        !self.ended && wait_readable(&self.xvfb_exited, Duration::ZERO).unwrap_or(false)
    }

    /// Bochs's exit status, if it has exited (`None`: still running, or
    /// never started).
    pub fn try_wait_bochs(&mut self) -> Result<Option<ExitStatus>> {
        match &mut self.bochs {
            Some(bochs) => bochs
                .try_wait()
                .map_err(|err| XtaskError::failed(format!("waiting for Bochs: {err}"))),
            None => Ok(None),
        }
    }

    /// Ends the boot: Bochs gets SIGKILL (if still running), Xvfb SIGTERM
    /// (it removes its lock file and socket) and, if it is still there
    /// after [`XVFB_EXIT_GRACE`], SIGKILL with the rest of the group
    /// (whatever it started); both are reaped. Returns Bochs's status.
    pub fn end(&mut self) -> Option<ExitStatus> {
        if self.ended {
            return None;
        }
        self.ended = true;
        let status = self.bochs.as_mut().and_then(|bochs| {
            let _ = bochs.kill();
            bochs.wait().ok()
        });
        let _ = rustix::process::kill_process(self.group, Signal::TERM);
        let exited = wait_readable(&self.xvfb_exited, XVFB_EXIT_GRACE).unwrap_or(false);
        if !exited {
            eprintln!(
                "xtask: Xvfb (pid {}) did not exit within {} s of SIGTERM: killed",
                self.group.as_raw_nonzero(),
                XVFB_EXIT_GRACE.as_secs()
            );
        }
        // The group's leader is not reaped yet, so the group id still
        // names this group.
        let _ = kill_process_group(self.group, Signal::KILL);
        let _ = self.xvfb.wait();
        status
    }
}

impl Drop for BootProcesses {
    fn drop(&mut self) {
        self.end();
    }
}

/// Reads Xvfb's `-displayfd` line (the display number, when it accepts
/// connections) within `timeout`.
fn read_display(ready: &mut PipeReader, timeout: Duration) -> std::result::Result<u32, String> {
    let deadline = Instant::now() + timeout;
    let mut said = Vec::new();
    while !said.contains(&b'\n') {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero()
            || !wait_readable(&*ready, remaining).map_err(|err| format!("poll: {err}"))?
        {
            return Err(format!("no display number within {} s", timeout.as_secs()));
        }
        let mut buffer = [0_u8; 32];
        match ready.read(&mut buffer) {
            Ok(0) => return Err("it exited".to_string()),
            Ok(count) => said.extend_from_slice(&buffer[..count]),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(format!("reading its display number: {err}")),
        }
    }
    let text = String::from_utf8_lossy(&said);
    text.trim()
        .parse()
        .map_err(|_| format!("it wrote `{}` for a display number", text.trim()))
}

/// Whether `fd` became readable (a pipe with data or at its end, a pidfd
/// whose process exited) within `timeout`.
fn wait_readable(fd: impl std::os::fd::AsFd, timeout: Duration) -> io::Result<bool> {
    let deadline = Instant::now() + timeout;
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let spec = Timespec::try_from(remaining).map_err(io::Error::other)?;
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        match poll(&mut fds, Some(&spec)) {
            Ok(0) if remaining.is_zero() => return Ok(false),
            Ok(0) => continue,
            Ok(_) => return Ok(true),
            Err(rustix::io::Errno::INTR) => continue,
            Err(err) => return Err(err.into()),
        }
    }
}
