//! Small unit tests of the pieces.

use alloc::collections::VecDeque;

use crate::{CoreWake, CounterSnapshot, Elided, Inbox, Policy, State};

#[test]
fn state_raw_values_round_trip() {
    for state in State::ALL {
        assert_eq!(State::from_raw(state.as_raw()), Some(state));
    }
    assert_eq!(State::from_raw(4), None);
    assert_eq!(State::Running.as_raw(), 0);
}

#[test]
fn policy_names_parse_back() {
    for &policy in Policy::ALL {
        assert_eq!(policy.name().parse::<Policy>(), Ok(policy));
    }
    assert!("idle-poll".parse::<Policy>().is_err());
    assert_eq!(Policy::default(), Policy::StateMachine);
    assert!(Policy::RacyFlag.is_fault_injection());
    assert!(!Policy::StateMachine.is_fault_injection());
}

#[test]
fn inbox_is_fifo_and_reports_empty_to_non_empty() {
    let inbox = Inbox::new();
    assert!(inbox.push(1).was_empty);
    assert!(!inbox.push(2).was_empty);
    assert_eq!(inbox.len(), 2);
    let mut out = VecDeque::new();
    assert_eq!(inbox.drain_into(&mut out), 2);
    assert!(inbox.is_empty());
    assert!(inbox.push(3).was_empty);
    // Non-empty `out`: appended after what is there.
    assert_eq!(inbox.drain_into(&mut out), 1);
    assert_eq!(out, [1, 2, 3]);
    assert_eq!(inbox.drain_into(&mut out), 0);
}

#[test]
fn inbox_buffers_ping_pong_without_reallocating() {
    let inbox = Inbox::new();
    let mut out = VecDeque::with_capacity(64);
    for round in 0..4 {
        for i in 0..32 {
            let _ = inbox.push(round * 100 + i);
        }
        assert_eq!(inbox.drain_into(&mut out), 32);
        assert!(out.capacity() >= 32);
        out.clear();
    }
}

#[test]
fn counters_add_up_and_split_by_reason() {
    let cores: [CoreWake<u8>; 3] = core::array::from_fn(|_| CoreWake::new(Policy::StateMachine));
    let _ = cores[0].send(1, &cores[1]); // running: elided
    let _ = cores[0].send(2, &cores[1]); // non-empty: elided
    let _ = cores[1].send(3, &cores[1]); // self
    let a = cores[1].counters().snapshot();
    assert_eq!(a.inbox_pushes, 3);
    assert_eq!(a.elided(Elided::TargetRunning), 1);
    assert_eq!(a.elided(Elided::AlreadyPending), 1);
    assert_eq!(a.elided(Elided::SelfTarget), 1);
    assert_eq!(a.wakes_elided(), 3);
    let total = a + cores[2].counters().snapshot() + CounterSnapshot::default();
    assert_eq!(total, a);
}

#[test]
fn counters_sit_on_their_own_cache_line() {
    assert_eq!(core::mem::align_of::<crate::Counters>(), 64);
    // The lost-wakeup record is 128-aligned (the wakers' line and the
    // core's line, see `lost_wakeup.rs`), so the whole `CoreWake` is too.
    assert_eq!(core::mem::align_of::<crate::LostWakeupRecord>(), 128);
    assert_eq!(core::mem::size_of::<crate::LostWakeupRecord>(), 128);
    assert_eq!(core::mem::align_of::<CoreWake<u64>>(), 128);
}
