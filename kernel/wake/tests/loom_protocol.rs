//! Loom: the wake protocol under every interleaving and every memory-order
//! outcome loom models, for the policies that must be correct.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p vigil-wake --release
//! --target-dir target/loom`.

#![cfg(loom)]

mod model;

use model::{Scenario, check};
use vigil_wake::Policy;

fn scenario(policy: Policy, items_per_waker: &'static [usize], final_halt: bool) -> Scenario {
    Scenario {
        policy,
        items_per_waker,
        final_halt,
        preemption_bound: 3,
    }
}

fn run(name: &str, scenario: Scenario) {
    let explored = check(scenario);
    println!(
        "{name}: {} executions in {:.1?}",
        explored.executions, explored.elapsed
    );
}

#[test]
fn state_machine_one_waker() {
    run(
        "state-machine, 1 waker",
        scenario(Policy::StateMachine, &[1], false),
    );
}

#[test]
fn state_machine_two_wakers() {
    run(
        "state-machine, 2 wakers",
        scenario(Policy::StateMachine, &[1, 1], false),
    );
}

#[test]
fn state_machine_halt_wake_halt_again() {
    run(
        "state-machine, halt/wake/halt",
        scenario(Policy::StateMachine, &[1], true),
    );
}

#[test]
fn state_machine_halt_wake_halt_again_two_items() {
    run(
        "state-machine, halt/wake/halt, 2 items",
        scenario(Policy::StateMachine, &[2], true),
    );
}

#[test]
fn always_ipi_one_waker() {
    run(
        "always-ipi, 1 waker",
        scenario(Policy::AlwaysIpi, &[1], false),
    );
}

#[test]
fn always_ipi_two_wakers() {
    run(
        "always-ipi, 2 wakers",
        scenario(Policy::AlwaysIpi, &[1, 1], false),
    );
}

#[test]
fn always_ipi_halt_wake_halt_again() {
    run(
        "always-ipi, halt/wake/halt",
        scenario(Policy::AlwaysIpi, &[1], true),
    );
}
