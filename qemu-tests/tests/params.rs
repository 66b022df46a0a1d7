//! Boot parameters reach the kernel through fw_cfg, and bad ones are
//! rejected by the kernel with its own message.

use qemu_tests::{boot, describe};
use xtask::Verdict;

const PARAM_TIMEOUT_S: u64 = 120;

#[test]
fn unknown_key_is_a_bad_boot_parameter() {
    let outcome = boot(1, PARAM_TIMEOUT_S, &["bogus=1"]);
    assert_eq!(outcome.verdict, Verdict::BadParam, "{}", describe(&outcome));
    assert_eq!(outcome.exit_status, Some(39), "{}", describe(&outcome));
    assert!(
        outcome.serial.contains("[c0] bad boot parameter"),
        "{}",
        describe(&outcome)
    );
}

#[test]
fn bad_value_of_a_known_key_is_a_bad_boot_parameter() {
    let outcome = boot(1, PARAM_TIMEOUT_S, &["fault=sometimes"]);
    assert_eq!(outcome.verdict, Verdict::BadParam, "{}", describe(&outcome));
    assert!(
        outcome.serial.contains("bad boot parameter"),
        "{}",
        describe(&outcome)
    );
}
