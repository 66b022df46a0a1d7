//! Deterministic tests of [`Parker`]: one thread, both sides stepped by hand.
//! (The concurrent cases, a wake landing between the park's two steps and
//! racing unparkers, are in the loom model `tests/loom_parker.rs`.)

use crate::{Parker, Unparked};

#[test]
fn wake_before_park_leaves_a_token_and_the_park_returns_at_once() {
    let parker = Parker::new();
    assert_eq!(parker.unpark(), Unparked::TokenLeft);
    assert!(parker.try_consume_or_park(), "the token must be consumed");
    // The token is gone: the next park blocks.
    assert!(!parker.try_consume_or_park());
}

#[test]
fn park_then_wake_asks_for_exactly_one_enqueue() {
    let parker = Parker::new();
    assert!(!parker.try_consume_or_park(), "no token: the task parks");
    assert_eq!(parker.unpark(), Unparked::MustEnqueue);
    // The task is runnable again (not parked): a second wake only leaves a
    // token, it never asks for a second enqueue of the same park.
    assert_eq!(parker.unpark(), Unparked::TokenLeft);
}

#[test]
fn two_wakes_before_a_park_coalesce_into_one_token() {
    let parker = Parker::new();
    assert_eq!(parker.unpark(), Unparked::TokenLeft);
    assert_eq!(parker.unpark(), Unparked::TokenLeft);
    assert!(parker.try_consume_or_park(), "one token");
    assert!(!parker.try_consume_or_park(), "only one token");
    assert_eq!(parker.unpark(), Unparked::MustEnqueue);
}

#[test]
fn park_wake_wake_enqueues_once_and_keeps_a_token_for_the_next_park() {
    let parker = Parker::new();
    assert!(!parker.try_consume_or_park());
    assert_eq!(parker.unpark(), Unparked::MustEnqueue);
    assert_eq!(parker.unpark(), Unparked::TokenLeft);
    // The task runs again (enqueued once) and parks: the second wake's token
    // makes that park return at once...
    assert!(parker.try_consume_or_park());
    // ...and the one after that blocks again.
    assert!(!parker.try_consume_or_park());
    assert_eq!(parker.unpark(), Unparked::MustEnqueue);
}

#[test]
fn many_park_wake_rounds_alternate() {
    let parker = Parker::default();
    for _ in 0..100 {
        assert!(!parker.try_consume_or_park());
        assert_eq!(parker.unpark(), Unparked::MustEnqueue);
    }
    assert!(!parker.try_consume_or_park());
}

#[test]
fn state_name_follows_token_park_and_claim() {
    let parker = Parker::new();
    assert_eq!(parker.state_name(), "empty");
    assert_eq!(parker.unpark(), Unparked::TokenLeft);
    assert_eq!(parker.state_name(), "notified");
    assert!(parker.try_consume_or_park());
    assert_eq!(parker.state_name(), "empty");
    assert!(!parker.try_consume_or_park());
    assert_eq!(parker.state_name(), "parked");
    assert_eq!(parker.unpark(), Unparked::MustEnqueue);
    assert_eq!(parker.state_name(), "empty");
}
