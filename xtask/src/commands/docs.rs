//! `cargo xtask docs`: rewrites the generated blocks of `docs/harness.md`
//! (every subcommand's `--help`, the kernel-parameter and fault tables);
//! `--check` only compares, and fails naming the blocks that differ (what
//! the test of the same name does in `cargo xtask test`).

use std::path::PathBuf;

use crate::cli::DocsArgs;
use crate::docs::cli_help::{help_block, subcommand_paths};
use crate::docs::generated_blocks::replace_blocks;
use crate::docs::param_table::{fault_table, kernel_parameter_table};
use crate::error::{Result, XtaskError};
use crate::runner::workspace::workspace_root;

/// The harness manual, relative to the workspace root.
pub const HARNESS_DOC: &str = "docs/harness.md";

/// Every generated block of the manual: (name, body).
pub fn harness_blocks() -> Vec<(String, String)> {
    let help = subcommand_paths()
        .iter()
        .map(|path| help_block(path))
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut blocks = vec![("help".to_string(), help)];
    blocks.push(("kernel parameters".into(), kernel_parameter_table()));
    blocks.push(("faults".into(), fault_table()));
    blocks
}

/// The manual's path.
pub fn harness_doc_path() -> PathBuf {
    workspace_root().join(HARNESS_DOC)
}

/// The manual as it should be: `current` with its blocks regenerated.
pub fn regenerated(current: &str) -> std::result::Result<String, String> {
    replace_blocks(current, &harness_blocks())
}

/// `cargo xtask docs [--check]`.
pub fn run(args: &DocsArgs) -> Result<()> {
    let path = harness_doc_path();
    let current = std::fs::read_to_string(&path)
        .map_err(|err| XtaskError::failed(format!("reading {}: {err}", path.display())))?;
    let new =
        regenerated(&current).map_err(|err| XtaskError::failed(format!("{HARNESS_DOC}: {err}")))?;
    if new == current {
        println!("xtask: {HARNESS_DOC} is up to date");
        return Ok(());
    }
    if args.check {
        return Err(XtaskError::failed(format!(
            "{HARNESS_DOC} differs from the code's help texts and vigil-proto's tables: run `cargo xtask docs`"
        )));
    }
    std::fs::write(&path, new)
        .map_err(|err| XtaskError::failed(format!("writing {}: {err}", path.display())))?;
    println!("xtask: rewrote the generated blocks of {HARNESS_DOC}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_manual_matches_the_help_texts_and_proto() {
        let current = std::fs::read_to_string(harness_doc_path()).unwrap();
        let new = regenerated(&current).unwrap();
        if new != current {
            let first = current
                .lines()
                .zip(new.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| current.lines().count().min(new.lines().count()));
            panic!(
                "{HARNESS_DOC} is out of date from line {}: run `cargo xtask docs`\n  doc:  {:?}\n  code: {:?}",
                first + 1,
                current.lines().nth(first),
                new.lines().nth(first)
            );
        }
    }
}
