//! How a fork-join round runs on this host: how many chunks, how many cores
//! are woken for them, and which pool, chosen from what the kernel
//! measures instead of from constants tuned to one machine.
//!
//! What it measures:
//! * how many of its cores the host runs at once, `P`
//!   ([`host_parallelism`](super::host_parallelism), at boot);
//! * what a round costs beyond its work: the median over timed rounds of
//!   each round's time less its longest chunk, one chunk per core on
//!   `min(max(P, 2), cores)` cores with the stealing pool (at least 2, so
//!   that a split is always priced) and, where every core has a host core
//!   of its own (`P >= cores`), with the pinned pool on every core; there
//!   every chunk works as long as it takes another core to take the
//!   stealing round's published chunks, measured ([`handoff_work_us`]),
//!   so that they are handed off as in a workload, and elsewhere the
//!   chunks are empty (why: [`calibration_work_us`])
//!   ([`RoundCosts`], at boot, right after `P`);
//! * what a round's work costs: a workload times its first round, run on
//!   the caller alone ([`RoundPlan::for_work`]).
//!
//! What it chooses: a round of work `W` is split into
//! `k = min(P, cores, rows, W / (2 * overhead))` chunks (at least 1): one
//! runs on the caller and the other `k - 1` are published, so the
//! stealable pool's rule wakes at most `k - 1` cores (its herd bound), in
//! log2 steps. Splitting pays while each chunk is long against what the
//! split costs: with `W / k >= 2 * overhead` the overhead is at most a
//! third of the round. No more chunks than `P`: a chunk for a core the
//! host is not running waits for that core's next time slice. (Until the
//! parallelism was measured by counting work instead of clock gaps, it
//! undercounted under QEMU's TCG from 8 vCPUs up, and the cap had a floor
//! of 2 to keep compute-heavy rounds from running on one core.) Without
//! any cap (`k` bounded by the overhead term alone) empty rounds of
//! polling cores priced a chunk at 4 µs, and sync-heavy rounds at 8 and
//! 32 vCPUs split into 8 and 16 chunks and took 4.6x and 7x the time at 2.
//! The pinned pool is chosen only when every core has
//! a host core of its own and its round is cheaper than the stealing one.
//! Between rounds at most `P` idle cores may poll instead of halting
//! ([`poll_slots`](super::poll_slots)); how long they poll is their
//! adaptive backoff's, which stops polling when no round comes.
//!
//! Every choice can be fixed with a boot parameter (`parallelism=`,
//! `chunks=`, `pool=`, `backoff=`).

use super::fork_join::{ForkJoin, Job};
use super::host_parallelism;
use super::look_again::{self, LookSchedule};
use super::round_trial::{self, RoundTrial, TrialOutcome};
use super::steal_join::StealJoin;
use crate::arch::tsc;
use crate::params::{Pool, Trial};
use crate::smp::cores;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Once;

/// Rounds timed per pool at boot (the median is kept: the first rounds
/// also teach the cores' backoff to poll).
pub const CALIBRATION_ROUNDS: usize = 64;

/// Stealing rounds of two chunks run at each chunk length while the
/// hand-off is looked for ([`handoff_work_us`]): every one must hand its
/// published chunk off (the probe stops at the first that does not).
pub const HANDOFF_PROBE_ROUNDS: usize = 8;

/// The first chunk length tried for the hand-off, µs (doubled from there).
pub const FIRST_HANDOFF_WORK_US: u64 = 1;

/// The longest chunk tried for the hand-off, and the longest a timed
/// round's chunk works, µs: about a millisecond, of the order of one host
/// time slice (Linux's are 0.75 to a few ms), and beyond the wakes of a
/// halted core measured under TCG here (p50 31-75 µs, p99 150-500 µs,
/// results.md). A host that leaves a published chunk to its caller at
/// this length in one round of eight does not run a helper beside it:
/// the rounds are timed at this length, and the stealing pool is priced
/// at what its caller pays running its chunks alone. It bounds what the
/// measurement costs a boot: the probe's rounds at most
/// 8 x (1 + 2 + ... + 1024) µs, 16 ms, the 128 timed rounds' chunks 131
/// ms.
pub const MAX_HANDOFF_WORK_US: u64 = 1024;

/// How long each chunk of a timed round on `steal_cores` cores works, µs,
/// where the pools are compared (`compared`: every core has a host core
/// of its own): the hand-off, the shortest work, doubling, at which every
/// one of [`HANDOFF_PROBE_ROUNDS`] stealing rounds of two chunks handed
/// its published chunk to another core ([`handoff_work_us`], probed by
/// `handed_off_at`), times the wake steps the stealing pool takes to get
/// `steal_cores` cores working ([`wake_steps`]: it wakes one core per
/// published chunk, doubling the cores awake at each step), at most
/// [`MAX_HANDOFF_WORK_US`], which is also the length where no probed
/// length handed off. Elsewhere 0: empty chunks.
///
/// Why a round of two chunks probes: one hand-off is what is measured,
/// and asking every one of `n - 1` published chunks to be taken in each
/// of eight rounds asks the slowest of `8 (n - 1)` hand-offs to be in
/// time: at 64 cores a helper late one time in a thousand fails a length
/// two times in five (0.999 to the power 8 x 63 is 0.60), and on a big
/// shared host the timed rounds would run at the cap.
///
/// Why the chunks work: with empty chunks the caller took its published
/// chunk back itself, so the stealing round was priced without a
/// hand-off (2.4 µs at 2 vCPUs on 2 host cores, where the rest of a real
/// sync-heavy round was 7.9-9.6 µs stealing and 3.4-3.7 pinned), and the
/// pinned pool, whose every round hands off, lost a choice it wins by
/// half. Why measured: how long a hand-off takes is the host's (a poll
/// loop under TCG, an IPI from a halt);
/// a fixed length (20 µs, until this was measured) is too short on a
/// slower host and the round is priced without its hand-off again. Why
/// every round of eight: a length at which the helper took the chunk
/// before the caller was back for it eight times running leaves the
/// helper a margin without a factor chosen here. At 2 vCPUs on 2 host
/// cores it read 2-8 µs in eight boots (pinned/stealing cost 0.44-0.64,
/// the pinned pool chosen in each, as with 20 µs); nine boots on slower
/// stretches read 16-256 µs. The alternative tried, twice the length at
/// which most of the eight rounds handed off, read 2-16 µs (chunks of
/// 4-32) and chose the stealing pool in 2 boots of 14 (pinned/stealing
/// 1.04 and 2.15): 68.6 and 85.9 ms, against 53.4 and 58.5 for the
/// boots with 20 µs chunks alternated with them.
///
/// Where the host runs fewer cores at once than there are, only the
/// stealing pool is timed, and with empty chunks (the publication and the
/// caller's take-back: what a split costs its caller). A timed hand-off
/// there is not the workload's: these rounds run in the first
/// milliseconds after the parallelism window, while most vCPUs are still
/// on their way to a halt and the woken one waits for host time. At 32
/// vCPUs on 2 host cores, three calibrations in a row read 6.8, 4.1 and
/// 4.0 µs in one boot, 25.6, 29.3 and 126 in another, 25.8, 4.0 and 4.1
/// in a third, where the workload's own rounds hand off in 6-8 µs (the
/// `pool:` line's `round_rest_ns`); priced by the first reading, 3 boots
/// of 5 ran every round on one core (67-110 ms against 40-66).
///
/// Returns the chunk length and the hand-off's (`None`: none probed, or
/// none handed off).
pub fn calibration_work_us(
    compared: bool,
    steal_cores: usize,
    handed_off_at: impl FnMut(u64) -> bool,
) -> (u64, Option<u64>) {
    if !compared {
        return (0, None);
    }
    let handoff_us = handoff_work_us(handed_off_at);
    let chunk_us = handoff_us.map_or(MAX_HANDOFF_WORK_US, |us| {
        us.saturating_mul(wake_steps(steal_cores))
            .min(MAX_HANDOFF_WORK_US)
    });
    (chunk_us, handoff_us)
}

/// Wake steps until `cores` cores work on a round whose caller published
/// a chunk for each of the others, with the cores awake doubling at each
/// step: `ceil(log2(cores))`, at least 1.
pub fn wake_steps(cores: usize) -> u64 {
    u64::from(usize::BITS - (cores.max(2) - 1).leading_zeros())
}

/// The shortest chunk length, µs, doubling from
/// [`FIRST_HANDOFF_WORK_US`] up to [`MAX_HANDOFF_WORK_US`], at which
/// `handed_off_at(us)` says that the probe rounds handed their published
/// chunks to other cores; `None` if at no length they did.
pub fn handoff_work_us(mut handed_off_at: impl FnMut(u64) -> bool) -> Option<u64> {
    let mut us = FIRST_HANDOFF_WORK_US;
    while us <= MAX_HANDOFF_WORK_US {
        if handed_off_at(us) {
            return Some(us);
        }
        us *= 2;
    }
    None
}

/// What a round costs beyond its work, measured at boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundCosts {
    /// Cores the stealing pool's timed rounds ran on (`min(max(P, 2),
    /// cores)`).
    pub steal_cores: usize,
    /// Median cost of a stealing round on `steal_cores` cores beyond its
    /// longest chunk, ns (0 on one core: no round to split); its chunks
    /// worked where `pinned_ns` was measured, and were empty elsewhere.
    pub steal_ns: u64,
    /// Median cost of a pinned round on every core beyond its longest
    /// chunk, ns, when every core has a host core of its own (else not
    /// measured).
    pub pinned_ns: Option<u64>,
    /// How long each chunk of the timed rounds worked, µs (0: empty
    /// chunks; [`calibration_work_us`]).
    pub chunk_work_us: u64,
    /// The shortest chunk length at which every probe round handed its
    /// published chunk off, µs ([`handoff_work_us`]); `None`: not probed
    /// (the pools are not compared), or no length did.
    pub handoff_work_us: Option<u64>,
}

static COSTS: Once<RoundCosts> = Once::new();
static FIXED: Once<Fixed> = Once::new();

/// What boot parameters fixed of every plan (once, at boot).
pub fn configure(fixed: Fixed) {
    FIXED.call_once(|| fixed);
}

/// The plan for a workload whose rounds take `work_ns` on one core and
/// split into at most `max_chunks` parts, from the boot measurements and
/// the boot parameters.
pub fn plan_for(work_ns: u64, max_chunks: usize) -> RoundPlan {
    let at_once = super::host_parallelism::in_force();
    let costs = costs().unwrap_or(RoundCosts {
        steal_cores: at_once,
        steal_ns: 0,
        pinned_ns: None,
        chunk_work_us: 0,
        handoff_work_us: None,
    });
    let fixed = FIXED.get().copied().unwrap_or_default();
    let plan = RoundPlan::for_work(work_ns, max_chunks, at_once, costs, fixed);
    *LAST.lock() = Some(plan);
    plan
}

/// The plan [`plan_for`] chose last (for the statistics record), its
/// chunks as the trial kept them ([`keep_trial`]).
static LAST: spin::Mutex<Option<RoundPlan>> = spin::Mutex::new(None);

/// The last trial's outcome (for the statistics record).
static LAST_TRIAL: spin::Mutex<Option<TrialOutcome>> = spin::Mutex::new(None);

/// Trials the last workload ran to their end (for the statistics
/// record). Relaxed: written by the workload's task, read after it.
static TRIALS_RUN: AtomicU64 = AtomicU64::new(0);

/// The trial of `plan` for a workload whose rounds split into at most
/// `max_chunks` parts and that has `rounds_left` rounds to run
/// ([`round_trial`](super::round_trial)): none when the plan cannot have
/// split too little.
pub fn trial_for(plan: RoundPlan, max_chunks: usize, rounds_left: usize) -> RoundTrial {
    let reach = trial_reach();
    let fixed = FIXED.get().copied().unwrap_or_default();
    let tried = round_trial::alternative(plan, max_chunks, cores::count(), reach, fixed);
    *LAST_TRIAL.lock() = None;
    TRIALS_RUN.store(0, Ordering::Relaxed);
    let trial = RoundTrial::new(plan.chunks, tried, rounds_left);
    // `trial=always` asked for one: say why there is none.
    if fixed.trial == Trial::Always && !trial.running() {
        if tried.is_none() {
            crate::println!(
                "round trial: not run (trial=always): the plan's {} chunk(s) are already as many as the work splits into on {} cores ({max_chunks})",
                plan.chunks,
                cores::count()
            );
        } else {
            crate::println!(
                "round trial: not run (trial=always): {rounds_left} rounds left, a trial needs {}",
                round_trial::MIN_ROUNDS_LEFT
            );
        }
    }
    trial
}

/// How many cores at once a trial may reach ([`round_trial::reach`]), from
/// the parallelism in force and the cores seen at once: by the boot's
/// window, or by a workload's look where more (`look_again`); none where
/// `parallelism=` fixed it.
pub fn trial_reach() -> usize {
    let boot = (!super::host_parallelism::is_fixed())
        .then(super::host_parallelism::measured)
        .flatten()
        .map(|m| super::host_parallelism::whole_cores(m.seen_milli, m.cores));
    let seen = round_trial::seen_at_once(boot, look_again::seen_by_looks());
    round_trial::reach(super::host_parallelism::in_force(), seen)
}

/// The looks of a workload whose rounds start at `start_ticks`
/// ([`look_again`]): where only the reach stops a trial of `plan`
/// (`round_trial::blocked_by_reach`) and the parallelism is the kernel's
/// to measure (no `parallelism=`); `None` elsewhere.
pub fn looks_for(plan: RoundPlan, max_chunks: usize, start_ticks: u64) -> Option<LookSchedule> {
    look_again::forget_workload_looks();
    let fixed = FIXED.get().copied().unwrap_or_default();
    let blocked =
        round_trial::blocked_by_reach(plan, max_chunks, cores::count(), trial_reach(), fixed);
    (blocked && !super::host_parallelism::is_fixed())
        .then(|| LookSchedule::new(start_ticks, tsc::us_to_ticks(look_again::LOOK_WINDOW_US)))
}

/// A workload's look ([`look_again::look`]) on the plan's cores and one
/// more, before its pooled round `round`, entered in its `schedule`: says
/// what it saw and what it took, and returns the chunk count a trial may
/// now try (one more than the plan's, where the look widened the reach to
/// it), if any.
pub fn look_for_more_cores(
    plan: RoundPlan,
    max_chunks: usize,
    round: usize,
    schedule: &mut LookSchedule,
) -> Option<usize> {
    let participants = (plan.chunks + 1).min(cores::count());
    let begin = tsc::now();
    let looked = look_again::look(participants);
    let end = tsc::now();
    schedule.looked(begin, end);
    let seen_milli = looked.seen_milli();
    let fixed = FIXED.get().copied().unwrap_or_default();
    let tried = round_trial::alternative(plan, max_chunks, cores::count(), trial_reach(), fixed);
    let then = tried.map_or_else(
        || alloc::string::String::from("the plan stays"),
        |tried| alloc::format!("a round trial tries {tried} chunks"),
    );
    crate::println!(
        "host: looked again before pooled round {round}: {}.{:03} of {participants} cores seen at once ({} looks in a {} us window, {} us in all); {then}",
        seen_milli / 1000,
        seen_milli % 1000,
        looked.looks,
        tsc::ticks_to_us(looked.window_ticks),
        tsc::ticks_to_us(end.saturating_sub(begin)),
    );
    tried
}

/// A trial ended: the last plan's chunks become the ones it kept; where
/// it kept more than the host parallelism in force, the rounds showed the
/// host runs that many cores at once, and the parallelism in force and
/// the poll slots follow (`round_trial::parallelism_shown`), which the
/// boot's console says.
pub fn keep_trial(outcome: TrialOutcome) {
    if let Some(plan) = LAST.lock().as_mut() {
        plan.chunks = outcome.kept;
    }
    if let Some(revised) = revise_parallelism(outcome) {
        crate::println!(
            "host: the rounds ran faster on {} cores than on {}: {} of {} cores run at once from now on, {} may poll",
            revised.shown,
            revised.before,
            revised.at_once,
            cores::count(),
            revised.poll_slots
        );
    }
    *LAST_TRIAL.lock() = Some(outcome);
    TRIALS_RUN.fetch_add(1, Ordering::Relaxed);
}

/// The host parallelism a trial's outcome revised
/// ([`revise_parallelism`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RevisedParallelism {
    /// The parallelism in force before.
    pub before: usize,
    /// The cores the rounds ran faster on.
    pub shown: usize,
    /// The parallelism in force now.
    pub at_once: usize,
    /// The poll slots now (unchanged where `pollers=` fixed them).
    pub poll_slots: usize,
}

/// Where a trial kept more chunks than the host parallelism in force,
/// within the reach (`round_trial::parallelism_shown`), raises the
/// parallelism in force and the poll slots to that count; `None`: nothing
/// to revise.
pub fn revise_parallelism(outcome: TrialOutcome) -> Option<RevisedParallelism> {
    let before = super::host_parallelism::in_force();
    let shown = round_trial::parallelism_shown(
        outcome,
        before,
        trial_reach(),
        super::host_parallelism::is_fixed(),
    )?;
    let (at_once, poll_slots) = raise_parallelism(shown);
    Some(RevisedParallelism {
        before,
        shown,
        at_once,
        poll_slots,
    })
}

/// Raises the parallelism in force to `shown` cores, and the poll slots
/// with it unless `pollers=` fixed them; returns both as they are now.
pub fn raise_parallelism(shown: usize) -> (usize, usize) {
    let at_once = super::host_parallelism::show_by_rounds(shown);
    (at_once, super::poll_slots::follow(at_once))
}

/// The last trial's outcome, if one ran to its end.
pub fn last_trial() -> Option<TrialOutcome> {
    *LAST_TRIAL.lock()
}

/// Trials the last workload ran to their end.
pub fn trials_run() -> u64 {
    TRIALS_RUN.load(Ordering::Relaxed)
}

/// The last plan chosen, if any.
pub fn last_plan() -> Option<RoundPlan> {
    *LAST.lock()
}

/// The boot measurement, if it ran.
pub fn costs() -> Option<RoundCosts> {
    COSTS.get().copied()
}

/// Times rounds of each pool that can be chosen (from the main task,
/// after [`host_parallelism::measure`](super::host_parallelism::measure)),
/// and keeps the result. `at_once` is the host parallelism in force.
pub fn measure_costs(at_once: usize, steal_enabled: bool) -> RoundCosts {
    let n = cores::count();
    let steal_cores = at_once.max(2).min(n);
    let compared = n > 1 && at_once >= n;
    let (mut chunk_work_us, mut handoff_us) = (0, None);
    let steal_ns = if steal_enabled && steal_cores > 1 {
        let pool = StealJoin::new();
        (chunk_work_us, handoff_us) = calibration_work_us(compared, steal_cores, |us| {
            every_round_hands_off(us, 2, |job| pool.run(job, 2))
        });
        median_cost_ns(chunk_work_us, |job| pool.run(job, steal_cores))
    } else {
        // No stealing round to price (the stealable pool is off, or one
        // core): the pinned rounds, if timed, have nothing to be compared
        // with, and their chunks stay empty.
        0
    };
    let pinned_ns = compared.then(|| {
        let pool = ForkJoin::new(n);
        let ns = median_cost_ns(chunk_work_us, |job| pool.run(job));
        pool.shutdown();
        ns
    });
    let costs = RoundCosts {
        steal_cores,
        steal_ns,
        pinned_ns,
        chunk_work_us,
        handoff_work_us: handoff_us,
    };
    *COSTS.call_once(|| costs)
}

/// Whether every one of [`HANDOFF_PROBE_ROUNDS`] rounds run by `round`
/// (given the job) with `chunks` chunks of `work_us` each ran every chunk
/// but one on a core other than the caller's: every published chunk
/// handed off, none taken back by its caller. Stops at the first round
/// that did not. `round` must return only after every call of the job it
/// made has returned (a pool's join; the ktest's remote call waits too).
pub fn every_round_hands_off(work_us: u64, chunks: usize, mut round: impl FnMut(&Job)) -> bool {
    let caller = crate::arch::percpu::current_index();
    // Each chunk's Relaxed count. The caller's zeroing is ordered before
    // a helper's increment by the pool's lock (released when the round's
    // chunks are published, taken by the helper that takes one); each
    // increment before the caller's read by the round's countdown (the
    // chunk's AcqRel decrement of the round's remaining count, the last of
    // which opens its latch with a release that the caller's wait
    // acquires). A previous round's chunk cannot land after a zeroing: its
    // join covered every chunk.
    let elsewhere = Arc::new(AtomicU64::new(0));
    let work_ticks = tsc::us_to_ticks(work_us);
    let job: Job = {
        let elsewhere = elsewhere.clone();
        Arc::new(move |_| {
            if crate::arch::percpu::current_index() != caller {
                elsewhere.fetch_add(1, Ordering::Relaxed);
            }
            work_for(work_ticks);
        })
    };
    let published = chunks.saturating_sub(1) as u64;
    (0..HANDOFF_PROBE_ROUNDS).all(|_| {
        elsewhere.store(0, Ordering::Relaxed);
        round(&job);
        elsewhere.load(Ordering::Relaxed) >= published
    })
}

/// Runs the parallelism measurement's register-only chunks until
/// `work_ticks` have passed (none for 0); returns the ticks worked.
fn work_for(work_ticks: u64) -> u64 {
    let start = tsc::now();
    let mut worked = 0;
    while worked < work_ticks {
        host_parallelism::chunk();
        worked = tsc::now().saturating_sub(start);
    }
    worked
}

/// The median over [`CALIBRATION_ROUNDS`] rounds run by `round` (given
/// the job) of each round's time less its longest chunk, ns; every chunk
/// works `work_us` at least (0: none), in the host parallelism
/// measurement's register-only chunks (no clock read in the loop but one a
/// chunk: under TCG every `rdtsc` takes one global lock of QEMU's, and a
/// spinning reader would slow the round it prices).
pub fn median_cost_ns(work_us: u64, mut round: impl FnMut(&Job)) -> u64 {
    // Each chunk's Relaxed `fetch_max`; zeroed before a round is published
    // (the publication, a release, orders it before the chunks' updates)
    // and read after the round's join (the latch's release/acquire orders
    // every chunk's update before the read).
    let longest = Arc::new(AtomicU64::new(0));
    let work_ticks = tsc::us_to_ticks(work_us);
    let job: Job = {
        let longest = longest.clone();
        Arc::new(move |_| {
            let worked = work_for(work_ticks);
            longest.fetch_max(worked, Ordering::Relaxed);
        })
    };
    let mut costs: Vec<u64> = (0..CALIBRATION_ROUNDS)
        .map(|_| {
            longest.store(0, Ordering::Relaxed);
            let start = tsc::now();
            round(&job);
            let round_ticks = tsc::now().saturating_sub(start);
            tsc::ticks_to_ns(round_ticks.saturating_sub(longest.load(Ordering::Relaxed)))
        })
        .collect();
    costs.sort_unstable();
    costs[costs.len() / 2]
}

/// How the rounds of one workload run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundPlan {
    /// The pool.
    pub pool: Pool,
    /// Chunks (stealing pool) or workers (pinned pool) per round.
    pub chunks: usize,
    /// The round's work on one core, ns, as measured (0: not measured).
    pub work_ns: u64,
}

/// What a plan may be fixed to by boot parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    /// `pool=`.
    pub pool: Option<Pool>,
    /// `chunks=`.
    pub chunks: Option<usize>,
    /// `trial=`: when the workload checks the plan against one more chunk.
    pub trial: Trial,
}

/// Nothing fixed: the boot parameters' defaults.
impl Default for Fixed {
    fn default() -> Self {
        Self {
            pool: None,
            chunks: None,
            trial: Trial::Auto,
        }
    }
}

impl RoundPlan {
    /// The plan for rounds of `work_ns` (one core's time for a whole
    /// round) that can be split into at most `max_chunks` parts, on a
    /// host that runs `at_once` cores at once, with round costs `costs`.
    pub fn for_work(
        work_ns: u64,
        max_chunks: usize,
        at_once: usize,
        costs: RoundCosts,
        fixed: Fixed,
    ) -> Self {
        let n = cores::count();
        // No more chunks than cores the host runs at once: a chunk for a
        // core it does not run waits for that core's next time slice.
        let cap = at_once.min(n).min(max_chunks).max(1);
        let split = |overhead_ns: u64, cap: usize| -> usize {
            if overhead_ns == 0 {
                return cap;
            }
            let worth = work_ns / (2 * overhead_ns);
            usize::try_from(worth).unwrap_or(usize::MAX).clamp(1, cap)
        };
        let pinned_pays = costs.pinned_ns.is_some_and(|pinned_ns| {
            max_chunks >= n && pinned_ns <= costs.steal_ns && split(pinned_ns, n) == n
        });
        let pool = fixed.pool.unwrap_or(if n > 1 && !pinned_pays {
            Pool::Steal
        } else {
            Pool::Pinned
        });
        let chunks = match pool {
            // The pinned pool gives every core a share.
            Pool::Pinned => n.min(max_chunks).max(1),
            Pool::Steal => fixed
                .chunks
                .unwrap_or_else(|| split(costs.steal_ns, cap))
                .min(max_chunks)
                .max(1),
        };
        Self {
            pool,
            chunks,
            work_ns,
        }
    }
}
