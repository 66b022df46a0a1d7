//! The host's formatter: the parameter line for the settings it chose,
//! every other key left to the kernel's default.

use super::keys::Key;
use super::values::{Fault, Mode, Pool, Release, Switch, Trial, Watchdog, Workload, backoff_value};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use vigil_wake::{BackoffMode, Policy};

/// A parameter line to write: each `Some` becomes one `key=value` word,
/// each `None` leaves the kernel's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamLine {
    /// `mode=`.
    pub mode: Option<Mode>,
    /// `test=` (a non-empty substring without whitespace).
    pub test_filter: Option<String>,
    /// `workload=`.
    pub workload: Option<Workload>,
    /// `policy=` (one of [`POLICY_PARAMS`](super::POLICY_PARAMS)).
    pub policy: Option<Policy>,
    /// `seed=`.
    pub seed: Option<u64>,
    /// `chaos=on|off`.
    pub chaos: Option<bool>,
    /// `watchdog=off|MS`.
    pub watchdog: Option<Watchdog>,
    /// `fault=`.
    pub fault: Option<Fault>,
    /// `size=`.
    pub size: Option<u32>,
    /// `iterations=`.
    pub iterations: Option<u32>,
    /// `idle_ms=`.
    pub idle_ms: Option<u32>,
    /// `pool=`.
    pub pool: Option<Pool>,
    /// `backoff=off|adaptive|US`.
    pub backoff: Option<BackoffMode>,
    /// `release=`.
    pub release: Option<Release>,
    /// `parallelism=`.
    pub parallelism: Option<u32>,
    /// `chunks=`.
    pub chunks: Option<u32>,
    /// `pollers=`.
    pub pollers: Option<u32>,
    /// `trial=`.
    pub trial: Option<Trial>,
}

impl ParamLine {
    /// The `key=value` words, in a fixed order: `mode`, `test`, `workload`,
    /// `policy`, `seed`, `chaos`, `watchdog`, `fault`, `size`, `iterations`,
    /// `idle_ms`, `pool`, `backoff`, `release`, `parallelism`, `chunks`,
    /// `pollers`, `trial`.
    #[must_use]
    pub fn tokens(&self) -> Vec<String> {
        let values: [(Key, Option<String>); 18] = [
            (Key::Mode, self.mode.map(|v| v.name().to_string())),
            (Key::Test, self.test_filter.clone()),
            (Key::Workload, self.workload.map(|v| v.name().to_string())),
            (Key::Policy, self.policy.map(|v| v.name().to_string())),
            (Key::Seed, self.seed.map(|v| v.to_string())),
            (
                Key::Chaos,
                self.chaos.map(|v| Switch::from_bool(v).name().to_string()),
            ),
            (Key::Watchdog, self.watchdog.map(Watchdog::value)),
            (Key::Fault, self.fault.map(|v| v.name().to_string())),
            (Key::Size, self.size.map(|v| v.to_string())),
            (Key::Iterations, self.iterations.map(|v| v.to_string())),
            (Key::IdleMs, self.idle_ms.map(|v| v.to_string())),
            (Key::Pool, self.pool.map(|v| v.name().to_string())),
            (Key::Backoff, self.backoff.map(backoff_value)),
            (Key::Release, self.release.map(|v| v.name().to_string())),
            (Key::Parallelism, self.parallelism.map(|v| v.to_string())),
            (Key::Chunks, self.chunks.map(|v| v.to_string())),
            (Key::Pollers, self.pollers.map(|v| v.to_string())),
            (Key::Trial, self.trial.map(|v| v.name().to_string())),
        ];
        values
            .into_iter()
            .filter_map(|(key, value)| Some(format!("{}={}", key.name(), value?)))
            .collect()
    }
}

/// The words joined by single spaces: the line the kernel reads.
impl fmt::Display for ParamLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.tokens().join(" "))
    }
}
