//! Loom: the stealable-work rule ([`vigil_wake::Stealable`]) together with
//! the halt it ends in: several cores of the model machine each run the
//! kernel's idle loop (pinned work, then stealable work, then the crate's
//! idle driver), search wakes travel as tickets through the pinned
//! protocol, IPIs carry no memory. See `model/steal_run.rs` for the checks.
//!
//! Run with `RUSTFLAGS="--cfg loom" cargo test -p vigil-wake --release
//! --target-dir target/loom --test loom_steal`.

#![cfg(loom)]

mod model;

use model::{Publisher, StealScenario, check_steal};

fn run(name: &str, scenario: StealScenario) {
    let explored = check_steal(scenario);
    println!(
        "{name}: {} executions at preemption bound {} in {:.1?}",
        explored.executions, explored.preemption_bound, explored.elapsed
    );
}

const fn scenario(
    cores: usize,
    publications: &'static [usize],
    publisher: Publisher,
) -> StealScenario {
    StealScenario {
        cores,
        publications,
        publisher,
        pinned_to_core_1: false,
        preemption_bound: 3,
    }
}

#[test]
fn producer_one_item_two_cores() {
    run(
        "steal, producer, 2 cores, 1 item",
        scenario(2, &[1], Publisher::Producer),
    );
}

#[test]
fn producer_two_items_two_cores() {
    run(
        "steal, producer, 2 cores, 2 items",
        scenario(2, &[2], Publisher::Producer),
    );
}

#[test]
fn producer_two_publications_two_cores() {
    run(
        "steal, producer, 2 cores, 2 publications of 1",
        StealScenario {
            preemption_bound: 2,
            ..scenario(2, &[1, 1], Publisher::Producer)
        },
    );
}

#[test]
fn caller_two_items_two_cores() {
    run(
        "steal, core 0 publishes, 2 cores, 2 items",
        scenario(2, &[2], Publisher::Core0),
    );
}

#[test]
fn caller_two_publications_two_cores() {
    run(
        "steal, core 0 publishes, 2 cores, 2 publications of 1",
        StealScenario {
            preemption_bound: 2,
            ..scenario(2, &[1, 1], Publisher::Core0)
        },
    );
}

#[test]
fn producer_one_item_three_cores() {
    run(
        "steal, producer, 3 cores, 1 item",
        StealScenario {
            preemption_bound: 2,
            ..scenario(3, &[1], Publisher::Producer)
        },
    );
}

#[test]
fn producer_two_items_three_cores() {
    run(
        "steal, producer, 3 cores, 2 items",
        StealScenario {
            preemption_bound: 1,
            ..scenario(3, &[2], Publisher::Producer)
        },
    );
}

#[test]
fn pinned_work_on_a_searcher_two_cores() {
    run(
        "steal, producer, 2 cores, 2 items, pinned item to core 1",
        StealScenario {
            pinned_to_core_1: true,
            preemption_bound: 1,
            ..scenario(2, &[2], Publisher::Producer)
        },
    );
}

#[test]
fn caller_two_items_three_cores() {
    run(
        "steal, core 0 publishes, 3 cores, 2 items",
        StealScenario {
            preemption_bound: 2,
            ..scenario(3, &[2], Publisher::Core0)
        },
    );
}
