//! Bad input makes the `xtask` binary exit 2 with a clear message, before
//! it builds or boots anything.

use std::process::{Command, Output};

fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .output()
        .expect("run the xtask binary")
}

fn assert_usage_error(args: &[&str], expected: &str) {
    let output = xtask(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(expected),
        "{args:?}: expected {expected:?} in {stderr}"
    );
    assert!(
        !stderr.contains("building kernel"),
        "{args:?} built: {stderr}"
    );
}

#[test]
fn smp_out_of_range() {
    assert_usage_error(&["run", "--smp", "0"], "1..=256");
    assert_usage_error(&["run", "--smp", "300"], "1..=256");
}

#[test]
fn many_cores_need_x2apic_and_q35() {
    assert_usage_error(
        &["run", "--smp", "200", "--machine", "q35", "--apic", "xapic"],
        "200 cores need --apic x2apic",
    );
    assert_usage_error(
        &["run", "--smp", "256", "--apic", "x2apic"],
        "256 cores need --machine q35",
    );
    assert_usage_error(&["stress", "--smp", "4,65"], "65 cores need --apic x2apic");
}

#[test]
fn unknown_machine_and_feature() {
    assert_usage_error(&["run", "--machine", "isapc"], "possible values: pc, q35");
    assert_usage_error(
        &["build", "--features", "idle-spin"],
        "possible values: idle-poll",
    );
}

#[test]
fn kernel_param_without_equals() {
    assert_usage_error(&["run", "--smp", "1", "laplace"], "key=value");
}

#[test]
fn bochs_options_it_cannot_honour() {
    assert_usage_error(
        &["run", "--emulator", "bochs", "--uefi"],
        "--emulator bochs boots the BIOS image only",
    );
    assert_usage_error(
        &["run", "--emulator", "bochs", "--machine", "q35"],
        "no --machine q35",
    );
    assert_usage_error(
        &["run", "--emulator", "bochs", "--ipi-oracle"],
        "not available under Bochs",
    );
    assert_usage_error(&["build", "laplace"], "key=value");
}

#[test]
fn bochs_settings_need_bochs_and_a_range() {
    assert_usage_error(
        &["run", "--bochs-quantum", "5"],
        "they need --emulator bochs",
    );
    assert_usage_error(
        &["stress", "--bochs-ips", "50000000"],
        "they need --emulator bochs",
    );
    assert_usage_error(
        &["run", "--emulator", "bochs", "--bochs-quantum", "0"],
        "--bochs-quantum must be in 1..=32",
    );
    assert_usage_error(&["run", "--bochs-turn", "1"], "they need --emulator bochs");
    assert_usage_error(
        &["stress", "--emulator", "bochs", "--bochs-turn", "16"],
        "--bochs-turn must be 1 (`s all`) or 5 (`continue`)",
    );
    assert_usage_error(
        &["run", "--emulator", "bochs", "--bochs-time0", "local"],
        "not a whole number",
    );
    assert_usage_error(
        &["stress", "--emulator", "bochs", "--ipi-oracle"],
        "not available under Bochs",
    );
}

#[test]
fn replay_needs_a_bochs_recording() {
    assert_usage_error(&["replay"], "FILE.json");
    assert_usage_error(
        &["replay", "/nonexistent/stress.json"],
        "reading /nonexistent/stress.json",
    );
    let dir = tempfile::tempdir().unwrap();
    let not_stress = dir.path().join("other.json");
    std::fs::write(&not_stress, "{\"runs\": 3}").unwrap();
    assert_usage_error(
        &["replay", not_stress.to_str().unwrap()],
        "is not a stress --json file",
    );
    assert_usage_error(
        &["replay", "recording.json", "--run", "first"],
        "invalid value 'first'",
    );
}

#[test]
fn zero_timeout() {
    assert_usage_error(&["run", "--timeout-s", "0"], "out of range");
}

#[test]
fn stress_arguments_are_checked_before_building() {
    assert_usage_error(&["stress", "--smp", "4,0"], "1..=256");
    assert_usage_error(&["stress", "--smp", "4,257"], "1..=256");
    assert_usage_error(&["stress", "--runs", "0"], "--runs must be in");
    assert_usage_error(&["stress", "--policy", "lazy"], "possible values");
    assert_usage_error(
        &["stress", "--watchdog-ms", "sometimes"],
        "`off` or milliseconds",
    );
    assert_usage_error(&["stress", "--watchdog-ms", "0"], "1..=60000");
    assert_usage_error(
        &[
            "stress",
            "--features",
            "idle-poll",
            "--policy",
            "always-ipi",
        ],
        "leave out --policy",
    );
}

#[test]
fn help_lists_the_subcommands() {
    let output = xtask(&["--help"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0));
    for subcommand in ["build", "run", "test", "stress", "replay"] {
        assert!(stdout.contains(subcommand), "{stdout}");
    }
}
