//! What every campaign covers: its core counts, its rounds, and the APIC
//! mode of every boot, with the checks that hold for stress and bench
//! alike.

use serde::{Deserialize, Serialize};

use crate::error::{Result, XtaskError};
use crate::guest::settings::{in_range, parse_count};
use crate::runner::platform::{self, Apic, Arch, Machine};

/// The core counts, rounds and APIC mode of a campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignScope {
    /// Core counts, each booted once per round.
    pub smp: Vec<u32>,
    /// Rounds: boots per core count (stress) or per configuration (bench).
    pub runs: u32,
    /// The CPU's local APIC interface in every boot.
    pub apic: Apic,
    /// The architecture of every boot.
    #[serde(default)]
    pub arch: Arch,
}

impl CampaignScope {
    /// `runs` rounds at the `smp` core counts, in xAPIC mode.
    pub fn new(smp: Vec<u32>, runs: u32) -> Self {
        Self {
            smp,
            runs,
            apic: Apic::Xapic,
            arch: Arch::X86_64,
        }
    }

    /// Usage errors: no core count, a core count QEMU's default machine
    /// (pc, which campaigns boot) cannot boot in this APIC mode, no round.
    pub fn validate(&self) -> Result<()> {
        if self.smp.is_empty() {
            return Err(XtaskError::usage("--smp needs at least one core count"));
        }
        for &smp in &self.smp {
            platform::check_smp(smp).map_err(XtaskError::Usage)?;
            if self.arch == Arch::X86_64 {
                platform::check_platform(smp, Machine::Pc, self.apic).map_err(XtaskError::Usage)?;
            }
        }
        if self.runs == 0 {
            return Err(XtaskError::usage("--runs must be at least 1"));
        }
        Ok(())
    }
}

/// What `--runs` takes: boots per core count or configuration.
pub const RUNS_RANGE: std::ops::RangeInclusive<u32> = 1..=100_000;

/// What `--jobs` takes: QEMUs at once.
pub const JOBS_RANGE: std::ops::RangeInclusive<u32> = 1..=64;

/// Parses `--runs`: at least one boot (at most 100 000).
pub fn parse_runs(text: &str) -> std::result::Result<u32, String> {
    let runs = parse_count(text, "run count")?;
    in_range(runs, &RUNS_RANGE, "--runs")
}

/// Parses `--jobs`: QEMUs at once, 1..=64.
pub fn parse_jobs(text: &str) -> std::result::Result<usize, String> {
    let jobs = parse_count(text, "job count")?;
    in_range(jobs, &JOBS_RANGE, "--jobs").map(|jobs| jobs as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_and_jobs_are_counted_in_range() {
        assert_eq!(parse_runs("5"), Ok(5));
        assert!(parse_runs("0").unwrap_err().contains("--runs"));
        assert_eq!(parse_jobs("2"), Ok(2));
        assert!(parse_jobs("0").is_err());
        assert!(parse_jobs("65").unwrap_err().contains("1..=64"));
    }

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
        // AArch64's virt has no APIC: 128 cores boot as they are.
        CampaignScope {
            arch: Arch::Aarch64,
            ..CampaignScope::new(vec![128], 1)
        }
        .validate()
        .unwrap();
    }
}
