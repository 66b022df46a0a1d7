//! What `cargo xtask bench` boots: the policies compared (variants), the
//! three workloads (sections), the core counts, and the order of the boots
//! (round by round, so drift on the host hits every configuration alike).

use std::fmt;

use serde::Serialize;

use crate::args::{Feature, WakePolicy, Watchdog};
use crate::kernel_build::BuildConfig;
use crate::kernel_params::{GuestWorkload, KernelParams};
use crate::reproduce::reproduce_command;

/// A kernel configuration under comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Release build, `policy=state-machine`.
    StateMachine,
    /// Release build, `policy=always-ipi`.
    AlwaysIpi,
    /// Release build with `--features idle-poll` (no `policy=`).
    IdlePoll,
    /// Release build, `workload=floor`: the platform's own cost of an
    /// IPI-released fork-join round (grid sections only).
    Floor,
    /// Release build, `policy=state-machine watchdog=off`: what the default
    /// watchdog costs (sync-heavy only).
    #[serde(rename = "sm-watchdog-off")]
    WatchdogOff,
}

impl Variant {
    /// Every variant, in table order.
    pub const ALL: [Self; 5] = [
        Self::StateMachine,
        Self::AlwaysIpi,
        Self::IdlePoll,
        Self::Floor,
        Self::WatchdogOff,
    ];

    /// Name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::StateMachine => "state-machine",
            Self::AlwaysIpi => "always-ipi",
            Self::IdlePoll => "idle-poll",
            Self::Floor => "floor",
            Self::WatchdogOff => "sm-watchdog-off",
        }
    }

    /// The kernel build it boots.
    pub fn build(self) -> BuildConfig {
        BuildConfig {
            release: true,
            features: match self {
                Self::IdlePoll => vec![Feature::IdlePoll],
                _ => Vec::new(),
            },
        }
    }

    fn policy(self) -> Option<WakePolicy> {
        match self {
            Self::StateMachine | Self::Floor | Self::WatchdogOff => Some(WakePolicy::StateMachine),
            Self::AlwaysIpi => Some(WakePolicy::AlwaysIpi),
            Self::IdlePoll => None,
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A benchmark workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Section {
    /// Small grid, many iterations: one fork-join round every few µs of
    /// work, so wakeups dominate.
    SyncHeavy,
    /// Large grid, few iterations: computation dominates.
    ComputeHeavy,
    /// Every core idles: what an idle guest costs the host.
    Idle,
}

impl Section {
    /// Every section, in report order.
    pub const ALL: [Self; 3] = [Self::SyncHeavy, Self::ComputeHeavy, Self::Idle];

    /// Name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::SyncHeavy => "sync-heavy",
            Self::ComputeHeavy => "compute-heavy",
            Self::Idle => "idle",
        }
    }

    /// The variants this section compares (the floor is a grid workload).
    pub fn variants(self) -> &'static [Variant] {
        match self {
            Self::SyncHeavy => &Variant::ALL,
            Self::ComputeHeavy => &[
                Variant::StateMachine,
                Variant::AlwaysIpi,
                Variant::IdlePoll,
                Variant::Floor,
            ],
            Self::Idle => &[Variant::StateMachine, Variant::AlwaysIpi, Variant::IdlePoll],
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Grid dimensions of a Laplace section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Grid {
    /// Side.
    pub size: u32,
    /// Iterations.
    pub iterations: u32,
}

/// A whole benchmark.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BenchConfig {
    /// Core counts.
    pub smp: Vec<u32>,
    /// The sections to run, in [`Section::ALL`] order.
    pub sections: Vec<Section>,
    /// Boots per configuration.
    pub runs: u32,
    /// Sync-heavy grid.
    pub sync_grid: Grid,
    /// Compute-heavy grid.
    pub compute_grid: Grid,
    /// Guest ms the idle workload idles.
    pub idle_ms: u32,
    /// A grid boot taking longer than this is recorded as timed out, and
    /// its configuration is not booted again in later rounds.
    pub grid_timeout_s: u64,
    /// Seed passed to every boot (the same everywhere: runs differ only by
    /// the host's noise).
    pub seed: u64,
}

/// Sync-heavy grid: the seed-004 Laplace, 64×64, 1000 iterations.
pub const SYNC_GRID: Grid = Grid {
    size: 64,
    iterations: 1000,
};
/// Compute-heavy grid: 512×512, 200 iterations (about 1.0 s of guest time
/// at 1 core per 100 iterations in a release build under TCG here).
pub const COMPUTE_GRID: Grid = Grid {
    size: 512,
    iterations: 200,
};
/// Guest ms of the idle workload: long enough for /proc's 10 ms CPU-time
/// ticks to resolve a third of a percent of a host core.
pub const IDLE_MS: u32 = 3000;
/// Default per-boot limit of the grid sections.
pub const GRID_TIMEOUT_S: u64 = 20;

impl BenchConfig {
    /// The default benchmark at these core counts and runs.
    pub fn standard(smp: Vec<u32>, runs: u32) -> Self {
        Self {
            smp,
            sections: Section::ALL.to_vec(),
            runs,
            sync_grid: SYNC_GRID,
            compute_grid: COMPUTE_GRID,
            idle_ms: IDLE_MS,
            grid_timeout_s: GRID_TIMEOUT_S,
            seed: 1,
        }
    }

    /// `--quick`: 1 run at 1 and 2 cores, tiny grids, a short idle.
    pub fn quick() -> Self {
        Self {
            smp: vec![1, 2],
            sections: Section::ALL.to_vec(),
            runs: 1,
            sync_grid: Grid {
                size: 16,
                iterations: 50,
            },
            compute_grid: Grid {
                size: 64,
                iterations: 20,
            },
            idle_ms: 300,
            grid_timeout_s: 60,
            seed: 1,
        }
    }

    /// Every configuration, in table order.
    pub fn configurations(&self) -> Vec<Configuration> {
        let mut configurations = Vec::new();
        for section in Section::ALL {
            if !self.sections.contains(&section) {
                continue;
            }
            for &variant in section.variants() {
                for &smp in &self.smp {
                    configurations.push(self.configuration(section, variant, smp));
                }
            }
        }
        configurations
    }

    fn configuration(&self, section: Section, variant: Variant, smp: u32) -> Configuration {
        let (workload, grid) = match (section, variant) {
            (Section::Idle, _) => (GuestWorkload::Idle, None),
            (Section::SyncHeavy, Variant::Floor) => (GuestWorkload::Floor, Some(self.sync_grid)),
            (Section::ComputeHeavy, Variant::Floor) => {
                (GuestWorkload::Floor, Some(self.compute_grid))
            }
            (Section::SyncHeavy, _) => (GuestWorkload::Laplace, Some(self.sync_grid)),
            (Section::ComputeHeavy, _) => (GuestWorkload::Laplace, Some(self.compute_grid)),
        };
        let params = KernelParams {
            workload: Some(workload),
            policy: variant.policy(),
            seed: Some(self.seed),
            size: grid.map(|grid| grid.size),
            iterations: grid.map(|grid| grid.iterations),
            idle_ms: (section == Section::Idle).then_some(self.idle_ms),
            watchdog: (variant == Variant::WatchdogOff).then_some(Watchdog::Off),
            ..KernelParams::default()
        }
        .to_params();
        let timeout_s = match section {
            // Idling is bounded by its own length; boot is the rest.
            Section::Idle => u64::from(self.idle_ms).div_ceil(1000) + 60,
            _ => self.grid_timeout_s,
        };
        Configuration {
            section,
            variant,
            smp,
            reproduce: reproduce_command(&variant.build(), smp, Some(timeout_s), &params),
            params,
            timeout_s,
        }
    }

    /// The boots in order: round 1 of every configuration, then round 2,
    /// ... `(round, configuration index)`, rounds 1-based.
    pub fn schedule(&self) -> Vec<(u32, usize)> {
        let count = self.configurations().len();
        (1..=self.runs)
            .flat_map(|round| (0..count).map(move |index| (round, index)))
            .collect()
    }
}

/// One configuration: booted once per round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Configuration {
    /// Workload.
    pub section: Section,
    /// Kernel configuration.
    pub variant: Variant,
    /// Cores.
    pub smp: u32,
    /// Boot parameters.
    pub params: Vec<String>,
    /// Per-boot limit.
    pub timeout_s: u64,
    /// The command that replays one boot.
    pub reproduce: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_variant_and_core_count() {
        let config = BenchConfig::standard(vec![1, 2, 4], 5);
        let configurations = config.configurations();
        assert_eq!(configurations.len(), (5 + 4 + 3) * 3);
        assert!(
            configurations
                .iter()
                .all(|c| !(c.section == Section::Idle && c.variant == Variant::Floor))
        );
    }

    #[test]
    fn parameters_per_variant() {
        let config = BenchConfig::standard(vec![4], 1);
        let find = |section, variant| {
            config
                .configurations()
                .into_iter()
                .find(|c| c.section == section && c.variant == variant)
                .unwrap()
        };
        assert_eq!(
            find(Section::SyncHeavy, Variant::AlwaysIpi)
                .params
                .join(" "),
            "workload=laplace policy=always-ipi seed=1 size=64 iterations=1000"
        );
        let poll = find(Section::ComputeHeavy, Variant::IdlePoll);
        assert_eq!(
            poll.params.join(" "),
            "workload=laplace seed=1 size=512 iterations=200"
        );
        assert_eq!(
            poll.reproduce,
            "cargo xtask run --smp 4 --release --features idle-poll --timeout-s 20 workload=laplace seed=1 size=512 iterations=200"
        );
        assert_eq!(
            find(Section::SyncHeavy, Variant::Floor).params.join(" "),
            "workload=floor policy=state-machine seed=1 size=64 iterations=1000"
        );
        let idle = find(Section::Idle, Variant::StateMachine);
        assert_eq!(
            idle.params.join(" "),
            "workload=idle policy=state-machine seed=1 idle_ms=3000"
        );
        assert_eq!(idle.timeout_s, 63);
    }

    #[test]
    fn rounds_interleave_configurations() {
        let config = BenchConfig::standard(vec![1, 2], 3);
        let schedule = config.schedule();
        let count = config.configurations().len();
        assert_eq!(schedule.len(), 3 * count);
        assert_eq!(schedule[0], (1, 0));
        assert_eq!(schedule[count - 1], (1, count - 1));
        assert_eq!(schedule[count], (2, 0));
    }

    #[test]
    fn quick_is_small() {
        let quick = BenchConfig::quick();
        assert_eq!(quick.smp, vec![1, 2]);
        assert_eq!(quick.runs, 1);
        assert!(quick.idle_ms < 1000);
    }
}
