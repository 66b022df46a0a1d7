//! The kernel's parser: a parameter line to [`BootParams`], or the
//! [`ParamError`] the kernel prints before it exits.

use super::keys::Key;
use super::ranges::{
    BACKOFF_US_RANGE, CHUNKS_RANGE, DEFAULT_GRID_SIZE, DEFAULT_IDLE_MS, DEFAULT_ITERATIONS,
    DEFAULT_SEED, DEFAULT_WATCHDOG_MS, GRID_SIZE_RANGE, IDLE_MS_RANGE, ITERATIONS_RANGE,
    PARALLELISM_RANGE, POLLERS_RANGE, WATCHDOG_MS_RANGE,
};
use super::values::{
    Backoff, Fault, Mode, POLICY_PARAMS, Pool, Release, Switch, Trial, Watchdog, Workload,
    backoff_expected, watchdog_expected,
};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::ops::RangeInclusive;
use vigil_wake::{BackoffMode, Policy};

/// All boot parameters, with their defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootParams {
    /// `mode=run|test` (default `run`).
    pub mode: Mode,
    /// `test=SUBSTRING`: run only tests whose name contains it.
    pub test_filter: Option<String>,
    /// `fault=`, one of [`Fault::ALL`] (default `none`).
    pub fault: Fault,
    /// `workload=`, one of [`Workload::ALL`] (default `laplace`).
    pub workload: Workload,
    /// `size=N`: grid side for grid workloads (in [`GRID_SIZE_RANGE`],
    /// default [`DEFAULT_GRID_SIZE`]).
    pub size: u32,
    /// `iterations=N` (in [`ITERATIONS_RANGE`], default
    /// [`DEFAULT_ITERATIONS`]).
    pub iterations: u32,
    /// `policy=`, one of [`POLICY_PARAMS`] (default `state-machine`).
    pub policy: Policy,
    /// Whether `policy=` was given explicitly.
    pub policy_given: bool,
    /// `seed=N` (decimal or 0x-hex u64; default [`DEFAULT_SEED`]).
    pub seed: u64,
    /// `chaos=on|off`: seeded random delays at the protocol's critical
    /// points and rare holds of the idle window (default off).
    pub chaos: bool,
    /// `backoff=off|adaptive|US`: how long an idle core polls its inbox
    /// before the halt path (US in [`BACKOFF_US_RANGE`]; default
    /// `adaptive`).
    pub backoff: BackoffMode,
    /// `watchdog=off|MS`: the lost-wakeup watchdog's scan period (MS in
    /// [`WATCHDOG_MS_RANGE`], default [`DEFAULT_WATCHDOG_MS`]).
    pub watchdog: Watchdog,
    /// `idle_ms=N`: how long `workload=idle` idles (in [`IDLE_MS_RANGE`],
    /// default [`DEFAULT_IDLE_MS`]).
    pub idle_ms: u32,
    /// `release=tree|flat`: how a fork-join round wakes its workers
    /// (default `tree`).
    pub release: Release,
    /// `pool=pinned|steal`: how a fork-join round hands out its work.
    /// `None`: each workload's round plan chooses.
    pub pool: Option<Pool>,
    /// `parallelism=N`: cores the host runs at once (in
    /// [`PARALLELISM_RANGE`]). `None`: measured at boot.
    pub parallelism: Option<u32>,
    /// `chunks=N`: stealable chunks per round (in [`CHUNKS_RANGE`]).
    /// `None`: the round plan's choice.
    pub chunks: Option<u32>,
    /// `pollers=N`: idle cores that may poll at once (in
    /// [`POLLERS_RANGE`]). `None`: the host parallelism.
    pub pollers: Option<u32>,
    /// `trial=auto|always|off`: whether a workload times one more chunk
    /// than its plan in its first rounds (default `auto`).
    pub trial: Trial,
}

impl Default for BootParams {
    fn default() -> Self {
        Self {
            mode: Mode::Run,
            test_filter: None,
            fault: Fault::None,
            workload: Workload::Laplace,
            size: DEFAULT_GRID_SIZE,
            iterations: DEFAULT_ITERATIONS,
            policy: Policy::StateMachine,
            policy_given: false,
            seed: DEFAULT_SEED,
            chaos: false,
            backoff: BackoffMode::Adaptive,
            watchdog: Watchdog::Ms(DEFAULT_WATCHDOG_MS),
            idle_ms: DEFAULT_IDLE_MS,
            release: Release::Tree,
            pool: None,
            parallelism: None,
            chunks: None,
            pollers: None,
            trial: Trial::Auto,
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
        key: Key,
        /// The rejected value.
        value: String,
        /// What the key accepts.
        expected: String,
    },
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingEquals(token) => write!(f, "`{token}` is not of the form key=value"),
            Self::UnknownKey(key) => {
                let known: Vec<&str> = Key::ALL.iter().map(|k| k.name()).collect();
                write!(f, "unknown key `{key}` (known keys: {})", known.join(", "))
            }
            Self::Duplicate(key) => write!(f, "key `{key}` given more than once"),
            Self::BadValue {
                key,
                value,
                expected,
            } => {
                write!(f, "`{}={value}`: expected {expected}", key.name())
            }
        }
    }
}

fn bad_value(key: Key, value: &str, expected: String) -> ParamError {
    ParamError::BadValue {
        key,
        value: value.to_string(),
        expected,
    }
}

fn choice<T: Copy>(
    key: Key,
    value: &str,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<T, ParamError> {
    all.iter()
        .copied()
        .find(|&v| name(v) == value)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|&v| name(v)).collect();
            bad_value(key, value, format!("one of {}", names.join("|")))
        })
}

fn number(key: Key, value: &str, range: RangeInclusive<u64>) -> Result<u64, ParamError> {
    let parsed = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse::<u64>(),
    };
    match parsed {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(bad_value(
            key,
            value,
            format!("an integer in {}..={}", range.start(), range.end()),
        )),
    }
}

/// [`number`] over a `u32` range.
fn number_u32(key: Key, value: &str, range: &RangeInclusive<u32>) -> Result<u32, ParamError> {
    let wide = u64::from(*range.start())..=u64::from(*range.end());
    // In range, so it fits.
    number(key, value, wide).map(|n| n as u32)
}

/// Parses a parameter line. Whitespace separates tokens; an empty line gives
/// the defaults. Every key may appear at most once; an unknown key, a token
/// without `=`, or a value out of range is an error.
pub fn parse(line: &str) -> Result<BootParams, ParamError> {
    let mut params = BootParams::default();
    let mut seen = [false; Key::ALL.len()];
    for token in line.split_whitespace() {
        let (name, value) = token
            .split_once('=')
            .ok_or_else(|| ParamError::MissingEquals(token.to_string()))?;
        let key = Key::from_name(name).ok_or_else(|| ParamError::UnknownKey(name.to_string()))?;
        if core::mem::replace(&mut seen[key.index()], true) {
            return Err(ParamError::Duplicate(name.to_string()));
        }
        match key {
            Key::Mode => params.mode = choice(key, value, Mode::ALL, Mode::name)?,
            Key::Test => {
                if value.is_empty() {
                    return Err(bad_value(
                        key,
                        value,
                        "a non-empty test-name substring".to_string(),
                    ));
                }
                params.test_filter = Some(value.to_string());
            }
            Key::Fault => params.fault = choice(key, value, Fault::ALL, Fault::name)?,
            Key::Workload => params.workload = choice(key, value, Workload::ALL, Workload::name)?,
            Key::Size => params.size = number_u32(key, value, &GRID_SIZE_RANGE)?,
            Key::Iterations => params.iterations = number_u32(key, value, &ITERATIONS_RANGE)?,
            Key::Policy => {
                params.policy = choice(key, value, &POLICY_PARAMS, Policy::name)?;
                params.policy_given = true;
            }
            Key::Seed => params.seed = number(key, value, 0..=u64::MAX)?,
            Key::Chaos => params.chaos = choice(key, value, Switch::ALL, Switch::name)?.is_on(),
            Key::Backoff => {
                params.backoff = match Backoff::from_name(value) {
                    Some(named) => named.mode(),
                    None => BackoffMode::FixedUs(
                        number(key, value, BACKOFF_US_RANGE)
                            .map_err(|_| bad_value(key, value, backoff_expected()))?,
                    ),
                }
            }
            Key::Watchdog => {
                params.watchdog = match value {
                    super::values::OFF => Watchdog::Off,
                    ms => Watchdog::Ms(
                        number_u32(key, ms, &WATCHDOG_MS_RANGE)
                            .map_err(|_| bad_value(key, value, watchdog_expected()))?,
                    ),
                }
            }
            Key::IdleMs => params.idle_ms = number_u32(key, value, &IDLE_MS_RANGE)?,
            Key::Release => params.release = choice(key, value, Release::ALL, Release::name)?,
            Key::Pool => params.pool = Some(choice(key, value, Pool::ALL, Pool::name)?),
            Key::Parallelism => {
                params.parallelism = Some(number_u32(key, value, &PARALLELISM_RANGE)?);
            }
            Key::Chunks => params.chunks = Some(number_u32(key, value, &CHUNKS_RANGE)?),
            Key::Pollers => params.pollers = Some(number_u32(key, value, &POLLERS_RANGE)?),
            Key::Trial => params.trial = choice(key, value, Trial::ALL, Trial::name)?,
        }
    }
    Ok(params)
}
