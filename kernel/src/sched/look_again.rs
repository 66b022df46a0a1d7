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
//! never shows.
//!
//! What a look costs is the workload's time: the caller runs no round
//! while it looks, and on a host that runs one core at a time the other
//! core's part takes its host time too. The looks are spaced by what they
//! cost ([`LookSchedule`]): the first is due after [`LOOK_SPACING`]
//! windows of the workload's rounds, the next after `LOOK_SPACING` times
//! what the last one took, and each later gap twice the last (a look that
//! widened the reach ends the looks: the trial takes over). So every look
//! after the first takes at most one part in `LOOK_SPACING + 1` of the
//! time since the one before, and a long workload on a host that runs no
//! more cores (one host core, where no look can see a second) pays for a
//! number of looks that grows with the logarithm of its length, while one
//! whose neighbour leaves is seen at most about as long after as the
//! workload had run before. The first look's cost is not known before it
//! runs, and is more than its window where the host runs fewer cores than
//! it asks for: the caller waits for the last core to arrive and for
//! every core to finish its chunk after the close. In `bench --host-cores
//! 1,2` at 1df254b a look took 2.2-11.0 ms in all (2 ms of window;
//! medians 5.6-8.2 ms on one host core, 2.4-6.1 with three cores asked of
//! two), and the compute-heavy grids (1.4-2.7 s) looked 1-3 times, 0.25-0.79%
//! of their time; a workload that ends just after its first look pays up to
//! about 8%. A workload shorter than the first gap (128 ms) never looks.

use super::host_parallelism::{self, WindowLooks};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How long a look's window lasts, µs: long against a chunk (a look every
/// few µs under TCG, hundreds within it), short against the workloads
/// that can pay for it ([`LOOK_SPACING`]).
pub const LOOK_WINDOW_US: u64 = 2_000;

/// The workload's time before its first look, in windows of
/// [`LOOK_WINDOW_US`], and between its first and second, in what the
/// first took; each later gap doubles (the module docs say what that
/// costs).
pub const LOOK_SPACING: u64 = 64;

/// When a workload's next look is due, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookSchedule {
    next_at_ticks: u64,
    /// The next gap, in what the last look took.
    spacing: u64,
}

impl LookSchedule {
    /// The schedule of a workload whose rounds started at `start_ticks`,
    /// with looks of `window_ticks`: the first after [`LOOK_SPACING`]
    /// windows.
    pub fn new(start_ticks: u64, window_ticks: u64) -> Self {
        Self {
            next_at_ticks: start_ticks.saturating_add(window_ticks.saturating_mul(LOOK_SPACING)),
            spacing: LOOK_SPACING,
        }
    }

    /// Whether a look is due at `now_ticks`.
    pub fn due(&self, now_ticks: u64) -> bool {
        now_ticks >= self.next_at_ticks
    }

    /// A look ran from `begin_ticks` to `end_ticks`: the next is due the
    /// spacing (from [`LOOK_SPACING`], doubling) times as long after its
    /// end.
    pub fn looked(&mut self, begin_ticks: u64, end_ticks: u64) {
        let took = end_ticks.saturating_sub(begin_ticks);
        self.next_at_ticks = end_ticks.saturating_add(took.saturating_mul(self.spacing));
        self.spacing = self.spacing.saturating_mul(2);
    }
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
/// widens the reach ([`seen_by_looks`]).
pub fn look(participants: usize) -> WindowLooks {
    let looked = host_parallelism::run_window(participants, LOOK_WINDOW_US);
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
