//! Wake-latency histograms: TSC ticks from `wake(task)` to the task running
//! again, by how the waker found the target core. Log-scaled buckets (four
//! per power of two, so a reported percentile is within 19% of the sample).
//! One histogram set per core, written only by that core (the one resuming
//! the task).

use super::task::WakeKind;
use core::sync::atomic::{AtomicU64, Ordering};

const SUB_BUCKETS: u32 = 4;
/// Buckets cover 1 tick .. 2^48 ticks.
pub const BUCKETS: usize = 48 * SUB_BUCKETS as usize;

/// One histogram.
#[derive(Debug)]
pub struct Histogram {
    counts: [AtomicU64; BUCKETS],
}

fn bucket_of(ticks: u64) -> usize {
    let ticks = ticks.max(1);
    let log2 = 63 - ticks.leading_zeros();
    let sub = if log2 >= 2 {
        ((ticks >> (log2 - 2)) & 0b11) as u32
    } else {
        0
    };
    ((log2 * SUB_BUCKETS + sub) as usize).min(BUCKETS - 1)
}

/// The largest tick count that falls into `bucket`.
pub fn bucket_upper_ticks(bucket: usize) -> u64 {
    let log2 = bucket as u32 / SUB_BUCKETS;
    let sub = u64::from(bucket as u32 % SUB_BUCKETS);
    if log2 < 2 {
        return (1u64 << (log2 + 1)) - 1;
    }
    let base = 1u64 << log2;
    base + (sub + 1) * (base / 4) - 1
}

impl Histogram {
    /// Empty.
    pub const fn new() -> Self {
        Self {
            counts: [const { AtomicU64::new(0) }; BUCKETS],
        }
    }

    /// Adds one sample (owner core only: load + store, no RMW needed).
    pub fn record(&self, ticks: u64) {
        let c = &self.counts[bucket_of(ticks)];
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Adds this histogram's counts into `into`.
    pub fn add_to(&self, into: &mut [u64; BUCKETS]) {
        for (sum, c) in into.iter_mut().zip(&self.counts) {
            *sum += c.load(Ordering::Relaxed);
        }
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// The histograms of one core, one per [`WakeKind`].
#[derive(Debug, Default)]
pub struct LatencyHistograms {
    by_kind: [Histogram; 4],
}

impl LatencyHistograms {
    /// Empty.
    pub const fn new() -> Self {
        Self {
            by_kind: [const { Histogram::new() }; 4],
        }
    }

    /// Records one wake.
    pub fn record(&self, kind: WakeKind, ticks: u64) {
        self.by_kind[kind as usize].record(ticks);
    }

    /// The histogram for `kind`.
    pub fn of(&self, kind: WakeKind) -> &Histogram {
        &self.by_kind[kind as usize]
    }
}

/// Sample count and the upper bound (ticks) of the bucket holding the
/// `per_mille`-th sample.
pub fn percentile_ticks(counts: &[u64; BUCKETS], per_mille: u64) -> Option<u64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = (total * per_mille).div_ceil(1000).max(1);
    let mut seen = 0;
    for (bucket, &n) in counts.iter().enumerate() {
        seen += n;
        if seen >= rank {
            return Some(bucket_upper_ticks(bucket));
        }
    }
    None
}
