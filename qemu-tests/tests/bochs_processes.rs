//! No process of a Bochs boot outlives it (its X server and Bochs): not at
//! its timeout, and not when the process running the boot is killed
//! (xtask killed, or Ctrl-C at the terminal, which reaches xtask and not
//! Bochs's process group). A stray Xvfb once held a lock's file
//! descriptor for 50 minutes.
//!
//! The test makes itself its descendants' subreaper
//! (`PR_SET_CHILD_SUBREAPER`): whatever a boot leaves behind becomes its
//! child, and every such child must have died by a signal (one still
//! running 30 s after the boot ended is killed and reported). It is the only
//! test of this binary, so its waits take no other test's children.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, WaitOptions, WaitStatus, kill_process, set_child_subreaper};
use xtask::runner::bochs::{self, BochsConfig};
use xtask::{BuildConfig, build_kernel_with_params};

/// Set (to the image's path) in the copy of this test that runs the boot
/// to be killed.
const BOOT_TO_KILL: &str = "VIGIL_TEST_BOCHS_BOOT_TO_KILL";

const TEST_NAME: &str = "no_process_of_a_bochs_boot_outlives_it";

#[test]
fn no_process_of_a_bochs_boot_outlives_it() {
    if let Some(image) = std::env::var_os(BOOT_TO_KILL) {
        boot_until_killed(Path::new(&image));
        return;
    }
    if let Some(why) = bochs::missing() {
        panic!("{why}");
    }
    // A guest that computes for hours of real time: the boot must still be
    // running when the signal comes. (A 100-iteration Laplace on one core
    // ended before it on a fast host: the booting copy's lines reach this
    // process through a pipe, so the first one can arrive after the last
    // was printed, and the boot exited 0 unkilled. Ten emulated minutes of
    // `workload=idle` ended too, in a fresh-clone CI run: with `clock:
    // sync=none` a halted Bochs skips ahead to its next timer, so idle
    // emulated time costs almost no real time. Computing does: 10 million
    // iterations of a 256x256 grid are about 10^13 instructions.)
    let params: Vec<String> = ["workload=laplace", "size=256", "iterations=10000000"]
        .iter()
        .map(|param| param.to_string())
        .collect();
    let kernel = build_kernel_with_params(&BuildConfig::default(), &params)
        .unwrap_or_else(|err| panic!("kernel build failed: {err}"));
    // After the build: cargo's own processes are not ours to judge.
    set_child_subreaper(Some(rustix::process::getpid())).expect("PR_SET_CHILD_SUBREAPER");

    // A boot cut at its timeout (in the BIOS: any boot takes longer than
    // a second).
    let outcome = bochs::run(&BochsConfig::new(1, 1), &kernel.bios_image)
        .unwrap_or_else(|err| panic!("Bochs could not run: {err}"));
    assert!(outcome.timed_out, "{}", outcome.verdict_line());
    let left = reap_what_is_left();
    assert_all_killed(&left, "a boot cut at its timeout");

    // The process running a boot killed the way a Ctrl-C kills xtask
    // (SIGINT to it alone) once the kernel prints.
    let mut booting = Command::new(std::env::current_exe().expect("the test's own path"))
        .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(BOOT_TO_KILL, &kernel.bios_image)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("starting the booting copy of this test");
    let stdout = booting.stdout.take().expect("piped");
    let mut printed = Vec::new();
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        let line = line.expect("reading the booting copy's output");
        printed.push(line.clone());
        // The guest's first line: Bochs and its X server are running.
        if line.starts_with("[c0] ") {
            break;
        }
    }
    // Keep reading what it prints until it dies: a closed pipe would end
    // it on its next line (a panic on the broken pipe) before the signal
    // does, and its boot's processes with it, tidily.
    let drain = std::thread::spawn(move || lines.count());
    assert!(
        printed.iter().any(|line| line.starts_with("[c0] ")),
        "the boot ended before the kernel printed:\n{}",
        printed.join("\n")
    );
    let pid = Pid::from_child(&booting);
    kill_process(pid, ctrl_c_signal(pid)).expect("the signal to the booting process");
    let status = booting.wait().expect("reaping the booting process");
    drain.join().expect("the reader of its output");
    assert!(
        !status.success(),
        "the booting process was not killed: {status}"
    );
    let left = reap_what_is_left();
    assert!(
        !left.is_empty(),
        "the boot's processes should have become ours to reap"
    );
    assert_all_killed(&left, "a boot whose xtask was killed");
}

/// SIGINT, as a Ctrl-C at the terminal sends it, unless the booting copy
/// inherited SIGINT ignored: a shell runs a background job with SIGINT
/// and SIGQUIT ignored (`.ci/run &`, or under `nohup`), and the copy,
/// like xtask there, cannot be interrupted at all; then SIGTERM, which
/// ends it the same way (by the signal's default action: what the boot's
/// processes must survive none of). Seen: with SIGINT ignored the copy's
/// boot ran to its end and exited 0, "not killed".
fn ctrl_c_signal(pid: Pid) -> Signal {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid.as_raw_nonzero()))
        .expect("the booting process's /proc status");
    let ignored = status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .expect("a SigIgn line in /proc/PID/status");
    // Bit n - 1 of the mask is signal n.
    if ignored & (1 << (Signal::INT.as_raw() - 1)) != 0 {
        Signal::TERM
    } else {
        Signal::INT
    }
}

/// The booting copy: one boot, its serial output echoed as it comes.
fn boot_until_killed(image: &Path) {
    let config = BochsConfig {
        echo: true,
        ..BochsConfig::new(1, 600)
    };
    let outcome = bochs::run(&config, image).unwrap_or_else(|err| panic!("{err}"));
    // Not reached when the test works: the parent kills this process.
    println!("the boot ended: {}", outcome.verdict_line());
}

/// One process that was left to us: its name and how it ended.
#[derive(Debug)]
struct Left {
    pid: i32,
    name: String,
    status: WaitStatus,
    /// Still running [`SURVIVOR_GRACE`] after the boot ended (then killed
    /// here, so that the test fails instead of waiting for it forever).
    outlived: bool,
}

/// How long a process of an ended boot may take to die: a killed process
/// is gone in milliseconds; one still running after this was not killed.
const SURVIVOR_GRACE: Duration = Duration::from_secs(30);

/// Reaps every child this process has (the orphans it adopted as
/// subreaper) until none is left; those still running after
/// [`SURVIVOR_GRACE`] are killed and marked.
fn reap_what_is_left() -> Vec<Left> {
    let deadline = Instant::now() + SURVIVOR_GRACE;
    let mut outlived: Vec<i32> = Vec::new();
    let mut left = Vec::new();
    loop {
        let names = children_names();
        match rustix::process::wait(WaitOptions::NOHANG) {
            Ok(Some((pid, status))) => {
                let pid = pid.as_raw_nonzero().get();
                left.push(Left {
                    pid,
                    name: names
                        .iter()
                        .find(|(child, _)| *child == pid)
                        .map(|(_, name)| name.clone())
                        .unwrap_or_else(|| "?".to_string()),
                    status,
                    outlived: outlived.contains(&pid),
                });
            }
            Ok(None) => {
                if Instant::now() >= deadline {
                    for &(pid, _) in &names {
                        if !outlived.contains(&pid) {
                            outlived.push(pid);
                            if let Some(pid) = Pid::from_raw(pid) {
                                let _ = kill_process(pid, Signal::KILL);
                            }
                        }
                    }
                }
                // Polling for the next death (a wait without WNOHANG would
                // never return for a survivor).
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(rustix::io::Errno::CHILD) => return left,
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => panic!("wait: {err}"),
        }
    }
}

fn assert_all_killed(left: &[Left], case: &str) {
    let survivors: Vec<String> = left
        .iter()
        .filter(|process| process.outlived || process.status.terminating_signal().is_none())
        .map(|process| {
            if process.outlived {
                format!(
                    "{} (pid {}) was still running {} s after the boot ended",
                    process.name,
                    process.pid,
                    SURVIVOR_GRACE.as_secs()
                )
            } else {
                format!(
                    "{} (pid {}) ran on and exited by itself ({:?})",
                    process.name, process.pid, process.status
                )
            }
        })
        .collect();
    assert!(
        survivors.is_empty(),
        "{case}: processes of the boot outlived it: {}",
        survivors.join("; ")
    );
}

/// The names (`comm`) of this process's children.
fn children_names() -> Vec<(i32, String)> {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let pid: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(PathBuf::from(format!("/proc/{pid}/stat"))).ok()?;
            // pid (comm) state ppid ...
            let (comm, rest) = stat.rsplit_once(')')?;
            let ppid = rest.split_whitespace().nth(1)?;
            if ppid != me {
                return None;
            }
            Some((pid, comm.split_once('(')?.1.to_string()))
        })
        .collect()
}
