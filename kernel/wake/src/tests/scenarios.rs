//! Named scenarios, each stepped by hand, with the seed they come from.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use crate::{Commit, CoreWake, Elided, Halted, Notify, Policy, Recheck, State};

fn cores(n: usize, policy: Policy) -> Vec<CoreWake<u32>> {
    (0..n).map(|_| CoreWake::new(policy)).collect()
}

fn halt(core: &CoreWake<u32>) -> Halted<'_, u32> {
    match core.prepare_to_halt().try_halt() {
        Commit::Halt(halted) => halted,
        other => panic!("expected to halt, got {other:?}"),
    }
}

/// A burst of sends to one halted core: exactly one IPI (the first waker
/// claims the core; the rest see the inbox already non-empty).
#[test]
fn burst_of_notifies_to_one_halted_core_sends_one_ipi() {
    let cores = cores(9, Policy::StateMachine);
    let halted = halt(&cores[0]);
    let actions: Vec<Notify> = (1..9)
        .map(|waker| cores[0].send(waker, &cores[waker as usize]).action)
        .collect();
    assert_eq!(actions[0], Notify::Wake);
    assert!(
        actions[1..]
            .iter()
            .all(|a| *a == Notify::Skip(Elided::AlreadyPending))
    );
    let mut out = VecDeque::new();
    assert_eq!(halted.woke_up(&mut out), 8);
    assert_eq!(out, (1..9).collect::<VecDeque<u32>>());
}

/// Same burst, but every waker reads the state (as if each had found the
/// inbox empty): still one IPI, because the claim is a compare-exchange.
#[test]
fn wakers_that_all_read_halted_send_one_ipi_between_them() {
    let cores = cores(5, Policy::StateMachine);
    let _halted = halt(&cores[0]);
    let idle = cores[0].idle();
    let observed: Vec<State> = (1..5).map(|_| idle.observe()).collect();
    assert!(observed.iter().all(|s| *s == State::Halted));
    let actions: Vec<Notify> = observed.iter().map(|s| idle.act(*s)).collect();
    assert_eq!(actions[0], Notify::Wake);
    assert!(
        actions[1..]
            .iter()
            .all(|a| *a == Notify::Skip(Elided::AlreadyClaimed))
    );
}

/// Notifies to several halted cores: each gets exactly one IPI, however
/// many times it is sent to.
#[test]
fn several_halted_cores_each_get_exactly_one_ipi() {
    let cores = cores(8, Policy::StateMachine);
    let waker = CoreWake::new(Policy::StateMachine);
    let halted: Vec<_> = cores.iter().map(halt).collect();
    for round in 0..3 {
        for (i, core) in cores.iter().enumerate() {
            let outcome = core.send(round, &waker);
            if round == 0 {
                assert_eq!(outcome.action, Notify::Wake, "core {i}");
                assert_eq!(outcome.observed, Some(State::Halted));
            } else {
                assert_eq!(
                    outcome.action,
                    Notify::Skip(Elided::AlreadyPending),
                    "core {i}"
                );
            }
        }
    }
    assert_eq!(waker.counters().snapshot().wakes_sent, 8);
    let mut out = VecDeque::new();
    for h in halted {
        out.clear();
        assert_eq!(h.woke_up(&mut out), 3);
    }
}

/// Seed 000's wrong-worker bug: private work for core 5 while cores 0..7
/// are all halted must wake core 5, and only core 5. (Core 5, not core 1, on
/// purpose: a test where the target is also the lowest sleeper cannot see
/// a "wake the first sleeper" bug.)
#[test]
fn private_work_for_core_5_wakes_only_core_5() {
    let cores = cores(9, Policy::StateMachine);
    let halted: Vec<_> = cores[..8].iter().map(halt).collect();
    let outcome = cores[5].send(55, &cores[8]);
    assert_eq!(outcome.action, Notify::Wake);
    for (i, core) in cores[..8].iter().enumerate() {
        let expected = if i == 5 {
            State::Running
        } else {
            State::Halted
        };
        assert_eq!(core.state(), expected, "core {i}");
        assert_eq!(core.inbox_len(), usize::from(i == 5), "core {i}");
    }
    assert_eq!(cores[8].counters().snapshot().wakes_sent, 1);
    // Only core 5 finds the work when it wakes.
    let mut out = VecDeque::new();
    for (i, h) in halted.into_iter().enumerate() {
        out.clear();
        let found = h.woke_up(&mut out);
        assert_eq!(found, usize::from(i == 5), "core {i}");
    }
}

/// A waker that arrives between the re-check and the commit writes
/// `DontSleep`; the commit consumes it exactly once: that attempt does not
/// halt, and the next attempt (nothing new sent) does.
#[test]
fn dont_sleep_is_consumed_exactly_once() {
    let cores = cores(3, Policy::StateMachine);
    let (target, waker_a, waker_b) = (&cores[0], &cores[1], &cores[2]);
    let Recheck::Empty(armed) = target.prepare_to_halt().recheck() else {
        panic!("empty inbox")
    };
    // Waker B reads `Halting` too, but acts after A.
    let b_saw = target.idle().observe();
    assert_eq!(b_saw, State::Halting);
    let a = target.send(1, waker_a);
    assert_eq!(a.action, Notify::Skip(Elided::SetDontSleep));
    assert_eq!(a.observed, Some(State::Halting));
    assert_eq!(target.state(), State::DontSleep);
    assert_eq!(
        target.idle().act(b_saw),
        Notify::Skip(Elided::AlreadyClaimed)
    );
    let _ = waker_b;

    assert!(matches!(armed.commit(), Commit::DontSleep));
    assert_eq!(target.state(), State::Running);
    let mut out = VecDeque::new();
    assert_eq!(target.drain_into(&mut out), 1);

    // Consumed: the next attempt halts.
    let halted = halt(target);
    assert_eq!(target.state(), State::Halted);
    let c = target.counters().snapshot();
    assert_eq!((c.aborts_dont_sleep, c.halts), (1, 1));
    out.clear();
    assert_eq!(halted.woke_up(&mut out), 0);
    assert_eq!(target.counters().snapshot().spurious_wakeups, 1);
}

/// A waker whose compare-exchange to `DontSleep` loses to the commit claims
/// the now-halted core instead.
#[test]
fn dont_sleep_that_loses_to_the_commit_claims_instead() {
    let cores = cores(2, Policy::StateMachine);
    let target = &cores[0];
    let Recheck::Empty(armed) = target.prepare_to_halt().recheck() else {
        panic!("empty inbox")
    };
    let saw = target.idle().observe();
    let Commit::Halt(halted) = armed.commit() else {
        panic!("nobody wrote DontSleep")
    };
    assert_eq!(target.idle().act(saw), Notify::Wake);
    assert_eq!(target.state(), State::Running);
    let _ = halted;
}

/// A running target costs the waker one read and changes nothing.
#[test]
fn running_target_is_left_alone() {
    let cores = cores(2, Policy::StateMachine);
    let outcome = cores[0].send(1, &cores[1]);
    assert_eq!(outcome.action, Notify::Skip(Elided::TargetRunning));
    assert_eq!(outcome.observed, Some(State::Running));
    assert_eq!(cores[0].state(), State::Running);
    // Its re-check sees the work: no halt.
    assert!(matches!(
        cores[0].prepare_to_halt().try_halt(),
        Commit::WorkArrived
    ));
    assert_eq!(cores[0].state(), State::Running);
}

/// A core that woke by itself (another interrupt) before a waker's claim:
/// the claim fails, no IPI.
#[test]
fn claim_after_the_core_woke_by_itself_sends_nothing() {
    let cores = cores(2, Policy::StateMachine);
    let halted = halt(&cores[0]);
    let saw = cores[0].idle().observe();
    let mut out = VecDeque::new();
    assert_eq!(halted.woke_up(&mut out), 0);
    assert_eq!(
        cores[0].idle().act(saw),
        Notify::Skip(Elided::AlreadyClaimed)
    );
}

/// A core never IPIs itself, whatever the policy and its state.
#[test]
fn sending_to_oneself_never_asks_for_an_ipi() {
    for &policy in Policy::ALL {
        let core = CoreWake::new(policy);
        let outcome = core.send(1, &core);
        assert_eq!(outcome.action, Notify::Skip(Elided::SelfTarget), "{policy}");
        assert_eq!(outcome.observed, None);
        assert_eq!(core.inbox_len(), 1);
    }
}

#[test]
fn always_ipi_sends_to_every_other_core_even_a_running_one() {
    let cores = cores(2, Policy::AlwaysIpi);
    for item in 0..3 {
        let outcome = cores[0].send(item, &cores[1]);
        assert_eq!(outcome.action, Notify::Wake);
        assert_eq!(outcome.observed, Some(State::Running));
    }
    assert_eq!(cores[1].counters().snapshot().wakes_sent, 3);
}

#[test]
fn poll_never_halts_and_never_sends() {
    let cores = cores(2, Policy::Poll);
    for _ in 0..3 {
        assert!(matches!(
            cores[0].prepare_to_halt().try_halt(),
            Commit::Poll
        ));
        assert_eq!(cores[0].state(), State::Running);
    }
    let outcome = cores[0].send(1, &cores[1]);
    assert_eq!(outcome.action, Notify::Skip(Elided::Polling));
    assert!(matches!(
        cores[0].prepare_to_halt().try_halt(),
        Commit::WorkArrived
    ));
    assert!(!Policy::Poll.halts());
}

/// Seed 004's diagram, replayed on the `racy-flag` fixture: the core
/// checks its inbox, the waker pushes and reads the flag (still down), the
/// core raises the flag and halts. Work in the inbox, no IPI.
#[test]
fn racy_flag_replays_seed_004() {
    let cores = cores(2, Policy::RacyFlag);
    let Recheck::Empty(armed) = cores[0].prepare_to_halt().recheck() else {
        panic!("empty inbox")
    };
    let outcome = cores[0].send(1, &cores[1]);
    assert_eq!(outcome.action, Notify::Skip(Elided::TargetRunning));
    assert!(matches!(armed.commit(), Commit::Halt(_)));
    assert_eq!(cores[0].state(), State::Halted);
    assert_eq!(
        cores[0].inbox_len(),
        1,
        "the lost wakeup: work, halted, no IPI"
    );
}

/// The same steps under `state-machine` are safe: the waker sees `Halting`
/// and the commit fails.
#[test]
fn state_machine_survives_seed_004s_interleaving() {
    let cores = cores(2, Policy::StateMachine);
    let Recheck::Empty(armed) = cores[0].prepare_to_halt().recheck() else {
        panic!("empty inbox")
    };
    let outcome = cores[0].send(1, &cores[1]);
    assert_eq!(outcome.action, Notify::Skip(Elided::SetDontSleep));
    assert!(matches!(armed.commit(), Commit::DontSleep));
}

/// Dropping a token aborts the attempt: the core is `Running` again and a
/// waker is not told to do anything.
#[test]
fn dropping_a_halt_token_aborts() {
    let core: CoreWake<u32> = CoreWake::new(Policy::StateMachine);
    drop(core.prepare_to_halt());
    assert_eq!(core.state(), State::Running);
    let Recheck::Empty(armed) = core.prepare_to_halt().recheck() else {
        panic!("empty inbox")
    };
    drop(armed);
    assert_eq!(core.state(), State::Running);
    core.prepare_to_halt().abort();
    assert_eq!(core.state(), State::Running);
    assert_eq!(core.counters().snapshot().aborts_work, 3);
}

/// An IPI from a claim that the core did not need (it woke by itself
/// first) ends its next `hlt` early: counted as a spurious wakeup.
#[test]
fn stale_ipi_shows_up_as_one_spurious_wakeup() {
    let cores = cores(2, Policy::StateMachine);
    let halted = halt(&cores[0]);
    let outcome = cores[0].send(1, &cores[1]);
    assert!(outcome.must_wake());
    let mut out = VecDeque::new();
    assert_eq!(halted.woke_up(&mut out), 1); // woke (say, the timer) and drained
    // halts again; the claim's IPI is still latched, so `hlt` returns at once
    let halted = halt(&cores[0]);
    out.clear();
    assert_eq!(halted.woke_up(&mut out), 0);
    let c = cores[0].counters().snapshot();
    assert_eq!((c.halts, c.wakeups, c.spurious_wakeups), (2, 1, 1));
}
