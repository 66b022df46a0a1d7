//! Tidy check: every constant and name of the kernel-host protocol is
//! defined once, in `vigil-proto` (or, for policy and state names, in the
//! wake crate it re-exports), and used from there. The sources of every
//! crate are read as text, their test modules, in-kernel tests and comment
//! lines left out, and each needle must occur on exactly one line: its
//! definition. A second spelling of a name, a magic value or an exit code
//! fails here with the file and line that repeat it.

use std::fs;
use std::path::{Path, PathBuf};

use vigil_proto::boot_params::{Backoff, Fault, Key, Pool, Release, Workload};
use vigil_proto::exit_code::ExitCode;
use vigil_proto::wake_kind::WakeKind;
use vigil_proto::{Policy, State};

/// The source trees read, relative to the workspace root.
const SOURCE_TREES: [&str; 7] = [
    "kernel/src",
    "kernel/proto/src",
    "kernel/wake/src",
    "xtask/src",
    "boot/src",
    "qemu-tests/src",
    "peers/linux-laplace/src",
];

/// Folders of test code inside those trees (the in-kernel test suite).
const TEST_TREES: [&str; 1] = ["kernel/src/ktest"];

/// Whether `path` is a test module of its own (`#[cfg(test)] mod
/// round_trip_tests;`): the project names those `*tests.rs`.
fn is_test_file(path: &Path) -> bool {
    path.file_stem()
        .and_then(|stem| stem.to_str())
        .is_some_and(|stem| stem.ends_with("tests"))
}

/// A source line that is code, with where it is.
struct CodeLine {
    path: PathBuf,
    number: usize,
    text: String,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The code lines of one file: up to its `#[cfg(test)]` module (the
/// project keeps test modules last), without comment lines.
fn code_lines(root: &Path, path: &Path) -> Vec<CodeLine> {
    let text = fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let next = lines.get(index + 1).map_or("", |next| next.trim_start());
        if trimmed == "#[cfg(test)]" && next.starts_with("mod ") {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        out.push(CodeLine {
            path: path.strip_prefix(root).unwrap_or(path).to_path_buf(),
            number: index + 1,
            text: (*line).to_string(),
        });
    }
    out
}

fn all_code_lines() -> Vec<CodeLine> {
    let root = workspace_root();
    let mut files = Vec::new();
    for tree in SOURCE_TREES {
        rust_files(&root.join(tree), &mut files);
    }
    files.retain(|path| {
        !is_test_file(path)
            && !TEST_TREES
                .iter()
                .any(|tree| path.starts_with(root.join(tree)))
    });
    assert!(files.len() > 100, "found only {} source files", files.len());
    files
        .iter()
        .flat_map(|path| code_lines(&root, path))
        .collect()
}

/// The lines on which `matches` holds.
fn lines_where(lines: &[CodeLine], matches: impl Fn(&str) -> bool) -> Vec<&CodeLine> {
    lines.iter().filter(|line| matches(&line.text)).collect()
}

fn describe(lines: &[&CodeLine]) -> String {
    lines
        .iter()
        .map(|line| {
            format!(
                "  {}:{}: {}",
                line.path.display(),
                line.number,
                line.text.trim()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every needle that is not on exactly one line, with the lines it is on.
fn repeated(lines: &[CodeLine], needles: &[String]) -> Vec<String> {
    needles
        .iter()
        .filter_map(|needle| {
            let found = lines_where(lines, |text| text.contains(needle.as_str()));
            (found.len() != 1).then(|| {
                format!(
                    "{needle} is on {} code lines (want 1, its definition):\n{}",
                    found.len(),
                    describe(&found)
                )
            })
        })
        .collect()
}

fn quoted(name: &str) -> String {
    format!("\"{name}\"")
}

#[test]
fn names_are_spelled_once() {
    let lines = all_code_lines();
    let mut needles: Vec<String> = Policy::ALL.iter().map(|p| quoted(p.name())).collect();
    needles.extend(
        [
            State::Running,
            State::Halting,
            State::Halted,
            State::DontSleep,
        ]
        .map(|state| quoted(state.name())),
    );
    needles.push(quoted(WakeKind::Local.name()));
    let failures = repeated(&lines, &needles);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn boot_parameters_are_spelled_once() {
    let lines = all_code_lines();
    // Outside the proto crate a parameter line is built with `ParamLine`
    // (or messages name keys through `Key::name`), never spelled as a
    // literal `"key=...`.
    for key in Key::ALL {
        let literal = format!("\"{}=", key.name());
        let spelled = lines_where(&lines, |text| text.contains(&literal));
        assert!(
            spelled.is_empty(),
            "{literal} spelled by hand:\n{}",
            describe(&spelled)
        );
    }
    // The values with names of their own (the generic words `on`, `off`,
    // `run`, `test` and `none` are also cargo's, QEMU's and English's;
    // `fault=panic` shares its word with the panic exit code's label).
    let values = Fault::ALL
        .iter()
        .filter(|&&fault| fault != Fault::None && fault != Fault::Panic)
        .map(|value| value.name())
        .chain(
            Workload::ALL
                .iter()
                .filter(|&&w| w != Workload::None)
                .map(|w| w.name()),
        )
        .chain(Release::ALL.iter().map(|value| value.name()))
        .chain(Pool::ALL.iter().map(|value| value.name()))
        .chain(Backoff::ALL.iter().map(|value| value.name()));
    let needles: Vec<String> = values.map(quoted).collect();
    let failures = repeated(&lines, &needles);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn line_formats_and_file_names_are_spelled_once() {
    let lines = all_code_lines();
    let needles: Vec<String> = [
        // The literal's opening quote, then the text: a message that only
        // mentions the record (`bad VIGIL-STATS JSON`) is not a second
        // definition.
        format!("\"{}", vigil_proto::stats_line::STATS_PREFIX.trim_end()),
        format!(
            "\"{}",
            vigil_proto::serial_line::LOST_WAKEUP_PREFIX.trim_end()
        ),
        format!(
            "\"{}",
            vigil_proto::serial_line::STUCK_ROUND_PREFIX.trim_end()
        ),
        quoted(vigil_proto::serial_line::IDLE_START),
        quoted(vigil_proto::serial_line::IDLE_END),
        quoted(vigil_proto::boot_params::FW_CFG_FILE),
        quoted(vigil_proto::boot_params::RAMDISK_FILE),
        "\"vigil: exit ".to_string(),
    ]
    .into();
    let failures = repeated(&lines, &needles);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_debug_table_layout_is_written_once() {
    let lines = all_code_lines();
    let magic = format!("{:x}", vigil_proto::debug_table::MAGIC);
    let magic_lines = lines_where(&lines, |text| {
        text.replace('_', "").to_lowercase().contains(&magic)
    });
    assert_eq!(
        magic_lines.len(),
        1,
        "the magic 0x{magic}:\n{}",
        describe(&magic_lines)
    );
    // Every other crate takes the version and size from the proto crate:
    // no second `const VERSION`/`MAX_CORES` with a number of its own.
    for name in ["MAX_CORES", "VERSION"] {
        let numeric = lines_where(&lines, |text| {
            let Some((_, rest)) = text.split_once(&format!("const {name}:")) else {
                return false;
            };
            rest.split_once('=').is_some_and(|(_, value)| {
                value.trim_start().starts_with(|c: char| c.is_ascii_digit())
            })
        });
        assert_eq!(
            numeric.len(),
            1,
            "const {name} with a number:\n{}",
            describe(&numeric)
        );
    }
}

#[test]
fn exit_codes_are_written_once() {
    let lines = all_code_lines();
    // Hardware constants that happen to share a value with an exit code.
    let not_exit_codes = [
        ("kernel/src/arch/x86_64/pic.rs", "0x11"),
        ("kernel/src/arch/x86_64/lapic.rs", "0x10"),
        ("kernel/src/arch/x86_64/trampoline.rs", "0x10"),
        ("kernel/src/arch/x86_64/acpi_poweroff.rs", "0x12"),
    ];
    for code in ExitCode::ALL {
        let hex = format!("{:#04x}", code.code());
        let status = format!("({})", code.qemu_status());
        let found: Vec<&CodeLine> = lines_where(&lines, |text| {
            has_word(text, &hex) || text.contains(&status)
        })
        .into_iter()
        .filter(|line| {
            !not_exit_codes
                .iter()
                .any(|(path, value)| line.path == Path::new(path) && *value == hex)
        })
        .collect();
        assert_eq!(
            found.len(),
            1,
            "exit code {hex} (QEMU status {}):\n{}",
            code.qemu_status(),
            describe(&found)
        );
        assert!(
            found[0].path.starts_with("kernel/proto"),
            "{}",
            describe(&found)
        );
    }
}

/// `word` in `text`, not as part of a longer hex number or name.
fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[test]
fn the_scan_finds_a_repeated_name() {
    // The check itself can fail: a line that spells a policy name again
    // is reported with its place.
    let copy = CodeLine {
        path: PathBuf::from("xtask/src/example.rs"),
        number: 7,
        text: format!(
            "    Self::AlwaysIpi => {},",
            quoted(Policy::AlwaysIpi.name())
        ),
    };
    let mut lines = all_code_lines();
    lines.push(copy);
    let failures = repeated(&lines, &[quoted(Policy::AlwaysIpi.name())]);
    assert_eq!(failures.len(), 1);
    assert!(
        failures[0].contains("on 2 code lines") && failures[0].contains("xtask/src/example.rs:7"),
        "{}",
        failures[0]
    );
}
