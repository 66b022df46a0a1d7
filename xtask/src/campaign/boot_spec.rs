//! One boot a campaign makes, as its planner hands it to the runner: the
//! platform, the kernel parameters, the limits, what the boot must print to
//! pass, and the command that replays it. Stress and bench plan into it;
//! [`BootRecord::boot`](crate::campaign::boot_record::BootRecord::boot)
//! boots it.

use serde::{Deserialize, Serialize};

use crate::campaign::reproduce::reproduce_command;
use crate::runner::bochs::{BochsConfig, BochsSettings};
use crate::runner::kernel_build::BuildConfig;
use crate::runner::platform::{Apic, Arch};
use crate::runner::qemu::{MarkLimit, RunConfig};
use vigil_proto::linux_peer::LinuxIdle;

/// What to boot, and how to judge it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BootSpec {
    /// The architecture (the kernel's build says the same).
    #[serde(default)]
    pub arch: Arch,
    /// Cores.
    pub smp: u32,
    /// The CPU's local APIC interface.
    pub apic: Apic,
    /// Kernel parameters, `key=value` each.
    pub params: Vec<String>,
    /// Limit on the boot, s.
    pub timeout_s: u64,
    /// The host's stuck-core detector: seconds without serial output after
    /// which the guest is examined and killed (`None`: only the timeout).
    pub stall_s: Option<u64>,
    /// Examine the guest through the monitor at the timeout too, not only
    /// at a stall.
    pub examine_on_timeout: bool,
    /// Compare the guest's wake-IPI count with QEMU's trace (the record's
    /// `ipi_oracle` holds the comparison; records and specs are written
    /// side by side, so their keys must differ).
    pub with_ipi_oracle: bool,
    /// The workload prints a `laplace:`/`floor:` result line: a success
    /// without one fails.
    pub expect_result: bool,
    /// Serial lines the boot must print to pass, each timed (with QEMU's
    /// CPU time) where it appears.
    pub marks: Vec<String>,
    /// Booted under Bochs with these settings (deterministic: `cargo
    /// xtask replay` boots it again and compares), or under QEMU (`None`).
    #[serde(default)]
    pub bochs: Option<BochsSettings>,
    /// The Linux peer with this idle choice instead of Vigil's kernel
    /// (`None`: Vigil).
    #[serde(default)]
    pub linux_idle: Option<LinuxIdle>,
    /// A limit counted from a serial line rather than from the start (the
    /// Linux peer's loop), besides [`Self::timeout_s`].
    #[serde(default)]
    pub limit_after_mark: Option<MarkLimit>,
    /// QEMU confined to the first this many host cores (`None`: all).
    #[serde(default)]
    pub host_cores: Option<u32>,
    /// The command that replays this boot.
    pub reproduce: String,
}

impl BootSpec {
    /// A boot of `build` at `smp` cores with `params`: limited to
    /// `timeout_s`, no stall detector, no oracle, no marks, expecting a
    /// result line. `timeout_in_reproduce`: the replay command names the
    /// limit (`--timeout-s`), for limits a plain `cargo xtask run` would
    /// not apply.
    pub fn new(
        build: &BuildConfig,
        smp: u32,
        apic: Apic,
        params: Vec<String>,
        timeout_s: u64,
        timeout_in_reproduce: bool,
    ) -> Self {
        Self {
            reproduce: reproduce_command(
                build,
                smp,
                apic,
                timeout_in_reproduce.then_some(timeout_s),
                &params,
                None,
            ),
            arch: build.arch,
            smp,
            apic,
            params,
            timeout_s,
            stall_s: None,
            examine_on_timeout: false,
            with_ipi_oracle: false,
            expect_result: true,
            marks: Vec::new(),
            bochs: None,
            linux_idle: None,
            limit_after_mark: None,
            host_cores: None,
        }
    }

    /// A boot of the Linux peer with `idle` at `smp` cores, the program
    /// taking `params`, limited to `timeout_s` in all; its reproduce
    /// command is `cargo xtask run --peer linux ...`.
    pub fn linux_peer(
        idle: LinuxIdle,
        smp: u32,
        apic: Apic,
        params: Vec<String>,
        timeout_s: u64,
    ) -> Self {
        let mut words = vec!["cargo xtask run --peer linux".to_string()];
        if idle != LinuxIdle::Default {
            words.push(format!("--linux-idle {}", idle.name()));
        }
        words.push(format!("--smp {smp}"));
        if apic != Apic::default() {
            words.push(format!("--apic {apic}"));
        }
        words.push(format!("--timeout-s {timeout_s}"));
        words.extend(params.iter().cloned());
        Self {
            reproduce: words.join(" "),
            linux_idle: Some(idle),
            ..Self::new(&BuildConfig::default(), smp, apic, params, timeout_s, true)
        }
    }

    /// The same boot under Bochs with `settings` (its reproduce command
    /// names them; no time limit in it).
    pub fn under_bochs(self, build: &BuildConfig, settings: BochsSettings) -> Self {
        Self {
            reproduce: reproduce_command(
                build,
                self.smp,
                self.apic,
                None,
                &self.params,
                Some(&settings),
            ),
            bochs: Some(settings),
            ..self
        }
    }

    /// The same boot with QEMU confined to `host_cores` host cores (its
    /// reproduce command says `--host-cores`).
    pub fn on_host_cores(self, host_cores: u32) -> Self {
        Self {
            reproduce: self.reproduce.replacen(
                "cargo xtask run",
                &format!("cargo xtask run --host-cores {host_cores}"),
                1,
            ),
            host_cores: Some(host_cores),
            ..self
        }
    }

    /// The limit on the workload, s: the limit after the mark where there
    /// is one (the Linux peer's loop), else the boot's.
    pub fn workload_limit_s(&self) -> u64 {
        self.limit_after_mark
            .as_ref()
            .map_or(self.timeout_s, |limit| limit.limit_s)
    }

    /// The Bochs runner's configuration for it (`None` for a QEMU boot).
    pub fn bochs_config(&self) -> Option<BochsConfig> {
        Some(BochsConfig {
            stall_s: self.stall_s,
            settings: self.bochs?,
            ..BochsConfig::new(self.smp, self.timeout_s)
        })
    }

    /// The runner's configuration for it (QEMU's default machine, pc, on
    /// the BIOS image, quiet).
    pub fn run_config(&self) -> RunConfig {
        RunConfig {
            arch: self.arch,
            smp: self.smp,
            apic: self.apic,
            timeout_s: Some(self.timeout_s),
            params: self.params.clone(),
            registers_on_timeout: self.examine_on_timeout,
            stall_s: self.stall_s,
            marks: self.marks.clone(),
            ipi_oracle: self.with_ipi_oracle,
            limit_after_mark: self.limit_after_mark.clone(),
            host_cores: self.host_cores,
            ..RunConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::platform::Machine;

    #[test]
    fn the_run_config_carries_every_setting() {
        let mut spec = BootSpec::new(
            &BuildConfig::default(),
            8,
            Apic::X2apic,
            vec!["seed=3".to_string()],
            90,
            true,
        );
        assert_eq!(
            spec.reproduce,
            "cargo xtask run --smp 8 --apic x2apic --timeout-s 90 seed=3"
        );
        spec.stall_s = Some(20);
        spec.examine_on_timeout = true;
        spec.with_ipi_oracle = true;
        spec.marks = vec!["idle: end".to_string()];
        let run = spec.run_config();
        assert_eq!(
            (run.smp, run.apic, run.machine, run.timeout_s, run.stall_s),
            (8, Apic::X2apic, Machine::Pc, Some(90), Some(20))
        );
        assert!(run.registers_on_timeout && run.ipi_oracle && !run.uefi && !run.echo);
        assert_eq!(run.params, ["seed=3"]);
        assert_eq!(run.marks, ["idle: end"]);
        let quiet = BootSpec::new(&BuildConfig::default(), 2, Apic::Xapic, vec![], 60, false);
        assert_eq!(quiet.reproduce, "cargo xtask run --smp 2");
        let confined = quiet.on_host_cores(1);
        assert_eq!(confined.reproduce, "cargo xtask run --host-cores 1 --smp 2");
        assert_eq!(confined.run_config().host_cores, Some(1));
    }

    #[test]
    fn a_linux_peer_boot_replays_with_its_idle_choice() {
        let mut spec = BootSpec::linux_peer(
            LinuxIdle::Poll,
            8,
            Apic::Xapic,
            vec!["size=64".to_string()],
            120,
        );
        assert_eq!(
            spec.reproduce,
            "cargo xtask run --peer linux --linux-idle poll --smp 8 --timeout-s 120 size=64"
        );
        spec.limit_after_mark = Some(MarkLimit {
            mark: "loop".to_string(),
            limit_s: 20,
        });
        let run = spec.run_config();
        assert_eq!(run.limit_after_mark, spec.limit_after_mark);
        assert_eq!(run.timeout_s, Some(120));
        assert_eq!(
            BootSpec::linux_peer(LinuxIdle::Default, 2, Apic::Xapic, vec![], 60).reproduce,
            "cargo xtask run --peer linux --smp 2 --timeout-s 60"
        );
    }
}
