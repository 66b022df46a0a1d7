//! Host dependency check: QEMU (at least [`MIN_QEMU_MAJOR`]; its x86_64
//! system emulator, and its AArch64 one for `--arch aarch64`) and (for
//! UEFI boots) OVMF. Installs them with apt-get when we are root and apt-get
//! exists, on Debian bookworm QEMU from its `bookworm-backports` suite
//! (bookworm itself has 7.2, whose TCG has no x2APIC); otherwise says which
//! Debian package is missing or too old and how to get it (exit status 2).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Result, XtaskError};
use crate::runner::platform::Arch;
use crate::runner::workspace::display_command;

/// The QEMU binary we boot with.
pub const QEMU_BINARY: &str = "qemu-system-x86_64";
/// Debian package that provides [`QEMU_BINARY`].
pub const QEMU_PACKAGE: &str = "qemu-system-x86";
/// The oldest QEMU the project boots with: 10, what bookworm-backports
/// has and what the suite is tested on (its TCG offers x2APIC, `-cpu
/// qemu64,+x2apic`, which the suite tests; 7.2's does not).
pub const MIN_QEMU_MAJOR: u32 = 10;
/// The Debian suite that has it for bookworm.
pub const BACKPORTS_SUITE: &str = "bookworm-backports";
/// The apt sources entry xtask (and `.ci/run`) add for it.
pub const BACKPORTS_SOURCES_FILE: &str = "/etc/apt/sources.list.d/vigil-bookworm-backports.sources";
/// Its contents (deb822).
pub const BACKPORTS_SOURCES: &str = "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n";
/// The apt preferences that keep QEMU's packages tracking backports on
/// later upgrades (backports' default priority, 100, keeps everything else
/// on bookworm). The install itself uses `-t bookworm-backports`, which
/// takes QEMU and the libraries it needs from backports.
pub const BACKPORTS_PIN_FILE: &str = "/etc/apt/preferences.d/vigil-qemu-backports";
/// Its contents.
pub const BACKPORTS_PIN: &str = "Package: qemu-system-x86 qemu-system-arm qemu-system-common qemu-system-data qemu-system-gui qemu-utils seabios ipxe-qemu\nPin: release n=bookworm-backports\nPin-Priority: 500\n";
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

/// Parses `QEMU emulator version 10.0.2 (Debian ...)` into (major, minor).
pub fn parse_qemu_version(text: &str) -> Option<(u32, u32)> {
    let version = text
        .lines()
        .next()?
        .split("version ")
        .nth(1)?
        .split_whitespace()
        .next()?;
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The installed QEMU's (major, minor), if it runs and says.
pub fn qemu_version() -> Option<(u32, u32)> {
    let output = Command::new(QEMU_BINARY).arg("--version").output().ok()?;
    parse_qemu_version(&String::from_utf8_lossy(&output.stdout))
}

/// What is wrong with the installed QEMU, if anything.
fn qemu_problem() -> Option<String> {
    find_in_path(QEMU_BINARY)?;
    match qemu_version() {
        Some((major, _)) if major >= MIN_QEMU_MAJOR => None,
        Some((major, minor)) => Some(format!(
            "QEMU {major}.{minor} is older than {MIN_QEMU_MAJOR} (the suite tests x2APIC under TCG, which 7.2 lacks)"
        )),
        None => Some(format!("`{QEMU_BINARY} --version` printed no version")),
    }
}

/// Debian packages missing (or too old) for boots of `archs` (`uefi` adds
/// OVMF). The AArch64 emulator comes from the same QEMU build as the
/// x86_64 one (the same version, checked on the x86_64 binary).
pub fn missing_packages(archs: &[Arch], uefi: bool) -> Vec<&'static str> {
    let mut missing = Vec::new();
    if archs.contains(&Arch::X86_64)
        && (find_in_path(QEMU_BINARY).is_none() || qemu_problem().is_some())
    {
        missing.push(QEMU_PACKAGE);
    }
    if archs.contains(&Arch::Aarch64) && find_in_path(Arch::Aarch64.qemu_binary()).is_none() {
        missing.push(Arch::Aarch64.qemu_package());
    }
    if uefi && find_ovmf().is_none() {
        missing.push(OVMF_PACKAGE);
    }
    missing
}

/// Makes sure QEMU for x86_64 (and OVMF when `uefi`) are installed,
/// installing them with apt-get if we can.
pub fn ensure_qemu(uefi: bool) -> Result<()> {
    ensure_qemu_for(&[Arch::X86_64], uefi)
}

/// Makes sure QEMU for each of `archs` (and OVMF when `uefi`) are
/// installed, installing them with apt-get if we can.
pub fn ensure_qemu_for(archs: &[Arch], uefi: bool) -> Result<()> {
    let missing = missing_packages(archs, uefi);
    if missing.is_empty() {
        return Ok(());
    }
    let problem = qemu_problem()
        .map(|why| format!(" ({why})"))
        .unwrap_or_default();
    let root = rustix::process::geteuid().is_root();
    if !root || find_in_path("apt-get").is_none() {
        return Err(XtaskError::usage(format!(
            "missing or too old host packages: {}{problem}; on Debian bookworm, add the {BACKPORTS_SUITE} suite (see {BACKPORTS_SOURCES_FILE} in docs/harness.md) and run `apt-get install -t {BACKPORTS_SUITE} {}`",
            missing.join(", "),
            missing.join(" ")
        )));
    }
    // Only bookworm has (and needs) bookworm-backports; elsewhere the
    // release's own QEMU is installed and checked.
    let bookworm = is_debian_bookworm();
    if bookworm {
        add_backports()?;
    }
    // Install them all: a UEFI or AArch64 boot after an x86_64 BIOS one
    // should not need a second round.
    let packages = [QEMU_PACKAGE, Arch::Aarch64.qemu_package(), OVMF_PACKAGE];
    run_apt(&["update"])?;
    let mut install = vec!["install", "-y", "--no-install-recommends"];
    if bookworm {
        install.extend(["-t", BACKPORTS_SUITE]);
    }
    install.extend(packages);
    run_apt(&install)?;
    let still_missing = missing_packages(archs, uefi);
    if still_missing.is_empty() {
        Ok(())
    } else {
        Err(XtaskError::failed(format!(
            "apt-get ran but these are still missing or too old: {}{}",
            still_missing.join(", "),
            qemu_problem()
                .map(|why| format!(" ({why})"))
                .unwrap_or_default()
        )))
    }
}

/// Whether this is Debian 12 (`VERSION_CODENAME=bookworm` in
/// `/etc/os-release`).
fn is_debian_bookworm() -> bool {
    std::fs::read_to_string("/etc/os-release").is_ok_and(|text| {
        text.lines()
            .any(|line| line.trim() == "VERSION_CODENAME=bookworm")
    })
}

/// Adds the backports suite and the pin for QEMU's packages, unless they
/// are there.
fn add_backports() -> Result<()> {
    for (path, contents) in [
        (BACKPORTS_SOURCES_FILE, BACKPORTS_SOURCES),
        (BACKPORTS_PIN_FILE, BACKPORTS_PIN),
    ] {
        if Path::new(path).exists() {
            continue;
        }
        eprintln!("xtask: writing {path}");
        std::fs::write(path, contents)
            .map_err(|err| XtaskError::failed(format!("writing {path}: {err}")))?;
    }
    Ok(())
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
    fn qemu_versions_parse() {
        assert_eq!(
            parse_qemu_version(
                "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)\nCopyright"
            ),
            Some((10, 0))
        );
        assert_eq!(
            parse_qemu_version("QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)"),
            Some((7, 2))
        );
        assert_eq!(parse_qemu_version("something else"), None);
    }

    /// `.ci/run` writes the same sources entry and pin as this installer
    /// (a shell `printf` of the same text), so the two cannot drift.
    #[test]
    fn ci_run_writes_the_same_backports_files() {
        let ci = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../.ci/run"))
            .expect(".ci/run");
        for (path, contents) in [
            (BACKPORTS_SOURCES_FILE, BACKPORTS_SOURCES),
            (BACKPORTS_PIN_FILE, BACKPORTS_PIN),
        ] {
            let printf = format!("printf '{}'", contents.replace('\n', "\\n"));
            assert!(ci.contains(&printf), ".ci/run lacks {printf}");
            assert!(ci.contains(&format!("> {path}")), ".ci/run lacks > {path}");
        }
        assert!(ci.contains(&format!(
            "-t {BACKPORTS_SUITE} qemu-system-x86 qemu-system-arm ovmf"
        )));
    }

    #[test]
    fn find_in_path_finds_sh_and_not_nonsense() {
        assert!(find_in_path("sh").is_some());
        assert!(find_in_path("vigil-no-such-binary-anywhere").is_none());
    }
}
