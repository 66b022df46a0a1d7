//! A plain boot succeeds and says who it is, on every firmware and machine
//! the harness offers.

use qemu_tests::{boot, boot_with, describe};
use xtask::{Machine, RunConfig, Verdict};

/// TCG on two host cores is slow: every timeout here is generous.
const BOOT_TIMEOUT_S: u64 = 120;

#[test]
fn plain_boot_on_one_core_succeeds_with_a_banner() {
    let outcome = boot(1, BOOT_TIMEOUT_S, &[]);
    assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
    assert_eq!(outcome.exit_status, Some(33), "{}", describe(&outcome));
    assert!(outcome.serial.contains("Vigil"), "{}", describe(&outcome));
    assert!(outcome.serial.contains("[c0]"), "{}", describe(&outcome));
}

#[test]
fn plain_boot_on_four_cores_succeeds() {
    let outcome = boot(4, BOOT_TIMEOUT_S, &[]);
    assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
    assert!(outcome.serial.contains("Vigil"), "{}", describe(&outcome));
}

#[test]
fn uefi_boot_succeeds() {
    let outcome = boot_with(RunConfig {
        smp: 2,
        uefi: true,
        timeout_s: Some(BOOT_TIMEOUT_S),
        ..RunConfig::default()
    });
    assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
    assert!(outcome.serial.contains("Vigil"), "{}", describe(&outcome));
}

#[test]
fn q35_boot_succeeds() {
    let outcome = boot_with(RunConfig {
        smp: 2,
        machine: Machine::Q35,
        timeout_s: Some(BOOT_TIMEOUT_S),
        ..RunConfig::default()
    });
    assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
    assert!(outcome.serial.contains("Vigil"), "{}", describe(&outcome));
}
