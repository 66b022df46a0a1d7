//! Running QEMU as a child: killed on timeout and on drop (no orphans),
//! waited for through a pidfd (no polling loops), its output captured line
//! by line and optionally echoed live.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{Pid, PidfdFlags, Signal, pidfd_open, set_parent_process_death_signal};

use crate::verdict::QemuExit;

/// Where a child's output line is echoed as it arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// Capture only.
    Off,
    /// Also write each line to our stdout.
    Stdout,
    /// Also write each line to our stderr.
    Stderr,
}

/// A spawned child that is killed and reaped when dropped, so an early
/// return or a panic (a failing test) never leaves it running.
#[derive(Debug)]
pub struct KilledOnDrop {
    child: Child,
    pidfd: OwnedFd,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
}

/// How the child ended and everything it printed.
#[derive(Debug)]
pub struct Finished {
    /// Exit status, signal, or our timeout.
    pub exit: QemuExit,
    /// Everything written to stdout (carriage returns removed).
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
}

impl KilledOnDrop {
    /// Spawns `command` with piped stdout/stderr and no stdin. The child
    /// gets SIGKILL if the spawning thread dies first (e.g. xtask killed).
    pub fn spawn(mut command: Command, echo_stdout: Echo, echo_stderr: Echo) -> io::Result<Self> {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: the closure runs in the forked child before exec and only
        // makes one prctl(PR_SET_PDEATHSIG) system call: no allocation, no
        // locks, async-signal-safe as `pre_exec` requires.
        unsafe {
            command.pre_exec(|| {
                set_parent_process_death_signal(Some(Signal::KILL)).map_err(io::Error::from)
            });
        }
        let mut child = command.spawn()?;
        // The child is ours and not yet reaped, so its pid cannot be reused
        // before the pidfd refers to it.
        let pidfd = match pidfd_open(Pid::from_child(&child), PidfdFlags::empty()) {
            Ok(pidfd) => pidfd,
            Err(err) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(err.into());
            }
        };
        let stdout = child
            .stdout
            .take()
            .map(|out| spawn_reader(out, echo_stdout));
        let stderr = child
            .stderr
            .take()
            .map(|err| spawn_reader(err, echo_stderr));
        Ok(Self {
            child,
            pidfd,
            stdout,
            stderr,
        })
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Blocks until the child exits or `timeout` passes (`None`: no
    /// limit). Returns `true` if it exited, `false` on timeout (the child
    /// is still running then).
    pub fn wait_for_exit(&self, timeout: Option<Duration>) -> io::Result<bool> {
        let deadline = timeout.map(|timeout| Instant::now() + timeout);
        loop {
            let remaining = match deadline {
                Some(deadline) => {
                    let remaining = deadline.saturating_duration_since(Instant::now());
                    if remaining.is_zero() {
                        return Ok(false);
                    }
                    Some(Timespec::try_from(remaining).map_err(io::Error::other)?)
                }
                None => None,
            };
            let mut fds = [PollFd::new(&self.pidfd, PollFlags::IN)];
            match poll(&mut fds, remaining.as_ref()) {
                Ok(0) => continue, // re-check the deadline
                Ok(_) => return Ok(true),
                Err(rustix::io::Errno::INTR) => continue,
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// Kills the child (if still running), reaps it and collects its
    /// output. `timed_out` records that the kill is ours, for the verdict.
    pub fn finish(mut self, timed_out: Option<u64>) -> io::Result<Finished> {
        if timed_out.is_some() {
            let _ = self.child.kill();
        }
        let status = self.child.wait()?;
        let stdout = join_reader(self.stdout.take());
        let stderr = join_reader(self.stderr.take());
        let exit = match timed_out {
            Some(timeout_s) => QemuExit::TimedOut { timeout_s },
            None => exit_of(status),
        };
        Ok(Finished {
            exit,
            stdout,
            stderr,
        })
    }
}

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        // Both are no-ops once `finish` has reaped the child.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn exit_of(status: ExitStatus) -> QemuExit {
    match (status.code(), status.signal()) {
        (Some(code), _) => QemuExit::Status(code),
        (None, Some(signal)) => QemuExit::Signal(signal),
        (None, None) => QemuExit::Status(-1),
    }
}

/// Reads `source` line by line until EOF, echoing each line if asked, and
/// returns the whole text. A final line without a newline is kept.
fn spawn_reader(source: impl Read + Send + 'static, echo: Echo) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(source);
        let mut captured = String::new();
        let mut raw = Vec::new();
        loop {
            raw.clear();
            match reader.read_until(b'\n', &mut raw) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&raw).replace('\r', "");
            echo_line(echo, &line);
            captured.push_str(&line);
        }
        captured
    })
}

fn echo_line(echo: Echo, line: &str) {
    // Echo failures (a closed pipe on our side) must not stop the capture.
    let _ = match echo {
        Echo::Off => Ok(()),
        Echo::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(line.as_bytes()).and_then(|()| out.flush())
        }
        Echo::Stderr => io::stderr().lock().write_all(line.as_bytes()),
    };
}

fn join_reader(reader: Option<JoinHandle<String>>) -> String {
    reader
        .map(|handle| {
            handle
                .join()
                .unwrap_or_else(|_| "<output reader panicked>".into())
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn exit_status_and_output_are_captured() {
        let child = KilledOnDrop::spawn(
            sh("printf 'a\\r\\nb'; echo oops >&2; exit 33"),
            Echo::Off,
            Echo::Off,
        )
        .unwrap();
        assert!(child.wait_for_exit(Some(Duration::from_secs(60))).unwrap());
        let finished = child.finish(None).unwrap();
        assert_eq!(finished.exit, QemuExit::Status(33));
        assert_eq!(finished.stdout, "a\nb");
        assert_eq!(finished.stderr, "oops\n");
    }

    #[test]
    fn timeout_kills_the_child() {
        let started = Instant::now();
        let child =
            KilledOnDrop::spawn(sh("echo started; exec sleep 600"), Echo::Off, Echo::Off).unwrap();
        assert!(
            !child
                .wait_for_exit(Some(Duration::from_millis(300)))
                .unwrap()
        );
        let finished = child.finish(Some(1)).unwrap();
        assert_eq!(finished.exit, QemuExit::TimedOut { timeout_s: 1 });
        assert_eq!(finished.stdout, "started\n");
        assert!(started.elapsed() < Duration::from_secs(30));
    }

    #[test]
    fn a_signal_from_elsewhere_is_reported_as_such() {
        let child = KilledOnDrop::spawn(sh("kill -TERM $$"), Echo::Off, Echo::Off).unwrap();
        assert!(child.wait_for_exit(Some(Duration::from_secs(60))).unwrap());
        assert_eq!(child.finish(None).unwrap().exit, QemuExit::Signal(15));
    }

    #[test]
    fn dropping_kills_the_child() {
        let child = KilledOnDrop::spawn(sh("exec sleep 600"), Echo::Off, Echo::Off).unwrap();
        let pid = child.id();
        drop(child);
        // Reaped by the drop: the pid no longer names our child.
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
        assert!(
            status.map(|s| !s.contains("sleep")).unwrap_or(true),
            "child {pid} survived the drop"
        );
    }
}
