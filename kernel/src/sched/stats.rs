//! Per-core scheduler statistics (owner-written, relaxed) and the shutdown
//! report: a human table and one machine-readable JSON line.

use super::core_sched::{self, CoreSched};
use super::latency::{self, BUCKETS};
use super::task::WakeKind;
use crate::arch::{interrupt_vectors, tsc};
use crate::println;
use alloc::string::String;
use core::fmt::Write;
use core::sync::atomic::{AtomicU64, Ordering};

/// Prefix of the machine-readable statistics line (documented in the README).
pub const JSON_PREFIX: &str = "VIGIL-STATS ";

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
    /// Wake IPIs this core sent to a core it saw `Running` or `DontSleep`
    /// (neither halted nor about to halt): IPIs nobody needed. Zero by
    /// construction under `state-machine`, which only IPIs a core it claimed
    /// from `Halted`.
    pub ipis_to_running: AtomicU64,
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
            ipis_to_running: AtomicU64::new(0),
        }
    }
}

fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

/// Prints the per-core table, the wake-latency percentiles and the JSON line.
pub fn report(label: &str) {
    let cores = core_sched::cores();
    println!(
        "statistics ({label}): policy {}",
        core_sched::policy().name()
    );
    println!(
        "core  ipis_sent  to_running  elided(run/dontsleep/claimed/pending/self/poll)  pushes  halts  wakeups  spurious  switches  tasks  idle_ms  halted_ms  wake_irqs"
    );
    for (i, core) in cores.iter().enumerate() {
        let c = core.wake.counters().snapshot();
        let s = &core.stats;
        println!(
            "{i:>4}  {:>9}  {:>10}  {:>6}/{}/{}/{}/{}/{}  {:>7}  {:>5}  {:>7}  {:>8}  {:>8}  {:>5}  {:>7}  {:>9}  {:>9}",
            c.ipis_sent,
            get(&s.ipis_to_running),
            c.elided_target_running,
            c.elided_dont_sleep,
            c.elided_already_claimed,
            c.elided_already_pending,
            c.elided_self_target,
            c.elided_polling,
            c.inbox_pushes,
            c.halts,
            c.wakeups,
            c.spurious_wakeups,
            get(&s.switches),
            get(&s.tasks_finished),
            tsc::ticks_to_us(get(&s.idle_ticks)) / 1000,
            tsc::ticks_to_us(get(&s.halted_ticks)) / 1000,
            interrupt_vectors::COUNTS.wake[i].load(Ordering::Relaxed),
        );
    }
    for kind in WakeKind::ALL {
        let counts = merged_latency(cores, kind);
        let samples: u64 = counts.iter().sum();
        if samples == 0 {
            continue;
        }
        let p50 = latency::percentile_ticks(&counts, 500).map_or(0, tsc::ticks_to_us);
        let p99 = latency::percentile_ticks(&counts, 990).map_or(0, tsc::ticks_to_us);
        println!(
            "wake latency to a {} core: {samples} wakes, p50 <= {p50} us, p99 <= {p99} us",
            kind.name()
        );
    }
    println!("{JSON_PREFIX}{}", json(label));
}

fn merged_latency(cores: &[CoreSched], kind: WakeKind) -> [u64; BUCKETS] {
    let mut counts = [0u64; BUCKETS];
    for core in cores {
        core.latency.of(kind).add_to(&mut counts);
    }
    counts
}

/// The statistics as one JSON object (format documented in the README).
pub fn json(label: &str) -> String {
    let cores = core_sched::cores();
    let mut out = String::new();
    let _ = write!(
        out,
        "{{\"label\":\"{label}\",\"policy\":\"{}\",\"tsc_ticks_per_ms\":{},\"cores\":[",
        core_sched::policy().name(),
        tsc::ticks_per_ms()
    );
    for (i, core) in cores.iter().enumerate() {
        let c = core.wake.counters().snapshot();
        let s = &core.stats;
        let _ = write!(
            out,
            "{}{{\"core\":{i},\"ipis_sent\":{},\"ipis_to_running\":{},\"elided_target_running\":{},\"elided_dont_sleep\":{},\"elided_already_claimed\":{},\"elided_already_pending\":{},\"elided_self_target\":{},\"elided_polling\":{},\"inbox_pushes\":{},\"halts\":{},\"wakeups\":{},\"spurious_wakeups\":{},\"switches\":{},\"tasks_finished\":{},\"idle_us\":{},\"halted_us\":{},\"wake_irqs\":{}}}",
            if i == 0 { "" } else { "," },
            c.ipis_sent,
            get(&s.ipis_to_running),
            c.elided_target_running,
            c.elided_dont_sleep,
            c.elided_already_claimed,
            c.elided_already_pending,
            c.elided_self_target,
            c.elided_polling,
            c.inbox_pushes,
            c.halts,
            c.wakeups,
            c.spurious_wakeups,
            get(&s.switches),
            get(&s.tasks_finished),
            tsc::ticks_to_us(get(&s.idle_ticks)),
            tsc::ticks_to_us(get(&s.halted_ticks)),
            interrupt_vectors::COUNTS.wake[i].load(Ordering::Relaxed),
        );
    }
    out.push_str("],\"wake_latency_us\":{");
    let mut first = true;
    for kind in WakeKind::ALL {
        let counts = merged_latency(cores, kind);
        let samples: u64 = counts.iter().sum();
        let p50 = latency::percentile_ticks(&counts, 500).map_or(0, tsc::ticks_to_us);
        let p99 = latency::percentile_ticks(&counts, 990).map_or(0, tsc::ticks_to_us);
        let _ = write!(
            out,
            "{}\"{}\":{{\"samples\":{samples},\"p50\":{p50},\"p99\":{p99}}}",
            if first { "" } else { "," },
            kind.name()
        );
        first = false;
    }
    out.push_str("}}");
    out
}
