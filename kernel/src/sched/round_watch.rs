//! The stuck-round watch: a fork-join round still unfinished long after
//! every core went idle is a hang that no inbox shows (work lost above the
//! wake protocol: a task parked with nobody left to wake it), so neither the
//! lost-wakeup watchdog nor the host's halted-with-work check would name it.
//!
//! The pool stamps each round's start; the watchdog core looks at the
//! stamp on its scan ticks. The first time it finds a round older than [`STUCK_ROUND_MS`] prints a state dump
//! (every core that is not simply idle, the pool's latch and each worker
//! that has not finished the round, with its parker) and ends the run
//! failed. With `watchdog=off` there are no ticks: the host's stall
//! detector takes over.

use super::{core_sched, fork_join};
use crate::arch::tsc;
use crate::exit::{ExitCode, exit};
use crate::println;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use vigil_proto::serial_line::STUCK_ROUND_PREFIX;

/// A round older than this, seen from the watchdog core, is stuck. Rounds
/// take milliseconds; a lost wakeup the watchdog reports delays one by up
/// to a scan period (20 ms by default). Below the host's default stall time (60 s)
/// so the guest names the hang before the host kills it.
pub const STUCK_ROUND_MS: u64 = 20_000;

/// TSC at the start of the round in progress; 0 when none is.
static STARTED_TSC: AtomicU64 = AtomicU64::new(0);
static REPORTED: AtomicBool = AtomicBool::new(false);
/// Rounds begun since boot (any pool).
static ROUNDS_BEGUN: AtomicU64 = AtomicU64::new(0);

// Relaxed throughout: the stamp is a timestamp compared against a
// generous threshold, and a stale read only delays or skips one check.

/// A round starts (called by the pool's caller).
pub fn begin() {
    STARTED_TSC.store(tsc::now().max(1), Ordering::Relaxed);
    ROUNDS_BEGUN.fetch_add(1, Ordering::Relaxed);
}

/// Fork-join rounds begun since boot (the seeded point of the IPI faults).
pub fn rounds_begun() -> u64 {
    ROUNDS_BEGUN.load(Ordering::Relaxed)
}

/// The round finished.
pub fn end() {
    STARTED_TSC.store(0, Ordering::Relaxed);
}

/// Called by the watchdog core `me` on a scan tick: if a round has been
/// running for [`STUCK_ROUND_MS`], dumps the state and ends the run failed.
pub fn check(me: usize) {
    let started = STARTED_TSC.load(Ordering::Relaxed);
    if started == 0 {
        return;
    }
    let age_ms = tsc::ticks_to_us(tsc::now().saturating_sub(started)) / 1000;
    if age_ms < STUCK_ROUND_MS || REPORTED.swap(true, Ordering::Relaxed) {
        return;
    }
    println!(
        "{STUCK_ROUND_PREFIX}a fork-join round has not finished after {age_ms} ms; core {me} found it on a watchdog scan tick. State dump:"
    );
    core_sched::dump_cores();
    fork_join::dump_stuck_round();
    println!("vigil: FAILED: stuck fork-join round (no lost wakeup in any inbox)");
    exit(ExitCode::CheckFailed)
}
