//! The parts of the documentation generated from the code, so that they
//! cannot drift: every subcommand's `--help` and the kernel-parameter and
//! fault tables in `docs/harness.md` (`cargo xtask docs` rewrites them; a
//! test fails when they differ), and the check that every numeric range a
//! help text states is the constant the parser uses; and the Markdown's
//! relative links and the README's commands checked against the tree.

pub mod cli_help;
pub mod generated_blocks;
pub mod help_ranges;
pub mod markdown_links;
pub mod param_table;
