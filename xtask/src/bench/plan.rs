//! What `cargo xtask bench` boots: the policies compared (variants), the
//! three workloads (sections), the core counts, and the order of the boots
//! (round by round, so drift on the host hits every configuration alike).

use std::fmt;

use serde::Serialize;
use vigil_proto::boot_params::{self, ParamLine, Workload};
use vigil_proto::linux_peer::{LOOP_START, LinuxIdle};

use crate::campaign::boot_spec::BootSpec;
use crate::campaign::plan::round_robin;
use crate::campaign::scope::CampaignScope;
use crate::guest::run_output::{IDLE_END, IDLE_START};
use crate::guest::settings::{Backoff, Feature, Pool, WakePolicy};
use crate::runner::kernel_build::BuildConfig;
use crate::runner::platform::Arch;
use crate::runner::qemu::MarkLimit;

/// A kernel configuration under comparison. Every alternative names its
/// `pool=` (and `backoff=off` where it turns the poll before a halt off);
/// the default and the variants that change one thing of it (idle-poll,
/// the watchdog) leave the pool to the kernel's round plan, so that the
/// reference is what a user gets. Serialised by [`Variant::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Variant {
    /// Release build, `policy=state-machine` and no `pool=` or `chunks=`:
    /// the kernel's defaults, the round plan choosing the pool and the
    /// chunks from what the boot measures of the host; the reference of
    /// the ratios.
    Default,
    /// Release build, `policy=state-machine pool=pinned`.
    SmPinned,
    /// Release build, `policy=state-machine pool=steal backoff=off`.
    SmStealBackoffOff,
    /// Release build, `policy=state-machine pool=pinned backoff=off`.
    SmPinnedBackoffOff,
    /// Release build, `policy=always-ipi pool=pinned`.
    AlwaysIpi,
    /// Release build, `policy=always-ipi pool=steal`.
    AlwaysIpiSteal,
    /// Release build with `--features idle-poll` (no `policy=`), the round
    /// plan's pool.
    IdlePoll,
    /// Release build, `workload=floor`: the platform's own cost of an
    /// IPI-released fork-join round (grid sections only).
    Floor,
    /// Release build, `policy=state-machine watchdog=off`: what the
    /// default watchdog costs (sync-heavy only).
    WatchdogOff,
    /// The Linux peer (`--peer linux`): Debian's kernel, Linux's own idle,
    /// `pool=pinned` (one pinned thread per CPU, a barrier per iteration).
    LinuxPinned,
    /// The Linux peer, Linux's own idle, `pool=steal` (rayon).
    LinuxSteal,
    /// The Linux peer with `idle=poll`, `pool=pinned`.
    LinuxPollPinned,
    /// The Linux peer with `idle=poll`, `pool=steal`.
    LinuxPollSteal,
}

impl Variant {
    /// Every variant, in table order.
    pub const ALL: [Self; 9] = [
        Self::Default,
        Self::SmPinned,
        Self::SmStealBackoffOff,
        Self::SmPinnedBackoffOff,
        Self::AlwaysIpi,
        Self::AlwaysIpiSteal,
        Self::IdlePoll,
        Self::Floor,
        Self::WatchdogOff,
    ];

    /// The Linux peer's variants (`--peer linux`), in table order.
    pub const LINUX: [Self; 4] = [
        Self::LinuxPinned,
        Self::LinuxSteal,
        Self::LinuxPollPinned,
        Self::LinuxPollSteal,
    ];

    /// What `--quick` compares: the two pools under the state machine, the
    /// always-IPI and polling baselines, the floor.
    pub const QUICK: [Self; 5] = [
        Self::Default,
        Self::SmPinned,
        Self::AlwaysIpi,
        Self::IdlePoll,
        Self::Floor,
    ];

    /// Name in tables and JSON. The three that are one setting each take
    /// that setting's own name: the policy (on the pinned pool), the
    /// feature, the workload.
    pub fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::SmPinned => "sm-pinned",
            Self::SmStealBackoffOff => "sm-steal-backoff-off",
            Self::SmPinnedBackoffOff => "sm-pinned-backoff-off",
            Self::AlwaysIpi => WakePolicy::AlwaysIpi.kernel_name(),
            Self::AlwaysIpiSteal => "always-ipi-steal",
            Self::IdlePoll => Feature::IdlePoll.cargo_name(),
            Self::Floor => Workload::Floor.name(),
            Self::WatchdogOff => "sm-watchdog-off",
            Self::LinuxPinned => "linux-pinned",
            Self::LinuxSteal => "linux-steal",
            Self::LinuxPollPinned => "linux-poll-pinned",
            Self::LinuxPollSteal => "linux-poll-steal",
        }
    }

    /// The Linux peer's idle choice, for the Linux variants (`None`:
    /// Vigil's kernel).
    pub fn linux_idle(self) -> Option<LinuxIdle> {
        match self {
            Self::LinuxPinned | Self::LinuxSteal => Some(LinuxIdle::Default),
            Self::LinuxPollPinned | Self::LinuxPollSteal => Some(LinuxIdle::Poll),
            _ => None,
        }
    }

    /// The kernel build it boots on `arch` (the Linux variants boot no
    /// Vigil kernel: theirs is what a bench with `--peer linux` builds
    /// besides).
    pub fn build(self, arch: Arch) -> BuildConfig {
        BuildConfig {
            release: true,
            features: match self {
                Self::IdlePoll => vec![Feature::IdlePoll],
                _ => Vec::new(),
            },
            arch,
        }
    }

    fn policy(self) -> Option<WakePolicy> {
        match self {
            Self::Default
            | Self::SmPinned
            | Self::SmStealBackoffOff
            | Self::SmPinnedBackoffOff
            | Self::Floor
            | Self::WatchdogOff => Some(WakePolicy::StateMachine),
            Self::AlwaysIpi | Self::AlwaysIpiSteal => Some(WakePolicy::AlwaysIpi),
            Self::IdlePoll
            | Self::LinuxPinned
            | Self::LinuxSteal
            | Self::LinuxPollPinned
            | Self::LinuxPollSteal => None,
        }
    }

    /// `pool=` (`None`: the floor has no fork-join pool; the default, the
    /// idle-poll build and the watchdog's cost leave the pool and its
    /// chunks to the kernel's round plan).
    pub fn pool(self) -> Option<Pool> {
        match self {
            Self::Default | Self::IdlePoll | Self::WatchdogOff | Self::Floor => None,
            Self::SmStealBackoffOff
            | Self::AlwaysIpiSteal
            | Self::LinuxSteal
            | Self::LinuxPollSteal => Some(Pool::Steal),
            Self::SmPinned
            | Self::SmPinnedBackoffOff
            | Self::AlwaysIpi
            | Self::LinuxPinned
            | Self::LinuxPollPinned => Some(Pool::Pinned),
        }
    }

    /// `backoff=` (`None`: the kernel's default, the adaptive poll).
    pub fn backoff(self) -> Option<Backoff> {
        matches!(self, Self::SmStealBackoffOff | Self::SmPinnedBackoffOff).then_some(Backoff::Off)
    }

    /// The parameters that make this variant (the floor's workload, the
    /// policy, the watchdog, the pool, the backoff); a boot adds its
    /// section's workload, grid and seed.
    fn params(self) -> ParamLine {
        ParamLine {
            workload: (self == Self::Floor).then_some(Workload::Floor),
            policy: self.policy().map(WakePolicy::policy),
            watchdog: (self == Self::WatchdogOff).then_some(boot_params::Watchdog::Off),
            pool: self.pool().map(Pool::pool),
            backoff: self.backoff().map(|backoff| backoff.backoff().mode()),
            ..ParamLine::default()
        }
    }

    /// Its build and boot parameters besides the section's, as the
    /// report's legend shows them.
    pub fn describe(self) -> String {
        let mut parts = Vec::new();
        if let Some(idle) = self.linux_idle() {
            parts.push(format!(
                "--peer linux (Debian's kernel{})",
                idle.kernel_word()
                    .map_or_else(String::new, |word| format!(", {word}"))
            ));
        }
        if self == Self::IdlePoll {
            parts.push(format!("--features {}", Feature::IdlePoll.cargo_name()));
        }
        parts.extend(self.params().tokens());
        parts.join(" ")
    }
}

impl Serialize for Variant {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
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
            Self::Idle => Workload::Idle.name(),
        }
    }

    /// The variants this section compares: every variant on the
    /// sync-heavy grid; the same but the watchdog's on the compute-heavy
    /// one; and where idling differs (the pool only matters to fork-join
    /// rounds, the poll before a halt does matter) on the idle one.
    pub fn variants(self) -> &'static [Variant] {
        match self {
            Self::SyncHeavy => &[
                Variant::Default,
                Variant::SmPinned,
                Variant::SmStealBackoffOff,
                Variant::SmPinnedBackoffOff,
                Variant::AlwaysIpi,
                Variant::AlwaysIpiSteal,
                Variant::IdlePoll,
                Variant::Floor,
                Variant::WatchdogOff,
                Variant::LinuxPinned,
                Variant::LinuxSteal,
                Variant::LinuxPollPinned,
                Variant::LinuxPollSteal,
            ],
            Self::ComputeHeavy => &[
                Variant::Default,
                Variant::SmPinned,
                Variant::SmStealBackoffOff,
                Variant::SmPinnedBackoffOff,
                Variant::AlwaysIpi,
                Variant::AlwaysIpiSteal,
                Variant::IdlePoll,
                Variant::Floor,
                Variant::LinuxPinned,
                Variant::LinuxSteal,
                Variant::LinuxPollPinned,
                Variant::LinuxPollSteal,
            ],
            Self::Idle => &[
                Variant::Default,
                Variant::SmStealBackoffOff,
                Variant::AlwaysIpi,
                Variant::IdlePoll,
            ],
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
    /// Core counts, boots per configuration, APIC mode.
    #[serde(flatten)]
    pub scope: CampaignScope,
    /// The sections to run, in [`Section::ALL`] order.
    pub sections: Vec<Section>,
    /// The variants to run, in [`Variant::ALL`] order (each section runs
    /// those of its own [`Section::variants`] that are listed here).
    pub variants: Vec<Variant>,
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
    /// Host core counts QEMU is confined to (`--host-cores`), each a set of
    /// every configuration, interleaved with the others round by round;
    /// empty: QEMU on every host core, once.
    pub host_cores: Vec<u32>,
}

/// Sync-heavy grid: the seed-004 Laplace, 64×64, 1000 iterations.
pub const SYNC_GRID: Grid = Grid {
    size: 64,
    iterations: 1000,
};
/// Compute-heavy grid: 512×512, 200 iterations (about 1.6 s of guest time
/// at 1 core in a release build under TCG here).
pub const COMPUTE_GRID: Grid = Grid {
    size: 512,
    iterations: 200,
};
/// Guest ms of the idle workload: long enough for /proc's 10 ms CPU-time
/// ticks to resolve a third of a percent of a host core.
pub const IDLE_MS: u32 = 3000;
/// Default per-boot limit of the grid sections.
pub const GRID_TIMEOUT_S: u64 = 20;
/// What a Linux boot may take besides its workload, s: its limit counts
/// from the line the peer prints before its loop, and this bounds the boot
/// before it (5 s at 4 vCPUs and 23 s at 32 here when measured by hand,
/// 63 s at 32 with the host loaded by other builds; with `idle=poll` at 32
/// vCPUs it had not reached its loop after 400 s). A boot that does not
/// reach its loop in this time is timed out too, as its configuration.
pub const fn linux_boot_allowance_s(smp: u32) -> u64 {
    30 + 2 * smp as u64
}

impl BenchConfig {
    /// The default benchmark at these core counts and runs.
    pub fn standard(smp: Vec<u32>, runs: u32) -> Self {
        Self {
            scope: CampaignScope::new(smp, runs),
            sections: Section::ALL.to_vec(),
            variants: Variant::ALL.to_vec(),
            sync_grid: SYNC_GRID,
            compute_grid: COMPUTE_GRID,
            idle_ms: IDLE_MS,
            grid_timeout_s: GRID_TIMEOUT_S,
            seed: 1,
            host_cores: Vec::new(),
        }
    }

    /// Usage errors: a core count whose pinned or floor boots would not fit
    /// the sync-heavy grid (every core gets a row of it); a host core count
    /// above what xtask may use, or given twice.
    pub fn validate(&self) -> crate::error::Result<()> {
        self.scope.validate()?;
        if !self.host_cores.is_empty() {
            let allowed = crate::runner::host_cores::allowed_cores()?;
            for &count in &self.host_cores {
                crate::runner::host_cores::cpu_list(count, &allowed)?;
            }
            let mut distinct = self.host_cores.clone();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() != self.host_cores.len() {
                return Err(crate::error::XtaskError::usage(
                    "bench --host-cores: a count given twice",
                ));
            }
        }
        let size = self.sync_grid.size;
        let pinned = self
            .variants
            .iter()
            .any(|&variant| variant.pool() == Some(Pool::Pinned) || variant == Variant::Floor);
        match self.scope.smp.iter().find(|&&smp| smp + 2 > size) {
            Some(&smp) if pinned => Err(crate::error::XtaskError::usage(format!(
                "bench --smp {smp}: the pinned and floor variants give every core a row of the {size}x{size} sync-heavy grid, so at most {} cores",
                size - 2
            ))),
            _ => Ok(()),
        }
    }

    /// `--quick`: 1 run at 1 and 2 cores of the [`Variant::QUICK`]
    /// variants, tiny grids, a short idle.
    pub fn quick() -> Self {
        Self {
            scope: CampaignScope::new(vec![1, 2], 1),
            sections: Section::ALL.to_vec(),
            variants: Variant::QUICK.to_vec(),
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
            host_cores: Vec::new(),
        }
    }

    /// The host core counts QEMU runs on, one set of configurations each:
    /// `--host-cores`, or `[None]` (every host core).
    pub fn host_core_groups(&self) -> Vec<Option<u32>> {
        if self.host_cores.is_empty() {
            vec![None]
        } else {
            self.host_cores.iter().copied().map(Some).collect()
        }
    }

    /// Every configuration, in table order: host core count, section,
    /// variant, core count.
    pub fn configurations(&self) -> Vec<Configuration> {
        let mut configurations = Vec::new();
        for host_cores in self.host_core_groups() {
            for section in Section::ALL {
                if !self.sections.contains(&section) {
                    continue;
                }
                for variant in self.section_variants(section) {
                    for &smp in &self.scope.smp {
                        let mut configuration = self.configuration(section, variant, smp);
                        if let Some(count) = host_cores {
                            configuration.boot = configuration.boot.on_host_cores(count);
                        }
                        configurations.push(configuration);
                    }
                }
            }
        }
        configurations
    }

    /// The variants `section` runs in this benchmark, in table order.
    pub fn section_variants(&self, section: Section) -> Vec<Variant> {
        section
            .variants()
            .iter()
            .copied()
            .filter(|variant| self.variants.contains(variant))
            .collect()
    }

    /// The variants the benchmark boots in any of its sections, in
    /// [`Variant::ALL`] order.
    pub fn booted_variants(&self) -> Vec<Variant> {
        Variant::ALL
            .into_iter()
            .chain(Variant::LINUX)
            .filter(|variant| {
                self.sections
                    .iter()
                    .any(|&section| self.section_variants(section).contains(variant))
            })
            .collect()
    }

    fn configuration(&self, section: Section, variant: Variant, smp: u32) -> Configuration {
        let (workload, grid) = match (section, variant) {
            (Section::Idle, _) => (Workload::Idle, None),
            (Section::SyncHeavy, Variant::Floor) => (Workload::Floor, Some(self.sync_grid)),
            (Section::ComputeHeavy, Variant::Floor) => (Workload::Floor, Some(self.compute_grid)),
            (Section::SyncHeavy, _) => (Workload::Laplace, Some(self.sync_grid)),
            (Section::ComputeHeavy, _) => (Workload::Laplace, Some(self.compute_grid)),
        };
        let params = ParamLine {
            workload: Some(workload),
            seed: Some(self.seed),
            size: grid.map(|grid| grid.size),
            iterations: grid.map(|grid| grid.iterations),
            idle_ms: (section == Section::Idle).then_some(self.idle_ms),
            ..variant.params()
        }
        .tokens();
        let timeout_s = match section {
            // Idling is bounded by its own length; boot is the rest.
            Section::Idle => u64::from(self.idle_ms).div_ceil(1000) + 60,
            _ => self.grid_timeout_s,
        };
        let mut boot = match variant.linux_idle() {
            // The workload's limit from the peer's loop on, and Linux's
            // boot bounded besides.
            Some(idle) => {
                let mut boot = BootSpec::linux_peer(
                    idle,
                    smp,
                    self.scope.apic,
                    params,
                    timeout_s + linux_boot_allowance_s(smp),
                );
                boot.limit_after_mark = Some(MarkLimit {
                    mark: LOOP_START.to_string(),
                    limit_s: timeout_s,
                });
                boot
            }
            None => BootSpec::new(
                &variant.build(self.scope.arch),
                smp,
                self.scope.apic,
                params,
                timeout_s,
                true,
            ),
        };
        if section == Section::Idle {
            boot.expect_result = false;
            boot.marks = vec![IDLE_START.to_string(), IDLE_END.to_string()];
        }
        Configuration {
            section,
            variant,
            boot,
        }
    }

    /// The boots in order: round 1 of every configuration, then round 2,
    /// ... `(round, configuration index)`, rounds 1-based.
    pub fn schedule(&self) -> Vec<(u32, usize)> {
        round_robin(self.scope.runs, self.configurations().len())
            .map(|slot| (slot.round, slot.item))
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
    /// What one of its boots is (cores, parameters, limit, the replay
    /// command).
    #[serde(flatten)]
    pub boot: BootSpec,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_variant_and_core_count() {
        let config = BenchConfig::standard(vec![1, 2, 4], 5);
        let configurations = config.configurations();
        assert_eq!(configurations.len(), (9 + 8 + 4) * 3);
        assert!(
            configurations
                .iter()
                .all(|c| !(c.section == Section::Idle && c.variant == Variant::Floor))
        );
        assert_eq!(config.booted_variants(), Variant::ALL.to_vec());
    }

    #[test]
    fn names_are_the_json_names() {
        for variant in Variant::ALL {
            assert_eq!(
                serde_json::to_value(variant).unwrap(),
                serde_json::Value::from(variant.name())
            );
        }
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
        let sync = |variant| find(Section::SyncHeavy, variant).boot.params.join(" ");
        let sync_base = "seed=1 size=64 iterations=1000";
        for (variant, expected) in [
            (
                Variant::Default,
                format!("policy=state-machine {sync_base}"),
            ),
            (
                Variant::SmPinned,
                format!("policy=state-machine {sync_base} pool=pinned"),
            ),
            (
                Variant::SmStealBackoffOff,
                format!("policy=state-machine {sync_base} pool=steal backoff=off"),
            ),
            (
                Variant::SmPinnedBackoffOff,
                format!("policy=state-machine {sync_base} pool=pinned backoff=off"),
            ),
            (
                Variant::AlwaysIpi,
                format!("policy=always-ipi {sync_base} pool=pinned"),
            ),
            (
                Variant::AlwaysIpiSteal,
                format!("policy=always-ipi {sync_base} pool=steal"),
            ),
            (
                Variant::WatchdogOff,
                "policy=state-machine seed=1 watchdog=off size=64 iterations=1000".to_string(),
            ),
        ] {
            assert_eq!(
                sync(variant),
                format!("workload=laplace {expected}"),
                "{variant}"
            );
        }
        let poll = find(Section::ComputeHeavy, Variant::IdlePoll);
        assert_eq!(
            poll.boot.params.join(" "),
            "workload=laplace seed=1 size=512 iterations=200"
        );
        assert_eq!(
            poll.boot.reproduce,
            "cargo xtask run --smp 4 --release --features idle-poll --timeout-s 20 workload=laplace seed=1 size=512 iterations=200"
        );
        assert_eq!(
            sync(Variant::Floor),
            "workload=floor policy=state-machine seed=1 size=64 iterations=1000"
        );
        let idle = find(Section::Idle, Variant::Default);
        assert_eq!(
            idle.boot.params.join(" "),
            "workload=idle policy=state-machine seed=1 idle_ms=3000"
        );
        assert_eq!(idle.boot.timeout_s, 63);
        assert_eq!(
            Variant::SmPinnedBackoffOff.describe(),
            "policy=state-machine pool=pinned backoff=off"
        );
        assert_eq!(Variant::IdlePoll.describe(), "--features idle-poll");
        assert_eq!(
            Variant::Floor.describe(),
            "workload=floor policy=state-machine"
        );
    }

    #[test]
    fn every_state_machine_pool_and_backoff_variant_runs_both_grids() {
        for section in [Section::SyncHeavy, Section::ComputeHeavy] {
            for variant in [
                Variant::Default,
                Variant::SmPinned,
                Variant::SmStealBackoffOff,
                Variant::SmPinnedBackoffOff,
                Variant::AlwaysIpi,
                Variant::AlwaysIpiSteal,
            ] {
                assert!(section.variants().contains(&variant), "{section} {variant}");
            }
        }
        assert!(
            !Section::ComputeHeavy
                .variants()
                .contains(&Variant::WatchdogOff)
        );
    }

    #[test]
    fn linux_variants_boot_the_peer_with_their_limit_from_its_loop() {
        let mut config = BenchConfig::standard(vec![8], 1);
        config.variants = vec![Variant::Default];
        config.variants.extend(Variant::LINUX);
        let configurations = config.configurations();
        // default in all three sections, the four Linux variants in the
        // two grid sections only.
        assert_eq!(configurations.len(), 3 + 2 * 4);
        let poll = configurations
            .iter()
            .find(|c| c.section == Section::SyncHeavy && c.variant == Variant::LinuxPollPinned)
            .unwrap();
        assert_eq!(
            poll.boot.params.join(" "),
            "workload=laplace seed=1 size=64 iterations=1000 pool=pinned"
        );
        assert_eq!(poll.boot.linux_idle, Some(LinuxIdle::Poll));
        assert_eq!(
            poll.boot.limit_after_mark,
            Some(MarkLimit {
                mark: LOOP_START.to_string(),
                limit_s: GRID_TIMEOUT_S
            })
        );
        assert_eq!(
            poll.boot.timeout_s,
            GRID_TIMEOUT_S + linux_boot_allowance_s(8)
        );
        assert!(
            poll.boot
                .reproduce
                .starts_with("cargo xtask run --peer linux --linux-idle poll --smp 8 "),
            "{}",
            poll.boot.reproduce
        );
        let steal = configurations
            .iter()
            .find(|c| c.section == Section::ComputeHeavy && c.variant == Variant::LinuxSteal)
            .unwrap();
        assert_eq!(steal.boot.linux_idle, Some(LinuxIdle::Default));
        assert!(steal.boot.params.contains(&"pool=steal".to_string()));
        assert_eq!(
            Variant::LinuxPollSteal.describe(),
            "--peer linux (Debian's kernel, idle=poll) pool=steal"
        );
        assert_eq!(config.booted_variants().len(), 5);
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
        assert_eq!(quick.scope.smp, vec![1, 2]);
        assert_eq!(quick.scope.runs, 1);
        assert!(quick.idle_ms < 1000);
        assert_eq!(quick.booted_variants(), Variant::QUICK.to_vec());
        // 5 sync-heavy + 5 compute-heavy + 3 idle (default, always-ipi,
        // idle-poll), at 2 core counts.
        assert_eq!(quick.configurations().len(), (5 + 5 + 3) * 2);
        assert_eq!(
            quick.section_variants(Section::Idle),
            vec![Variant::Default, Variant::AlwaysIpi, Variant::IdlePoll]
        );
    }
}
