//! The numeric values' ranges and the defaults of the numeric keys.

use core::ops::RangeInclusive;

/// Grid sides `size=` takes.
pub const GRID_SIZE_RANGE: RangeInclusive<u32> = 4..=4096;
/// The grid side without `size=`.
pub const DEFAULT_GRID_SIZE: u32 = 64;

/// Counts `iterations=` takes.
pub const ITERATIONS_RANGE: RangeInclusive<u32> = 1..=10_000_000;
/// The count without `iterations=`.
pub const DEFAULT_ITERATIONS: u32 = 1000;

/// Idle times `idle_ms=` takes, ms.
pub const IDLE_MS_RANGE: RangeInclusive<u32> = 1..=600_000;
/// The idle time without `idle_ms=`, ms.
pub const DEFAULT_IDLE_MS: u32 = 3000;

/// Fixed poll times `backoff=US` takes, µs.
pub const BACKOFF_US_RANGE: RangeInclusive<u64> = 1..=100_000;

/// Scan periods `watchdog=MS` takes, ms.
pub const WATCHDOG_MS_RANGE: RangeInclusive<u32> = 1..=60_000;
/// The watchdog's scan period without `watchdog=`, ms.
pub const DEFAULT_WATCHDOG_MS: u32 = 20;

/// Host parallelism `parallelism=` takes, cores.
pub const PARALLELISM_RANGE: RangeInclusive<u32> = 1..=4096;

/// Chunks per round `chunks=` takes.
pub const CHUNKS_RANGE: RangeInclusive<u32> = 1..=4096;

/// Poll slots `pollers=` takes (0: no core polls).
pub const POLLERS_RANGE: RangeInclusive<u32> = 0..=4096;

/// The seed without `seed=` (which takes any u64, decimal or `0x` hex).
pub const DEFAULT_SEED: u64 = 1;
