//! What one campaign boot produced, classified: the record stress and
//! bench both keep (and write to their JSON), built the one way from the
//! runner's outcome.

use serde::{Deserialize, Serialize};

use crate::campaign::boot_spec::BootSpec;
use crate::campaign::run_class::{RunClass, classify, explain};
use crate::diagnosis::ipi_oracle::IpiOracleCheck;
use crate::diagnosis::stuck_cores::GuestExamination;
use crate::error::Result;
use crate::guest::laplace_check::ChecksumCheck;
use crate::guest::run_output::{GridResult, LostWakeups};
use crate::guest::vigil_stats::VigilStats;
use crate::runner::bochs;
use crate::runner::kernel_build::{
    KernelArtifacts, bios_image_with_params, fnv1a_64, image_elf_fingerprint,
};
use crate::runner::qemu::{self, Guest, LineMark, RunOutcome};

/// One boot, done.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BootRecord {
    /// What it amounts to.
    pub class: RunClass,
    /// Why (for failures), or the verdict's reason.
    pub reason: String,
    /// The runner's verdict (its name).
    pub verdict: String,
    /// Wall time of the boot, from spawning QEMU to its end, s.
    pub wall_s: f64,
    /// The first `laplace:`/`floor:` line.
    pub result: Option<GridResult>,
    /// Host checks of every result line.
    pub checksum_checks: Vec<ChecksumCheck>,
    /// What the in-guest watchdog reported.
    pub lost_wakeups: LostWakeups,
    /// The `VIGIL-STATS` line.
    pub stats: Option<VigilStats>,
    /// Why `stats` is missing, when a line was there but did not parse.
    pub stats_error: Option<String>,
    /// The host's examination of a stuck guest.
    pub examination: Option<GuestExamination>,
    /// QEMU's count of wake IPIs against the guest's (with the oracle on).
    pub ipi_oracle: Option<IpiOracleCheck>,
    /// The [`BootSpec::marks`] lines, when each appeared.
    pub marked_lines: Vec<LineMark>,
    /// The QEMU command line.
    pub qemu_command: String,
    /// Everything the kernel printed.
    pub serial: String,
    /// Everything QEMU printed to stderr.
    pub qemu_stderr: String,
    /// Under Bochs: the FNV-1a hash of the serial port's exact bytes
    /// (`serial` is their lossy UTF-8), `0x` and 16 hex digits.
    #[serde(default)]
    pub serial_fnv1a: Option<String>,
    /// Under Bochs: the serial port's length in bytes.
    #[serde(default)]
    pub serial_bytes: Option<usize>,
    /// Under Bochs: the FNV-1a hash of the kernel ELF the image carried
    /// (a replay on another build says so).
    #[serde(default)]
    pub kernel_fingerprint: Option<String>,
    /// Under Bochs: the `bochsrc` it ran with.
    #[serde(default)]
    pub bochsrc: Option<String>,
}

/// The FNV-1a hash of a serial output's bytes, as a record keeps it.
pub fn serial_fingerprint(bytes: &[u8]) -> String {
    format!("{:#018x}", fnv1a_64(bytes))
}

impl BootRecord {
    /// Boots `spec` on `kernel` and classifies what happened. Errors are
    /// the runner's: QEMU could not be run at all.
    pub fn boot(spec: &BootSpec, kernel: &KernelArtifacts) -> Result<Self> {
        Self::boot_guest(spec, Guest::Vigil(kernel))
    }

    /// Boots `spec` on `guest` (Vigil's kernel, or the Linux peer: a Bochs
    /// spec boots Vigil's only) and classifies what happened.
    pub fn boot_guest(spec: &BootSpec, guest: Guest<'_>) -> Result<Self> {
        let kernel = match (spec.bochs_config(), guest) {
            (None, _) => return Ok(Self::of(spec, qemu::run_guest(&spec.run_config(), guest)?)),
            (Some(_), Guest::Vigil(kernel)) => kernel,
            (Some(_), Guest::LinuxPeer(..)) => {
                return Err(crate::error::XtaskError::usage(
                    "the Linux peer boots under QEMU only",
                ));
            }
        };
        let config = spec.bochs_config().expect("matched above");
        let image = bios_image_with_params(kernel, &spec.params)?;
        let outcome = bochs::run(&config, &image)?;
        let mut record = Self::of(
            spec,
            outcome.run_outcome(&config, bochs::command_line().to_string()),
        );
        record.serial_fnv1a = Some(serial_fingerprint(&outcome.serial_bytes));
        record.serial_bytes = Some(outcome.serial_bytes.len());
        record.kernel_fingerprint = Some(image_elf_fingerprint(kernel)?);
        record.bochsrc = Some(outcome.bochsrc);
        Ok(record)
    }

    /// The record of `outcome`, a boot of `spec`.
    pub fn of(spec: &BootSpec, outcome: RunOutcome) -> Self {
        let lost_wakeups = LostWakeups::parse(&outcome.serial);
        let class = classify(&outcome, &lost_wakeups, spec);
        let (stats, stats_error) = match VigilStats::find_in(&outcome.serial) {
            Some(Ok(stats)) => (Some(stats), None),
            Some(Err(why)) => (None, Some(why)),
            None => (None, None),
        };
        Self {
            reason: explain(&outcome, &lost_wakeups, class, spec),
            class,
            verdict: outcome.verdict.to_string(),
            wall_s: outcome.elapsed.as_secs_f64(),
            result: outcome.checksum_checks.first().map(|check| check.guest),
            checksum_checks: outcome.checksum_checks,
            lost_wakeups,
            stats,
            stats_error,
            examination: outcome.examination,
            ipi_oracle: outcome.ipi_oracle,
            marked_lines: outcome.marks,
            qemu_command: outcome.command_line,
            serial: outcome.serial,
            qemu_stderr: outcome.qemu_stderr,
            serial_fnv1a: None,
            serial_bytes: None,
            kernel_fingerprint: None,
            bochsrc: None,
        }
    }

    /// A boot with nothing from QEMU: no result, statistics, examination
    /// or output (one that could not start, or a test's stand-in).
    pub fn without_output(class: RunClass, reason: String, verdict: &str) -> Self {
        Self {
            class,
            reason,
            verdict: verdict.to_string(),
            wall_s: 0.0,
            result: None,
            checksum_checks: Vec::new(),
            lost_wakeups: LostWakeups::default(),
            stats: None,
            stats_error: None,
            examination: None,
            ipi_oracle: None,
            marked_lines: Vec::new(),
            qemu_command: String::new(),
            serial: String::new(),
            qemu_stderr: String::new(),
            serial_fnv1a: None,
            serial_bytes: None,
            kernel_fingerprint: None,
            bochsrc: None,
        }
    }

    /// The first timing of `mark`.
    pub fn mark(&self, mark: &str) -> Option<&LineMark> {
        self.marked_lines
            .iter()
            .find(|line_mark| line_mark.mark == mark)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::runner::kernel_build::BuildConfig;
    use crate::runner::platform::Apic;

    fn keys(value: &impl Serialize) -> BTreeSet<String> {
        match serde_json::to_value(value).unwrap() {
            serde_json::Value::Object(map) => map.keys().cloned().collect(),
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn a_spec_and_its_record_are_written_side_by_side_without_a_shared_key() {
        // Stress and bench flatten both into one JSON object per boot: a
        // key in both would be written twice and make the file unreadable
        // (serde refuses a duplicate field).
        let spec = BootSpec::new(&BuildConfig::default(), 2, Apic::Xapic, vec![], 60, false);
        let record = BootRecord::without_output(RunClass::Passed, String::new(), "success");
        let shared: Vec<String> = keys(&spec).intersection(&keys(&record)).cloned().collect();
        assert!(shared.is_empty(), "keys in both: {shared:?}");
    }
}
