//! The `VIGIL-STATS` record: one line of JSON the kernel prints at the end
//! of a run-mode boot (after the `[c0] ` core prefix), which the host
//! deserialises (feature `serde`). The per-core field list is written once,
//! in [`CoreStats`]; the kernel's human table prints the same list.
//!
//! ```text
//! VIGIL-STATS {"label":"laplace","policy":"state-machine","tsc_ticks_per_ms":2627072,
//!   "cores":[{"core":0,"ipis_sent":2484,...},...],
//!   "wake_latency_us":{"halted":{"samples":3472,"p50":1396,"p99":4789},...}}
//! ```

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// What starts the line.
pub const STATS_PREFIX: &str = "VIGIL-STATS ";

/// Defines [`CoreStats`] from one list of fields, with its key list and
/// its `(key, value)` pairs in report order.
macro_rules! core_stats {
    ($( $(#[doc = $doc:literal])+ $field:ident, )+) => {
        /// Counters of one core. The wake counters (`ipis_sent`, `elided_*`,
        /// `inbox_pushes`) count what this core did as a *waker*; `halts`,
        /// `wakeups`, `spurious_wakeups` and `wake_irqs` what happened to it
        /// as a sleeper.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(default))]
        pub struct CoreStats {
            /// Core index.
            pub core: u32,
            $( $(#[doc = $doc])+ pub $field: u64, )+
        }

        impl CoreStats {
            /// The counters' keys, in report order (`core` aside).
            pub const KEYS: [&'static str; CORE_STAT_COUNT] = [$(stringify!($field)),+];

            /// The counters as `(key, value)`, in report order.
            #[must_use]
            pub const fn fields(&self) -> [(&'static str, u64); CORE_STAT_COUNT] {
                [$((stringify!($field), self.$field)),+]
            }
        }

        /// How many counters [`CoreStats`] has (`core` aside).
        pub const CORE_STAT_COUNT: usize = [$(stringify!($field)),+].len();
    };
}

core_stats! {
    /// Wake IPIs this core sent.
    ipis_sent,
    /// Notifications it skipped because the target was running.
    elided_target_running,
    /// ... because it turned a halting target into `DontSleep`.
    elided_dont_sleep,
    /// ... because another waker had claimed the halted target.
    elided_already_claimed,
    /// ... because the target's inbox was already non-empty.
    elided_already_pending,
    /// ... because the target was itself.
    elided_self_target,
    /// ... because the target polls (idle-poll build).
    elided_polling,
    /// Items it pushed into inboxes.
    inbox_pushes,
    /// Times this core halted.
    halts,
    /// Times it woke from a halt with work.
    wakeups,
    /// Wakeups that found nothing to do.
    spurious_wakeups,
    /// Switches from its idle loop into a task.
    switches,
    /// Tasks that finished on it.
    tasks_finished,
    /// Polls of its inbox before a halt path (adaptive or fixed backoff).
    polls,
    /// ... that work arrived in.
    polls_caught,
    /// ... that saw the vCPU descheduled (a clock gap) and stopped; under
    /// the adaptive backoff each starts a cooldown without polling.
    polls_stolen,
    /// Time in its idle loop with nothing to run, µs.
    idle_us,
    /// Time inside `sti; hlt`, µs.
    halted_us,
    /// Wake-vector interrupts it took.
    wake_irqs,
    /// Wake IPIs sent to it (ICR writes with it as destination, counted by
    /// the senders): what the host's QEMU-trace oracle compares.
    wake_ipis_to,
    /// Its halts that a wake IPI ended with work in its inbox (counted by
    /// this core, the sleeper): the IPIs that were needed.
    ipi_wakes_with_work,
    /// `wake_ipis_to - ipi_wakes_with_work`: IPIs sent to it that ended no
    /// halt with work waiting.
    needless_ipis,
    /// 1 if it was inside its `sti; hlt` when the statistics were taken,
    /// at the end of the run (not its protocol state: a claimed core reads
    /// `Running` before the claimer's IPI ends its halt).
    halted_at_end,
    /// Items in its inbox when the statistics were taken: with
    /// `halted_at_end`, work announced to a core that sleeps on it (a lost
    /// wakeup the run survived because another core did the work: the host
    /// reads it here when the guest's watchdog is off).
    inbox_at_end,
}

/// Percentiles of one wake-latency histogram (bucket upper bounds, µs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LatencySummary {
    /// Wakes measured.
    pub samples: u64,
    /// Median, µs.
    pub p50: u64,
    /// 99th percentile, µs.
    pub p99: u64,
}

/// What the kernel measured of its host at boot, and what it chose from
/// it for the workload (`sched::host_parallelism`, `sched::round_plan`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct HostStats {
    /// Cores the host ran at once while all of them spun, measured, in
    /// thousandths.
    pub measured_parallelism_milli: u64,
    /// The cores seen running at once in the window, in thousandths: the
    /// mean, over every look a core took at the others' counts after a
    /// chunk within the window, of that core and the cores that finished
    /// one or two chunks since its previous look
    /// (`sched::host_parallelism::counted_chunk`). A round trial may reach
    /// as many cores as it rounds to.
    pub parallelism_seen_milli: u64,
    /// What the first of two windows read, in thousandths, when the first
    /// saw no second core at once, or counted fewer cores than it saw, and
    /// a second ran (the kept readings are the higher); 0: one window.
    pub first_window_parallelism_milli: u64,
    /// The parallelism in force (the measurement rounded, or more where
    /// the rounds showed more, or `parallelism=`).
    pub parallelism: u64,
    /// The most cores a workload's round trial showed the host runs at
    /// once, where more than the boot's reading (`parallelism` is then at
    /// least this); 0: none did.
    pub parallelism_shown_by_rounds: u64,
    /// Looks the workload took again at the cores the host runs at once,
    /// where only the round trial's reach kept the plan
    /// (`sched::look_again`); 0: none.
    pub looks_run: u64,
    /// The most cores those looks saw at once, in thousandths (0: none
    /// ran); a trial may reach as many as it rounds to.
    pub looks_seen_milli: u64,
    /// Idle cores that may poll at once.
    pub poll_slots: u64,
    /// The stealing pool's median round cost beyond its longest chunk, ns,
    /// timed at boot (0: not measured).
    pub steal_round_ns: u64,
    /// The cores that round ran on.
    pub steal_round_cores: u64,
    /// The pinned pool's median round cost on every core beyond its
    /// longest chunk, ns, timed at boot (0: not measured, the host runs
    /// fewer cores at once).
    pub pinned_round_ns: u64,
    /// How long each chunk of those timed rounds worked, µs: where the
    /// pools are compared (every core has a host core), the hand-off
    /// (`round_handoff_work_us`) times the wake steps to the timed
    /// round's cores, at most 1024 (also where no length handed off); 0:
    /// empty chunks.
    pub round_chunk_work_us: u64,
    /// The shortest chunk length, µs, at which every one of 8 stealing
    /// rounds of two chunks handed its published chunk to another core,
    /// measured at boot; 0: not probed (the pools are not compared), or
    /// no length up to 1024 did.
    pub round_handoff_work_us: u64,
    /// The workload's pool (`steal`, `pinned`; empty: no fork-join
    /// workload ran).
    pub plan_pool: String,
    /// Its chunks (or pinned workers) per round, as the round trial kept
    /// them when one ran.
    pub plan_chunks: u64,
    /// The round trial's counts and median rounds (`sched::round_trial`):
    /// the plan's chunks as the boot measurements chose them, and the
    /// median of the trial's rounds with that many, ns; the one more
    /// chunk tried, and its median, ns. All 0: no trial ran.
    pub trial_planned_chunks: u64,
    /// See `trial_planned_chunks`.
    pub trial_planned_round_ns: u64,
    /// See `trial_planned_chunks`.
    pub trial_tried_chunks: u64,
    /// See `trial_planned_chunks`.
    pub trial_tried_round_ns: u64,
    /// Trials the workload ran to their end (the `trial_*` fields are the
    /// last one's): a trial that keeps the plan runs again later, at
    /// doubling gaps (`sched::round_trial`).
    pub trials_run: u64,
    /// Its round's work on one core, ns, as measured.
    pub plan_work_ns: u64,
    /// Row blocks the workload computed over all its iterations: one for
    /// each iteration run on one core, and for each pool round the
    /// round's chunks, each computed once (0: no grid workload ran). With
    /// the trial's counts and the iterations, what says that each round
    /// ran the count it was given.
    pub blocks_run: u64,
    /// Wake IPIs sent (all cores) before the workload started: the boot's
    /// measurements (the host parallelism window, the timed rounds). The
    /// cores' `ipis_sent` count from boot, so a per-iteration figure
    /// subtracts these.
    pub ipis_before_workload: u64,
}

impl HostStats {
    /// The fields as `(key, value)` for the JSON writer, numbers only.
    fn numbers(&self) -> [(&'static str, u64); 22] {
        [
            (
                "measured_parallelism_milli",
                self.measured_parallelism_milli,
            ),
            ("parallelism_seen_milli", self.parallelism_seen_milli),
            (
                "first_window_parallelism_milli",
                self.first_window_parallelism_milli,
            ),
            ("parallelism", self.parallelism),
            (
                "parallelism_shown_by_rounds",
                self.parallelism_shown_by_rounds,
            ),
            ("looks_run", self.looks_run),
            ("looks_seen_milli", self.looks_seen_milli),
            ("poll_slots", self.poll_slots),
            ("steal_round_ns", self.steal_round_ns),
            ("steal_round_cores", self.steal_round_cores),
            ("pinned_round_ns", self.pinned_round_ns),
            ("round_chunk_work_us", self.round_chunk_work_us),
            ("round_handoff_work_us", self.round_handoff_work_us),
            ("plan_chunks", self.plan_chunks),
            ("trial_planned_chunks", self.trial_planned_chunks),
            ("trial_planned_round_ns", self.trial_planned_round_ns),
            ("trial_tried_chunks", self.trial_tried_chunks),
            ("trial_tried_round_ns", self.trial_tried_round_ns),
            ("trials_run", self.trials_run),
            ("plan_work_ns", self.plan_work_ns),
            ("blocks_run", self.blocks_run),
            ("ipis_before_workload", self.ipis_before_workload),
        ]
    }
}

/// The whole record.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StatsLine {
    /// What was measured (the workload's name).
    pub label: String,
    /// The wake policy the kernel ran ([`Policy::name`](crate::Policy::name)).
    pub policy: String,
    /// Calibrated TSC frequency.
    pub tsc_ticks_per_ms: u64,
    /// One entry per core, in core order.
    pub cores: Vec<CoreStats>,
    /// Wake latency by the target's state at the time of the wake (`local`,
    /// `running`, `halting`, `halted`).
    pub wake_latency_us: BTreeMap<String, LatencySummary>,
    /// The host as measured, and the workload's round plan.
    #[cfg_attr(feature = "serde", serde(default))]
    pub host: HostStats,
}

/// Writes `text` as a JSON string (quotes, backslashes and control
/// characters escaped).
fn write_json_string(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in text.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            c if u32::from(c) < 0x20 => write!(f, "\\u{:04x}", u32::from(c))?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

/// The record as one JSON object (what follows [`STATS_PREFIX`]).
impl fmt::Display for StatsLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{\"label\":")?;
        write_json_string(f, &self.label)?;
        f.write_str(",\"policy\":")?;
        write_json_string(f, &self.policy)?;
        write!(
            f,
            ",\"tsc_ticks_per_ms\":{},\"cores\":[",
            self.tsc_ticks_per_ms
        )?;
        for (i, core) in self.cores.iter().enumerate() {
            write!(
                f,
                "{}{{\"core\":{}",
                if i == 0 { "" } else { "," },
                core.core
            )?;
            for (key, value) in core.fields() {
                write!(f, ",\"{key}\":{value}")?;
            }
            f.write_str("}")?;
        }
        f.write_str("],\"wake_latency_us\":{")?;
        for (i, (kind, summary)) in self.wake_latency_us.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write_json_string(f, kind)?;
            write!(
                f,
                ":{{\"samples\":{},\"p50\":{},\"p99\":{}}}",
                summary.samples, summary.p50, summary.p99
            )?;
        }
        f.write_str("},\"host\":{\"plan_pool\":")?;
        write_json_string(f, &self.host.plan_pool)?;
        for (key, value) in self.host.numbers() {
            write!(f, ",\"{key}\":{value}")?;
        }
        f.write_str("}}")
    }
}

#[cfg(test)]
mod tests {
    use super::{CORE_STAT_COUNT, CoreStats, HostStats, LatencySummary, STATS_PREFIX, StatsLine};
    use alloc::string::ToString;
    use alloc::vec;
    use std::format;

    fn sample() -> StatsLine {
        let mut core0 = CoreStats {
            core: 0,
            ..CoreStats::default()
        };
        core0.ipis_sent = 2484;
        core0.halts = 991;
        core0.needless_ipis = 7;
        let core1 = CoreStats {
            core: 1,
            wake_ipis_to: 2484,
            ipi_wakes_with_work: 1001,
            ..CoreStats::default()
        };
        StatsLine {
            label: "laplace \"quoted\"\\".to_string(),
            policy: "state-machine".to_string(),
            tsc_ticks_per_ms: 2_627_072,
            cores: vec![core0, core1],
            wake_latency_us: [
                (
                    "halted".to_string(),
                    LatencySummary {
                        samples: 3472,
                        p50: 1396,
                        p99: 4789,
                    },
                ),
                ("local".to_string(), LatencySummary::default()),
            ]
            .into_iter()
            .collect(),
            host: HostStats {
                measured_parallelism_milli: 1485,
                parallelism_seen_milli: 1_912,
                first_window_parallelism_milli: 938,
                parallelism: 2,
                parallelism_shown_by_rounds: 2,
                looks_run: 1,
                looks_seen_milli: 1_954,
                poll_slots: 2,
                steal_round_ns: 12_345,
                steal_round_cores: 2,
                pinned_round_ns: 0,
                round_chunk_work_us: 0,
                round_handoff_work_us: 0,
                plan_pool: "steal".to_string(),
                plan_chunks: 2,
                trial_planned_chunks: 1,
                trial_planned_round_ns: 55_000,
                trial_tried_chunks: 2,
                trial_tried_round_ns: 36_000,
                trials_run: 2,
                plan_work_ns: 41_000,
                blocks_run: 397,
                ipis_before_workload: 70,
            },
        }
    }

    #[test]
    fn the_stats_line_round_trips_through_json() {
        let line = sample();
        let text = format!("{STATS_PREFIX}{line}");
        let json = text.strip_prefix(STATS_PREFIX).unwrap();
        let parsed: StatsLine = serde_json::from_str(json).expect("the kernel's JSON parses");
        assert_eq!(parsed, line);
    }

    #[test]
    fn every_counter_is_in_the_json_once() {
        let text = sample().to_string();
        for key in CoreStats::KEYS {
            let quoted = format!("\"{key}\":");
            // Once per core.
            assert_eq!(text.matches(&quoted).count(), 2, "{key}");
        }
        assert_eq!(CoreStats::KEYS.len(), CORE_STAT_COUNT);
    }
}
