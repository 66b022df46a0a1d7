//! Ping-pong: two tasks on cores 0 and 1 wake each other in turn, `rounds`
//! round trips. Every hand-off is a cross-core wake through the protocol.

use crate::arch::tsc;
use crate::sched::task::TaskRef;
use crate::sched::wakeup::{self, park};
use crate::smp::cores;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Once;

/// What a ping-pong run measured.
#[derive(Debug, Clone, Copy)]
pub struct PingPongReport {
    /// Round trips completed.
    pub rounds: usize,
    /// Mean round-trip time in TSC ticks.
    pub mean_round_trip_ticks: u64,
}

impl core::fmt::Display for PingPongReport {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} round trips, mean {} ticks ({} ns)",
            self.rounds,
            self.mean_round_trip_ticks,
            tsc::ticks_to_us(self.mean_round_trip_ticks * 1000)
        )
    }
}

struct Court {
    /// Number of hits so far: even = ping's turn, odd = pong's turn.
    hits: AtomicU64,
    ping: Once<TaskRef>,
    pong: Once<TaskRef>,
}

/// Runs `rounds` round trips between a task on core 0 (the caller) and one
/// on core `partner`.
pub fn run_between(partner: usize, rounds: usize) -> Result<PingPongReport, String> {
    let court = Arc::new(Court {
        hits: AtomicU64::new(0),
        ping: Once::new(),
        pong: Once::new(),
    });
    court.ping.call_once(wakeup::current);
    let total_hits = 2 * rounds as u64;
    let pong_court = court.clone();
    let pong = wakeup::spawn_on(partner, move || {
        let court = pong_court;
        court.pong.call_once(wakeup::current);
        let ping = court.ping.get().expect("ping registered").clone();
        loop {
            // Acquire pairs with the Release increment of the other side.
            let hits = court.hits.load(Ordering::Acquire);
            if hits >= total_hits {
                return;
            }
            if hits % 2 == 1 {
                court.hits.store(hits + 1, Ordering::Release);
                wakeup::wake(&ping);
            } else {
                park();
            }
        }
    });
    while court.pong.get().is_none() {
        wakeup::yield_now();
    }
    let pong_task = court.pong.get().expect("pong registered").clone();
    let start = tsc::now();
    loop {
        let hits = court.hits.load(Ordering::Acquire);
        if hits >= total_hits {
            break;
        }
        if hits % 2 == 0 {
            court.hits.store(hits + 1, Ordering::Release);
            wakeup::wake(&pong_task);
        } else {
            park();
        }
    }
    let elapsed = tsc::now() - start;
    pong.join();
    let hits = court.hits.load(Ordering::Acquire);
    if hits != total_hits {
        return Err(format!("{hits} hits, expected {total_hits}"));
    }
    Ok(PingPongReport {
        rounds,
        mean_round_trip_ticks: elapsed / rounds.max(1) as u64,
    })
}

/// `workload=ping-pong`: cores 0 and 1 (or two tasks on core 0 with 1 core).
pub fn run(rounds: usize) -> Result<PingPongReport, String> {
    run_between(if cores::count() > 1 { 1 } else { 0 }, rounds)
}
