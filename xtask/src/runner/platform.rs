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

/// The architecture the kernel is built for and booted on (`--arch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, ValueEnum, Serialize, Deserialize)]
pub enum Arch {
    /// x86_64: QEMU's `pc`/`q35` (`qemu-system-x86_64`) or Bochs, booted
    /// from a BIOS or UEFI disk image.
    #[default]
    #[value(name = "x86_64")]
    #[serde(rename = "x86_64")]
    X86_64,
    /// AArch64: QEMU's `virt` with a GICv3 (`qemu-system-aarch64`), the
    /// kernel's ELF booted directly at EL1 (`-kernel`).
    #[value(name = "aarch64")]
    #[serde(rename = "aarch64")]
    Aarch64,
}

impl Arch {
    /// The kernel's target triple.
    pub fn kernel_target(self) -> &'static str {
        match self {
            Self::X86_64 => "x86_64-unknown-none",
            Self::Aarch64 => "aarch64-unknown-none-softfloat",
        }
    }

    /// The QEMU binary that emulates it.
    pub fn qemu_binary(self) -> &'static str {
        match self {
            Self::X86_64 => "qemu-system-x86_64",
            Self::Aarch64 => "qemu-system-aarch64",
        }
    }

    /// The Debian package of [`Self::qemu_binary`].
    pub fn qemu_package(self) -> &'static str {
        match self {
            Self::X86_64 => "qemu-system-x86",
            Self::Aarch64 => "qemu-system-arm",
        }
    }

    /// The name `--arch` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::X86_64 => "x86_64",
            Self::Aarch64 => "aarch64",
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Checks the options that only one architecture has: on AArch64 there is
/// one machine (`virt`), no APIC, no disk image and no Bochs.
pub fn check_arch(
    arch: Arch,
    machine: Machine,
    apic: Apic,
    uefi: bool,
    emulator: Emulator,
) -> Result<(), String> {
    if arch == Arch::X86_64 {
        return Ok(());
    }
    if machine != Machine::Pc {
        return Err(format!(
            "--machine {machine} is an x86_64 machine: --arch aarch64 boots QEMU's virt (GICv3)"
        ));
    }
    if apic != Apic::Xapic {
        return Err("--apic is x86_64's local APIC mode: --arch aarch64 has a GICv3".to_string());
    }
    if uefi {
        return Err(
            "--uefi boots x86_64's UEFI image: --arch aarch64 boots the kernel's ELF directly"
                .to_string(),
        );
    }
    if emulator != Emulator::Qemu {
        return Err(
            "--emulator bochs is an x86 emulator: --arch aarch64 runs under QEMU only".to_string(),
        );
    }
    Ok(())
}

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
    fn aarch64_takes_no_x86_options() {
        let ok = |arch, machine, apic, uefi, emulator| {
            check_arch(arch, machine, apic, uefi, emulator).is_ok()
        };
        assert!(ok(
            Arch::Aarch64,
            Machine::Pc,
            Apic::Xapic,
            false,
            Emulator::Qemu
        ));
        assert!(ok(
            Arch::X86_64,
            Machine::Q35,
            Apic::X2apic,
            true,
            Emulator::Bochs
        ));
        assert!(!ok(
            Arch::Aarch64,
            Machine::Q35,
            Apic::Xapic,
            false,
            Emulator::Qemu
        ));
        assert!(!ok(
            Arch::Aarch64,
            Machine::Pc,
            Apic::X2apic,
            false,
            Emulator::Qemu
        ));
        assert!(!ok(
            Arch::Aarch64,
            Machine::Pc,
            Apic::Xapic,
            true,
            Emulator::Qemu
        ));
        assert!(
            check_arch(
                Arch::Aarch64,
                Machine::Pc,
                Apic::Xapic,
                false,
                Emulator::Bochs
            )
            .unwrap_err()
            .contains("QEMU only")
        );
        assert_eq!(Arch::from_str("aarch64", false), Ok(Arch::Aarch64));
        assert_eq!(Arch::from_str("x86_64", false), Ok(Arch::X86_64));
        assert!(Arch::from_str("arm", false).is_err());
        assert_eq!(Arch::Aarch64.qemu_binary(), "qemu-system-aarch64");
    }

    #[test]
    fn machines_have_their_qemu_names() {
        assert_eq!(Machine::Pc.qemu_name(), "pc");
        assert_eq!(Machine::Q35.to_string(), "q35");
        assert_eq!(Machine::from_str("q35", false), Ok(Machine::Q35));
        assert!(Machine::from_str("isapc", false).is_err());
    }
}
