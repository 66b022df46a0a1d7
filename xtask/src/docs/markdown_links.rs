//! The project's Markdown checked against the tree: every relative link
//! (and image) names a file that exists and, with `#anchor`, a heading of
//! that file (GitHub's anchor rules); every `cargo xtask` command in the
//! README's code blocks parses with the current CLI.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use clap::Parser;

use crate::cli::Cli;

/// The Markdown files a reader follows links through, relative to the
/// workspace root.
pub const CHECKED_DOCS: &[&str] = &[
    "README.md",
    "docs/design.md",
    "docs/harness.md",
    "docs/results.md",
    "kernel/wake/README.md",
];

/// GitHub's anchor for a heading: lowercase, characters other than
/// letters, digits, spaces, `-` and `_` removed, spaces turned to `-`.
pub fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The lines of `text` that are not fence lines, with their line numbers
/// (from 1) and whether they sit inside a fenced code block.
fn lines_by_fence(text: &str) -> impl Iterator<Item = (usize, &str, bool)> {
    let mut in_fence = false;
    text.lines().enumerate().filter_map(move |(index, line)| {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            return None;
        }
        Some((index + 1, line, in_fence))
    })
}

/// The lines of `text` outside fenced code blocks, with their line numbers.
fn prose_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    lines_by_fence(text)
        .filter_map(|(number, line, in_fence)| (!in_fence).then_some((number, line)))
}

/// Every anchor a file's headings give, a repeated heading numbered as
/// GitHub numbers it (`-1`, `-2`, ...).
pub fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for (_, line) in prose_lines(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        // A closing run of `#`s is not part of the heading.
        let base = heading_anchor(heading.trim_end().trim_end_matches('#'));
        let mut anchor = base.clone();
        let mut n = 0;
        while !seen.insert(anchor.clone()) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
    }
    seen
}

/// Removes inline code spans (a link inside backticks is not a link).
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_span = false;
    for c in line.chars() {
        if c == '`' {
            in_span = !in_span;
        } else if !in_span {
            out.push(c);
        }
    }
    out
}

/// The targets of `[text](target)` and `![alt](target)` links on the
/// prose lines of `text`, with their line numbers. A link whose text
/// wraps onto the next line is found by its `](` on the second line.
pub fn link_targets(text: &str) -> Vec<(usize, String)> {
    let mut targets = Vec::new();
    for (number, line) in prose_lines(text) {
        let line = without_code_spans(line);
        let mut rest = line.as_str();
        while let Some(start) = rest.find("](") {
            let after = &rest[start + 2..];
            let Some(end) = after.find(')') else {
                break;
            };
            let target = after[..end].split_whitespace().next().unwrap_or("");
            targets.push((number, target.to_string()));
            rest = &after[end..];
        }
    }
    targets
}

/// What is wrong with `target`, a link in `from` (a file under `root`):
/// `None` when it resolves. External links are not followed.
fn broken_link(root: &Path, from: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file: PathBuf = if path.is_empty() {
        from.to_path_buf()
    } else {
        from.parent().unwrap_or(Path::new("")).join(path)
    };
    let full = root.join(&file);
    if !full.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let anchor = anchor?;
    if full.extension().is_none_or(|ext| ext != "md") {
        return Some(format!(
            "#{anchor} points into {}, not Markdown",
            file.display()
        ));
    }
    let text = match fs::read_to_string(&full) {
        Ok(text) => text,
        Err(err) => return Some(format!("{} could not be read: {err}", file.display())),
    };
    (!anchors(&text).contains(anchor)).then(|| {
        format!(
            "{} has no heading with the anchor #{anchor}",
            file.display()
        )
    })
}

/// Every broken relative link in `docs` (paths relative to `root`), as
/// `file:line: target: what is wrong`.
pub fn broken_links(root: &Path, docs: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for doc in docs {
        let from = Path::new(doc);
        let text = match fs::read_to_string(root.join(from)) {
            Ok(text) => text,
            Err(err) => {
                problems.push(format!("{doc}: {err}"));
                continue;
            }
        };
        for (line, target) in link_targets(&text) {
            if let Some(problem) = broken_link(root, from, &target) {
                problems.push(format!("{doc}:{line}: {target}: {problem}"));
            }
        }
    }
    problems
}

/// The `cargo xtask` commands on the lines of `text`'s fenced code blocks
/// (a trailing `# comment` dropped), with their line numbers.
pub fn code_block_commands(text: &str) -> Vec<(usize, String)> {
    lines_by_fence(text)
        .filter(|&(_, _, in_fence)| in_fence)
        .filter_map(|(number, line, _)| {
            let command = line.trim_start().strip_prefix("cargo xtask")?;
            (command.is_empty() || command.starts_with(' ')).then(|| {
                let command = command.split(" #").next().unwrap_or("").trim();
                (number, command.to_string())
            })
        })
        .collect()
}

/// Why `cargo xtask <args>` would not parse (`None`: it parses).
pub fn unparsed_command(args: &str) -> Option<String> {
    let argv = std::iter::once("cargo xtask").chain(args.split_whitespace());
    Cli::try_parse_from(argv)
        .err()
        .map(|err| err.render().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::workspace::workspace_root;

    #[test]
    fn anchors_follow_githubs_rules() {
        assert_eq!(
            heading_anchor(" Detector coverage, 20 boots (QEMU 10.0.2, at `c03d026`)"),
            "detector-coverage-20-boots-qemu-1002-at-c03d026"
        );
        let text = "# Title\n## Runs\n```\n## not a heading\n```\n## Runs\n#nope\n## Closed ##\n";
        let found = anchors(text);
        let expected: HashSet<String> = ["title", "runs", "runs-1", "closed"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn links_are_found_outside_code() {
        let text = "see [a](docs/a.md#x) and ![p](p.svg)\n`[no](no.md)`\n```\n[no](no.md)\n```\n";
        let targets: Vec<String> = link_targets(text).into_iter().map(|(_, t)| t).collect();
        assert_eq!(targets, ["docs/a.md#x", "p.svg"]);
    }

    #[test]
    fn a_wrong_file_or_anchor_is_reported() {
        let root = workspace_root();
        let readme = Path::new("README.md");
        assert_eq!(broken_link(&root, readme, "docs/design.md#coverage"), None);
        assert_eq!(broken_link(&root, readme, "https://example.com/x"), None);
        assert!(broken_link(&root, readme, "docs/nothing-here.md").is_some());
        let problem = broken_link(&root, readme, "docs/design.md#no-such-section").unwrap();
        assert!(problem.contains("#no-such-section"), "{problem}");
    }

    #[test]
    fn every_relative_link_in_the_docs_resolves() {
        let problems = broken_links(&workspace_root(), CHECKED_DOCS);
        assert!(
            problems.is_empty(),
            "broken links:\n{}",
            problems.join("\n")
        );
    }

    #[test]
    fn every_readme_command_parses_with_the_current_cli() {
        let readme = fs::read_to_string(workspace_root().join("README.md")).unwrap();
        let commands = code_block_commands(&readme);
        assert!(
            commands.iter().any(|(_, command)| command == "run")
                && commands.iter().any(|(_, command)| command == "test"),
            "the README's two commands are not in a code block: {commands:?}"
        );
        for (line, command) in commands {
            if let Some(err) = unparsed_command(&command) {
                panic!("README.md:{line}: `cargo xtask {command}` does not parse:\n{err}");
            }
        }
    }

    #[test]
    fn a_command_the_cli_does_not_know_is_reported() {
        assert_eq!(unparsed_command("run --smp 4"), None);
        assert!(unparsed_command("run --smp 0").is_some());
        assert!(unparsed_command("frobnicate").is_some());
        let block = "```sh\ncargo xtask stress --runs 2   # many\n```\ncargo xtask nope\n";
        assert_eq!(
            code_block_commands(block),
            [(2, "stress --runs 2".to_string())]
        );
    }
}
