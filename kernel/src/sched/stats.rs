//! Per-core scheduler statistics (owner-written, relaxed) and the shutdown
//! report: a human table and one machine-readable JSON line.

use super::core_sched::{self, CoreSched};
use super::latency::{self, BUCKETS};
use super::task::WakeKind;
use super::wake_ipi;
use crate::arch::{interrupt_vectors, tsc};
use crate::println;
use alloc::string::{String, ToString};
use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};
use vigil_proto::stats_line::{CoreStats, HostStats, LatencySummary, STATS_PREFIX, StatsLine};

/// Scheduler-side counters of one core.
#[derive(Debug, Default)]
pub struct SchedStats {
    /// Switches from the idle loop into a task.
    pub switches: AtomicU64,
    /// Tasks that ran to completion on this core.
    pub tasks_finished: AtomicU64,
    /// TSC ticks spent in the idle loop with nothing to run.
    pub idle_ticks: AtomicU64,
    /// TSC ticks spent inside `sti; hlt`.
    pub halted_ticks: AtomicU64,
    /// Halts of this core that a wake IPI ended with work in the inbox:
    /// the IPIs that were needed, counted by the sleeper. Every other wake
    /// IPI sent to this core (`wake_ipis_to` minus this) was needless: it
    /// reached a running core (and ended the next halt at once, or merged
    /// into one already pending), or ended a halt with nothing to do.
    pub ipi_wakes_with_work: AtomicU64,
    /// Polls of the inbox before a halt path.
    pub polls: AtomicU64,
    /// Polls that work arrived in.
    pub polls_caught: AtomicU64,
    /// Polls that saw the vCPU descheduled.
    pub polls_stolen: AtomicU64,
    /// TSC ticks spent inside the stealable pool's calls (a publication, a
    /// take from the idle loop or by a round's caller, a look before pinned
    /// work): the wait for the pool's lock, its critical section, the
    /// lock-free fast paths, and any time the host descheduled the vCPU
    /// inside the call (the TSC follows the host's time under TCG); not
    /// the search wakes they choose, sent after.
    pub pool_call_ticks: AtomicU64,
}

/// Adds `n` to a counter only its owner core writes.
pub fn add(counter: &AtomicU64, n: u64) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}

impl SchedStats {
    /// Zeroes.
    pub const fn new() -> Self {
        Self {
            switches: AtomicU64::new(0),
            tasks_finished: AtomicU64::new(0),
            idle_ticks: AtomicU64::new(0),
            halted_ticks: AtomicU64::new(0),
            ipi_wakes_with_work: AtomicU64::new(0),
            polls: AtomicU64::new(0),
            polls_caught: AtomicU64::new(0),
            polls_stolen: AtomicU64::new(0),
            pool_call_ticks: AtomicU64::new(0),
        }
    }
}

fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

/// One core's statistics, in the record the host parses (`vigil-proto`
/// defines its fields once; the table and the JSON line both print them).
fn core_stats(i: usize, core: &CoreSched) -> CoreStats {
    let c = core.wake.counters().snapshot();
    let s = &core.stats;
    let wake_ipis_to = wake_ipi::sent_to(i);
    let with_work = get(&s.ipi_wakes_with_work);
    CoreStats {
        core: i as u32,
        ipis_sent: c.wakes_sent,
        elided_target_running: c.elided_target_running,
        elided_dont_sleep: c.elided_dont_sleep,
        elided_already_claimed: c.elided_already_claimed,
        elided_already_pending: c.elided_already_pending,
        elided_self_target: c.elided_self_target,
        elided_polling: c.elided_polling,
        inbox_pushes: c.inbox_pushes,
        halts: c.halts,
        wakeups: c.wakeups,
        spurious_wakeups: c.spurious_wakeups,
        switches: get(&s.switches),
        tasks_finished: get(&s.tasks_finished),
        polls: get(&s.polls),
        polls_caught: get(&s.polls_caught),
        polls_stolen: get(&s.polls_stolen),
        idle_us: tsc::ticks_to_us(get(&s.idle_ticks)),
        halted_us: tsc::ticks_to_us(get(&s.halted_ticks)),
        wake_irqs: interrupt_vectors::COUNTS[i].wake.load(Ordering::Relaxed),
        wake_ipis_to,
        ipi_wakes_with_work: with_work,
        needless_ipis: wake_ipis_to.saturating_sub(with_work),
        halted_at_end: u64::from(crate::arch::idle_platform::sleeping(i)),
        inbox_at_end: core.wake.inbox_len() as u64,
    }
}

/// Sample count, p50 and p99 (µs, bucket upper bounds) of the wakes of `kind`.
fn latency_summary(cores: &[CoreSched], kind: WakeKind) -> (u64, u64, u64) {
    let mut counts = [0u64; BUCKETS];
    for core in cores {
        core.latency.of(kind).add_to(&mut counts);
    }
    let percentile =
        |per_mille| latency::percentile_ticks(&counts, per_mille).map_or(0, tsc::ticks_to_us);
    (counts.iter().sum(), percentile(500), percentile(990))
}

/// Prints the per-core table, the wake-latency percentiles and the JSON line.
pub fn report(label: &str) {
    let cores = core_sched::cores();
    println!(
        "statistics ({label}): policy {}",
        core_sched::policy().name()
    );
    let mut header = String::from("core");
    for name in CoreStats::KEYS {
        let _ = write!(header, " {name}");
    }
    println!("{header}");
    for (i, core) in cores.iter().enumerate() {
        let mut row = alloc::format!("{i:>4}");
        for (name, value) in core_stats(i, core).fields() {
            let _ = write!(row, " {value:>width$}", width = name.len());
        }
        println!("{row}");
    }
    for kind in WakeKind::ALL {
        let (samples, p50, p99) = latency_summary(cores, kind);
        if samples > 0 {
            println!(
                "wake latency to a {} core: {samples} wakes, p50 <= {p50} us, p99 <= {p99} us",
                kind.name()
            );
        }
    }
    println!("{STATS_PREFIX}{}", record(label));
}

/// The statistics record (printed as one JSON object, format in the
/// README).
pub fn record(label: &str) -> StatsLine {
    let cores = core_sched::cores();
    StatsLine {
        label: label.to_string(),
        policy: core_sched::policy().name().to_string(),
        tsc_ticks_per_ms: tsc::ticks_per_ms(),
        cores: cores
            .iter()
            .enumerate()
            .map(|(i, core)| core_stats(i, core))
            .collect(),
        wake_latency_us: WakeKind::ALL
            .into_iter()
            .map(|kind| {
                let (samples, p50, p99) = latency_summary(cores, kind);
                (
                    kind.name().to_string(),
                    LatencySummary { samples, p50, p99 },
                )
            })
            .collect(),
        host: host_stats(),
    }
}

/// Wake IPIs sent by every core before the workload (set once, by
/// [`mark_workload_start`]).
static IPIS_BEFORE_WORKLOAD: AtomicU64 = AtomicU64::new(0);

/// Marks the end of the boot's measurements, from the main task before the
/// workload starts: keeps the wake IPIs sent so far (the `VIGIL-STATS`
/// counters count from boot; the record says how many came before) and
/// forgets the timed rounds' cores per round (the `pool:` line describes
/// the workload's rounds). Relaxed: the other cores' counters are read
/// while they idle, a statistic.
pub fn mark_workload_start() {
    let sent: u64 = core_sched::cores()
        .iter()
        .map(|core| core.wake.counters().snapshot().wakes_sent)
        .sum();
    IPIS_BEFORE_WORKLOAD.store(sent, Ordering::Relaxed);
    super::fork_join::forget_round_cores();
    super::stealable::mark_workload_start();
}

/// What the kernel measured of its host, and the last round plan.
fn host_stats() -> HostStats {
    let measured = super::host_parallelism::measured();
    let costs = super::round_plan::costs();
    let plan = super::round_plan::last_plan();
    let trial = super::round_plan::last_trial();
    HostStats {
        measured_parallelism_milli: measured.map_or(0, |m| m.measured_milli),
        parallelism_seen_milli: measured.map_or(0, |m| m.seen_milli),
        first_window_parallelism_milli: measured.and_then(|m| m.first_window_milli).unwrap_or(0),
        parallelism: super::host_parallelism::in_force() as u64,
        parallelism_shown_by_rounds: super::host_parallelism::shown_by_rounds()
            .map_or(0, |cores| cores as u64),
        looks_run: super::look_again::workload_looks().0,
        looks_seen_milli: super::look_again::workload_looks().1,
        poll_slots: super::poll_slots::slots() as u64,
        steal_round_ns: costs.map_or(0, |c| c.steal_ns),
        steal_round_cores: costs.map_or(0, |c| c.steal_cores as u64),
        pinned_round_ns: costs.and_then(|c| c.pinned_ns).unwrap_or(0),
        round_chunk_work_us: costs.map_or(0, |c| c.chunk_work_us),
        round_handoff_work_us: costs.and_then(|c| c.handoff_work_us).unwrap_or(0),
        plan_pool: plan.map_or_else(String::new, |p| p.pool.name().to_string()),
        plan_chunks: plan.map_or(0, |p| p.chunks as u64),
        trial_planned_chunks: trial.map_or(0, |t| t.planned.0 as u64),
        trial_planned_round_ns: trial.map_or(0, |t| t.planned.1),
        trial_tried_chunks: trial.map_or(0, |t| t.tried.0 as u64),
        trial_tried_round_ns: trial.map_or(0, |t| t.tried.1),
        trials_run: super::round_plan::trials_run(),
        plan_work_ns: plan.map_or(0, |p| p.work_ns),
        blocks_run: crate::workloads::laplace::blocks_run(),
        ipis_before_workload: get(&IPIS_BEFORE_WORKLOAD),
    }
}
