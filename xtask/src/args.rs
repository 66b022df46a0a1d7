//! Validation of everything a user can pass: core counts, machines, cargo
//! features, timeouts and kernel boot parameters. Used both by the clap
//! parsers (so bad input exits 2 before anything is built) and by
//! [`crate::qemu::RunConfig::validate`] for library callers.

use std::fmt;
use std::ops::RangeInclusive;

use clap::ValueEnum;

/// Core counts QEMU is asked to emulate.
pub const SMP_RANGE: RangeInclusive<u32> = 1..=64;
/// Accepted `--timeout-s` values (one day is plenty for any boot).
pub const TIMEOUT_S_RANGE: RangeInclusive<u64> = 1..=86_400;

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

/// Cargo features of the kernel that xtask accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum)]
pub enum Feature {
    /// Idle cores spin on their inbox and never halt or send wake IPIs.
    IdlePoll,
}

impl Feature {
    /// The feature's name in `kernel/Cargo.toml`.
    pub fn cargo_name(self) -> &'static str {
        match self {
            Self::IdlePoll => "idle-poll",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cargo_name())
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

/// Parses `--timeout-s`: whole seconds in [`TIMEOUT_S_RANGE`].
pub fn parse_timeout_s(text: &str) -> Result<u64, String> {
    let timeout_s: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a timeout (expected whole seconds)"))?;
    if TIMEOUT_S_RANGE.contains(&timeout_s) {
        Ok(timeout_s)
    } else {
        Err(format!(
            "timeout of {timeout_s} s is out of range: --timeout-s must be in {}..={}",
            TIMEOUT_S_RANGE.start(),
            TIMEOUT_S_RANGE.end()
        ))
    }
}

/// Parses `--stall-s`: whole seconds without serial output after which a
/// guest counts as stuck, in [`TIMEOUT_S_RANGE`].
pub fn parse_stall_s(text: &str) -> Result<u64, String> {
    let stall_s: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a stall limit (expected whole seconds)"))?;
    if TIMEOUT_S_RANGE.contains(&stall_s) {
        Ok(stall_s)
    } else {
        Err(format!(
            "stall limit of {stall_s} s is out of range: --stall-s must be in {}..={}",
            TIMEOUT_S_RANGE.start(),
            TIMEOUT_S_RANGE.end()
        ))
    }
}

/// Checks the shape of one kernel boot parameter: `key=value` with a
/// non-empty key, no whitespace (parameters are space-separated on the
/// kernel side) and nothing but printable ASCII. What the keys and values
/// mean is the kernel's to validate.
pub fn parse_param(text: &str) -> Result<String, String> {
    let Some((key, _value)) = text.split_once('=') else {
        return Err(format!(
            "kernel parameter '{text}' is not of the form key=value"
        ));
    };
    if key.is_empty() {
        return Err(format!("kernel parameter '{text}' has an empty key"));
    }
    if let Some(bad) = text.chars().find(|c| !c.is_ascii_graphic()) {
        return Err(format!(
            "kernel parameter '{}' contains {:?}: only printable ASCII without spaces is allowed",
            text.escape_debug(),
            bad
        ));
    }
    Ok(text.to_string())
}

/// Joins validated parameters into the string the kernel reads from fw_cfg.
pub fn kernel_cmdline(params: &[String]) -> String {
    params.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smp_accepts_1_to_64() {
        assert_eq!(parse_smp("1"), Ok(1));
        assert_eq!(parse_smp("4"), Ok(4));
        assert_eq!(parse_smp("64"), Ok(64));
    }

    #[test]
    fn smp_rejects_0_300_and_non_numbers() {
        assert!(parse_smp("0").unwrap_err().contains("1..=64"));
        assert!(parse_smp("65").unwrap_err().contains("1..=64"));
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
    }

    #[test]
    fn params_need_key_equals_value() {
        assert_eq!(parse_param("workload=laplace").unwrap(), "workload=laplace");
        assert_eq!(parse_param("test=").unwrap(), "test=");
        assert_eq!(parse_param("a=b=c").unwrap(), "a=b=c");
        assert!(parse_param("laplace").unwrap_err().contains("key=value"));
        assert!(parse_param("=laplace").unwrap_err().contains("empty key"));
        assert!(parse_param("").is_err());
    }

    #[test]
    fn params_reject_whitespace_and_control_characters() {
        assert!(
            parse_param("workload=a b")
                .unwrap_err()
                .contains("printable ASCII")
        );
        assert!(parse_param("seed=1\n").is_err());
        assert!(parse_param("name=caf\u{e9}").is_err());
    }

    #[test]
    fn machines_and_features_have_their_cargo_and_qemu_names() {
        assert_eq!(Machine::Pc.qemu_name(), "pc");
        assert_eq!(Machine::Q35.to_string(), "q35");
        assert_eq!(Machine::from_str("q35", false), Ok(Machine::Q35));
        assert!(Machine::from_str("isapc", false).is_err());
        assert_eq!(Feature::from_str("idle-poll", false), Ok(Feature::IdlePoll));
        assert!(Feature::from_str("idle_spin", false).is_err());
        assert_eq!(Feature::IdlePoll.cargo_name(), "idle-poll");
    }

    #[test]
    fn cmdline_is_space_separated() {
        let params = vec!["mode=test".to_string(), "test=wake".to_string()];
        assert_eq!(kernel_cmdline(&params), "mode=test test=wake");
        assert_eq!(kernel_cmdline(&[]), "");
    }
}
