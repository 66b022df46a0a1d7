//! Where things are: the workspace root, the kernel's target directory, and
//! a `cargo` command that uses the same toolchain as the caller.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Target triple the kernel is built for.
pub const KERNEL_TARGET: &str = "x86_64-unknown-none";
/// Cargo package (and binary) name of the kernel.
pub const KERNEL_PACKAGE: &str = "vigil-kernel";

/// The workspace root (the directory holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one directory below the workspace root")
        .to_path_buf()
}

/// The kernel's own target directory. It is separate from `target/` because
/// the QEMU tests build the kernel from inside `cargo test`, which holds the
/// main target directory's lock for the whole run.
pub fn kernel_target_dir() -> PathBuf {
    workspace_root().join("target").join("kernel")
}

/// Target directory of the loom model-checking build (its `--cfg loom`
/// would otherwise invalidate the normal build's artifacts every time).
pub fn loom_target_dir() -> PathBuf {
    workspace_root().join("target").join("loom")
}

/// Target directory the mutation run's scratch copies of the wake crate
/// share (built with `--cfg loom`, like [`loom_target_dir`], but as a
/// standalone crate: its artifacts would not be the workspace's).
pub fn loom_mutants_target_dir() -> PathBuf {
    workspace_root().join("target").join("loom-mutants")
}

/// A `cargo` command run from the workspace root. Uses `$CARGO` when set
/// (it is under `cargo run` and `cargo test`), so the pinned toolchain
/// builds everything.
pub fn cargo() -> Command {
    let program = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut command = Command::new(program);
    command.current_dir(workspace_root());
    command
}

/// Renders a command line for the log, quoting arguments that contain
/// spaces or shell metacharacters so it can be pasted into a shell.
pub fn display_command(command: &Command) -> String {
    let mut words = vec![shell_quote(&command.get_program().to_string_lossy())];
    words.extend(
        command
            .get_args()
            .map(|arg| shell_quote(&arg.to_string_lossy())),
    );
    words.join(" ")
}

fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_root_holds_the_workspace_manifest() {
        let manifest = std::fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
        assert!(manifest.contains("[workspace]"));
    }

    #[test]
    fn display_command_quotes_only_what_needs_it() {
        let mut command = Command::new("qemu-system-x86_64");
        command
            .args(["-smp", "4", "-fw_cfg"])
            .arg("name=opt/vigil/cmdline,string=mode=test seed=1")
            .arg("it's");
        assert_eq!(
            display_command(&command),
            "qemu-system-x86_64 -smp 4 -fw_cfg 'name=opt/vigil/cmdline,string=mode=test seed=1' 'it'\\''s'"
        );
    }
}
