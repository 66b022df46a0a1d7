//! Host dependency check: QEMU and (for UEFI boots) OVMF. Installs them with
//! apt-get when we are root and apt-get exists; otherwise says which Debian
//! package is missing (exit status 2).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Result, XtaskError};
use crate::workspace::display_command;

/// The QEMU binary we boot with.
pub const QEMU_BINARY: &str = "qemu-system-x86_64";
/// Debian package that provides [`QEMU_BINARY`].
pub const QEMU_PACKAGE: &str = "qemu-system-x86";
/// Debian package that provides the OVMF UEFI firmware.
pub const OVMF_PACKAGE: &str = "ovmf";
/// Where Debian's `ovmf` package puts a combined (code + vars) firmware
/// image usable with `-bios`, newest layout first.
pub const OVMF_CANDIDATES: [&str; 2] = ["/usr/share/ovmf/OVMF.fd", "/usr/share/OVMF/OVMF.fd"];

/// Finds an executable called `name` on `$PATH`.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The OVMF firmware image, if installed.
pub fn find_ovmf() -> Option<PathBuf> {
    OVMF_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
}

/// Debian packages missing for a boot (`uefi` adds OVMF).
pub fn missing_packages(uefi: bool) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if find_in_path(QEMU_BINARY).is_none() {
        missing.push(QEMU_PACKAGE);
    }
    if uefi && find_ovmf().is_none() {
        missing.push(OVMF_PACKAGE);
    }
    missing
}

/// Makes sure QEMU (and OVMF when `uefi`) are installed, installing them
/// with apt-get if we can.
pub fn ensure_qemu(uefi: bool) -> Result<()> {
    let missing = missing_packages(uefi);
    if missing.is_empty() {
        return Ok(());
    }
    let root = rustix::process::geteuid().is_root();
    if !root || find_in_path("apt-get").is_none() {
        return Err(XtaskError::usage(format!(
            "missing host packages: {}; install them with `apt-get install {}`",
            missing.join(", "),
            missing.join(" ")
        )));
    }
    // Install both: a UEFI boot after a BIOS one should not need a second round.
    let packages = [QEMU_PACKAGE, OVMF_PACKAGE];
    run_apt(&["update"])?;
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    install.extend(packages);
    run_apt(&install)?;
    let still_missing = missing_packages(uefi);
    if still_missing.is_empty() {
        Ok(())
    } else {
        Err(XtaskError::failed(format!(
            "apt-get ran but these are still missing: {}",
            still_missing.join(", ")
        )))
    }
}

fn run_apt(args: &[&str]) -> Result<()> {
    let mut command = Command::new("apt-get");
    command.args(args).env("DEBIAN_FRONTEND", "noninteractive");
    eprintln!("xtask: running: {}", display_command(&command));
    let status = command
        .status()
        .map_err(|err| XtaskError::failed(format!("could not run apt-get: {err}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(XtaskError::failed(format!(
            "`{}` failed with {status}",
            display_command(&command)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_in_path_finds_sh_and_not_nonsense() {
        assert!(find_in_path("sh").is_some());
        assert!(find_in_path("vigil-no-such-binary-anywhere").is_none());
    }
}
