//! A copy of the kernel ELF without its debug sections, for the disk
//! images. The bootloader reads the whole ELF through the firmware's disk
//! services, which under TCG costs seconds per megabyte: the debug build's
//! 8 MB ELF took ~7 s to boot at any core count, its ~0.3-1 MB stripped
//! copy under 2 s. The full ELF stays next to the images for gdb and for
//! symbolizing RIPs; code and symbols (`.symtab`) are unchanged.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::runner::install::find_in_path;
use crate::runner::workspace::workspace_root;

/// `llvm-objcopy` of the pinned toolchain (its `llvm-tools` component),
/// else binutils' `objcopy`; `None` if neither exists.
pub fn objcopy() -> Option<PathBuf> {
    toolchain_llvm_objcopy().or_else(|| find_in_path("objcopy"))
}

/// Writes `to`, a copy of `from` without debug sections.
pub fn strip_debug(from: &Path, to: &Path) -> Result<(), String> {
    let tool = objcopy().ok_or_else(|| {
        "neither the toolchain's llvm-objcopy (rustup component llvm-tools) nor objcopy (binutils) was found".to_string()
    })?;
    let output = Command::new(&tool)
        .arg("--strip-debug")
        .arg(from)
        .arg(to)
        .output()
        .map_err(|err| format!("could not run {}: {err}", tool.display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} --strip-debug failed ({}): {}",
            tool.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// `<sysroot>/lib/rustlib/<host>/bin/llvm-objcopy`, the sysroot being the
/// toolchain that runs us (`$CARGO` is `<sysroot>/bin/cargo` under cargo)
/// or, failing that, `rustc --print sysroot` in the workspace.
fn toolchain_llvm_objcopy() -> Option<PathBuf> {
    let from_cargo = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .and_then(|cargo| Some(cargo.parent()?.parent()?.to_path_buf()));
    let sysroots = from_cargo.into_iter().chain(rustc_sysroot());
    for sysroot in sysroots {
        let rustlib = sysroot.join("lib").join("rustlib");
        let Ok(entries) = std::fs::read_dir(&rustlib) else {
            continue;
        };
        for entry in entries.flatten() {
            let candidate = entry.path().join("bin").join("llvm-objcopy");
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

fn rustc_sysroot() -> Option<PathBuf> {
    let output = Command::new("rustc")
        .args(["--print", "sysroot"])
        .current_dir(workspace_root())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_objcopy_is_found_here() {
        // The pinned toolchain carries llvm-tools (rust-toolchain.toml).
        assert!(objcopy().is_some());
    }

    #[test]
    fn a_non_elf_is_an_error_not_a_copy() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("not-elf");
        std::fs::write(&from, b"hello").unwrap();
        let to = dir.path().join("out");
        assert!(strip_debug(&from, &to).is_err());
    }
}
