//! The README as a newcomer reads it: short, every relative link resolving,
//! every `cargo xtask` command in a shell block accepted by the current
//! command line. The docs under `docs/` are held to the same link check.

use std::path::{Path, PathBuf};

use clap::Parser;
use xtask::cli::Cli;

/// The README's length limit, in lines (a front door, not the manual).
const README_MAX_LINES: usize = 250;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The targets of the Markdown links `[text](target)` in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        if let Some(end) = after.find(')') {
            targets.push(after[..end].to_string());
        }
        rest = after;
    }
    targets
}

/// Relative links of `file` whose file does not exist.
fn broken_links(file: &Path) -> Vec<String> {
    let dir = file.parent().unwrap();
    link_targets(&read(file))
        .into_iter()
        .filter(|target| !target.contains("://") && !target.starts_with('#'))
        .filter(|target| {
            let path = target.split('#').next().unwrap();
            !dir.join(path).exists()
        })
        .collect()
}

/// The `cargo xtask ...` lines of the ```sh blocks of `text`, without a
/// trailing `# comment`.
fn shell_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_shell = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_shell = !in_shell && (trimmed == "```sh" || trimmed == "```bash");
            continue;
        }
        if in_shell && trimmed.starts_with("cargo xtask") {
            let command = trimmed.split(" #").next().unwrap().trim();
            commands.push(command.to_string());
        }
    }
    commands
}

#[test]
fn the_readme_fits_on_a_few_screens() {
    let lines = read(&root().join("README.md")).lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, the limit is {README_MAX_LINES}: move detail to docs/"
    );
}

#[test]
fn every_relative_link_resolves() {
    let mut files = vec![
        root().join("README.md"),
        root().join("kernel/wake/README.md"),
    ];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") {
            files.push(path);
        }
    }
    let broken: Vec<String> = files
        .iter()
        .flat_map(|file| {
            broken_links(file)
                .into_iter()
                .map(move |target| format!("{}: {target}", file.display()))
        })
        .collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_command_in_the_readme_parses() {
    let commands = shell_commands(&read(&root().join("README.md")));
    assert!(!commands.is_empty(), "no cargo xtask command found");
    for command in commands {
        let words: Vec<&str> = command.split_whitespace().skip(1).collect();
        if let Err(err) = Cli::try_parse_from(words) {
            panic!("README command `{command}` does not parse: {err}");
        }
    }
}

#[test]
fn a_broken_link_and_a_bad_command_are_found() {
    assert_eq!(
        link_targets("see [a](x.md) and [b](http://y)"),
        vec!["x.md", "http://y"]
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("page.md");
    std::fs::write(&file, "[gone](missing.md) [self](page.md#top)").unwrap();
    assert_eq!(broken_links(&file), vec!["missing.md".to_string()]);
    let commands = shell_commands("```sh\ncargo xtask run --smp 0   # bad\n```\n");
    assert_eq!(commands, vec!["cargo xtask run --smp 0".to_string()]);
    let words: Vec<&str> = commands[0].split_whitespace().skip(1).collect();
    assert!(Cli::try_parse_from(words).is_err());
}
