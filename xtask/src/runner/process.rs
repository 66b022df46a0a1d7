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
use rustix::process::{
    Pid, PidfdFlags, Signal, getppid, pidfd_open, set_parent_process_death_signal,
};

use crate::guest::verdict::QemuExit;

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

/// Arranges for `command`'s process to get SIGKILL when the calling thread
/// dies, and fails its start if that thread is already gone.
pub fn killed_with_this_thread(command: &mut Command) {
    let parent = rustix::process::getpid();
    // SAFETY: the closure runs in the forked child before exec and makes
    // two system calls (prctl(PR_SET_PDEATHSIG), getppid): no allocation,
    // no locks, async-signal-safe as `pre_exec` requires.
    unsafe {
        command.pre_exec(move || {
            set_parent_process_death_signal(Some(Signal::KILL)).map_err(io::Error::from)?;
            // The parent died between the fork and the prctl: no signal
            // will come.
            if getppid() != Some(parent) {
                return Err(io::Error::other("xtask exited while starting the child"));
            }
            Ok(())
        });
    }
}

impl KilledOnDrop {
    /// Spawns `command` with piped stdout/stderr and no stdin. The child
    /// gets SIGKILL if the spawning thread dies first (e.g. xtask killed).
    pub fn spawn(command: Command, echo_stdout: Echo, echo_stderr: Echo) -> io::Result<Self> {
        Self::spawn_observed(command, echo_stdout, echo_stderr, |_pid| {
            Box::new(|_line| {})
        })
    }

    /// Like [`KilledOnDrop::spawn`], and every stdout line (carriage
    /// returns removed) is also handed, as it arrives, to the observer
    /// that `make_observer` builds from the child's pid. The observer runs
    /// on the reader thread, before the line is echoed.
    pub fn spawn_observed(
        mut command: Command,
        echo_stdout: Echo,
        echo_stderr: Echo,
        make_observer: impl FnOnce(u32) -> LineObserver,
    ) -> io::Result<Self> {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        killed_with_this_thread(&mut command);
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
        let observer = make_observer(child.id());
        let stdout = child
            .stdout
            .take()
            .map(|out| spawn_reader(out, echo_stdout, observer));
        let stderr = child
            .stderr
            .take()
            .map(|err| spawn_reader(err, echo_stderr, Box::new(|_line| {})));
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
    pub fn finish(self, timed_out: Option<u64>) -> io::Result<Finished> {
        self.finish_as(timed_out.map(|timeout_s| QemuExit::TimedOut { timeout_s }))
    }

    /// Like [`KilledOnDrop::finish`]: with `killed_as` set, the child is
    /// killed (if still running) and that is how it is recorded to have
    /// ended (our timeout, our stall detector); with `None`, it is waited
    /// for and its own status is recorded.
    pub fn finish_as(mut self, killed_as: Option<QemuExit>) -> io::Result<Finished> {
        if killed_as.is_some() {
            let _ = self.child.kill();
        }
        let status = self.child.wait()?;
        let stdout = join_reader(self.stdout.take());
        let stderr = join_reader(self.stderr.take());
        let exit = killed_as.unwrap_or_else(|| exit_of(status));
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

/// Called with each stdout line of a child as it arrives.
pub type LineObserver = Box<dyn FnMut(&str) + Send>;

/// Reads `source` line by line until EOF, showing each line to `observe`
/// and echoing it if asked, and returns the whole text. A final line
/// without a newline is kept.
fn spawn_reader(
    source: impl Read + Send + 'static,
    echo: Echo,
    mut observe: LineObserver,
) -> JoinHandle<String> {
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
            observe(&line);
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
    fn the_observer_sees_each_line_with_the_pid() {
        let (sender, receiver) = std::sync::mpsc::channel();
        let child = KilledOnDrop::spawn_observed(
            sh("printf 'one\\r\\ntwo\\n'"),
            Echo::Off,
            Echo::Off,
            |pid| {
                Box::new(move |line: &str| {
                    let _ = sender.send((pid, line.to_string()));
                })
            },
        )
        .unwrap();
        let pid = child.id();
        assert!(child.wait_for_exit(Some(Duration::from_secs(60))).unwrap());
        let finished = child.finish(None).unwrap();
        assert_eq!(finished.stdout, "one\ntwo\n");
        let seen: Vec<_> = receiver.iter().collect();
        assert_eq!(
            seen,
            vec![(pid, "one\n".to_string()), (pid, "two\n".to_string())]
        );
    }

    #[test]
    fn finish_as_records_our_reason_for_the_kill() {
        let child = KilledOnDrop::spawn(sh("exec sleep 600"), Echo::Off, Echo::Off).unwrap();
        let finished = child
            .finish_as(Some(QemuExit::Stalled { stall_s: 5 }))
            .unwrap();
        assert_eq!(finished.exit, QemuExit::Stalled { stall_s: 5 });
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
