//! A standalone copy of the wake crate in a scratch directory, which is
//! what every mutant is applied to: the tree is never modified.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::mutants::catalogue::Mutant;
use crate::runner::workspace::workspace_root;

/// The wake crate, relative to the workspace root.
pub const WAKE_CRATE: &str = "kernel/wake";

/// The edition the workspace sets (`[workspace.package]`), which the
/// standalone manifest writes out.
pub const EDITION: &str = "2024";

/// The wake crate's directory in the tree.
pub fn wake_crate_dir() -> PathBuf {
    workspace_root().join(WAKE_CRATE)
}

/// A copy of the crate, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: TempDir,
}

/// A mutant's find-text was not in its file exactly once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotApplied {
    /// How many times it was found.
    pub found: usize,
}

impl Scratch {
    /// Copies the crate (without any `target`), with its manifest made
    /// standalone, and the workspace's lock file and toolchain file.
    ///
    /// The copies get fresh modification times (`fs::copy` does not keep
    /// the originals'), so cargo rebuilds from this copy: every copy has
    /// the same package id, and with the originals' times a copy whose
    /// files are all older than the last build in the shared target
    /// directory would reuse that build, the previous mutant's binary.
    pub fn new(label: &str) -> io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("wake-mutant-{label}-"))
            .tempdir()?;
        copy_tree(&wake_crate_dir(), dir.path())?;
        let manifest = dir.path().join("Cargo.toml");
        let text = fs::read_to_string(&manifest)?;
        fs::write(&manifest, standalone_manifest(&text))?;
        let root = workspace_root();
        for shared in ["Cargo.lock", "rust-toolchain.toml"] {
            let from = root.join(shared);
            if from.exists() {
                fs::copy(&from, dir.path().join(shared))?;
            }
        }
        Ok(Self { dir })
    }

    /// The copy's root (its `Cargo.toml`).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Applies `mutant` to the copy.
    pub fn apply(&self, mutant: &Mutant) -> io::Result<Result<(), NotApplied>> {
        let source = self.path().join(mutant.file);
        let text = fs::read_to_string(&source)?;
        match mutate(&text, mutant) {
            Ok(mutated) => fs::write(&source, mutated).map(Ok),
            Err(not_applied) => Ok(Err(not_applied)),
        }
    }
}

/// `text` with `mutant` applied: its find-text replaced (it must occur
/// exactly once) and its helpers appended.
pub fn mutate(text: &str, mutant: &Mutant) -> Result<String, NotApplied> {
    let found = text.matches(mutant.find).count();
    if found != 1 || mutant.find.is_empty() {
        return Err(NotApplied { found });
    }
    let mut mutated = text.replacen(mutant.find, mutant.replace, 1);
    mutated.push_str(mutant.helpers);
    Ok(mutated)
}

/// The crate's manifest with the workspace inheritance replaced: its own
/// version and edition, no license or publish keys, only the lint the
/// `cfg(loom)` build needs, and an empty `[workspace]` of its own.
pub fn standalone_manifest(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 128);
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        match line {
            "version.workspace = true" => out.push_str("version = \"0.0.0\"\n"),
            "edition.workspace = true" => out.push_str(&format!("edition = \"{EDITION}\"\n")),
            "license.workspace = true" | "publish.workspace = true" => {}
            "[lints]" if lines.peek() == Some(&"workspace = true") => {
                lines.next();
                out.push_str(
                    "[lints.rust]\n\
                     unexpected_cfgs = { level = \"warn\", check-cfg = [\"cfg(loom)\"] }\n",
                );
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out.push_str("\n[workspace]\n\n[profile.release]\ndebug = false\n");
    out
}

/// Copies `from` into `to` recursively, leaving out `target` directories.
fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let destination = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if entry.file_name() != "target" {
                copy_tree(&entry.path(), &destination)?;
            }
        } else {
            fs::copy(entry.path(), &destination)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::mutants::catalogue;

    #[test]
    fn the_standalone_manifest_inherits_nothing() {
        let text = fs::read_to_string(wake_crate_dir().join("Cargo.toml")).unwrap();
        let manifest = standalone_manifest(&text);
        assert!(!manifest.contains("workspace = true"), "{manifest}");
        assert!(manifest.contains("\n[workspace]\n"), "{manifest}");
        assert!(manifest.contains("version = \"0.0.0\"\n"), "{manifest}");
        assert!(
            manifest.contains("check-cfg = [\"cfg(loom)\"]"),
            "{manifest}"
        );
        assert!(manifest.contains("[dev-dependencies]"), "{manifest}");
    }

    #[test]
    fn the_edition_is_the_workspaces() {
        let root = fs::read_to_string(workspace_root().join("Cargo.toml")).unwrap();
        assert!(
            root.lines()
                .any(|line| line == format!("edition = \"{EDITION}\"")),
            "the workspace's edition is no longer {EDITION}"
        );
    }

    #[test]
    fn a_mutation_replaces_its_text_once_and_appends_its_helpers() {
        let mutant = catalogue::Mutant {
            name: "t",
            file: "f.rs",
            find: "b",
            replace: "B",
            helpers: "\n// helpers\n",
            ..catalogue::Mutant::BASE
        };
        assert_eq!(mutate("abc", &mutant).unwrap(), "aBc\n// helpers\n");
        assert_eq!(mutate("ac", &mutant), Err(NotApplied { found: 0 }));
        assert_eq!(mutate("abcb", &mutant), Err(NotApplied { found: 2 }));
    }

    #[test]
    fn the_copy_is_fresh_and_the_tree_untouched() {
        let mutant = catalogue::find("skip-recheck").unwrap();
        let original = fs::read_to_string(wake_crate_dir().join(mutant.file)).unwrap();
        // Allowing for the file system's timestamp granularity.
        let before = SystemTime::now() - Duration::from_secs(2);
        let scratch = Scratch::new("test").unwrap();
        assert!(scratch.path().join("Cargo.lock").exists());
        assert!(!scratch.path().join("target").exists());
        let copied = scratch.path().join(mutant.file);
        let copied_at = fs::metadata(&copied).unwrap().modified().unwrap();
        assert!(copied_at >= before, "the copy kept the original's mtime");
        scratch.apply(mutant).unwrap().unwrap();
        assert!(
            fs::read_to_string(&copied)
                .unwrap()
                .contains(mutant.replace)
        );
        assert_eq!(
            fs::read_to_string(wake_crate_dir().join(mutant.file)).unwrap(),
            original
        );
        let path = scratch.path().to_path_buf();
        drop(scratch);
        assert!(!path.exists());
    }
}
