//! Every interleaving of the protocol's steps, for each policy.

use super::explore::{Config, Report, explore};
use crate::Policy;

fn config(policy: Policy, items_per_waker: &'static [usize], start_halted: bool) -> Config {
    Config {
        policy,
        items_per_waker,
        idle_laps: 2,
        start_halted,
    }
}

fn assert_clean(report: &Report) {
    if let Some(failure) = &report.failure {
        panic!("{failure}");
    }
    assert!(report.schedules > 0);
    // Visible with `--nocapture`: how much was explored.
    std::eprintln!("{} schedules explored", report.schedules);
}

#[test]
fn state_machine_one_waker_every_interleaving() {
    let report = explore(config(Policy::StateMachine, &[1], false));
    assert_clean(&report);
    assert!(report.max_ipis <= 1);
    // The DontSleep window is reachable, so the exploration covers it.
    assert!(report.dont_sleep_aborts > 0);
}

#[test]
fn state_machine_two_wakers_every_interleaving() {
    let report = explore(config(Policy::StateMachine, &[1, 1], false));
    assert_clean(&report);
    assert!(report.schedules > 1000, "{} schedules", report.schedules);
}

#[test]
fn state_machine_one_waker_two_items_every_interleaving() {
    // The core may halt, be woken, and halt again between the two items.
    let report = explore(config(Policy::StateMachine, &[2], false));
    assert_clean(&report);
}

/// A burst from three wakers to a core that stays halted through it: one
/// IPI in every interleaving of their pushes, reads and compare-exchanges.
#[test]
fn state_machine_burst_to_a_halted_core_sends_one_ipi_in_every_interleaving() {
    let report = explore(Config {
        idle_laps: 0,
        ..config(Policy::StateMachine, &[1, 1, 1], true)
    });
    assert_clean(&report);
    assert_eq!((report.min_ipis, report.max_ipis), (1, 1));
}

/// The same wakers while the core may wake and halt again in between: any
/// number of IPIs, but never two for one halt (checked in every run).
#[test]
fn state_machine_three_wakers_to_a_core_that_rehalts() {
    assert_clean(&explore(config(Policy::StateMachine, &[1, 1, 1], true)));
}

#[test]
fn always_ipi_every_interleaving() {
    for items in [&[1][..], &[1, 1], &[2]] {
        assert_clean(&explore(config(Policy::AlwaysIpi, items, false)));
    }
}

#[test]
fn poll_every_interleaving_never_sends_an_ipi() {
    let report = explore(config(Policy::Poll, &[1, 1], false));
    assert_clean(&report);
    assert_eq!(report.max_ipis, 0);
}

/// The mutation check, deterministic edition: the same exploration must see
/// seed 004's lost wakeup in the `racy-flag` fixture.
#[test]
fn racy_flag_loses_a_wakeup_in_some_interleaving() {
    let report = explore(config(Policy::RacyFlag, &[1], false));
    let failure = report
        .failure
        .expect("the explorer did not find racy-flag's lost wakeup: it cannot be trusted");
    assert!(failure.contains("lost wakeup"), "{failure}");
}
