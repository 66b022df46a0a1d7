//! The run-mode lines the host reads off the serial port (after the core
//! prefix): the core prefix itself, the grid workloads' result line, the
//! markers of the watchdog's reports and of the idle workload.

use core::fmt;

use crate::boot_params::Workload;

/// The prefix of every console line of core `N`: `[cN] `.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorePrefix(pub usize);

impl fmt::Display for CorePrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[c{}] ", self.0)
    }
}

/// Splits a serial line `[c3] message` into the core and the message;
/// lines without the prefix give `None`.
#[must_use]
pub fn strip_core_prefix(line: &str) -> Option<(u32, &str)> {
    let rest = line.strip_prefix("[c")?;
    let (core, message) = rest.split_once(']')?;
    let core = core.parse().ok()?;
    Some((core, message.strip_prefix(' ').unwrap_or(message)))
}

/// How the in-guest watchdog's lost-wakeup report starts; the core number
/// and a colon follow.
pub const LOST_WAKEUP_PREFIX: &str = "LOST WAKEUP on core ";

/// How the fork-join watchdog's stuck-round report starts (a state dump
/// follows on the next lines).
pub const STUCK_ROUND_PREFIX: &str = "STUCK ROUND: ";

/// How the strand watch's report starts: stealable work queued with every
/// core halted (a state dump follows on the next lines).
pub const STRANDED_PREFIX: &str = "STRANDED STEALABLE WORK: ";

/// How the held-search watch's report starts: stealable work queued while
/// the core holding the pool's one search has not looked at the pool for
/// several scans (a state dump follows on the next lines).
pub const HELD_SEARCH_PREFIX: &str = "SEARCH HELD BY A CORE THAT DOES NOT LOOK: ";

/// What follows the lost-wakeup prefix (`LOST WAKEUP on core N: `) in a
/// stalled-waker report: a core halted through several scans with a waker
/// that began notifying it and never finished (a state dump follows).
pub const STALLED_WAKER_PREFIX: &str = "STALLED WAKER: ";

/// Prefix of the idle workload's first line (`idle: start idle_ms=N`).
pub const IDLE_START: &str = "idle: start";

/// The idle workload's last line.
pub const IDLE_END: &str = "idle: end";

/// Which grid workload printed a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum GridWorkload {
    /// Fork-join over the scheduler and the wake protocol.
    Laplace,
    /// Bare IPI-released workers: the platform's floor.
    Floor,
}

impl GridWorkload {
    /// The name the kernel prints before the colon.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Laplace => Workload::Laplace.name(),
            Self::Floor => Workload::Floor.name(),
        }
    }
}

/// A grid workload's result line: `laplace: size=64 iterations=1000
/// workers=4 elapsed_us=123456 residual=252862090
/// checksum=0x8619c70354398c3d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GridResult {
    /// `laplace` or `floor`.
    pub workload: GridWorkload,
    /// Grid side.
    pub size: u64,
    /// Iterations run.
    pub iterations: u64,
    /// Worker count (blocks of a round).
    pub workers: u64,
    /// Guest time of the iterations, µs.
    pub elapsed_us: u64,
    /// Residual of the last iteration.
    pub residual: i64,
    /// FNV-1a 64 of the final grid.
    pub checksum: u64,
}

impl fmt::Display for GridResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: size={} iterations={} workers={} elapsed_us={} residual={} checksum={:#018x}",
            self.workload.name(),
            self.size,
            self.iterations,
            self.workers,
            self.elapsed_us,
            self.residual,
            self.checksum
        )
    }
}

impl GridResult {
    /// Parses a result line (after the core prefix); `None` if it is not
    /// one or a field is missing or malformed.
    #[must_use]
    pub fn parse(message: &str) -> Option<Self> {
        let (workload, fields) = [GridWorkload::Laplace, GridWorkload::Floor]
            .into_iter()
            .find_map(|workload| {
                let rest = message.strip_prefix(workload.name())?.strip_prefix(": ")?;
                Some((workload, rest))
            })?;
        let field = |name: &str| {
            fields
                .split_whitespace()
                .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        };
        Some(Self {
            workload,
            size: field("size")?.parse().ok()?,
            iterations: field("iterations")?.parse().ok()?,
            workers: field("workers")?.parse().ok()?,
            elapsed_us: field("elapsed_us")?.parse().ok()?,
            residual: field("residual")?.parse().ok()?,
            checksum: u64::from_str_radix(field("checksum")?.strip_prefix("0x")?, 16).ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{CorePrefix, GridResult, GridWorkload, strip_core_prefix};
    use std::format;
    use std::string::ToString;

    #[test]
    fn the_core_prefix_round_trips() {
        for core in [0, 7, 63, 255] {
            let line = format!("{}hello [c9] world", CorePrefix(core));
            assert_eq!(
                strip_core_prefix(&line),
                Some((core as u32, "hello [c9] world"))
            );
        }
        assert_eq!(strip_core_prefix("no prefix"), None);
        assert_eq!(strip_core_prefix("[cx] bad"), None);
    }

    #[test]
    fn grid_results_round_trip() {
        for workload in [GridWorkload::Laplace, GridWorkload::Floor] {
            let result = GridResult {
                workload,
                size: 64,
                iterations: 1000,
                workers: 4,
                elapsed_us: 123_456,
                residual: -252_862_090,
                checksum: 0x8619_c703_5439_8c3d,
            };
            let text = result.to_string();
            assert_eq!(GridResult::parse(&text), Some(result), "{text}");
        }
        assert_eq!(GridResult::parse("laplace: size=64"), None);
        assert_eq!(GridResult::parse("laplacian: size=64"), None);
    }
}
