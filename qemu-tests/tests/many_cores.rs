//! The compiled maximum, 256 cores, in its own test binary: test binaries
//! run one after another, so this 256-vCPU boot has the 2 host cores to
//! itself (about 10 s for the debug kernel) instead of slowing the boots it
//! would share them with (in `boot.rs` it stretched that binary from 17 s to
//! 49 s).

use qemu_tests::{boot_with, describe};
use xtask::{Apic, Machine, RunConfig, Verdict};

/// TCG on two host cores is slow: the timeout is generous.
const BOOT_TIMEOUT_S: u64 = 120;

/// The compiled maximum: 256 vCPUs on q35 in x2APIC mode (all the QEMU
/// 10.0 TCG needs above 255 is `+x2apic`; the last APIC id is 255, which
/// xAPIC cannot address) all check in, and Laplace on them matches the
/// host. About 9 s for the debug kernel alone on 2 host cores.
#[test]
fn x2apic_boots_256_cores_on_q35_and_laplace_matches_the_host() {
    let outcome = boot_with(RunConfig {
        smp: 256,
        machine: Machine::Q35,
        apic: Apic::X2apic,
        timeout_s: Some(BOOT_TIMEOUT_S),
        registers_on_timeout: true,
        ..RunConfig::default()
    });
    assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
    for expected in [
        "256 CPU(s) in the MADT, starting 256; x2APIC mode",
        "smp: 256 of 256 cores online",
    ] {
        assert!(
            outcome.serial.contains(expected),
            "{expected:?} missing: {}",
            describe(&outcome)
        );
    }
    assert!(
        !outcome.checksum_checks.is_empty()
            && outcome.checksum_checks.iter().all(|check| check.matches()),
        "{}",
        describe(&outcome)
    );
}
