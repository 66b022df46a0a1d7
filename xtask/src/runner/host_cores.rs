//! Confining QEMU to some of the host's cores (`--host-cores N`): QEMU
//! starts under `taskset --cpu-list` with the first `N` of the cores xtask
//! itself may run on, so every vCPU thread it creates shares those `N`
//! cores. The kernel's round plan measures how many of its vCPUs run at
//! once; confining QEMU is how one bench shows the same image on a host
//! with fewer cores, and how its estimate compares with the truth.
//!
//! `taskset` (util-linux, essential in Debian) rather than an affinity
//! call in a `pre_exec` hook: no unsafe code in the harness, and the
//! confinement shows in the QEMU command line a failure report prints.
//! `taskset` execs QEMU in place, so the pid xtask watches (its CPU time,
//! its death signal) is QEMU's.

use std::ops::RangeInclusive;
use std::process::Command;

use rustix::thread::{CpuSet, sched_getaffinity};

use crate::error::{Result, XtaskError};
use crate::guest::settings::{in_range, parse_count};
use crate::runner::install::find_in_path;

/// What `--host-cores` takes (the host's own limit is checked at boot).
pub const HOST_CORES_RANGE: RangeInclusive<u32> = 1..=1024;

/// Parses one `--host-cores` count.
pub fn parse_host_cores(text: &str) -> std::result::Result<u32, String> {
    let cores = parse_count(text, "host core count")?;
    in_range(cores, &HOST_CORES_RANGE, "--host-cores")
}

/// The host cores xtask may run on (its affinity mask), in order.
pub fn allowed_cores() -> Result<Vec<usize>> {
    let set = sched_getaffinity(None)
        .map_err(|err| XtaskError::failed(format!("reading xtask's CPU affinity: {err}")))?;
    Ok((0..CpuSet::MAX_CPU)
        .filter(|&cpu| set.is_set(cpu))
        .collect())
}

/// `taskset`'s `--cpu-list` for the first `count` of `allowed` cores; a
/// count above what xtask may use is a usage error.
pub fn cpu_list(count: u32, allowed: &[usize]) -> Result<String> {
    let count = count as usize;
    if count > allowed.len() {
        return Err(XtaskError::usage(format!(
            "--host-cores {count}: xtask may run on {} host core(s) here ({})",
            allowed.len(),
            join(allowed)
        )));
    }
    Ok(join(&allowed[..count]))
}

fn join(cores: &[usize]) -> String {
    cores
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The command that starts `program` on the first `count` host cores
/// xtask may use (arguments still to add), or `program` itself when
/// `count` is `None`.
pub fn command_on(program: &std::path::Path, count: Option<u32>) -> Result<Command> {
    let Some(count) = count else {
        return Ok(Command::new(program));
    };
    let list = cpu_list(count, &allowed_cores()?)?;
    let taskset = find_in_path("taskset").ok_or_else(|| {
        XtaskError::usage("--host-cores needs taskset: install the Debian package util-linux")
    })?;
    let mut command = Command::new(taskset);
    command.arg("--cpu-list").arg(list).arg(program);
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_cores_xtask_may_use_are_chosen() {
        assert_eq!(cpu_list(1, &[0, 1]).unwrap(), "0");
        assert_eq!(cpu_list(2, &[2, 5, 7]).unwrap(), "2,5");
        let too_many = cpu_list(3, &[0, 1]).unwrap_err().to_string();
        assert!(too_many.contains("--host-cores 3"), "{too_many}");
        assert!(too_many.contains("2 host core(s) here (0,1)"), "{too_many}");
    }

    #[test]
    fn counts_outside_the_range_are_refused() {
        assert_eq!(parse_host_cores("2"), Ok(2));
        for bad in ["0", "1025", "two", ""] {
            assert!(parse_host_cores(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn a_confined_command_runs_the_program_under_taskset() {
        let allowed = allowed_cores().unwrap();
        assert!(!allowed.is_empty());
        let plain = command_on(std::path::Path::new("/bin/true"), None).unwrap();
        assert_eq!(plain.get_program(), "/bin/true");
        let confined = command_on(std::path::Path::new("/bin/true"), Some(1)).unwrap();
        let args: Vec<_> = confined.get_args().collect();
        assert_eq!(args[0], "--cpu-list");
        assert_eq!(args[1].to_str().unwrap(), allowed[0].to_string());
        assert_eq!(args[2], "/bin/true");
    }

    #[test]
    fn the_confined_process_runs_only_on_the_chosen_core() {
        let allowed = allowed_cores().unwrap();
        let mut confined = command_on(std::path::Path::new("/bin/sh"), Some(1)).unwrap();
        confined.args(["-c", "grep Cpus_allowed_list /proc/self/status"]);
        let output = confined.output().unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            text.trim().rsplit('\t').next(),
            Some(allowed[0].to_string().as_str()),
            "{text}"
        );
    }
}
