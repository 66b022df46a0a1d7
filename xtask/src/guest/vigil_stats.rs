//! The kernel's machine-readable statistics line, `[c0] VIGIL-STATS {json}`,
//! printed once at the end of a run-mode boot (format in the README).

use std::ops::Deref;

use serde::{Deserialize, Serialize};

use crate::guest::test_output::strip_core_prefix;
pub use vigil_proto::stats_line::{CoreStats, LatencySummary, STATS_PREFIX, StatsLine};

/// The whole statistics object: the kernel's record ([`StatsLine`], defined
/// with its formatter in `vigil-proto`), with the host's sums on top.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct VigilStats(pub StatsLine);

impl Deref for VigilStats {
    type Target = StatsLine;

    fn deref(&self) -> &StatsLine {
        &self.0
    }
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

    /// Cores that were halted with work in their inbox when the kernel
    /// took its final statistics, as `(core, items)`: work announced to a
    /// core that sleeps on it, a lost wakeup the run survived because
    /// another core did the work (a dropped search wake under the stealing
    /// pool, whose caller runs every chunk itself). The host's finding when
    /// the guest's watchdog is off and the run did not hang.
    pub fn halted_with_work_at_end(&self) -> Vec<(u32, u64)> {
        self.cores
            .iter()
            .filter(|core| core.halted_at_end == 1 && core.inbox_at_end > 0)
            .map(|core| (core.core, core.inbox_at_end))
            .collect()
    }

    /// `core 2 (1 item(s))`, ... for a report; `None` if no core was left
    /// halted with work.
    pub fn describe_halted_with_work_at_end(&self) -> Option<String> {
        let cores = self.halted_with_work_at_end();
        (!cores.is_empty()).then(|| {
            let list: Vec<String> = cores
                .iter()
                .map(|(core, items)| format!("core {core} ({items} item(s))"))
                .collect();
            format!(
                "the final statistics show work left in a halted core's inbox at the end of the run: {} (found by the host)",
                list.join(", ")
            )
        })
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
