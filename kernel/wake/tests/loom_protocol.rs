//! Loom: the kernel's idle driver and waker side, on the hardware-faithful
//! model machine, under every interleaving within each model's preemption
//! bound and every memory-order outcome loom models, for the policies that
//! must be correct.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p vigil-wake --release
//! --target-dir target/loom`; `VIGIL_LOOM_BOUND=N` raises every model's
//! preemption bound to at least `N`.

#![cfg(loom)]

mod model;

use model::{Scenario, check};
use vigil_wake::Policy;

fn run(name: &str, scenario: Scenario) {
    let explored = check(scenario);
    println!(
        "{name}: {} executions at preemption bound {} in {:.1?}",
        explored.executions, explored.preemption_bound, explored.elapsed
    );
}

const SM: Policy = Policy::StateMachine;
const AI: Policy = Policy::AlwaysIpi;

#[test]
fn state_machine_one_waker() {
    run("state-machine, 1 waker", Scenario::new(SM, &[1]));
}

#[test]
fn state_machine_two_wakers() {
    run("state-machine, 2 wakers", Scenario::new(SM, &[1, 1]));
}

#[test]
fn state_machine_three_wakers() {
    run(
        "state-machine, 3 wakers",
        Scenario {
            preemption_bound: 2,
            ..Scenario::new(SM, &[1, 1, 1])
        },
    );
}

#[test]
fn state_machine_halt_wake_halt_again() {
    run(
        "state-machine, halt/wake/halt",
        Scenario {
            final_halt: true,
            ..Scenario::new(SM, &[1])
        },
    );
}

#[test]
fn state_machine_halt_wake_halt_again_three_items() {
    run(
        "state-machine, halt/wake/halt, 3 items",
        Scenario {
            final_halt: true,
            preemption_bound: 2,
            ..Scenario::new(SM, &[3])
        },
    );
}

#[test]
fn state_machine_final_halt_two_wakers() {
    run(
        "state-machine, final halt, 2 wakers",
        Scenario {
            final_halt: true,
            ..Scenario::new(SM, &[1, 1])
        },
    );
}

#[test]
fn state_machine_detector_two_wakers() {
    run(
        "state-machine, detector, final halt, 2 wakers",
        Scenario {
            final_halt: true,
            detector: true,
            preemption_bound: 2,
            ..Scenario::new(SM, &[1, 1])
        },
    );
}

#[test]
fn state_machine_timer_wakes_race_late_claims() {
    run(
        "state-machine, detector, 2 timer fires, final halt",
        Scenario {
            final_halt: true,
            detector: true,
            timer_fires: 2,
            ..Scenario::new(SM, &[1])
        },
    );
}

#[test]
fn state_machine_spontaneous_wake() {
    run(
        "state-machine, detector, spontaneous wake, final halt",
        Scenario {
            final_halt: true,
            detector: true,
            other_wakes: 1,
            ..Scenario::new(SM, &[1])
        },
    );
}

#[test]
fn state_machine_poll_before_halt() {
    run(
        "state-machine, poll 2 ticks, final halt",
        Scenario {
            final_halt: true,
            poll_ticks: 2,
            ..Scenario::new(SM, &[1])
        },
    );
}

#[test]
fn always_ipi_one_waker() {
    run("always-ipi, 1 waker", Scenario::new(AI, &[1]));
}

#[test]
fn always_ipi_two_wakers() {
    run("always-ipi, 2 wakers", Scenario::new(AI, &[1, 1]));
}

#[test]
fn always_ipi_halt_wake_halt_again() {
    run(
        "always-ipi, halt/wake/halt",
        Scenario {
            final_halt: true,
            ..Scenario::new(AI, &[1])
        },
    );
}

#[test]
fn always_ipi_timer_wakes() {
    run(
        "always-ipi, detector, 1 timer fire, final halt",
        Scenario {
            final_halt: true,
            detector: true,
            timer_fires: 1,
            ..Scenario::new(AI, &[1])
        },
    );
}
