//! What every campaign covers: its core counts, its rounds, and the APIC
//! mode of every boot, with the checks that hold for stress and bench
//! alike.

use serde::{Deserialize, Serialize};

use crate::args::{self, Apic, Machine};
use crate::error::{Result, XtaskError};

/// The core counts, rounds and APIC mode of a campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignScope {
    /// Core counts, each booted once per round.
    pub smp: Vec<u32>,
    /// Rounds: boots per core count (stress) or per configuration (bench).
    pub runs: u32,
    /// The CPU's local APIC interface in every boot.
    pub apic: Apic,
}

impl CampaignScope {
    /// `runs` rounds at the `smp` core counts, in xAPIC mode.
    pub fn new(smp: Vec<u32>, runs: u32) -> Self {
        Self {
            smp,
            runs,
            apic: Apic::Xapic,
        }
    }

    /// Usage errors: no core count, a core count QEMU's default machine
    /// (pc, which campaigns boot) cannot boot in this APIC mode, no round.
    pub fn validate(&self) -> Result<()> {
        if self.smp.is_empty() {
            return Err(XtaskError::usage("--smp needs at least one core count"));
        }
        for &smp in &self.smp {
            args::check_smp(smp).map_err(XtaskError::Usage)?;
            args::check_platform(smp, Machine::Pc, self.apic).map_err(XtaskError::Usage)?;
        }
        if self.runs == 0 {
            return Err(XtaskError::usage("--runs must be at least 1"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_impossible_or_roundless_scopes_are_usage_errors() {
        CampaignScope::new(vec![1, 64], 1).validate().unwrap();
        for broken in [
            CampaignScope::new(vec![], 1),
            CampaignScope::new(vec![4, 0], 1),
            CampaignScope::new(vec![4, 65], 1),
            CampaignScope::new(vec![4], 0),
        ] {
            assert_eq!(broken.validate().unwrap_err().exit_code(), 2, "{broken:?}");
        }
        let x2apic = CampaignScope {
            apic: Apic::X2apic,
            ..CampaignScope::new(vec![128], 1)
        };
        x2apic.validate().unwrap();
        // Above 255 cores only q35 boots: campaigns boot pc.
        let too_many = CampaignScope {
            smp: vec![256],
            ..x2apic
        };
        assert_eq!(too_many.validate().unwrap_err().exit_code(), 2);
    }
}
