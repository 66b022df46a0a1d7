//! Validation of everything a user can pass: core counts, machines, cargo
//! features, timeouts and kernel boot parameters. Used both by the clap
//! parsers (so bad input exits 2 before anything is built) and by
//! [`crate::runner::qemu::RunConfig::validate`] for library callers.

use std::fmt;
use std::ops::RangeInclusive;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use vigil_proto::Policy;
use vigil_proto::boot_params;

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

/// Wake policies the kernel takes as `policy=` (in a normal build; an
/// `idle-poll` build has its own and takes none).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum WakePolicy {
    /// The Running/Halting/Halted/DontSleep state machine (the default).
    StateMachine,
    /// Every cross-core notification sends an IPI (correct, costly).
    AlwaysIpi,
    /// The seed-004 bug, a fault-injection fixture: loses wakeups.
    RacyFlag,
}

impl WakePolicy {
    /// The wake crate's policy it selects.
    pub fn policy(self) -> Policy {
        match self {
            Self::StateMachine => Policy::StateMachine,
            Self::AlwaysIpi => Policy::AlwaysIpi,
            Self::RacyFlag => Policy::RacyFlag,
        }
    }

    /// The kernel's name for it (`policy=` value, `VIGIL-STATS` policy):
    /// the wake crate's, defined there once.
    pub fn kernel_name(self) -> &'static str {
        self.policy().name()
    }

    /// Whether the policy is supposed to work (every failure is a bug).
    pub fn is_correct(self) -> bool {
        self != Self::RacyFlag
    }
}

impl fmt::Display for WakePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kernel_name())
    }
}

/// An IPI fault injected into stress boots (`fault=`): the detectors must
/// catch every boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum IpiFault {
    /// A waker claims a halted core and sends no wake IPI.
    DroppedIpi,
    /// A waker claims a halted core and sends its wake IPI to another core.
    MisdirectedIpi,
    /// One wake IPI is sent but left out of the guest's count: for the
    /// QEMU-trace oracle (`--ipi-oracle`) to catch.
    MiscountedIpi,
    /// A fork-join round's stealable chunks are left queued with every
    /// core halted (its search wake dropped, its caller not helping):
    /// needs the stealing pool and at least 2 cores.
    StrandedSteal,
}

impl IpiFault {
    /// The kernel's fault it selects.
    pub fn fault(self) -> boot_params::Fault {
        match self {
            Self::DroppedIpi => boot_params::Fault::DroppedIpi,
            Self::MisdirectedIpi => boot_params::Fault::MisdirectedIpi,
            Self::MiscountedIpi => boot_params::Fault::MiscountedIpi,
            Self::StrandedSteal => boot_params::Fault::StrandedSteal,
        }
    }

    /// The kernel's `fault=` value (vigil-proto's name).
    pub fn kernel_name(self) -> &'static str {
        self.fault().name()
    }
}

impl fmt::Display for IpiFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kernel_name())
    }
}

/// How a fork-join round hands out its work (`pool=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Pool {
    /// One job per core, each worker pinned to its core.
    Pinned,
    /// Stealable chunks run by whichever cores are awake (the kernel's
    /// default).
    Steal,
}

impl Pool {
    /// The kernel's pool it selects.
    pub fn pool(self) -> boot_params::Pool {
        match self {
            Self::Pinned => boot_params::Pool::Pinned,
            Self::Steal => boot_params::Pool::Steal,
        }
    }

    /// The kernel's name for it (vigil-proto's).
    pub fn kernel_name(self) -> &'static str {
        self.pool().name()
    }
}

impl fmt::Display for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kernel_name())
    }
}

/// How long an idle core polls its inbox before it halts (`backoff=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Backoff {
    /// No poll: straight to the halt path.
    Off,
    /// The kernel's adaptive poll (its default).
    Adaptive,
}

impl Backoff {
    /// The kernel's named `backoff=` value it selects.
    pub fn backoff(self) -> boot_params::Backoff {
        match self {
            Self::Off => boot_params::Backoff::Off,
            Self::Adaptive => boot_params::Backoff::Adaptive,
        }
    }

    /// The kernel's name for it (vigil-proto's).
    pub fn kernel_name(self) -> &'static str {
        self.backoff().name()
    }
}

impl fmt::Display for Backoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kernel_name())
    }
}

/// The in-guest watchdog setting (`watchdog=off|MS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Watchdog {
    /// No watchdog: cores are truly tickless; a lost wakeup hangs the guest.
    Off,
    /// Lost-wakeup checks on: every core at its halt, and the watchdog
    /// core's scan (probes) every this many ms.
    Ms(u32),
}

/// What the kernel accepts and defaults to (vigil-proto's): watchdog scan
/// periods (ms), grid sides (`size=`), iteration counts (`iterations=`).
pub use vigil_proto::boot_params::{
    DEFAULT_WATCHDOG_MS, GRID_SIZE_RANGE, ITERATIONS_RANGE, WATCHDOG_MS_RANGE,
};

impl Watchdog {
    /// The kernel's watchdog setting it selects.
    pub fn setting(self) -> boot_params::Watchdog {
        match self {
            Self::Off => boot_params::Watchdog::Off,
            Self::Ms(ms) => boot_params::Watchdog::Ms(ms),
        }
    }

    /// The `watchdog=` value (vigil-proto's spelling).
    pub fn param_value(self) -> String {
        self.setting().value()
    }
}

impl fmt::Display for Watchdog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Off => f.write_str(vigil_proto::boot_params::OFF),
            Self::Ms(ms) => write!(f, "{ms} ms"),
        }
    }
}

/// Parses `--watchdog-ms`: `off` or milliseconds in [`WATCHDOG_MS_RANGE`].
pub fn parse_watchdog(text: &str) -> Result<Watchdog, String> {
    let text = text.trim();
    if text == boot_params::OFF {
        return Ok(Watchdog::Off);
    }
    let ms: u32 = text.parse().map_err(|_| {
        format!("'{text}' is not a watchdog setting (expected `off` or milliseconds)")
    })?;
    in_range(ms, &WATCHDOG_MS_RANGE, "--watchdog-ms").map(Watchdog::Ms)
}

/// Parses `--size`: a grid side in [`GRID_SIZE_RANGE`].
pub fn parse_grid_size(text: &str) -> Result<u32, String> {
    let size = parse_count(text, "grid side")?;
    in_range(size, &GRID_SIZE_RANGE, "--size")
}

/// Parses `--iterations`: in [`ITERATIONS_RANGE`].
pub fn parse_iterations(text: &str) -> Result<u32, String> {
    let iterations = parse_count(text, "iteration count")?;
    in_range(iterations, &ITERATIONS_RANGE, "--iterations")
}

/// Parses `--runs`: at least one boot (at most 100 000).
pub fn parse_runs(text: &str) -> Result<u32, String> {
    let runs = parse_count(text, "run count")?;
    in_range(runs, &(1..=100_000), "--runs")
}

/// Parses `--jobs`: QEMUs at once, 1..=64.
pub fn parse_jobs(text: &str) -> Result<usize, String> {
    let jobs = parse_count(text, "job count")?;
    in_range(jobs, &(1..=64), "--jobs").map(|jobs| jobs as usize)
}

/// Parses `--seed`: decimal or `0x` hex u64.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("'{text}' is not a seed (expected a decimal or 0x-hex u64)"))
}

fn parse_count(text: &str, what: &str) -> Result<u32, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a {what} (expected a whole number)"))
}

fn in_range(value: u32, range: &RangeInclusive<u32>, option: &str) -> Result<u32, String> {
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "{value} is out of range: {option} must be in {}..={}",
            range.start(),
            range.end()
        ))
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
    fn watchdog_is_off_or_milliseconds_in_range() {
        assert_eq!(parse_watchdog("off"), Ok(Watchdog::Off));
        assert_eq!(parse_watchdog("200"), Ok(Watchdog::Ms(200)));
        assert_eq!(Watchdog::Ms(200).param_value(), "200");
        assert_eq!(Watchdog::Off.param_value(), "off");
        assert!(parse_watchdog("0").unwrap_err().contains("1..=60000"));
        assert!(parse_watchdog("60001").is_err());
        assert!(
            parse_watchdog("on")
                .unwrap_err()
                .contains("`off` or milliseconds")
        );
    }

    #[test]
    fn grid_runs_jobs_and_seeds_are_checked() {
        assert_eq!(parse_grid_size("64"), Ok(64));
        assert!(parse_grid_size("3").unwrap_err().contains("4..=4096"));
        assert!(parse_grid_size("4097").is_err());
        assert_eq!(parse_iterations("1"), Ok(1));
        assert!(parse_iterations("0").is_err());
        assert_eq!(parse_runs("5"), Ok(5));
        assert!(parse_runs("0").unwrap_err().contains("--runs"));
        assert_eq!(parse_jobs("2"), Ok(2));
        assert!(parse_jobs("0").is_err());
        assert_eq!(parse_seed("0x10"), Ok(16));
        assert_eq!(parse_seed("17"), Ok(17));
        assert!(parse_seed("-1").is_err());
    }

    #[test]
    fn policies_have_kernel_names_and_only_racy_flag_is_wrong() {
        assert_eq!(WakePolicy::StateMachine.kernel_name(), "state-machine");
        // The CLI's and the JSON's spellings (derived from the variant
        // names) are the wake crate's, for every policy.
        for policy in WakePolicy::value_variants() {
            let cli = policy.to_possible_value().expect("not hidden");
            assert_eq!(cli.get_name(), policy.kernel_name());
            assert_eq!(
                serde_json::to_string(policy).unwrap(),
                format!("\"{}\"", policy.kernel_name())
            );
        }
        assert_eq!(WakePolicy::AlwaysIpi.to_string(), "always-ipi");
        assert_eq!(
            WakePolicy::from_str("racy-flag", false),
            Ok(WakePolicy::RacyFlag)
        );
        assert!(WakePolicy::from_str("poll", false).is_err());
        assert!(WakePolicy::StateMachine.is_correct() && WakePolicy::AlwaysIpi.is_correct());
        assert!(!WakePolicy::RacyFlag.is_correct());
    }

    #[test]
    fn clap_value_names_are_the_kernels() {
        for fault in IpiFault::value_variants() {
            let cli = fault.to_possible_value().expect("not hidden");
            assert_eq!(cli.get_name(), fault.fault().name());
            assert_eq!(
                serde_json::to_string(fault).unwrap(),
                format!("\"{}\"", fault.kernel_name())
            );
        }
        for pool in Pool::value_variants() {
            let cli = pool.to_possible_value().expect("not hidden");
            assert_eq!(cli.get_name(), pool.pool().name());
            assert_eq!(
                serde_json::to_string(pool).unwrap(),
                format!("\"{}\"", pool.kernel_name())
            );
        }
        for backoff in Backoff::value_variants() {
            let cli = backoff.to_possible_value().expect("not hidden");
            assert_eq!(cli.get_name(), backoff.backoff().name());
            assert_eq!(
                serde_json::to_string(backoff).unwrap(),
                format!("\"{}\"", backoff.kernel_name())
            );
        }
        assert_eq!(Watchdog::Off.param_value(), boot_params::OFF);
        assert_eq!(
            parse_watchdog(&DEFAULT_WATCHDOG_MS.to_string()),
            Ok(Watchdog::Ms(DEFAULT_WATCHDOG_MS))
        );
    }

    #[test]
    fn cmdline_is_space_separated() {
        let params = vec!["mode=test".to_string(), "test=wake".to_string()];
        assert_eq!(kernel_cmdline(&params), "mode=test test=wake");
        assert_eq!(kernel_cmdline(&[]), "");
    }
}
