//! Looking again, while a workload runs, at how many cores the host runs
//! at once.
//!
//! A round trial tries one chunk more than the plan only within its reach
//! (`round_trial::reach`): the parallelism in force, or the cores the
//! boot's window saw at once. A window taken while a neighbour held a host
//! core sees fewer cores than the host runs once the neighbour has gone
//! (with a loop pinned to one of two host cores until the boot's `host:`
//! line, four boots of six saw 1.000 and ran every round on one core,
//! results.md), and until this look nothing measured again: every round
//! of the workload stayed on one core.
//!
//! So where the reach alone stops a trial ([`round_trial::blocked_by_reach`]:
//! the plan is the stealing pool's, its chunks are not fixed, one more
//! chunk fits the cores and the work), the workload looks again from time
//! to time: the plan's cores and one more run the boot window's counted
//! chunks, each looking at the others' progress after each chunk, for
//! [`LOOK_WINDOW_US`] ([`host_parallelism::run_window`]). The cores a
//! look sees at once, rounded, widen the reach
//! ([`seen_by_looks`]), and where that lets one more chunk in, a trial
//! starts at once and decides by the rounds' own times, as at the start.
//! A look cannot see more than ran: a core is seen beside another only
//! when it finished one or two chunks between two of that core's looks,
//! which one host core switching vCPUs (a time slice, tens of chunks)
//! has not shown in any look so far (every look of 20 boots on one host
//! core saw 1.000, results.md; the boot's window, before it counted only
//! the looks within it, read up to 1.017 there).
//!
//! What a look costs is the workload's time: the caller runs no round
//! while it looks, and on a host that runs fewer cores than a look asks
//! for the look takes more than its window (the caller waits for the last
//! core to arrive, and for every core to finish its chunk after the
//! close). A look's cost is not known before it runs, so the schedule
//! ([`LookSchedule`]) bounds what the looks before a look cost: the first
//! is due after [`LOOK_SPACING`] windows of the workload's rounds (128
//! ms), and each later one once the workload has run at least twice as
//! long as when the last one ended and [`LOOK_SPACING`] + 1 times as long
//! as all its looks so far took. So at the start of any look the looks
//! before it took at most one part in 65 of the workload's time; the
//! look itself comes on top. A long workload on a host that runs no more
//! cores (one host core, where no look sees a second) pays for a number
//! of looks that grows with the logarithm of its length, and one whose
//! neighbour leaves is looked at again by the time it has run twice as
//! long, or 65 times as long as its looks took where that is later (a
//! first look of 8 ms at 128 ms: the second at 520 ms). In `bench
//! --host-cores 1,2` at 1df254b (a spacing of 64 times the last look,
//! doubling) a look took 2.1-11.1 ms in all (medians 5.8-8.1 ms on one
//! host core, windows of 2.0 ms; 2.4-5.5 with three cores asked of two,
//! windows of 2.0-5.9 ms), and the compute-heavy grids (1.35-4.38 s)
//! looked 1-3 times, all of a boot's looks 0.24-0.79% of its time; a
//! workload that ends just after its first look paid up to about 8%
//! there, and in the Linux bench one look took 67 ms, 18.75% of an
//! idle-poll boot, whose every vCPU spins. A workload shorter than the
//! first gap never looks.

use super::host_parallelism::{self, WindowLooks};
use super::poll_slots;
use super::round_trial::RoundTrial;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How long a look's window lasts, µs: long against a chunk (a look every
/// few µs under TCG, hundreds within it), short against the workloads
/// that can pay for it ([`LOOK_SPACING`]).
pub const LOOK_WINDOW_US: u64 = 2_000;

/// The workload's time before its first look, in windows of
/// [`LOOK_WINDOW_US`]; and, plus one, how many times as long as all its
/// looks took the workload must have run before each later one (the
/// module docs say what that costs).
pub const LOOK_SPACING: u64 = 64;

/// When a workload's next look is due, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookSchedule {
    /// When the workload's rounds started.
    start_ticks: u64,
    next_at_ticks: u64,
    /// What every look so far took, in all.
    looking_ticks: u64,
}

impl LookSchedule {
    /// The schedule of a workload whose rounds started at `start_ticks`,
    /// with looks of `window_ticks`: the first after [`LOOK_SPACING`]
    /// windows.
    pub fn new(start_ticks: u64, window_ticks: u64) -> Self {
        Self {
            start_ticks,
            next_at_ticks: start_ticks.saturating_add(window_ticks.saturating_mul(LOOK_SPACING)),
            looking_ticks: 0,
        }
    }

    /// Whether a look is due at `now_ticks`.
    pub fn due(&self, now_ticks: u64) -> bool {
        now_ticks >= self.next_at_ticks
    }

    /// A look ran from `begin_ticks` to `end_ticks`: the next is due once
    /// the workload has run twice as long as at this look's end and
    /// [`LOOK_SPACING`] + 1 times as long as its looks took in all.
    pub fn looked(&mut self, begin_ticks: u64, end_ticks: u64) {
        self.looking_ticks = self
            .looking_ticks
            .saturating_add(end_ticks.saturating_sub(begin_ticks));
        let ran = end_ticks.saturating_sub(self.start_ticks);
        let after = ran
            .saturating_mul(2)
            .max(self.looking_ticks.saturating_mul(LOOK_SPACING + 1));
        self.next_at_ticks = self.start_ticks.saturating_add(after);
    }

    /// What every look so far took, in all, ticks.
    pub fn looking_ticks(&self) -> u64 {
        self.looking_ticks
    }
}

/// Between two of a workload's rounds, at `now_ticks`: where its looks
/// (`looks`, `None`: it takes none) have one due and a trial could start
/// (`RoundTrial::can_start`), runs `look` (the workload's look, entered
/// in the schedule, returning the chunk count a trial may now try, if
/// any) and starts that trial with the next round; a trial started ends
/// the looks (its own retrials follow). Returns whether one started.
pub fn between_rounds(
    looks: &mut Option<LookSchedule>,
    trial: &mut RoundTrial,
    now_ticks: u64,
    look: impl FnOnce(&mut LookSchedule) -> Option<usize>,
) -> bool {
    let Some(schedule) = looks.as_mut() else {
        return false;
    };
    if !trial.can_start() || !schedule.due(now_ticks) {
        return false;
    }
    let started = look(schedule).is_some_and(|tried| trial.start(tried));
    if started {
        *looks = None;
    }
    started
}

/// The most cores a look saw at once, rounded (0: none looked). Relaxed,
/// as every figure here: written by the workload's task, read by it and
/// by the statistics after it, counts that order nothing.
static SEEN_BY_LOOKS: AtomicUsize = AtomicUsize::new(0);
/// Looks the last workload ran.
static LOOKS_RUN: AtomicU64 = AtomicU64::new(0);
/// The most cores the last workload's looks saw at once, in thousandths.
static LOOKS_SEEN_MILLI: AtomicU64 = AtomicU64::new(0);

/// A look on cores `0..participants` (from the workload's task, on one of
/// them): a window of [`LOOK_WINDOW_US`]; what it saw at once, rounded,
/// widens the reach ([`seen_by_looks`]). No idle core may start polling
/// during it, as during the boot's measurement (`start.rs`): a polling
/// vCPU outside the look would take host time from the cores it looks
/// for (the slots are put back after; a core already polling keeps its
/// slot until its poll ends).
pub fn look(participants: usize) -> WindowLooks {
    let slots = poll_slots::slots();
    poll_slots::set(0);
    let looked = host_parallelism::run_window(participants, LOOK_WINDOW_US);
    poll_slots::set(slots);
    let seen_milli = looked.seen_milli();
    SEEN_BY_LOOKS.fetch_max(
        host_parallelism::whole_cores(seen_milli, participants),
        Ordering::Relaxed,
    );
    LOOKS_RUN.fetch_add(1, Ordering::Relaxed);
    LOOKS_SEEN_MILLI.fetch_max(seen_milli, Ordering::Relaxed);
    looked
}

/// The most cores a look has seen at once, rounded (`None`: no look ran).
pub fn seen_by_looks() -> Option<usize> {
    Some(SEEN_BY_LOOKS.load(Ordering::Relaxed)).filter(|&cores| cores > 0)
}

/// Puts back what looks had seen (`None`: none) before an in-kernel test
/// looked, so that the tests after it plan from the figures the boot had.
pub fn restore_seen_by_looks(seen: Option<usize>) {
    SEEN_BY_LOOKS.store(seen.unwrap_or(0), Ordering::Relaxed);
}

/// A workload starts: its looks are counted from none.
pub fn forget_workload_looks() {
    LOOKS_RUN.store(0, Ordering::Relaxed);
    LOOKS_SEEN_MILLI.store(0, Ordering::Relaxed);
}

/// Looks the last workload ran, and the most cores they saw at once, in
/// thousandths (the statistics record).
pub fn workload_looks() -> (u64, u64) {
    (
        LOOKS_RUN.load(Ordering::Relaxed),
        LOOKS_SEEN_MILLI.load(Ordering::Relaxed),
    )
}
