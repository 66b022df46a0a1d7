//! Stress tests on real host threads (std): the inbox under many producers
//! and one consumer, and the whole protocol with `park` as `hlt` and
//! `unpark` as the IPI.
//!
//! These find what the models cannot reach at scale (millions of items,
//! real caches); loom and the deterministic explorer are what prove the
//! interleavings.
//!
//! Unit tests rather than integration tests so that they run with the
//! inbox lock's test-build relax strategy, which yields to the host
//! scheduler while it waits (see `sync.rs`): on a host with fewer cores
//! than threads a pure spinning ticket lock collapses into a convoy (every
//! hand-off waits for a preempted thread's time slice), which says nothing
//! about the kernel, where the lock is held with interrupts disabled.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use std::eprintln;
use std::thread;
use std::time::Instant;

use crate::{Commit, CoreWake, Inbox, Policy};

/// Items are `producer << 32 | sequence`.
fn item(producer: u64, seq: u64) -> u64 {
    (producer << 32) | seq
}

/// Checks that every producer's items arrived exactly once and in order.
struct Checker {
    next: Vec<u64>,
    received: u64,
}

impl Checker {
    fn new(producers: usize) -> Self {
        Self {
            next: alloc::vec![0; producers],
            received: 0,
        }
    }

    fn take(&mut self, batch: &mut VecDeque<u64>) {
        for value in batch.drain(..) {
            let producer = usize::try_from(value >> 32).expect("small");
            let seq = value & 0xffff_ffff;
            assert_eq!(
                seq, self.next[producer],
                "producer {producer}: expected item {}, got {seq} (lost, duplicated or reordered)",
                self.next[producer]
            );
            self.next[producer] += 1;
            self.received += 1;
        }
    }
}

/// Many producers, one consumer, millions of items: nothing lost, nothing
/// duplicated, each producer's items in order.
#[test]
fn inbox_many_producers_one_consumer() {
    const PRODUCERS: u64 = 4;
    const PER_PRODUCER: u64 = 500_000;
    let inbox = Arc::new(Inbox::new());
    let started = Instant::now();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let inbox = Arc::clone(&inbox);
            thread::spawn(move || {
                let mut first_pushes = 0_u64;
                for seq in 0..PER_PRODUCER {
                    first_pushes += u64::from(inbox.push(item(p, seq)).was_empty);
                    if seq % 1024 == 0 {
                        thread::yield_now(); // let a preempted lock holder run
                    }
                }
                first_pushes
            })
        })
        .collect();

    let mut checker = Checker::new(PRODUCERS as usize);
    let mut batch = VecDeque::new();
    let mut drains = 0_u64;
    while checker.received < PRODUCERS * PER_PRODUCER {
        if inbox.drain_into(&mut batch) == 0 {
            thread::yield_now();
            continue;
        }
        drains += 1;
        checker.take(&mut batch);
    }
    let first_pushes: u64 = producers
        .into_iter()
        .map(|p| p.join().expect("producer"))
        .sum();
    assert!(inbox.is_empty());
    assert_eq!(inbox.drain_into(&mut batch), 0);
    // Every non-empty drain was preceded by exactly one push that found the
    // inbox empty.
    assert_eq!(first_pushes, drains);
    eprintln!(
        "{} items through one inbox in {:.2?} ({drains} drains)",
        checker.received,
        started.elapsed()
    );
}

/// The protocol end to end on host threads: one idle core that "halts" in
/// `park_timeout`, producers that `send` and `unpark` it on `Wake`.
/// A halt that ends by time-out (not by an IPI) with work in the inbox is a
/// lost wakeup. Returns (IPIs sent, halts, items).
fn protocol_stress(policy: Policy, producers: u64, per_producer: u64) -> (u64, u64, u64) {
    const LOST_AFTER: Duration = Duration::from_secs(5);
    let cores: Arc<Vec<CoreWake<u64>>> =
        Arc::new((0..=producers).map(|_| CoreWake::new(policy)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let started = Instant::now();

    let consumer = {
        let cores = Arc::clone(&cores);
        let done = Arc::clone(&done);
        thread::spawn(move || {
            let me = &cores[0];
            let mut checker = Checker::new(usize::try_from(producers).expect("small"));
            let mut batch = VecDeque::new();
            while checker.received < producers * per_producer {
                if me.drain_into(&mut batch) > 0 {
                    checker.take(&mut batch);
                    continue;
                }
                match me.prepare_to_halt().try_halt() {
                    Commit::Halt(halted) => {
                        let slept = Instant::now();
                        thread::park_timeout(LOST_AFTER);
                        if slept.elapsed() >= LOST_AFTER {
                            assert_eq!(
                                me.inbox_len(),
                                0,
                                "lost wakeup: halted {LOST_AFTER:?} with work in the inbox"
                            );
                        }
                        halted.woke_up(&mut batch);
                        checker.take(&mut batch);
                    }
                    Commit::WorkArrived | Commit::DontSleep => {}
                    Commit::Poll => thread::yield_now(),
                }
            }
            done.store(true, Ordering::Relaxed);
            checker.received
        })
    };
    let consumer_thread = consumer.thread().clone();

    let senders: Vec<_> = (1..=producers)
        .map(|p| {
            let cores = Arc::clone(&cores);
            let consumer_thread = consumer_thread.clone();
            thread::spawn(move || {
                let me = &cores[usize::try_from(p).expect("small")];
                for seq in 0..per_producer {
                    if cores[0].send(item(p - 1, seq), me).must_wake() {
                        consumer_thread.unpark();
                    }
                    if seq % 256 == 0 {
                        thread::yield_now();
                    }
                }
            })
        })
        .collect();
    for sender in senders {
        sender.join().expect("sender");
    }
    let received = consumer.join().expect("consumer");
    assert!(done.load(Ordering::Relaxed));
    let mut waker_side = cores[1].counters().snapshot();
    for core in &cores[2..] {
        waker_side += core.counters().snapshot();
    }
    let idle_side = cores[0].counters().snapshot();
    assert_eq!(waker_side.inbox_pushes, producers * per_producer);
    assert_eq!(
        waker_side.wakes_sent + waker_side.wakes_elided(),
        producers * per_producer
    );
    eprintln!(
        "{policy}: {received} items in {:.2?}; {} IPIs, {} halts, {} wakeups, {} spurious; \
         elided: running {}, dont-sleep {}, claimed {}, pending {}",
        started.elapsed(),
        waker_side.wakes_sent,
        idle_side.halts,
        idle_side.wakeups,
        idle_side.spurious_wakeups,
        waker_side.elided_target_running,
        waker_side.elided_dont_sleep,
        waker_side.elided_already_claimed,
        waker_side.elided_already_pending,
    );
    (waker_side.wakes_sent, idle_side.halts, received)
}

#[test]
fn protocol_state_machine_on_host_threads() {
    let (ipis, halts, items) = protocol_stress(Policy::StateMachine, 3, 200_000);
    assert_eq!(items, 600_000);
    // One IPI per claimed halt, never more.
    assert!(ipis <= halts, "{ipis} IPIs for {halts} halts");
}

#[test]
fn protocol_always_ipi_on_host_threads() {
    let (ipis, _, items) = protocol_stress(Policy::AlwaysIpi, 3, 100_000);
    assert_eq!(items, 300_000);
    assert_eq!(ipis, 300_000, "always-ipi sends one per send");
}

#[test]
fn protocol_poll_on_host_threads() {
    let (ipis, halts, items) = protocol_stress(Policy::Poll, 3, 100_000);
    assert_eq!((ipis, halts, items), (0, 0, 300_000));
}
