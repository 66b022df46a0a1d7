//! Kernel boot parameters.
//!
//! Carrier: QEMU fw_cfg file `opt/vigil/cmdline` (xtask passes
//! `-fw_cfg name=opt/vigil/cmdline,string=...`), so one image runs any
//! configuration without a rebuild. Format: space-separated `key=value`
//! tokens. Every key may appear at most once; an unknown key, a token without
//! `=`, or a value out of range is an error that the kernel prints and exits
//! on with [`ExitCode::BadParameter`](crate::exit::ExitCode::BadParameter).

use crate::sched::fork_join::{Pool, Release};
use alloc::format;
use alloc::string::{String, ToString};
use core::fmt;
use vigil_wake::{BackoffMode, Policy};

/// Name of the fw_cfg file that carries the parameters.
pub use vigil_proto::boot_params::FW_CFG_FILE;

/// What the kernel does after boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Run the selected workload and print statistics.
    Run,
    /// Run the in-kernel test suite.
    Test,
}

/// Fault injected on purpose, so the harness can prove it detects each kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// No fault.
    None,
    /// `panic!` on the bootstrap core.
    Panic,
    /// Load an empty IDT and raise an exception: a triple fault.
    Triple,
    /// Stop making progress forever (interrupts off, halted).
    Hang,
    /// Touch an unmapped guard page.
    GuardPageRead,
    /// Overflow core 1's stack into its guard page.
    ApStackOverflow,
    /// Drop one fork-join release wake (round 10, the last worker): a task
    /// wake lost above the wake protocol, for the stuck-round watch to find.
    DroppedTaskWake,
    /// At a seeded round, a waker claims a halted core and sends no IPI.
    DroppedIpi,
    /// At a seeded round, a waker claims a halted core and sends the IPI to
    /// another core.
    MisdirectedIpi,
    /// At a seeded round, one wake IPI is sent but left out of the guest's
    /// per-destination count (for the host's QEMU-trace oracle to catch).
    MiscountedIpi,
    /// `pool=steal`: in one round (from round 10, when every other core is
    /// registered idle), the publisher drops the search wake it chose and
    /// parks without taking a chunk: stealable work stranded with every core
    /// halted, for the strand watch and the host to find.
    StrandedSteal,
}

/// The workload run in [`Mode::Run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Boot, report, exit.
    None,
    /// Jacobi iteration on a `size`×`size` grid, `iterations` fork-join
    /// rounds over every core.
    Laplace,
    /// Ping-pong between tasks on cores 0 and 1 (`iterations` round trips).
    PingPong,
    /// Laplace with bare IPI-released workers: no tasks or protocol on the
    /// critical path (the platform's floor).
    Floor,
    /// Every core idles for `idle_ms`.
    Idle,
}

impl Workload {
    /// Name on the command line and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Workload::None => "none",
            Workload::Laplace => "laplace",
            Workload::PingPong => "ping-pong",
            Workload::Floor => "floor",
            Workload::Idle => "idle",
        }
    }
}

/// The policies `policy=` takes: the wake crate's, less `poll` (what an
/// `idle-poll` build runs, never a parameter). Their names are the wake
/// crate's (`Policy::name`), defined there once.
pub const POLICY_PARAMS: [Policy; 3] = [Policy::StateMachine, Policy::AlwaysIpi, Policy::RacyFlag];

/// All boot parameters, with their defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootParams {
    /// `mode=run|test` (default `run`).
    pub mode: Mode,
    /// `test=SUBSTRING`: run only tests whose name contains it.
    pub test_filter: Option<String>,
    /// `fault=none|panic|triple-fault|hang|page-fault|ap-stack-overflow|dropped-task-wake|dropped-ipi|misdirected-ipi|miscounted-ipi|stranded-steal`
    /// (default `none`).
    pub fault: Fault,
    /// `workload=laplace|floor|idle|none|ping-pong` (default `laplace`).
    pub workload: Workload,
    /// `size=N`: grid side for grid workloads (4..=4096, default 64).
    pub size: u32,
    /// `iterations=N` (1..=10_000_000, default 1000).
    pub iterations: u32,
    /// `policy=state-machine|always-ipi|racy-flag` (default `state-machine`).
    pub policy: Policy,
    /// Whether `policy=` was given explicitly.
    pub policy_given: bool,
    /// `seed=N` (decimal or 0x-hex u64; default 1).
    pub seed: u64,
    /// `chaos=on|off`: seeded random delays at the protocol's critical
    /// points and rare holds of the idle window (`chaos.rs`; default off).
    pub chaos: bool,
    /// `backoff=off|adaptive|US`: how long an idle core polls its inbox
    /// before the halt path (US in 1..=100000; default `adaptive`).
    pub backoff: BackoffMode,
    /// `watchdog=off|MS`: the lost-wakeup watchdog's scan period in ms
    /// (1..=60000, default 20; `off` turns every in-guest lost-wakeup check
    /// off and keeps cores truly tickless).
    pub watchdog_ms: u32,
    /// `idle_ms=N`: how long `workload=idle` idles (1..=600000, default 3000).
    pub idle_ms: u32,
    /// `release=tree|flat`: how a fork-join round wakes its workers
    /// (default `tree`).
    pub release: Release,
    /// `pool=pinned|steal`: how a fork-join round hands out its work (one
    /// pinned job per core, or stealable chunks run by whichever cores are
    /// awake). `None`: by core count ([`Pool::default_for`]).
    pub pool: Option<Pool>,
}

impl Default for BootParams {
    fn default() -> Self {
        Self {
            mode: Mode::Run,
            test_filter: None,
            fault: Fault::None,
            workload: Workload::Laplace,
            size: 64,
            iterations: 1000,
            policy: Policy::StateMachine,
            policy_given: false,
            seed: 1,
            chaos: false,
            backoff: BackoffMode::Adaptive,
            watchdog_ms: crate::sched::watchdog::DEFAULT_WATCHDOG_MS,
            idle_ms: 3000,
            release: Release::Tree,
            pool: None,
        }
    }
}

/// Why the parameter line was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamError {
    /// A token has no `=`.
    MissingEquals(String),
    /// A key nobody knows.
    UnknownKey(String),
    /// A key given twice.
    Duplicate(String),
    /// A value outside what the key accepts.
    BadValue {
        /// The key.
        key: &'static str,
        /// The rejected value.
        value: String,
        /// What the key accepts.
        expected: String,
    },
}

const KEYS: [&str; 14] = [
    "mode",
    "test",
    "fault",
    "workload",
    "size",
    "iterations",
    "policy",
    "seed",
    "chaos",
    "backoff",
    "watchdog",
    "idle_ms",
    "release",
    "pool",
];

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingEquals(token) => write!(f, "`{token}` is not of the form key=value"),
            Self::UnknownKey(key) => {
                write!(f, "unknown key `{key}` (known keys: {})", KEYS.join(", "))
            }
            Self::Duplicate(key) => write!(f, "key `{key}` given more than once"),
            Self::BadValue {
                key,
                value,
                expected,
            } => {
                write!(f, "`{key}={value}`: expected {expected}")
            }
        }
    }
}

fn choice<T: Copy>(key: &'static str, value: &str, table: &[(&str, T)]) -> Result<T, ParamError> {
    table
        .iter()
        .find(|(name, _)| *name == value)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: alloc::vec::Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            ParamError::BadValue {
                key,
                value: value.to_string(),
                expected: format!("one of {}", names.join("|")),
            }
        })
}

fn number(key: &'static str, value: &str, min: u64, max: u64) -> Result<u64, ParamError> {
    let parsed = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse::<u64>(),
    };
    match parsed {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(ParamError::BadValue {
            key,
            value: value.to_string(),
            expected: format!("an integer in {min}..={max}"),
        }),
    }
}

/// Parses a parameter line. Whitespace separates tokens; an empty line gives
/// the defaults.
pub fn parse(line: &str) -> Result<BootParams, ParamError> {
    let mut params = BootParams::default();
    let mut seen = [false; KEYS.len()];
    for token in line.split_whitespace() {
        let (key, value) = token
            .split_once('=')
            .ok_or_else(|| ParamError::MissingEquals(token.to_string()))?;
        let slot = KEYS
            .iter()
            .position(|k| *k == key)
            .ok_or_else(|| ParamError::UnknownKey(key.to_string()))?;
        if core::mem::replace(&mut seen[slot], true) {
            return Err(ParamError::Duplicate(key.to_string()));
        }
        match KEYS[slot] {
            "mode" => {
                params.mode = choice("mode", value, &[("run", Mode::Run), ("test", Mode::Test)])?
            }
            "test" => {
                if value.is_empty() {
                    return Err(ParamError::BadValue {
                        key: "test",
                        value: String::new(),
                        expected: "a non-empty test-name substring".to_string(),
                    });
                }
                params.test_filter = Some(value.to_string());
            }
            "fault" => {
                params.fault = choice(
                    "fault",
                    value,
                    &[
                        ("none", Fault::None),
                        ("panic", Fault::Panic),
                        ("triple-fault", Fault::Triple),
                        ("hang", Fault::Hang),
                        ("page-fault", Fault::GuardPageRead),
                        ("ap-stack-overflow", Fault::ApStackOverflow),
                        ("dropped-task-wake", Fault::DroppedTaskWake),
                        ("dropped-ipi", Fault::DroppedIpi),
                        ("misdirected-ipi", Fault::MisdirectedIpi),
                        ("miscounted-ipi", Fault::MiscountedIpi),
                        ("stranded-steal", Fault::StrandedSteal),
                    ],
                )?
            }
            "workload" => {
                params.workload = choice(
                    "workload",
                    value,
                    &[
                        ("laplace", Workload::Laplace),
                        ("floor", Workload::Floor),
                        ("idle", Workload::Idle),
                        ("none", Workload::None),
                        ("ping-pong", Workload::PingPong),
                    ],
                )?
            }
            "size" => params.size = number("size", value, 4, 4096)? as u32,
            "iterations" => params.iterations = number("iterations", value, 1, 10_000_000)? as u32,
            "policy" => {
                params.policy = choice("policy", value, &POLICY_PARAMS.map(|p| (p.name(), p)))?;
                params.policy_given = true;
            }
            "seed" => params.seed = number("seed", value, 0, u64::MAX)?,
            "chaos" => params.chaos = choice("chaos", value, &[("off", false), ("on", true)])?,
            "backoff" => {
                params.backoff = match value {
                    "off" => BackoffMode::Off,
                    "adaptive" => BackoffMode::Adaptive,
                    us => {
                        BackoffMode::FixedUs(number("backoff", us, 1, 100_000).map_err(|_| {
                            ParamError::BadValue {
                                key: "backoff",
                                value: value.to_string(),
                                expected: "`off`, `adaptive` or a poll time in us in 1..=100000"
                                    .to_string(),
                            }
                        })?)
                    }
                }
            }
            "release" => {
                params.release = choice(
                    "release",
                    value,
                    &[("flat", Release::Flat), ("tree", Release::Tree)],
                )?
            }
            "pool" => {
                params.pool = Some(choice(
                    "pool",
                    value,
                    &[("pinned", Pool::Pinned), ("steal", Pool::Steal)],
                )?)
            }
            "idle_ms" => params.idle_ms = number("idle_ms", value, 1, 600_000)? as u32,
            "watchdog" => {
                params.watchdog_ms = match value {
                    "off" => 0,
                    ms => number("watchdog", ms, 1, 60_000).map_err(|_| ParamError::BadValue {
                        key: "watchdog",
                        value: value.to_string(),
                        expected: "`off` or a scan period in ms in 1..=60000".to_string(),
                    })? as u32,
                }
            }
            other => unreachable!("key `{other}` in KEYS without a parser"),
        }
    }
    Ok(params)
}
