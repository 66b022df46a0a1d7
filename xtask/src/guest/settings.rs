//! The kernel settings the host chooses, as the command line and the
//! campaigns' JSON spell them: the build's cargo features, the wake policy,
//! the injected IPI faults, the pool, the backoff and the watchdog, each
//! mapped to vigil-proto's value (whose name it uses), and the checks of
//! kernel parameters given by hand.

use std::fmt;
use std::ops::RangeInclusive;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use vigil_proto::Policy;
use vigil_proto::boot_params;

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

/// A host-side enum for one of the kernel's named values: clap parses it,
/// serde writes it, and its name is the kernel's (vigil-proto's or the
/// wake crate's), reached through the value it selects. clap and serde
/// spell the variants in kebab-case; a test checks that this is the
/// kernel's spelling.
macro_rules! kernel_value {
    (
        $(#[$meta:meta])*
        pub enum $name:ident selects $kernel:ty, by $select:ident {
            $( $(#[$variant_meta:meta])* $variant:ident => $kernel_variant:ident, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum, Serialize,
            Deserialize,
        )]
        #[serde(rename_all = "kebab-case")]
        pub enum $name {
            $( $(#[$variant_meta])* $variant, )+
        }

        impl $name {
            /// The kernel's value it selects.
            pub fn $select(self) -> $kernel {
                match self {
                    $( Self::$variant => <$kernel>::$kernel_variant, )+
                }
            }

            /// The kernel's name for it (the parameter's value, and the
            /// name in the kernel's reports), defined where the value is.
            pub fn kernel_name(self) -> &'static str {
                self.$select().name()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.kernel_name())
            }
        }
    };
}

kernel_value! {
    /// Wake policies the kernel takes as `policy=` (in a normal build; an
    /// `idle-poll` build has its own and takes none).
    pub enum WakePolicy selects Policy, by policy {
        /// The Running/Halting/Halted/DontSleep state machine (the default).
        StateMachine => StateMachine,
        /// Every cross-core notification sends an IPI (correct, costly).
        AlwaysIpi => AlwaysIpi,
        /// The racy halting flag, a fault-injection fixture: loses wakeups.
        RacyFlag => RacyFlag,
    }
}

impl WakePolicy {
    /// Whether the policy is supposed to work (every failure is a bug).
    pub fn is_correct(self) -> bool {
        self != Self::RacyFlag
    }
}

kernel_value! {
    /// A fault injected into stress boots (`fault=`): the detectors must
    /// catch every boot.
    pub enum IpiFault selects boot_params::Fault, by fault {
        /// A waker claims a halted core and sends no wake IPI.
        DroppedIpi => DroppedIpi,
        /// A waker claims a halted core and sends its wake IPI to another
        /// core.
        MisdirectedIpi => MisdirectedIpi,
        /// One wake IPI is sent but left out of the guest's count: for the
        /// QEMU-trace oracle (`--ipi-oracle`) to catch.
        MiscountedIpi => MiscountedIpi,
        /// A fork-join round's stealable chunks are left queued with every
        /// core halted (its search wake dropped, its caller not helping):
        /// needs the stealing pool and at least 2 cores.
        StrandedSteal => StrandedSteal,
        /// From round 10 on, the first waker on a core other than core 0
        /// stops for good after its push: needs at least 3 cores.
        StalledWaker => StalledWaker,
        /// Core 1 skips the work-conserving rule while it runs a long
        /// pinned task and is chosen to search: boots the in-kernel test of
        /// stealable work beside a busy core (`mode=test`) instead of
        /// Laplace; needs the stealing pool and at least 3 cores.
        BusySearcher => BusySearcher,
    }
}

kernel_value! {
    /// How a fork-join round hands out its work (`pool=`).
    pub enum Pool selects boot_params::Pool, by pool {
        /// One job per core, each worker pinned to its core.
        Pinned => Pinned,
        /// Stealable chunks run by whichever cores are awake (the kernel's
        /// default).
        Steal => Steal,
    }
}

kernel_value! {
    /// How long an idle core polls its inbox before it halts (`backoff=`).
    pub enum Backoff selects boot_params::Backoff, by backoff {
        /// No poll: straight to the halt path.
        Off => Off,
        /// The kernel's adaptive poll (its default).
        Adaptive => Adaptive,
    }
}

/// The in-guest watchdog setting (`watchdog=off|MS`): the kernel's own
/// type, and the ranges and defaults the kernel accepts (vigil-proto's):
/// watchdog scan periods (ms), grid sides (`size=`), iteration counts
/// (`iterations=`).
pub use vigil_proto::boot_params::{
    CHUNKS_RANGE, DEFAULT_WATCHDOG_MS, GRID_SIZE_RANGE, ITERATIONS_RANGE, WATCHDOG_MS_RANGE,
    Watchdog,
};

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

/// Parses `--chunks`: in [`CHUNKS_RANGE`].
pub fn parse_chunks(text: &str) -> Result<u32, String> {
    let chunks = parse_count(text, "chunk count")?;
    in_range(chunks, &CHUNKS_RANGE, "--chunks")
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

/// A whole number, or an error naming `what` it should have been.
pub(crate) fn parse_count(text: &str, what: &str) -> Result<u32, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a {what} (expected a whole number)"))
}

/// `value` if `range` holds it, else an error naming `option`.
pub(crate) fn in_range<T: PartialOrd + std::fmt::Display>(
    value: T,
    range: &RangeInclusive<T>,
    option: &str,
) -> Result<T, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
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
    fn features_have_their_cargo_names() {
        assert_eq!(Feature::from_str("idle-poll", false), Ok(Feature::IdlePoll));
        assert!(Feature::from_str("idle_spin", false).is_err());
        assert_eq!(Feature::IdlePoll.cargo_name(), "idle-poll");
    }

    #[test]
    fn watchdog_is_off_or_milliseconds_in_range() {
        assert_eq!(parse_watchdog("off"), Ok(Watchdog::Off));
        assert_eq!(parse_watchdog("200"), Ok(Watchdog::Ms(200)));
        assert_eq!(Watchdog::Ms(200).value(), "200");
        assert_eq!(Watchdog::Off.value(), "off");
        assert_eq!(Watchdog::Ms(20).to_string(), "20 ms");
        assert_eq!(
            serde_json::to_string(&[Watchdog::Off, Watchdog::Ms(20)]).unwrap(),
            r#"["off",{"ms":20}]"#
        );
        assert!(parse_watchdog("0").unwrap_err().contains("1..=60000"));
        assert!(parse_watchdog("60001").is_err());
        assert!(
            parse_watchdog("on")
                .unwrap_err()
                .contains("`off` or milliseconds")
        );
    }

    #[test]
    fn grids_and_seeds_are_checked() {
        assert_eq!(parse_grid_size("64"), Ok(64));
        assert!(parse_grid_size("3").unwrap_err().contains("4..=4096"));
        assert!(parse_grid_size("4097").is_err());
        assert_eq!(parse_iterations("1"), Ok(1));
        assert!(parse_iterations("0").is_err());
        assert_eq!(parse_seed("0x10"), Ok(16));
        assert_eq!(parse_seed("17"), Ok(17));
        assert!(parse_seed("-1").is_err());
    }

    #[test]
    fn policies_have_kernel_names_and_only_racy_flag_is_wrong() {
        assert_eq!(WakePolicy::StateMachine.kernel_name(), "state-machine");
        assert_eq!(WakePolicy::AlwaysIpi.to_string(), "always-ipi");
        assert_eq!(
            WakePolicy::from_str("racy-flag", false),
            Ok(WakePolicy::RacyFlag)
        );
        assert!(WakePolicy::from_str("poll", false).is_err());
        assert!(WakePolicy::StateMachine.is_correct() && WakePolicy::AlwaysIpi.is_correct());
        assert!(!WakePolicy::RacyFlag.is_correct());
    }

    /// Every value of `T` is spelled by clap and by serde as the kernel
    /// spells it.
    fn spelled_as_the_kernel<T: ValueEnum + Serialize>(kernel_name: fn(&T) -> &'static str) {
        for value in T::value_variants() {
            let cli = value.to_possible_value().expect("not hidden");
            assert_eq!(cli.get_name(), kernel_name(value));
            assert_eq!(
                serde_json::to_string(value).unwrap(),
                format!("\"{}\"", kernel_name(value))
            );
        }
    }

    #[test]
    fn clap_value_names_are_the_kernels() {
        spelled_as_the_kernel::<WakePolicy>(|policy| policy.policy().name());
        spelled_as_the_kernel::<IpiFault>(|fault| fault.fault().name());
        spelled_as_the_kernel::<Pool>(|pool| pool.pool().name());
        spelled_as_the_kernel::<Backoff>(|backoff| backoff.backoff().name());
        assert_eq!(Watchdog::Off.value(), boot_params::OFF);
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
