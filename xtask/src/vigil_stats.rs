//! The kernel's machine-readable statistics line, `[c0] VIGIL-STATS {json}`,
//! printed once at the end of a run-mode boot (format in the README).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::test_output::strip_core_prefix;

/// Prefix of the statistics line, after the core prefix.
pub const STATS_PREFIX: &str = "VIGIL-STATS ";

/// The whole statistics object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VigilStats {
    /// What was measured (the workload's name).
    pub label: String,
    /// Wake policy the kernel ran (`state-machine`, `always-ipi`,
    /// `racy-flag`, `poll`).
    pub policy: String,
    /// Calibrated TSC frequency.
    pub tsc_ticks_per_ms: u64,
    /// One entry per core, in core order.
    pub cores: Vec<CoreStats>,
    /// Wake latency per target state at the time of the wake (`local`,
    /// `running`, `halting`, `halted`).
    pub wake_latency_us: BTreeMap<String, LatencySummary>,
}

/// Counters of one core. The wake counters (`ipis_sent`, `elided_*`,
/// `inbox_pushes`) count what this core did as a *waker*; `halts`,
/// `wakeups`, `spurious_wakeups` and `wake_irqs` what happened to it as a
/// sleeper.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreStats {
    /// Core index.
    pub core: u32,
    /// Wake IPIs this core sent.
    pub ipis_sent: u64,
    /// Notifications it skipped because the target was running.
    pub elided_target_running: u64,
    /// ... because it turned a halting target into DontSleep.
    pub elided_dont_sleep: u64,
    /// ... because another waker had claimed the halted target.
    pub elided_already_claimed: u64,
    /// ... because the target already had DontSleep pending.
    pub elided_already_pending: u64,
    /// ... because the target was itself.
    pub elided_self_target: u64,
    /// ... because the target polls (idle-poll build).
    pub elided_polling: u64,
    /// Items it pushed into inboxes.
    pub inbox_pushes: u64,
    /// Times this core halted.
    pub halts: u64,
    /// Times it woke from a halt.
    pub wakeups: u64,
    /// Wakeups that found nothing to do.
    pub spurious_wakeups: u64,
    /// Switches from its idle loop into a task.
    pub switches: u64,
    /// Tasks that finished on it.
    pub tasks_finished: u64,
    /// Time in its idle loop with nothing to run.
    pub idle_us: u64,
    /// Time inside `sti; hlt`.
    pub halted_us: u64,
    /// Wake-vector interrupts it took.
    pub wake_irqs: u64,
    /// Wake IPIs sent to it (ICR writes with it as destination, counted by
    /// the senders): what the host's QEMU-trace oracle compares.
    pub wake_ipis_to: u64,
    /// Its halts that a wake IPI ended with work in its inbox (counted by
    /// this core, the sleeper): the IPIs that were needed.
    pub ipi_wakes_with_work: u64,
    /// `wake_ipis_to - ipi_wakes_with_work`: IPIs sent to it that ended no
    /// halt with work waiting (it was running, the IPI merged into one
    /// already pending, or the halt it ended had nothing to do).
    pub needless_ipis: u64,
}

/// Percentiles of one wake-latency histogram (bucket upper bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Wakes measured.
    pub samples: u64,
    /// Median, µs.
    pub p50: u64,
    /// 99th percentile, µs.
    pub p99: u64,
}

/// Sums over all cores, and per-core averages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StatsTotals {
    /// Cores reported.
    pub cores: u64,
    /// Wake IPIs sent, all cores.
    pub ipis_sent: u64,
    /// Wake IPIs sent to each core (destination side), all cores.
    pub wake_ipis_to: u64,
    /// Halts ended by a wake IPI with work waiting, all cores.
    pub ipi_wakes_with_work: u64,
    /// Needless wake IPIs (destination side), all cores.
    pub needless_ipis: u64,
    /// Wakeups from a halt, all cores.
    pub wakeups: u64,
    /// Wakeups with nothing to do, all cores.
    pub spurious_wakeups: u64,
    /// Halts, all cores.
    pub halts: u64,
    /// Wake-vector interrupts taken, all cores.
    pub wake_irqs: u64,
}

impl StatsTotals {
    /// Per-core average of a total.
    pub fn per_core(&self, total: u64) -> f64 {
        if self.cores == 0 {
            0.0
        } else {
            total as f64 / self.cores as f64
        }
    }

    /// Share of wake IPIs, counted at their destination, that ended no
    /// halt with work waiting (`needless_ipis / wake_ipis_to`): measured
    /// by the sleepers, not by what the wakers decided. `None` without
    /// IPIs.
    pub fn needless_ipi_share(&self) -> Option<f64> {
        (self.wake_ipis_to > 0).then(|| self.needless_ipis as f64 / self.wake_ipis_to as f64)
    }
}

impl VigilStats {
    /// Parses the JSON after the prefix.
    pub fn from_json(json: &str) -> Result<Self, String> {
        serde_json::from_str(json).map_err(|err| format!("bad VIGIL-STATS JSON: {err}"))
    }

    /// The last statistics line in a serial log: `None` if there is none,
    /// `Some(Err)` if it does not parse.
    pub fn find_in(serial: &str) -> Option<Result<Self, String>> {
        serial
            .lines()
            .rev()
            .filter_map(strip_core_prefix)
            .find_map(|(_core, message)| message.strip_prefix(STATS_PREFIX))
            .map(|json| Self::from_json(json.trim_end()))
    }

    /// Sums of the counters over every core.
    pub fn totals(&self) -> StatsTotals {
        let mut totals = StatsTotals {
            cores: self.cores.len() as u64,
            ..StatsTotals::default()
        };
        for core in &self.cores {
            totals.ipis_sent += core.ipis_sent;
            totals.wake_ipis_to += core.wake_ipis_to;
            totals.ipi_wakes_with_work += core.ipi_wakes_with_work;
            totals.needless_ipis += core.needless_ipis;
            totals.wakeups += core.wakeups;
            totals.spurious_wakeups += core.spurious_wakeups;
            totals.halts += core.halts;
            totals.wake_irqs += core.wake_irqs;
        }
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real line from a 2-core `cargo xtask run` (trimmed to two cores).
    const LINE: &str = r#"[c0] VIGIL-STATS {"label":"laplace","policy":"state-machine","tsc_ticks_per_ms":2627072,"cores":[{"core":0,"ipis_sent":2484,"elided_target_running":8,"elided_dont_sleep":1,"elided_already_claimed":0,"elided_already_pending":0,"elided_self_target":0,"elided_polling":0,"inbox_pushes":2493,"halts":991,"wakeups":991,"spurious_wakeups":0,"switches":993,"tasks_finished":0,"idle_us":2831710,"halted_us":2809965,"wake_irqs":991,"wake_ipis_to":37,"ipi_wakes_with_work":37,"needless_ipis":0},{"core":1,"ipis_sent":37,"elided_target_running":0,"elided_dont_sleep":0,"elided_already_claimed":0,"elided_already_pending":0,"elided_self_target":0,"elided_polling":0,"inbox_pushes":37,"halts":1004,"wakeups":1002,"spurious_wakeups":1,"switches":1002,"tasks_finished":1,"idle_us":2937976,"halted_us":2921241,"wake_irqs":1002,"wake_ipis_to":2484,"ipi_wakes_with_work":1001,"needless_ipis":1483}],"wake_latency_us":{"local":{"samples":0,"p50":0,"p99":0},"running":{"samples":9,"p50":2793,"p99":3193},"halting":{"samples":1,"p50":3193,"p99":3193},"halted":{"samples":3472,"p50":1396,"p99":4789}}}"#;

    #[test]
    fn the_kernel_line_parses() {
        let serial = format!("[c0] laplace: size=64\n{LINE}\n");
        let stats = VigilStats::find_in(&serial).unwrap().unwrap();
        assert_eq!(stats.label, "laplace");
        assert_eq!(stats.policy, "state-machine");
        assert_eq!(stats.cores.len(), 2);
        assert_eq!(stats.cores[1].wakeups, 1002);
        assert_eq!(stats.wake_latency_us["halted"].p99, 4789);
        let totals = stats.totals();
        assert_eq!(totals.ipis_sent, 2521);
        assert_eq!(totals.wakeups, 1993);
        assert_eq!(totals.per_core(totals.wakeups), 996.5);
        assert_eq!(totals.wake_ipis_to, 2521);
        assert_eq!(totals.needless_ipis, 1483);
    }

    #[test]
    fn missing_and_broken_lines() {
        assert!(VigilStats::find_in("[c0] laplace: x\n").is_none());
        let broken = VigilStats::find_in("[c0] VIGIL-STATS {\"label\":").unwrap();
        assert!(broken.unwrap_err().contains("VIGIL-STATS"));
    }

    #[test]
    fn needless_share_is_measured_at_the_destination() {
        let totals = StatsTotals {
            cores: 4,
            wake_ipis_to: 100,
            ipi_wakes_with_work: 70,
            needless_ipis: 30,
            ..StatsTotals::default()
        };
        assert_eq!(totals.needless_ipi_share(), Some(0.3));
        assert_eq!(StatsTotals::default().needless_ipi_share(), None);
    }
}
