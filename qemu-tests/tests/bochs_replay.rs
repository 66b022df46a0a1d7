//! Bochs boots are deterministic: the same image, core count and Bochs
//! settings (`clock: sync=none`, fixed `ips`, turn and `time0`) print the
//! same serial output byte for byte, and a recorded boot (a racy-flag lost
//! wakeup, committed in `recordings/`) replays exactly, also under the
//! debugger's watchpoints.

use std::path::Path;

use xtask::guest::serial_diff::first_difference;
use xtask::runner::bochs::{self, BochsConfig};
use xtask::runner::kernel_build::bios_image_with_params;
use xtask::stress::replay;
use xtask::{BuildConfig, build_kernel};

const BOCHS_TIMEOUT_S: u64 = 600;

/// The committed recording: one campaign of 3 racy-flag boots at 4 cores,
/// the release kernel (how to make it again: `recordings/README.md`).
const RECORDING: &str = "recordings/racy-flag-lost-wakeup.json";

/// Fails the test when Bochs is missing. The tests run side by side (the
/// harness's threads, sharing the host's cores): a Bochs boot is one host
/// thread whose guest time is counted in instructions, so a boot beside
/// another prints the same bytes, later.
fn bochs_is_there() {
    if let Some(why) = bochs::missing() {
        panic!("{why}");
    }
}

#[test]
fn two_bochs_boots_of_one_chaos_run_print_the_same_bytes() {
    bochs_is_there();
    let params: Vec<String> = [
        "workload=laplace",
        "policy=state-machine",
        "chaos=on",
        "seed=7",
        "iterations=30",
    ]
    .iter()
    .map(|param| param.to_string())
    .collect();
    let kernel = build_kernel(&BuildConfig {
        release: true,
        ..BuildConfig::default()
    })
    .unwrap_or_else(|err| panic!("kernel build failed: {err}"));
    let image = bios_image_with_params(&kernel, &params).unwrap();
    let boot = || {
        bochs::run(&BochsConfig::new(4, BOCHS_TIMEOUT_S), &image)
            .unwrap_or_else(|err| panic!("Bochs could not run: {err}"))
    };
    let first = boot();
    assert!(
        first.is_success(),
        "{}\n{}",
        first.verdict_line(),
        first.serial
    );
    assert!(first.serial.contains("chaos on"), "{}", first.serial);
    let second = boot();
    if let Some(difference) = first_difference(&first.serial_bytes, &second.serial_bytes) {
        panic!(
            "two Bochs boots of one image differ: {difference}\n--- first:\n{}\n--- second:\n{}",
            first.serial, second.serial
        );
    }
}

#[test]
fn a_recorded_lost_wakeup_replays_byte_for_byte() {
    bochs_is_there();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RECORDING);
    let recording =
        replay::load(&path, None).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let record = &recording.run.record;
    assert_eq!(
        record.class,
        xtask::campaign::run_class::RunClass::LostWakeups,
        "the recording's first failing boot should be a lost wakeup"
    );
    let kernel =
        build_kernel(&recording.build).unwrap_or_else(|err| panic!("kernel build failed: {err}"));
    let replayed = replay::replay(&recording, &kernel, false)
        .unwrap_or_else(|err| panic!("replay failed to run: {err}"));
    assert!(
        !replayed.compared_prefix_only,
        "the replay was cut at a wall-clock limit (timed out or stalled): only a prefix was compared\n{}",
        replayed.outcome.serial
    );
    if let Some(difference) = &replayed.difference {
        let rebuilt = match &replayed.other_kernel {
            Some((then, now)) => format!(
                "the kernel changed since the recording (ELF FNV-1a {then} then, {now} now): if the change is meant, record again as {RECORDING} says (qemu-tests/recordings/README.md). "
            ),
            None => "the kernel is the recorded one: Bochs is not deterministic here. ".to_string(),
        };
        panic!(
            "{rebuilt}The replay differs from the recording: {difference}\n--- replayed:\n{}",
            replayed.outcome.serial
        );
    }
    assert!(
        replayed.outcome.serial.contains("LOST WAKEUP on core"),
        "{}",
        replayed.outcome.serial
    );
    // An edited recording: the replay names the edited line (lines end
    // in "\r\n" on the serial port; the edit keeps every other byte).
    let lines: Vec<&str> = record.serial.split_inclusive('\n').collect();
    let edited_line = lines.len() / 2;
    let edited: String = lines
        .iter()
        .enumerate()
        .map(|(index, line)| {
            if index == edited_line {
                format!("!{line}")
            } else {
                line.to_string()
            }
        })
        .collect();
    let difference = first_difference(edited.as_bytes(), &replayed.outcome.serial_bytes)
        .expect("an edited recording differs");
    assert_eq!(difference.line, edited_line + 1, "{difference}");
    assert_eq!(
        difference.replayed.as_deref(),
        Some(lines[edited_line].trim_end_matches('\n')),
        "{difference}"
    );
}

/// `replay --explain` of the committed lost wakeup: the watched boot prints
/// the recording byte for byte (its stops fall between rounds of
/// 1-instruction turns), and the accesses before the lost halt are seed
/// 004's interleaving (the victim's inbox check finds it empty, a waker
/// pushes and reads the victim's state as not halted, the victim halts).
#[test]
fn a_recorded_lost_wakeup_explains_itself_as_the_racy_check() {
    bochs_is_there();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RECORDING);
    let recording =
        replay::load(&path, None).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let victim = xtask::stress::explain::victim_of(&recording.run.record.serial)
        .unwrap_or_else(|err| panic!("{err}"));
    let kernel =
        build_kernel(&recording.build).unwrap_or_else(|err| panic!("kernel build failed: {err}"));
    let explanation = xtask::stress::explain::explain(&recording, &kernel, &victim, false)
        .unwrap_or_else(|err| panic!("explain failed to run: {err}"));
    let report = explanation.report(Path::new("(not written)"));
    assert!(
        explanation.exact,
        "the recording ran in 5-instruction turns"
    );
    assert_eq!(
        explanation.watched_difference, None,
        "the watched boot is not the recorded execution:\n{report}"
    );
    assert!(explanation.is_complete(), "{report}");
    let [check, push, read, halt] = explanation
        .racy_check
        .unwrap_or_else(|| panic!("not the racy check's interleaving:\n{report}"));
    assert!(check < push && push < read && read < halt, "{report}");
    for (index, expected) in [
        (check, "reads  core"),
        (push, "writes core"),
        (read, "reads  core"),
        (halt, "(now: state halted"),
    ] {
        assert!(
            explanation.lines[index].contains(expected),
            "access {index}: `{}` lacks `{expected}`\n{report}",
            explanation.lines[index]
        );
    }
    assert!(explanation.lines[push].contains("Inbox::push"), "{report}");
}
