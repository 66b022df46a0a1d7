//! The round plan checked against the running workload: in its first
//! rounds (or from where a look widened its reach, `look_again`), and
//! again later while the plan wins, a workload times its plan's chunk
//! count against one more chunk, and keeps the faster.
//!
//! The plan ([`round_plan`](super::round_plan)) prices a split from what
//! the boot measured: the host's parallelism `P`, rounded to a whole core,
//! and the median cost of 64 timed rounds. Both readings have outliers
//! that cost a whole core for the rest of the workload: `P` read 1.485 on
//! two host cores (rounded to one core: every round on the caller alone),
//! and at 32 vCPUs two boots of three timed the empty round (as the
//! rounds then were) at 105-110 µs
//! where the others read 2-4 (the split's cost then outweighed a 56 µs
//! round: one chunk); those boots took 1.6x the time of the boots that
//! split in two. A reading can be wrong; a round's own time is what the
//! split is for.
//!
//! So where the plan may have split too little, the workload runs
//! [`TRIAL_BLOCKS`] blocks of [`TRIAL_BLOCK_ROUNDS`] rounds of each of the
//! two counts, alternating (the alternative first: a core it newly
//! involves pays its warm-up in the alternative's time, which leans the
//! choice towards the plan), and keeps the count with the lower median
//! round time; a tie keeps the plan; a trial that keeps the plan runs
//! again later, at doubling gaps ([`RoundTrial`]). "May have split too
//! little" is
//! [`alternative`]: one more chunk than the plan, when the plan is the
//! stealing pool's, no boot parameter fixed the chunks, and one more chunk
//! stays within the cores, the work's rows and what the host may run at
//! once: the parallelism in force, or the cores the boot's window (or a
//! later look, `look_again`, where the reach alone kept the plan: then a
//! trial starts midway, [`RoundTrial::start`]) saw
//! running at once where more (`HostParallelism::seen_milli`, rounded: each
//! core of the window looked at the others' progress after each chunk; a count
//! a neighbour pushed down, 1.485 on two host cores once, rounds to one
//! core, while the look sees the cores that run at once while the
//! neighbour lets them). On one host core the window saw 1.000 cores at
//! once: no trial there, so a trial never asks for a time slice the host
//! cannot give.
//!
//! `trial=` overrides where: `off` runs the plan's count from the first
//! round, `always` tries one more chunk wherever it fits the cores and
//! the rows, whatever the host parallelism (so a test can count on a
//! trial on any host).
//!
//! Fewer chunks than the plan are not tried: a split into more chunks
//! than the host runs is the costly mistake (a chunk waits for its core's
//! next time slice, milliseconds) and the plan's cap already prevents it,
//! while trying one chunk fewer on a compute-heavy round costs half a
//! round of work per trial round.

use crate::params::{Pool, Trial};

use super::round_plan::{Fixed, RoundPlan};

/// Rounds of one count in a row.
pub const TRIAL_BLOCK_ROUNDS: usize = 4;
/// Blocks of each count.
pub const TRIAL_BLOCKS: usize = 2;
/// Rounds the trial times of each count.
pub const TRIAL_ROUNDS_EACH: usize = TRIAL_BLOCK_ROUNDS * TRIAL_BLOCKS;
/// A workload with fewer rounds left than this many trials' worth runs
/// none (the trial would be a good part of it).
const MIN_ROUNDS_PER_TRIAL: usize = 8;
/// Rounds a workload must have left for a trial.
pub const MIN_ROUNDS_LEFT: usize = MIN_ROUNDS_PER_TRIAL * 2 * TRIAL_ROUNDS_EACH;
/// How many cores at once the trial may reach: the parallelism in force
/// (`in_force`), or the cores seen running at once (`seen`, from
/// [`seen_at_once`]: the boot window's `HostParallelism::seen_milli`
/// rounded, or a look's where more; `None` when `parallelism=` fixed the
/// parallelism), if that is more.
pub fn reach(in_force: usize, seen: Option<usize>) -> usize {
    in_force.max(seen.unwrap_or(0))
}

/// The cores seen at once that widen a trial's reach ([`reach`]): the
/// boot window's (`boot`, rounded; `None` where `parallelism=` fixed the
/// parallelism, and then nothing widens it), or a workload's look's where
/// more (`looks`, `look_again::seen_by_looks`).
pub fn seen_at_once(boot: Option<usize>, looks: Option<usize>) -> Option<usize> {
    boot.map(|boot| boot.max(looks.unwrap_or(0)))
}

/// The chunk count to try against `plan`'s, if any: one more, where the
/// plan may have split too little (the module docs), or wherever it fits
/// with `trial=always`. `max_chunks` is the work's limit, `cores` the core
/// count, `reach` from [`reach`].
pub fn alternative(
    plan: RoundPlan,
    max_chunks: usize,
    cores: usize,
    reach: usize,
    fixed: Fixed,
) -> Option<usize> {
    if plan.pool != Pool::Steal || fixed.chunks.is_some() {
        return None;
    }
    let reach = match fixed.trial {
        Trial::Off => return None,
        Trial::Auto => reach,
        Trial::Always => usize::MAX,
    };
    let more = plan.chunks + 1;
    (more <= reach.min(cores).min(max_chunks)).then_some(more)
}

/// Whether the reach alone stops a trial of `plan`: with no reach (every
/// core) [`alternative`] would try one more chunk, within `reach` it
/// tries none (so never with `trial=off`, which tries none anyway, nor
/// with `trial=always`, which has no reach). There the workload looks
/// again at the cores the host runs at once (`look_again`), and a look
/// that sees more widens the reach.
pub fn blocked_by_reach(
    plan: RoundPlan,
    max_chunks: usize,
    cores: usize,
    reach: usize,
    fixed: Fixed,
) -> bool {
    alternative(plan, max_chunks, cores, usize::MAX, fixed).is_some()
        && alternative(plan, max_chunks, cores, reach, fixed).is_none()
}

/// The cores a finished trial showed the host runs at once, where that
/// is more than the parallelism in force (`in_force`): the count it kept,
/// when that is one more chunk than the plan's and within the reach
/// ([`reach`]: where the boot's window, or a look, saw that many cores at once). A
/// round split over one more core than the boot's rounded reading, and
/// faster for it in the median of its rounds, ran on that many cores at
/// once: the reading was low (two host cores read 1.485 once, and the
/// plan stayed on one core until the trial). `None` where the trial kept the plan,
/// where the count kept is no more than the parallelism in force, where
/// it is beyond the reach (a `trial=always` trial: where the window saw
/// the host run fewer, the median of 8 rounds against 8 of two counts
/// that take the same time is a coin, and on one host core at 32 vCPUs
/// compute-heavy kept 2 chunks in 3 boots of 3, results.md), and where
/// `parallelism=` fixed it (`fixed`: a boot parameter is not revised).
pub fn parallelism_shown(
    outcome: TrialOutcome,
    in_force: usize,
    reach: usize,
    fixed: bool,
) -> Option<usize> {
    let more_kept = outcome.kept > outcome.planned.0;
    (more_kept && outcome.kept > in_force && outcome.kept <= reach && !fixed)
        .then_some(outcome.kept)
}

/// What a finished trial measured and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrialOutcome {
    /// The plan's chunk count and its median round, ns.
    pub planned: (usize, u64),
    /// The alternative's chunk count and its median round, ns.
    pub tried: (usize, u64),
    /// The count kept.
    pub kept: usize,
    /// The workload's pooled rounds (from 0) the trial timed: the first
    /// and the last.
    pub rounds: (usize, usize),
    /// Rounds until the next trial starts, if one will (the plan was
    /// kept and enough rounds are left: [`RoundTrial`]).
    pub next_after: Option<usize>,
}

/// The trial's state while a workload runs its rounds: which count the
/// next round runs, and the times so far.
///
/// A trial that keeps the plan is run again after [`FIRST_RETRIAL_GAP`]
/// rounds, then after twice as many each time, while at least
/// [`MIN_ROUNDS_LEFT`] rounds are left after the gap (as for the first
/// trial): the rounds a trial times can fall on a stretch the host gives
/// to someone else. At 64 vCPUs on 2 host cores one boot of five timed
/// its boot calibration at 57.8 µs (the others 2.1-2.2), planned one
/// chunk, and its trial timed two chunks at 162 µs a round against 57 for
/// one, so it kept one: 62 ms against 40-50 for the three boots whose
/// rounds ran on two cores (results.md, at 13062cf). The cost where the
/// plan is right: a few trials, each [`TRIAL_ROUNDS_EACH`] rounds of the
/// dearer count, at doubling gaps (four in 1000 rounds). A trial that
/// keeps the alternative is the last: one chunk more than the plan is as
/// far as trials go.
#[derive(Debug)]
pub struct RoundTrial {
    planned: usize,
    /// `None`: no trial (yet: a look may start one, [`RoundTrial::start`]);
    /// every round runs the plan's count.
    tried: Option<usize>,
    /// Rounds still to run (this one included), as known at the start.
    rounds_left: usize,
    /// Rounds run so far.
    round: usize,
    /// Where the trials are.
    phase: Phase,
    /// Rounds the next wait lasts, once the current trial keeps the plan.
    next_gap: usize,
    /// Rounds timed so far in the current trial (both counts).
    timed: usize,
    times_ns: [[u64; TRIAL_ROUNDS_EACH]; 2],
    /// The count the rounds outside a trial run.
    kept: usize,
}

/// Where a workload's trials are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Timing rounds, the current trial's first at this round.
    Timing { first_round: usize },
    /// Waiting this many more rounds before the next trial.
    Waiting(usize),
    /// No trial now or later.
    Done,
}

/// Rounds between a trial that kept the plan and the next (doubling after
/// each).
pub const FIRST_RETRIAL_GAP: usize = 64;

impl RoundTrial {
    /// A trial of `tried` against `planned` chunks, or none (`tried` is
    /// `None`, or fewer than enough rounds are left: `rounds_left`).
    pub fn new(planned: usize, tried: Option<usize>, rounds_left: usize) -> Self {
        let tried = tried.filter(|_| rounds_left >= MIN_ROUNDS_LEFT);
        Self {
            planned,
            tried,
            rounds_left,
            round: 0,
            phase: if tried.is_some() {
                Phase::Timing { first_round: 0 }
            } else {
                Phase::Done
            },
            next_gap: FIRST_RETRIAL_GAP,
            timed: 0,
            times_ns: [[0; TRIAL_ROUNDS_EACH]; 2],
            kept: planned,
        }
    }

    /// Whether a trial can start now ([`start`](Self::start)): none was
    /// given, and as many rounds are left as a first trial needs.
    pub fn can_start(&self) -> bool {
        self.tried.is_none() && self.rounds_left.saturating_sub(self.round) >= MIN_ROUNDS_LEFT
    }

    /// Starts a trial of `tried` chunks against the plan's with the next
    /// round, where none was given at the start (a look widened the
    /// reach, `look_again`) and enough rounds are left
    /// ([`can_start`](Self::can_start)); from then on as a trial given at
    /// the start. Returns whether it started.
    pub fn start(&mut self, tried: usize) -> bool {
        if !self.can_start() {
            return false;
        }
        self.tried = Some(tried);
        self.timed = 0;
        self.phase = Phase::Timing {
            first_round: self.round,
        };
        true
    }

    /// Whether the next round is one of the alternative's (blocks
    /// alternate, the alternative's first).
    fn next_is_tried(&self) -> bool {
        (self.timed / TRIAL_BLOCK_ROUNDS).is_multiple_of(2)
    }

    /// Whether rounds are being timed now.
    pub fn running(&self) -> bool {
        matches!(self.phase, Phase::Timing { .. })
    }

    /// The chunk count of the next round.
    pub fn chunks(&self) -> usize {
        match (self.phase, self.tried) {
            (Phase::Timing { .. }, Some(tried)) if self.next_is_tried() => tried,
            (Phase::Timing { .. }, _) => self.planned,
            _ => self.kept,
        }
    }

    /// The round just run (with [`chunks`](Self::chunks) chunks) took
    /// `round_ns`; called after every round. Returns the outcome when this
    /// round was a trial's last.
    pub fn record(&mut self, round_ns: u64) -> Option<TrialOutcome> {
        let round = self.round;
        self.round += 1;
        let left_after = self.rounds_left.saturating_sub(self.round);
        match self.phase {
            Phase::Done => None,
            Phase::Waiting(rounds) => {
                self.phase = if rounds > 1 {
                    Phase::Waiting(rounds - 1)
                } else if left_after >= MIN_ROUNDS_LEFT {
                    self.timed = 0;
                    Phase::Timing {
                        first_round: self.round,
                    }
                } else {
                    Phase::Done
                };
                None
            }
            Phase::Timing { first_round } => {
                let tried = self.tried?;
                let side = usize::from(!self.next_is_tried());
                let block = self.timed / (2 * TRIAL_BLOCK_ROUNDS);
                let slot = block * TRIAL_BLOCK_ROUNDS + self.timed % TRIAL_BLOCK_ROUNDS;
                self.times_ns[side][slot] = round_ns;
                self.timed += 1;
                if self.timed < 2 * TRIAL_ROUNDS_EACH {
                    return None;
                }
                let tried_ns = median_ns(self.times_ns[0]);
                let planned_ns = median_ns(self.times_ns[1]);
                self.kept = if tried_ns < planned_ns {
                    tried
                } else {
                    self.planned
                };
                // Another trial when this one kept the plan and, after the
                // gap, as many rounds are left as a first trial needs.
                let again =
                    self.kept == self.planned && left_after >= self.next_gap + MIN_ROUNDS_LEFT;
                let next_after = again.then_some(self.next_gap);
                self.phase = match next_after {
                    Some(gap) => {
                        self.next_gap = gap.saturating_mul(2);
                        Phase::Waiting(gap)
                    }
                    None => Phase::Done,
                };
                Some(TrialOutcome {
                    planned: (self.planned, planned_ns),
                    tried: (tried, tried_ns),
                    kept: self.kept,
                    rounds: (first_round, round),
                    next_after,
                })
            }
        }
    }
}

/// The median of `times` (the lower of the two middle ones).
fn median_ns(mut times: [u64; TRIAL_ROUNDS_EACH]) -> u64 {
    times.sort_unstable();
    times[(TRIAL_ROUNDS_EACH - 1) / 2]
}
