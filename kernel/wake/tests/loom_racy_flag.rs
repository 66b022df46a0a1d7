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

fn assert_loom_finds_lost_wakeup(items_per_waker: &'static [usize]) {
    let scenario = Scenario {
        policy: Policy::RacyFlag,
        items_per_waker,
        final_halt: false,
        preemption_bound: 3,
    };
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
    println!("racy-flag {items_per_waker:?}: loom reports {message:?}");
}

#[test]
fn loom_finds_the_seed_004_lost_wakeup() {
    assert_loom_finds_lost_wakeup(&[1]);
    assert_loom_finds_lost_wakeup(&[1, 1]);
}
