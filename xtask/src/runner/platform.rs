//! What the runner can boot: the emulator, QEMU's machine model, the
//! local APIC mode and the core counts each takes, and the limits on one
//! boot. Checked both by the clap parsers (bad input exits 2 before
//! anything is built) and by [`crate::runner::qemu::RunConfig::validate`]
//! for library callers.

use std::fmt;
use std::ops::RangeInclusive;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// Core counts QEMU is asked to emulate (the kernel's compiled maximum is
/// 256; above [`XAPIC_MAX_SMP`] only with `--apic x2apic`).
pub const SMP_RANGE: RangeInclusive<u32> = 1..=256;
/// Most cores booted in xAPIC mode: the range Vigil is tested in there
/// (xAPIC ids are 8 bits and 0xff is the broadcast id, so no xAPIC system
/// has more than 255; QEMU refuses APIC id 255 without x2APIC).
pub const XAPIC_MAX_SMP: u32 = 64;
/// Most vCPUs QEMU's `pc` (i440FX) machine takes; `q35` takes more.
pub const PC_MAX_SMP: u32 = 255;
/// Accepted `--timeout-s` values (one day is plenty for any boot).
pub const TIMEOUT_S_RANGE: RangeInclusive<u64> = 1..=86_400;

/// What boots the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Emulator {
    /// QEMU (TCG), the harness's machine: fw_cfg parameters, the exit device.
    #[default]
    Qemu,
    /// Bochs, an independent x86 implementation: BIOS image with its
    /// parameters inside, ACPI power-off, the verdict read from the serial
    /// port.
    Bochs,
}

/// QEMU machine model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Machine {
    /// i440FX + PIIX (QEMU's `pc`).
    #[default]
    Pc,
    /// Q35 + ICH9 (QEMU's `q35`).
    Q35,
}

impl Machine {
    /// The name QEMU's `-machine` takes.
    pub fn qemu_name(self) -> &'static str {
        match self {
            Self::Pc => "pc",
            Self::Q35 => "q35",
        }
    }
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.qemu_name())
    }
}

/// The local APIC interface the guest's CPU offers (`--apic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Apic {
    /// xAPIC only (MMIO): `-cpu qemu64`, TCG's baseline.
    #[default]
    Xapic,
    /// x2APIC too (MSRs), which the kernel then uses: `-cpu qemu64,+x2apic`
    /// (QEMU 10 or later under TCG).
    X2apic,
}

impl Apic {
    /// QEMU's `-cpu` value.
    pub fn qemu_cpu(self) -> &'static str {
        match self {
            Self::Xapic => "qemu64",
            Self::X2apic => "qemu64,+x2apic",
        }
    }

    /// How the kernel's boot line names the mode it runs in.
    pub fn boot_line_mode(self) -> &'static str {
        match self {
            Self::Xapic => "xAPIC mode",
            Self::X2apic => "x2APIC mode",
        }
    }
}

impl fmt::Display for Apic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Xapic => "xapic",
            Self::X2apic => "x2apic",
        })
    }
}

/// Parses `--smp`: an integer in [`SMP_RANGE`].
pub fn parse_smp(text: &str) -> Result<u32, String> {
    let smp: u32 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a core count (expected an integer)"))?;
    check_smp(smp)
}

/// Checks a core count against [`SMP_RANGE`].
pub fn check_smp(smp: u32) -> Result<u32, String> {
    if SMP_RANGE.contains(&smp) {
        Ok(smp)
    } else {
        Err(format!(
            "{smp} cores is out of range: --smp must be in {}..={}",
            SMP_RANGE.start(),
            SMP_RANGE.end()
        ))
    }
}

/// Checks that `smp` cores can boot on `machine` with `apic`: more than
/// [`XAPIC_MAX_SMP`] need x2APIC, more than [`PC_MAX_SMP`] need `q35`.
pub fn check_platform(smp: u32, machine: Machine, apic: Apic) -> Result<(), String> {
    if apic == Apic::Xapic && smp > XAPIC_MAX_SMP {
        return Err(format!(
            "{smp} cores need --apic x2apic: in xAPIC mode Vigil boots 1..={XAPIC_MAX_SMP} cores (xAPIC ids are 8 bits; QEMU refuses APIC id 255 without x2APIC)"
        ));
    }
    if machine == Machine::Pc && smp > PC_MAX_SMP {
        return Err(format!(
            "{smp} cores need --machine q35: QEMU's pc machine takes at most {PC_MAX_SMP} vCPUs"
        ));
    }
    Ok(())
}

/// Parses `--timeout-s`: whole seconds in [`TIMEOUT_S_RANGE`].
pub fn parse_timeout_s(text: &str) -> Result<u64, String> {
    parse_seconds(text, "timeout", "--timeout-s")
}

/// Parses `--stall-s`: whole seconds without serial output after which a
/// guest counts as stuck, in [`TIMEOUT_S_RANGE`].
pub fn parse_stall_s(text: &str) -> Result<u64, String> {
    parse_seconds(text, "stall limit", "--stall-s")
}

/// Whole seconds in [`TIMEOUT_S_RANGE`], or an error naming `what` they
/// are and the `option` that takes them.
fn parse_seconds(text: &str, what: &str, option: &str) -> Result<u64, String> {
    let seconds: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a {what} (expected whole seconds)"))?;
    if TIMEOUT_S_RANGE.contains(&seconds) {
        Ok(seconds)
    } else {
        Err(format!(
            "{what} of {seconds} s is out of range: {option} must be in {}..={}",
            TIMEOUT_S_RANGE.start(),
            TIMEOUT_S_RANGE.end()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smp_accepts_1_to_256() {
        assert_eq!(parse_smp("1"), Ok(1));
        assert_eq!(parse_smp("4"), Ok(4));
        assert_eq!(parse_smp("64"), Ok(64));
        assert_eq!(parse_smp("256"), Ok(256));
    }

    #[test]
    fn many_cores_need_x2apic_and_q35() {
        assert_eq!(check_platform(64, Machine::Pc, Apic::Xapic), Ok(()));
        assert_eq!(check_platform(64, Machine::Q35, Apic::Xapic), Ok(()));
        assert!(
            check_platform(200, Machine::Q35, Apic::Xapic)
                .unwrap_err()
                .contains("need --apic x2apic")
        );
        assert!(
            check_platform(65, Machine::Pc, Apic::Xapic)
                .unwrap_err()
                .contains("need --apic x2apic")
        );
        assert_eq!(check_platform(255, Machine::Pc, Apic::X2apic), Ok(()));
        assert!(
            check_platform(256, Machine::Pc, Apic::X2apic)
                .unwrap_err()
                .contains("need --machine q35")
        );
        assert_eq!(check_platform(256, Machine::Q35, Apic::X2apic), Ok(()));
    }

    #[test]
    fn smp_rejects_0_300_and_non_numbers() {
        assert!(parse_smp("0").unwrap_err().contains("1..=256"));
        assert!(parse_smp("257").unwrap_err().contains("1..=256"));
        assert!(parse_smp("300").unwrap_err().contains("out of range"));
        assert!(parse_smp("-1").unwrap_err().contains("not a core count"));
        assert!(parse_smp("four").unwrap_err().contains("not a core count"));
        assert!(parse_smp("").is_err());
    }

    #[test]
    fn timeout_must_be_positive_and_bounded() {
        assert_eq!(parse_timeout_s("60"), Ok(60));
        assert!(parse_timeout_s("0").unwrap_err().contains("out of range"));
        assert!(parse_timeout_s("86401").is_err());
        assert!(
            parse_timeout_s("1.5")
                .unwrap_err()
                .contains("whole seconds")
        );
        assert_eq!(parse_stall_s("20"), Ok(20));
        assert!(
            parse_stall_s("0")
                .unwrap_err()
                .starts_with("stall limit of 0 s is out of range: --stall-s")
        );
    }

    #[test]
    fn machines_have_their_qemu_names() {
        assert_eq!(Machine::Pc.qemu_name(), "pc");
        assert_eq!(Machine::Q35.to_string(), "q35");
        assert_eq!(Machine::from_str("q35", false), Ok(Machine::Q35));
        assert!(Machine::from_str("isapc", false).is_err());
    }
}
