//! Every subcommand's `--help`, as `cargo xtask SUBCOMMAND --help` prints
//! it (clap without terminal-width wrapping: the text does not depend on
//! the terminal).

use clap::CommandFactory;

use crate::cli::Cli;

/// The subcommand paths documented in `docs/harness.md`, each as its words
/// after `cargo xtask` (`["stress", "merge"]`).
pub fn subcommand_paths() -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    fn walk(command: &clap::Command, prefix: &[String], paths: &mut Vec<Vec<String>>) {
        for sub in command.get_subcommands() {
            if sub.get_name() == "help" {
                continue;
            }
            let mut path = prefix.to_vec();
            path.push(sub.get_name().to_string());
            paths.push(path.clone());
            walk(sub, &path, paths);
        }
    }
    walk(&Cli::command(), &[], &mut paths);
    paths
}

/// `cargo xtask PATH... --help`.
pub fn long_help(path: &[String]) -> String {
    let mut command = Cli::command();
    command.build();
    let mut current = &mut command;
    for name in path {
        current = current
            .find_subcommand_mut(name)
            .unwrap_or_else(|| panic!("no subcommand {name}"));
    }
    current.render_long_help().to_string()
}

/// One subcommand's help as Markdown: a heading and a fenced text block.
pub fn help_block(path: &[String]) -> String {
    format!(
        "### `cargo xtask {} --help`\n\n```text\n{}\n```",
        path.join(" "),
        long_help(path).trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subcommand_is_listed_and_has_help() {
        let paths = subcommand_paths();
        for expected in ["build", "run", "test", "stress", "bench", "mutants"] {
            assert!(
                paths.iter().any(|path| path == &[expected.to_string()]),
                "{expected} missing from {paths:?}"
            );
        }
        assert!(paths.contains(&vec!["stress".to_string(), "merge".to_string()]));
        for path in &paths {
            assert!(long_help(path).contains("Usage: cargo xtask"), "{path:?}");
        }
    }
}
