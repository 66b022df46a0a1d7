//! Replaying a recorded Bochs boot: the boot a stress JSON file holds is
//! booted again with the same build, image parameters, core count and
//! Bochs settings (all read back from its reproduce command and checked
//! against its spec), and its serial output compared with the recording
//! byte for byte. Under Bochs with `clock: sync=none` a boot depends on
//! nothing else, so any difference is news: another kernel, another Bochs,
//! or a source of nondeterminism to find.

use std::path::Path;

use clap::Parser;

use crate::campaign::boot_record::serial_fingerprint;
use crate::campaign::run_class::RunClass;
use crate::cli::{Cli, Command, RunArgs};
use crate::error::{Result, XtaskError};
use crate::guest::serial_diff::{
    FirstDifference, first_difference, first_difference_in_common_prefix,
};
use crate::guest::settings::{in_range, parse_count};
use crate::runner::bochs::{self, BochsOutcome};
use crate::runner::kernel_build::{
    BuildConfig, KernelArtifacts, bios_image_with_params, image_elf_fingerprint,
};
use crate::runner::platform::Emulator;
use crate::stress::runner::StressRun;
use crate::stress::shard::read_stress_file;

/// What `replay --times` takes: boots of the one recording.
pub const TIMES_RANGE: std::ops::RangeInclusive<u32> = 1..=1000;

/// Parses `replay --times`: how many times to boot the recording, 1..=1000.
pub fn parse_times(text: &str) -> std::result::Result<u32, String> {
    let times = parse_count(text, "replay count")?;
    in_range(times, &TIMES_RANGE, "--times")
}

/// One recorded boot, ready to boot again.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The boot as the file holds it.
    pub run: StressRun,
    /// The kernel build its reproduce command names.
    pub build: BuildConfig,
}

/// Reads the boot `order` (default: the first boot that did not pass, or
/// the first boot) from a stress JSON file. A missing or unreadable file,
/// an order not in it, or a boot made under QEMU are usage errors.
pub fn load(path: &Path, order: Option<u64>) -> Result<Recording> {
    let file = read_stress_file(path)?;
    let orders = || {
        file.runs
            .iter()
            .map(|run| run.planned.order.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let run = match order {
        Some(order) => file
            .runs
            .iter()
            .find(|run| run.planned.order == order)
            .ok_or_else(|| {
                XtaskError::usage(format!(
                    "{} has no boot with order {order} (it has: {})",
                    path.display(),
                    orders()
                ))
            })?,
        None => file
            .runs
            .iter()
            .find(|run| !run.record.class.is_pass())
            .or_else(|| file.runs.first())
            .ok_or_else(|| XtaskError::usage(format!("{} holds no boot", path.display())))?,
    };
    if run.planned.boot.bochs.is_none() {
        return Err(XtaskError::usage(format!(
            "boot {} of {} ran under QEMU, whose SMP boots do not replay (no record/replay with several vCPUs; TCG's interleaving follows the host): record it with `cargo xtask stress --emulator bochs --json FILE`",
            run.planned.order,
            path.display()
        )));
    }
    let build = build_of(run)?;
    Ok(Recording {
        run: run.clone(),
        build,
    })
}

/// The run arguments a reproduce command (`cargo xtask run ...`) stands
/// for, parsed by the command line's own definition.
pub fn parse_reproduce(command: &str) -> Result<RunArgs> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let bad = |why: String| XtaskError::usage(format!("the recorded command `{command}` {why}"));
    let Some(["cargo", "xtask", rest @ ..]) = Some(&words[..]) else {
        return Err(bad("is not a `cargo xtask` command".to_string()));
    };
    let cli = Cli::try_parse_from(std::iter::once("cargo-xtask").chain(rest.iter().copied()))
        .map_err(|err| bad(format!("does not parse: {}", err.kind())))?;
    match cli.command {
        Command::Run(args) => Ok(args),
        _ => Err(bad("is not `cargo xtask run`".to_string())),
    }
}

/// The build of a recorded Bochs boot, from its reproduce command, which
/// must agree with the spec on cores, parameters and settings.
fn build_of(run: &StressRun) -> Result<BuildConfig> {
    let spec = &run.planned.boot;
    let mut args = parse_reproduce(&spec.reproduce)?;
    // Reproduce commands from before `--bochs-turn` ran the debugger's
    // `continue`.
    args.bochs.bochs_turn = args.bochs.bochs_turn.or(Some(bochs::CONTINUE_TURN));
    let agrees = args.emulator == Emulator::Bochs
        && args.smp == spec.smp
        && args.params == spec.params
        && Some(args.bochs.settings()) == spec.bochs;
    if !agrees {
        return Err(XtaskError::usage(format!(
            "boot {}: its reproduce command `{}` and its recorded spec (smp {}, params `{}`, Bochs {:?}) disagree",
            run.planned.order,
            spec.reproduce,
            spec.smp,
            spec.params.join(" "),
            spec.bochs
        )));
    }
    Ok(args.build.build_config())
}

/// How a replay came out.
#[derive(Debug, Clone)]
pub struct Replayed {
    /// The replayed boot.
    pub outcome: BochsOutcome,
    /// Where its serial output first differs from the recording (`None`:
    /// the same bytes).
    pub difference: Option<FirstDifference>,
    /// The recorded or the replayed boot was cut at a wall-clock limit
    /// (timed out, or stuck at the stall limit), so only the output both
    /// have was compared.
    pub compared_prefix_only: bool,
    /// The FNV-1a of the replayed bytes.
    pub serial_fnv1a: String,
    /// The kernel now, when it is not the one recorded: (recorded, now).
    pub other_kernel: Option<(String, String)>,
}

impl Replayed {
    /// Whether the replay printed what the recording holds.
    pub fn is_identical(&self) -> bool {
        self.difference.is_none()
    }
}

/// Boots `recording` again on `kernel` (built with [`Recording::build`])
/// and compares the serial output with the recording.
pub fn replay(recording: &Recording, kernel: &KernelArtifacts, echo: bool) -> Result<Replayed> {
    replay_with_debugger(recording, kernel, echo, None)
}

/// [`replay`], with Bochs's debugger running `debugger_commands` (what it
/// printed is in the outcome's `debugger_log`).
pub fn replay_with_debugger(
    recording: &Recording,
    kernel: &KernelArtifacts,
    echo: bool,
    debugger_commands: Option<String>,
) -> Result<Replayed> {
    let spec = &recording.run.planned.boot;
    let Some(mut config) = spec.bochs_config() else {
        return Err(XtaskError::usage("not a Bochs boot"));
    };
    config.echo = echo;
    if debugger_commands.is_some() {
        // Stops are slow: no stall limit, and a timeout of so many times
        // the recorded boot's wall time (at least 10 minutes), at most so
        // many times its own.
        let factor = crate::stress::explain::EXPLAIN_TIMEOUT_FACTOR;
        let recorded_s = recording.run.record.wall_s.max(0.0) as u64;
        config.stall_s = None;
        config.timeout_s = recorded_s
            .saturating_mul(factor)
            .max(600)
            .min(config.timeout_s.saturating_mul(factor));
    }
    config.debugger_commands = debugger_commands;
    let image = bios_image_with_params(kernel, &spec.params)?;
    let outcome = bochs::run(&config, &image)?;
    let record = &recording.run.record;
    // A boot killed by the host's wall-clock limits (the timeout, or the
    // stall limit: no output for so many seconds of the host's time) ends
    // where the host's speed put it.
    let cut = |class: RunClass| matches!(class, RunClass::TimedOut | RunClass::Stuck);
    let compared_prefix_only = cut(record.class) || outcome.timed_out || outcome.stalled;
    let recorded = record.serial.as_bytes();
    let compare = if compared_prefix_only {
        first_difference_in_common_prefix
    } else {
        first_difference
    };
    let replayed_bytes = &outcome.serial_bytes;
    let serial_fnv1a = serial_fingerprint(replayed_bytes);
    // The recorded text is the lossy UTF-8 of the bytes; where those were
    // not UTF-8, the text is compared and the bytes through their hash.
    let mut difference = compare(recorded, outcome.serial.as_bytes());
    if difference.is_none()
        && !compared_prefix_only
        && record
            .serial_fnv1a
            .as_ref()
            .is_some_and(|hash| *hash != serial_fnv1a)
    {
        difference = Some(FirstDifference {
            line: 0,
            offset: 0,
            recorded: record.serial_fnv1a.clone(),
            replayed: Some(serial_fnv1a.clone()),
        });
    }
    let now = image_elf_fingerprint(kernel)?;
    let other_kernel = record
        .kernel_fingerprint
        .as_ref()
        .filter(|recorded| **recorded != now)
        .map(|recorded| (recorded.clone(), now));
    Ok(Replayed {
        outcome,
        difference,
        compared_prefix_only,
        serial_fnv1a,
        other_kernel,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::boot_record::BootRecord;
    use crate::guest::settings::{Feature, WakePolicy};
    use crate::runner::bochs::BochsSettings;
    use crate::stress::runner::StressConfig;

    #[test]
    fn replay_counts_outside_one_to_a_thousand_are_refused() {
        assert_eq!(parse_times("1"), Ok(1));
        assert_eq!(parse_times("1000"), Ok(1000));
        for bad in ["0", "1001", "-1", "ten"] {
            assert!(parse_times(bad).is_err(), "{bad} accepted");
        }
    }

    fn bochs_campaign() -> StressConfig {
        StressConfig {
            base_seed: 5,
            bochs: Some(BochsSettings {
                quantum: 5,
                ..BochsSettings::default()
            }),
            build: BuildConfig {
                release: true,
                ..BuildConfig::default()
            },
            ..StressConfig::new(vec![4, 8], 2, WakePolicy::RacyFlag)
        }
    }

    fn file_with(config: &StressConfig, classes: &[RunClass]) -> tempfile::NamedTempFile {
        let runs: Vec<StressRun> = config
            .plan()
            .into_iter()
            .zip(classes)
            .map(|(planned, &class)| StressRun {
                planned,
                record: BootRecord::without_output(class, String::new(), "v"),
            })
            .collect();
        let file = tempfile::NamedTempFile::new().unwrap();
        let json = serde_json::json!({
            "config": config,
            "build": config.build.variant_name(),
            "summary": [],
            "runs": runs,
        });
        std::fs::write(file.path(), json.to_string()).unwrap();
        file
    }

    #[test]
    fn a_reproduce_command_reads_back_as_the_run_it_names() {
        let plan = bochs_campaign().plan();
        let args = parse_reproduce(&plan[1].boot.reproduce).unwrap();
        assert_eq!(args.emulator, Emulator::Bochs);
        assert_eq!(args.smp, 8);
        assert_eq!(args.params, plan[1].boot.params);
        assert_eq!(Some(args.bochs.settings()), plan[1].boot.bochs);
        assert!(args.build.release);
        let idle_poll =
            parse_reproduce("cargo xtask run --smp 2 --features idle-poll seed=1").unwrap();
        assert_eq!(idle_poll.build.features, vec![Feature::IdlePoll]);
        for bad in [
            "make run",
            "cargo xtask stress --smp 4",
            "cargo xtask run --smp 0",
            "cargo xtask run verbose",
        ] {
            assert_eq!(parse_reproduce(bad).unwrap_err().exit_code(), 2, "{bad}");
        }
    }

    #[test]
    fn a_recording_from_before_the_turn_setting_replays_with_continue() {
        let config = bochs_campaign();
        let file = file_with(&config, &[RunClass::LostWakeups]);
        let text = std::fs::read_to_string(file.path()).unwrap();
        assert!(text.contains(",\"turn\":1}") && text.contains("--bochs-turn 1 "));
        let legacy = text
            .replace(",\"turn\":1}", "}")
            .replace("--bochs-turn 1 ", "");
        std::fs::write(file.path(), legacy).unwrap();
        let loaded = load(file.path(), None).unwrap();
        let settings = loaded.run.planned.boot.bochs.unwrap();
        assert_eq!(settings.turn, bochs::CONTINUE_TURN);
        assert_eq!(settings.resume_command(4), "continue");
        // A spec that says 1 with a command that does not is an edit.
        let file = file_with(&config, &[RunClass::LostWakeups]);
        let edited = text.replace("--bochs-turn 1 ", "");
        std::fs::write(file.path(), edited).unwrap();
        let err = load(file.path(), None).unwrap_err();
        assert!(err.to_string().contains("disagree"), "{err}");
    }

    #[test]
    fn the_boot_is_chosen_by_order_or_as_the_first_failure() {
        let config = bochs_campaign();
        let file = file_with(
            &config,
            &[
                RunClass::Passed,
                RunClass::Passed,
                RunClass::LostWakeups,
                RunClass::Passed,
            ],
        );
        let chosen = load(file.path(), None).unwrap();
        assert_eq!(chosen.run.planned.order, 2);
        assert!(chosen.build.release);
        assert_eq!(load(file.path(), Some(3)).unwrap().run.planned.order, 3);
        let err = load(file.path(), Some(9)).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("has: 0, 1, 2, 3"), "{err}");
        let passing = file_with(&config, &[RunClass::Passed; 4]);
        assert_eq!(load(passing.path(), None).unwrap().run.planned.order, 0);
    }

    #[test]
    fn qemu_boots_missing_files_and_edited_commands_are_usage_errors() {
        let qemu = StressConfig {
            bochs: None,
            ..bochs_campaign()
        };
        let file = file_with(&qemu, &[RunClass::Stuck]);
        let err = load(file.path(), None).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("ran under QEMU"), "{err}");
        let err = load(Path::new("/nonexistent/stress.json"), None).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let not_json = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(not_json.path(), "{").unwrap();
        assert_eq!(load(not_json.path(), None).unwrap_err().exit_code(), 2);
        // A reproduce command edited to another core count than the spec's.
        let config = bochs_campaign();
        let file = file_with(&config, &[RunClass::LostWakeups]);
        let text = std::fs::read_to_string(file.path())
            .unwrap()
            .replace("--smp 4 ", "--smp 6 ");
        std::fs::write(file.path(), text).unwrap();
        let err = load(file.path(), None).unwrap_err();
        assert!(err.to_string().contains("disagree"), "{err}");
    }
}
