//! The same image off QEMU: under Bochs there is no fw_cfg and no exit
//! device, so the parameters travel in the disk image and the kernel's
//! verdict line, after an ACPI power-off, is the result.

use xtask::guest::vigil_stats::VigilStats;
use xtask::runner::bochs::{self, BochsConfig};
use xtask::{BuildConfig, ExitCode, build_kernel_with_params};

const BOCHS_TIMEOUT_S: u64 = 600;

/// Boots under Bochs (the two tests side by side, sharing the host's
/// cores: a Bochs boot's guest time is counted in instructions, not taken
/// from the host).
fn boot_under_bochs(smp: u32, params: &[&str]) -> bochs::BochsOutcome {
    if let Some(why) = bochs::missing() {
        panic!("{why}");
    }
    let params: Vec<String> = params.iter().map(|p| p.to_string()).collect();
    let kernel = build_kernel_with_params(&BuildConfig::default(), &params)
        .unwrap_or_else(|err| panic!("kernel build failed: {err}"));
    bochs::run(&BochsConfig::new(smp, BOCHS_TIMEOUT_S), &kernel.bios_image)
        .unwrap_or_else(|err| panic!("Bochs could not run: {err}"))
}

#[test]
fn laplace_under_bochs_runs_what_the_image_says_and_matches_the_host() {
    let outcome = boot_under_bochs(
        4,
        &["workload=laplace", "policy=always-ipi", "iterations=100"],
    );
    let serial = &outcome.serial;
    assert!(outcome.is_success(), "{}\n{serial}", outcome.verdict_line());
    assert!(
        serial.contains(
            "boot parameters (disk image): `workload=laplace policy=always-ipi iterations=100`"
        ),
        "{serial}"
    );
    assert!(serial.contains("smp: 4 of 4 cores online"), "{serial}");
    assert!(serial.contains("policy always-ipi"), "{serial}");
    assert_eq!(outcome.checksum_checks.len(), 1, "{serial}");
    assert!(outcome.checksum_checks[0].matches(), "{serial}");
    // Bochs runs its CPUs in turn, a few instructions each, in emulated
    // time: each core's look after a chunk sees every other core a chunk
    // or two on, so the window sees the four at once, a measurement that
    // does not depend on the host's timing (as the count does not:
    // `sched::host_parallelism`).
    let host = VigilStats::find_in(serial)
        .expect("a VIGIL-STATS line")
        .expect("a VIGIL-STATS line that parses")
        .0
        .host;
    assert!(
        (3_500..=4_000).contains(&host.parallelism_seen_milli),
        "Bochs, 4 CPUs: {} thousandths of a core seen at once\n{serial}",
        host.parallelism_seen_milli
    );
}

/// The verdict is the kernel's: a bad parameter in the image ends the run
/// with its own code, read from the serial port.
#[test]
fn a_bad_parameter_in_the_image_is_the_kernels_verdict_under_bochs() {
    let outcome = boot_under_bochs(1, &["workload=laplace", "size=3"]);
    assert_eq!(
        outcome.exit,
        Some(ExitCode::BadParameter),
        "{}",
        outcome.serial
    );
    assert!(!outcome.is_success());
    assert!(
        outcome.serial.contains("bad boot parameter"),
        "{}",
        outcome.serial
    );
}
