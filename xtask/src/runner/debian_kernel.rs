//! Debian's own kernel for the Linux peer: the package the cloud
//! metapackage [`KERNEL_METAPACKAGE`] depends on in the release the host
//! installs from (bookworm: `linux-image-6.1.0-N-cloud-amd64`, which
//! boots quickly under QEMU's TCG: virtio and serial built in, no
//! firmware), downloaded with `apt-get download` and unpacked with
//! `dpkg-deb -x` into `target/linux-peer/debian/PACKAGE/` on first use.
//! Never built: the peer is the kernel a reader would install.
//!
//! Resolving the version reads apt's lists (`apt-cache depends`, no
//! network); a package already unpacked is used as it is. When apt's lists
//! are missing or stale (a fresh machine, or a kernel superseded on the
//! mirror) `apt-get update` runs once, as root, and the step is tried
//! again; anything else that goes wrong is an error naming the command.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Result, XtaskError};
use crate::runner::install::find_in_path;
use crate::runner::workspace::{display_command, workspace_root};

/// The metapackage whose dependency is the kernel the peer boots.
pub const KERNEL_METAPACKAGE: &str = "linux-image-cloud-amd64";

/// Where the peer's files go: `target/linux-peer/`.
pub fn linux_peer_dir() -> PathBuf {
    workspace_root().join("target").join("linux-peer")
}

/// An unpacked kernel package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebianKernel {
    /// The package, e.g. `linux-image-6.1.0-57-cloud-amd64`.
    pub package: String,
    /// Its `boot/vmlinuz-*`.
    pub vmlinuz: PathBuf,
}

/// The kernel package a metapackage's `apt-cache depends` output names:
/// its first `Depends: linux-image-...` line.
pub fn parse_depends(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let name = line.trim().strip_prefix("Depends: ")?.trim();
        (name.starts_with("linux-image-") && name != KERNEL_METAPACKAGE).then(|| name.to_string())
    })
}

/// The `boot/vmlinuz-*` of an unpacked package, if there is one.
fn find_vmlinuz(unpacked: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(unpacked.join("boot"))
        .ok()?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("vmlinuz-"))
        })
        .collect();
    found.sort();
    found.pop()
}

/// Runs `command`; its stdout, or an error with the command and its stderr.
fn output_of(mut command: Command) -> Result<String> {
    let shown = display_command(&command);
    let output = command
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .map_err(|err| XtaskError::failed(format!("could not run `{shown}`: {err}")))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(XtaskError::failed(format!(
            "`{shown}` failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )))
    }
}

/// Runs `apt-get update` (root only: apt's lists are root's).
fn apt_update() -> Result<()> {
    if !rustix::process::geteuid().is_root() {
        return Err(XtaskError::failed(
            "apt's lists need `apt-get update`, which needs root: run it, then try again",
        ));
    }
    let mut command = Command::new("apt-get");
    command.arg("update");
    eprintln!("xtask: running: {}", display_command(&command));
    output_of(command).map(drop)
}

/// Tries `step`; if it fails, runs `apt-get update` once and tries again.
fn with_update_on_failure<T>(what: &str, step: impl Fn() -> Result<T>) -> Result<T> {
    match step() {
        Ok(value) => Ok(value),
        Err(first) => {
            eprintln!("xtask: {what} failed ({first}); updating apt's lists and trying again");
            apt_update().map_err(|err| {
                XtaskError::failed(format!("{what} failed ({first}), and then {err}"))
            })?;
            step()
        }
    }
}

/// The kernel package [`KERNEL_METAPACKAGE`] depends on.
fn resolve_package() -> Result<String> {
    let mut command = Command::new("apt-cache");
    command.args(["depends", KERNEL_METAPACKAGE]);
    let text = output_of(command)?;
    parse_depends(&text).ok_or_else(|| {
        XtaskError::failed(format!(
            "`apt-cache depends {KERNEL_METAPACKAGE}` names no linux-image package:\n{text}"
        ))
    })
}

/// Downloads and unpacks `package` into `unpacked` (through a temporary
/// directory beside it, renamed at the end: an interrupted unpack leaves
/// nothing that looks finished).
fn download_and_unpack(package: &str, unpacked: &Path) -> Result<()> {
    let parent = unpacked.parent().expect("the cache has a parent");
    fs::create_dir_all(parent)
        .map_err(|err| XtaskError::failed(format!("creating {}: {err}", parent.display())))?;
    let scratch = tempfile::Builder::new()
        .prefix(".download-")
        .tempdir_in(parent)
        .map_err(|err| XtaskError::failed(format!("a directory in {}: {err}", parent.display())))?;
    eprintln!("xtask: downloading Debian's {package} (apt-get download)");
    with_update_on_failure(&format!("apt-get download {package}"), || {
        let mut command = Command::new("apt-get");
        command
            .args(["download", package])
            .current_dir(scratch.path());
        output_of(command).map(drop)
    })?;
    let deb = fs::read_dir(scratch.path())
        .map_err(|err| XtaskError::failed(format!("{}: {err}", scratch.path().display())))?
        .filter_map(|entry| Some(entry.ok()?.path()))
        .find(|path| path.extension().is_some_and(|ext| ext == "deb"))
        .ok_or_else(|| {
            XtaskError::failed(format!("apt-get download {package} left no .deb file"))
        })?;
    let staging = scratch.path().join("unpacked");
    let mut command = Command::new("dpkg-deb");
    command.arg("-x").arg(&deb).arg(&staging);
    output_of(command)?;
    if find_vmlinuz(&staging).is_none() {
        return Err(XtaskError::failed(format!(
            "{package} has no boot/vmlinuz-*: not a kernel image package"
        )));
    }
    fs::rename(&staging, unpacked).map_err(|err| {
        XtaskError::failed(format!(
            "moving the unpacked package to {}: {err}",
            unpacked.display()
        ))
    })
}

/// Debian's kernel for the peer, fetched and unpacked if it is not yet.
/// A host without apt (not Debian) gets an error saying what is needed.
pub fn ensure_debian_kernel() -> Result<DebianKernel> {
    for tool in ["apt-cache", "apt-get", "dpkg-deb"] {
        if find_in_path(tool).is_none() {
            return Err(XtaskError::usage(format!(
                "the Linux peer boots Debian's {KERNEL_METAPACKAGE} kernel, fetched with apt: {tool} not found (a Debian host is needed)"
            )));
        }
    }
    let package =
        with_update_on_failure(&format!("resolving {KERNEL_METAPACKAGE}"), resolve_package)?;
    let unpacked = linux_peer_dir().join("debian").join(&package);
    if find_vmlinuz(&unpacked).is_none() {
        download_and_unpack(&package, &unpacked)?;
    }
    let vmlinuz = find_vmlinuz(&unpacked).ok_or_else(|| {
        XtaskError::failed(format!("no boot/vmlinuz-* in {}", unpacked.display()))
    })?;
    Ok(DebianKernel { package, vmlinuz })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metapackages_dependency_is_the_kernel() {
        let text = "linux-image-cloud-amd64\n  Depends: linux-image-6.1.0-57-cloud-amd64\n";
        assert_eq!(
            parse_depends(text),
            Some("linux-image-6.1.0-57-cloud-amd64".to_string())
        );
        assert_eq!(parse_depends("linux-image-cloud-amd64\n"), None);
        assert_eq!(
            parse_depends(
                "x\n  Depends: initramfs-tools\n  Depends: linux-image-6.1.0-9-cloud-amd64\n"
            ),
            Some("linux-image-6.1.0-9-cloud-amd64".to_string())
        );
    }

    #[test]
    fn vmlinuz_is_found_in_boot() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find_vmlinuz(dir.path()), None);
        fs::create_dir(dir.path().join("boot")).unwrap();
        fs::write(dir.path().join("boot/config-6.1.0-57-cloud-amd64"), "").unwrap();
        assert_eq!(find_vmlinuz(dir.path()), None);
        fs::write(dir.path().join("boot/vmlinuz-6.1.0-57-cloud-amd64"), "").unwrap();
        assert_eq!(
            find_vmlinuz(dir.path()),
            Some(dir.path().join("boot/vmlinuz-6.1.0-57-cloud-amd64"))
        );
    }
}
