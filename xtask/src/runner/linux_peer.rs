//! The Linux peer, ready to boot: Debian's kernel
//! ([`debian_kernel`](crate::runner::debian_kernel)), and an initramfs
//! holding the peer's program (`peers/linux-laplace`, built static) as
//! `/init`, with the directories it mounts on and the two device nodes it
//! needs before anything is mounted (`/dev/console`, which Linux opens as
//! `/init`'s standard streams; `/dev/null`). Linux's command line sends
//! its console to the serial port, names the idle choice, and passes the
//! workload's `key=value` words to `/init` after `--`.

use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use vigil_proto::linux_peer::LinuxIdle;

use crate::error::{Result, XtaskError};
use crate::runner::debian_kernel::{ensure_debian_kernel, linux_peer_dir};
use crate::runner::initramfs::{Entry, EntryKind, newc_archive};
use crate::runner::workspace::{cargo, display_command};

/// The program's cargo package name.
pub const PROGRAM_PACKAGE: &str = "linux-laplace";
/// The target it is built for (the host's own: the peer's Linux is x86_64).
pub const PROGRAM_TARGET: &str = "x86_64-unknown-linux-gnu";

/// Linux's command line before the idle choice: the console on the first
/// serial port, only urgent kernel messages there (a panic still shows),
/// and a reboot at once on a panic (QEMU's `-no-reboot` then exits with
/// status 0, which the host never counts as success) instead of a hang.
pub const BASE_CMDLINE: &str = "console=ttyS0 quiet panic=-1";

/// A peer ready to boot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinuxPeerArtifacts {
    /// Debian's kernel package.
    pub package: String,
    /// Its `vmlinuz`.
    pub kernel: PathBuf,
    /// The initramfs with the program as `/init`.
    pub initramfs: PathBuf,
}

/// Linux's command line for a boot with `idle` and the program's `params`.
pub fn kernel_cmdline(idle: LinuxIdle, params: &[String]) -> String {
    let mut words = vec![BASE_CMDLINE.to_string()];
    words.extend(idle.kernel_word().map(str::to_string));
    if !params.is_empty() {
        words.push("--".to_string());
        words.extend(params.iter().cloned());
    }
    words.join(" ")
}

/// Builds the program (release, static, stripped) in its own target
/// directory (its flags would otherwise rebuild the workspace's), and
/// returns it.
fn build_program() -> Result<PathBuf> {
    let target_dir = linux_peer_dir().join("build");
    let mut command = cargo();
    command
        .args(["build", "--release", "-p", PROGRAM_PACKAGE])
        .args(["--target", PROGRAM_TARGET])
        .arg("--target-dir")
        .arg(&target_dir)
        // With --target, RUSTFLAGS for the target reach only its crates,
        // not build scripts; glibc's static libraries come with libc6-dev.
        .env(
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS",
            "-C target-feature=+crt-static -C strip=debuginfo",
        );
    eprintln!(
        "xtask: building the Linux peer's /init: {}",
        display_command(&command)
    );
    let status = command
        .status()
        .map_err(|err| XtaskError::failed(format!("could not run cargo: {err}")))?;
    if !status.success() {
        return Err(XtaskError::failed(format!(
            "building {PROGRAM_PACKAGE} failed ({status})"
        )));
    }
    Ok(target_dir
        .join(PROGRAM_TARGET)
        .join("release")
        .join(PROGRAM_PACKAGE))
}

/// The initramfs entries for `program` as `/init`.
pub fn initramfs_entries(program: Vec<u8>) -> Vec<Entry> {
    let directory = |path: &str| Entry {
        path: path.to_string(),
        kind: EntryKind::Directory,
    };
    let device = |path: &str, major, minor| Entry {
        path: path.to_string(),
        kind: EntryKind::CharDevice { major, minor },
    };
    vec![
        directory("dev"),
        device("dev/console", 5, 1),
        device("dev/null", 1, 3),
        directory("proc"),
        directory("sys"),
        Entry {
            path: "init".to_string(),
            kind: EntryKind::File {
                data: program,
                mode: 0o755,
            },
        },
    ]
}

/// Fetches Debian's kernel if needed, builds the program and writes the
/// initramfs: everything a boot of the peer needs.
pub fn build_linux_peer() -> Result<LinuxPeerArtifacts> {
    let kernel = ensure_debian_kernel()?;
    let program = build_program()?;
    let bytes = fs::read(&program)
        .map_err(|err| XtaskError::failed(format!("reading {}: {err}", program.display())))?;
    let initramfs = linux_peer_dir().join("initramfs.cpio");
    // Whole or not at all: a QEMU of an earlier build may still read it.
    let archive = newc_archive(&initramfs_entries(bytes));
    vigil_boot::write_atomically(&initramfs, |tmp| Ok(fs::write(tmp, &archive)?))
        .map_err(|err| XtaskError::failed(format!("writing {}: {err:#}", initramfs.display())))?;
    Ok(LinuxPeerArtifacts {
        package: kernel.package,
        kernel: kernel.vmlinuz,
        initramfs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_has_the_idle_choice_and_the_programs_words() {
        let params = vec!["size=16".to_string(), "pool=steal".to_string()];
        assert_eq!(
            kernel_cmdline(LinuxIdle::Default, &params),
            "console=ttyS0 quiet panic=-1 -- size=16 pool=steal"
        );
        assert_eq!(
            kernel_cmdline(LinuxIdle::Poll, &params),
            "console=ttyS0 quiet panic=-1 idle=poll -- size=16 pool=steal"
        );
        assert_eq!(
            kernel_cmdline(LinuxIdle::Poll, &[]),
            "console=ttyS0 quiet panic=-1 idle=poll"
        );
        // The program reads its idle choice back from such a line.
        assert_eq!(
            LinuxIdle::of_cmdline(&kernel_cmdline(LinuxIdle::Poll, &params)),
            LinuxIdle::Poll
        );
    }

    #[test]
    fn init_is_last_after_the_directories_it_needs() {
        let entries = initramfs_entries(vec![1, 2, 3]);
        let paths: Vec<&str> = entries.iter().map(|entry| entry.path.as_str()).collect();
        assert_eq!(
            paths,
            ["dev", "dev/console", "dev/null", "proc", "sys", "init"]
        );
    }
}
