//! The numeric ranges the help texts state, against the constants the
//! parsers check: a help text that says `1..=64` where the parser takes
//! `1..=256` is a test failure, not a user's surprise.

use clap::CommandFactory;

use crate::campaign::scope::{JOBS_RANGE, RUNS_RANGE};
use crate::cli::Cli;
use crate::runner::platform::{PC_MAX_SMP, SMP_RANGE, XAPIC_MAX_SMP};
use vigil_proto::boot_params::{
    CHUNKS_RANGE, GRID_SIZE_RANGE, ITERATIONS_RANGE, WATCHDOG_MS_RANGE,
};

/// Every `A..=B` in `text`, as numbers (digits and `_` on each side).
pub fn ranges_in(text: &str) -> Vec<(u64, u64)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("..=") {
        let before = &rest[..at];
        let start: String = before
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == '_')
            .collect::<String>()
            .chars()
            .rev()
            .filter(char::is_ascii_digit)
            .collect();
        let after = &rest[at + 3..];
        let end: String = after
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '_')
            .filter(char::is_ascii_digit)
            .collect();
        if let (Ok(start), Ok(end)) = (start.parse(), end.parse()) {
            found.push((start, end));
        }
        rest = after;
    }
    found
}

/// The range the parser of option `--id` of subcommand `path` checks, if
/// its help may state one.
pub fn parser_range(path: &str, id: &str) -> Option<(u64, u64)> {
    let range =
        |r: std::ops::RangeInclusive<u32>| Some((u64::from(*r.start()), u64::from(*r.end())));
    match (path, id) {
        ("run" | "stress" | "bench", "smp") => range(SMP_RANGE),
        ("stress" | "bench", "runs") => range(RUNS_RANGE),
        ("stress" | "mutants", "jobs") => range(JOBS_RANGE),
        ("stress", "size") => range(GRID_SIZE_RANGE),
        ("stress", "iterations") => range(ITERATIONS_RANGE),
        ("stress", "chunks") => range(CHUNKS_RANGE),
        ("stress", "watchdog_ms") => range(WATCHDOG_MS_RANGE),
        ("run" | "stress", "bochs_quantum") => range(crate::runner::bochs::QUANTUM_RANGE),
        ("replay", "times") => range(crate::stress::replay::TIMES_RANGE),
        ("run" | "bench", "host_cores") => range(crate::runner::host_cores::HOST_CORES_RANGE),
        ("peer-bench", "runs") => range(crate::commands::peer_bench::RUNS_RANGE),
        ("peer-bench", "repeats") => range(crate::commands::peer_bench::REPEATS_RANGE),
        ("peer-bench", "jobs") => range(crate::commands::peer_bench::JOBS_RANGE),
        ("peer-bench", "idle_ms") => range(crate::commands::peer_bench::IDLE_MS_RANGE),
        ("peer-bench", "workers") => range(crate::commands::peer_bench::WORKERS_RANGE),
        _ => None,
    }
}

/// Every disagreement between a help text's ranges (and its "above N"
/// core-count limits) and the parsers' constants, one line each.
pub fn disagreements() -> Vec<String> {
    let mut problems = Vec::new();
    let mut command = Cli::command();
    command.build();
    for sub in command.get_subcommands() {
        let path = sub.get_name();
        for arg in sub.get_arguments() {
            let id = arg.get_id().as_str();
            let help = [arg.get_help(), arg.get_long_help()]
                .into_iter()
                .flatten()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ");
            for stated in ranges_in(&help) {
                match parser_range(path, id) {
                    Some(parsed) if parsed == stated => {}
                    Some(parsed) => problems.push(format!(
                        "{path} --{id}: help says {}..={}, the parser takes {}..={}",
                        stated.0, stated.1, parsed.0, parsed.1
                    )),
                    None => problems.push(format!(
                        "{path} --{id}: help says {}..={}, and no parser constant is known for it (add it to parser_range)",
                        stated.0, stated.1
                    )),
                }
            }
            if id == "smp" {
                for (limit, what) in [
                    (XAPIC_MAX_SMP, "--apic x2apic"),
                    (PC_MAX_SMP, "--machine q35"),
                ] {
                    let says = format!("above {limit} with {what}");
                    let mentions_what = help.contains(what);
                    if mentions_what && !help.replace('\n', " ").contains(&says) {
                        problems.push(format!("{path} --smp: help names {what} but not `{says}`"));
                    }
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_found_with_underscores_and_words_around() {
        assert_eq!(
            ranges_in("(each 1..=256; x 4..=4_096)"),
            vec![(1, 256), (4, 4096)]
        );
        assert_eq!(ranges_in("no range"), vec![]);
    }

    #[test]
    fn every_range_in_the_help_is_the_parsers() {
        let problems = disagreements();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn a_wrong_range_in_a_help_text_is_found() {
        // The old `--smp` help, against the parser's constant.
        let stated = ranges_in("Core counts, comma-separated (each 1..=64).");
        assert_ne!(Some(stated[0]), parser_range("stress", "smp"));
    }
}
