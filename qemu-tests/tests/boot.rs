//! A plain boot succeeds and says who it is, on every firmware and machine
//! the harness offers.

use qemu_tests::{boot, boot_with, describe};
use xtask::{Apic, Machine, RunConfig, Verdict};

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

/// With `-cpu qemu64,+x2apic` (QEMU 10's TCG) the kernel runs in x2APIC
/// mode, says so, and every core sends an IPI to every other (MSR ICR
/// writes, 32-bit destinations) in the all-pairs test; without the flag the
/// same test runs in xAPIC mode.
#[test]
fn x2apic_boot_says_so_and_all_pairs_ipis_arrive_at_8_cores() {
    for (apic, mode) in [(Apic::X2apic, "x2APIC mode"), (Apic::Xapic, "xAPIC mode")] {
        let outcome = boot_with(RunConfig {
            smp: 8,
            apic,
            timeout_s: Some(BOOT_TIMEOUT_S),
            registers_on_timeout: true,
            ..RunConfig::with_params(&["mode=test", "test=smp"])
        });
        assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
        assert!(
            outcome
                .serial
                .contains(&format!("8 CPU(s) in the MADT, starting 8; {mode}")),
            "{}",
            describe(&outcome)
        );
        assert!(
            outcome.serial.contains("test smp::all_pairs_ipi ... ok"),
            "{}",
            describe(&outcome)
        );
        assert!(
            outcome
                .serial
                .contains("[c0] 5 passed, 0 failed, 0 skipped"),
            "{}",
            describe(&outcome)
        );
    }
}
