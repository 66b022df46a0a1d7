//! Loom mutation check: the model that passes for `state-machine` must find
//! seed 004's lost wakeup in the `racy-flag` fixture. A model that cannot
//! see this bug cannot be trusted to see its absence.
//!
//! Its own test binary, so that it can silence the panic hook (the expected
//! panic would otherwise print a failure report) without hiding anything
//! from the other loom tests.

#![cfg(loom)]

mod model;

use std::panic;

use model::{LOST_WAKEUP, Scenario, check};
use vigil_wake::Policy;

fn assert_loom_finds_lost_wakeup(scenario: Scenario) {
    let quiet = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let result = panic::catch_unwind(|| check(scenario));
    panic::set_hook(quiet);
    let payload = match result {
        Ok(explored) => panic!(
            "loom explored {} executions of racy-flag and found no lost wakeup",
            explored.executions
        ),
        Err(payload) => payload,
    };
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_default();
    assert!(
        message.contains(LOST_WAKEUP),
        "loom failed racy-flag, but not with a lost wakeup: {message:?}"
    );
    println!(
        "racy-flag {:?}, detector {}: loom reports {message:?}",
        scenario.items_per_waker, scenario.detector
    );
}

const RACY: Policy = Policy::RacyFlag;

/// The halted core, with nothing latched and nothing left to wake it, sits
/// on its work: the machine's own assertion.
#[test]
fn loom_finds_the_seed_004_lost_wakeup() {
    assert_loom_finds_lost_wakeup(Scenario::new(RACY, &[1]));
    assert_loom_finds_lost_wakeup(Scenario::new(RACY, &[1, 1]));
}

/// The same with the detector's counts and checks in the driver: they must
/// not hide the loss (loom reports the first failing execution, found by
/// the machine or by the driver's own check).
#[test]
fn loom_finds_the_seed_004_lost_wakeup_with_the_detector_on() {
    assert_loom_finds_lost_wakeup(Scenario {
        detector: true,
        final_halt: true,
        ..Scenario::new(RACY, &[1])
    });
}
