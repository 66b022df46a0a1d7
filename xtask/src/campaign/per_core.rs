//! The per-core statistics both campaigns summarise, over their boots:
//! wake IPIs sent, wakeups from a halt, and spurious wakeups, each as a
//! spread of per-boot per-core means.

use serde::Serialize;

use crate::campaign::percentiles::Spread;
use crate::guest::vigil_stats::StatsTotals;

/// Spreads over boots of per-core means (`None` without statistics).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerCoreSpreads {
    /// Wake IPIs sent per core.
    pub ipis_per_core: Option<Spread>,
    /// Wakeups from a halt per core.
    pub wakeups_per_core: Option<Spread>,
    /// Wakeups with nothing to do per core.
    pub spurious_per_core: Option<Spread>,
}

impl PerCoreSpreads {
    /// Over the boots whose statistics sum to `totals`.
    pub fn of(totals: &[StatsTotals]) -> Self {
        let spread = |pick: fn(&StatsTotals) -> u64| {
            Spread::of(totals.iter().map(|totals| totals.per_core(pick(totals))))
        };
        Self {
            ipis_per_core: spread(|totals| totals.ipis_sent),
            wakeups_per_core: spread(|totals| totals.wakeups),
            spurious_per_core: spread(|totals| totals.spurious_wakeups),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_boot_counts_once_per_core() {
        let boot = |cores, ipis_sent, wakeups| StatsTotals {
            cores,
            ipis_sent,
            wakeups,
            ..StatsTotals::default()
        };
        let spreads = PerCoreSpreads::of(&[boot(4, 8, 4), boot(2, 8, 0), boot(4, 40, 8)]);
        let ipis = spreads.ipis_per_core.unwrap();
        assert_eq!((ipis.min, ipis.median, ipis.max), (2.0, 4.0, 10.0));
        assert_eq!(spreads.wakeups_per_core.unwrap().median, 1.0);
        assert_eq!(spreads.spurious_per_core.unwrap().max, 0.0);
        assert_eq!(PerCoreSpreads::of(&[]).ipis_per_core, None);
    }
}
