//! A Laplace round's time split in two: its longest row block, which the
//! round cannot be shorter than whatever the pool does, and the rest
//! (publishing the round, waking or finding cores, their steals, the
//! join, and the caller's bookkeeping; and whole blocks where one core
//! ran two of the round's blocks one after the other, as in the round
//! trial's rounds of one chunk more than the cores that came, or when the
//! caller took back a chunk nobody came for). The host's speed moves the first
//! (a vCPU the host runs slower computes its block slower); the second is
//! what the pool and the wake path cost a round. The `pool:` line prints
//! the median of each over the pooled rounds, so that two configurations
//! can be compared on the part they differ in even when the host ran one
//! of them slower.

use alloc::vec::Vec;

/// At most this many rounds are kept (two `u32` each): a longer run keeps
/// every k-th round, evenly over the run.
pub const MAX_KEPT_ROUNDS: usize = 1 << 16;

/// The medians over the kept rounds, ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundSplitMedians {
    /// The longest row block of a round.
    pub longest_block_ns: u64,
    /// A round's time less its longest block.
    pub rest_ns: u64,
}

/// The kept rounds' splits.
#[derive(Debug)]
pub struct RoundSplits {
    /// Keep every `stride`-th round.
    stride: usize,
    /// Rounds offered so far.
    offered: usize,
    /// Rounds kept at most (a run offered more rounds than it was made
    /// for keeps the first this many of its kept rounds).
    limit: usize,
    longest_block_ns: Vec<u32>,
    rest_ns: Vec<u32>,
}

impl RoundSplits {
    /// Room for a run of `rounds` rounds.
    pub fn new(rounds: usize) -> Self {
        let stride = rounds.div_ceil(MAX_KEPT_ROUNDS).max(1);
        let limit = rounds.div_ceil(stride);
        Self {
            stride,
            offered: 0,
            limit,
            longest_block_ns: Vec::with_capacity(limit),
            rest_ns: Vec::with_capacity(limit),
        }
    }

    /// One round that took `round_ns`, its longest block `longest_block_ns`
    /// (at most the round, but the two are read on different cores' clocks,
    /// so a longer block counts as the whole round). Values past `u32::MAX`
    /// ns (4.3 s) are kept as that.
    pub fn record(&mut self, round_ns: u64, longest_block_ns: u64) {
        let keep = self.offered.is_multiple_of(self.stride);
        self.offered += 1;
        if !keep || self.rest_ns.len() == self.limit {
            return;
        }
        let longest = longest_block_ns.min(round_ns);
        let clamp = |ns: u64| u32::try_from(ns).unwrap_or(u32::MAX);
        self.longest_block_ns.push(clamp(longest));
        self.rest_ns.push(clamp(round_ns - longest));
    }

    /// Rounds kept so far.
    pub fn kept_rounds(&self) -> usize {
        self.rest_ns.len()
    }

    /// The medians (the upper median of an even count), `None` before any
    /// round.
    pub fn medians(mut self) -> Option<RoundSplitMedians> {
        Some(RoundSplitMedians {
            longest_block_ns: upper_median(&mut self.longest_block_ns)?,
            rest_ns: upper_median(&mut self.rest_ns)?,
        })
    }
}

fn upper_median(samples: &mut [u32]) -> Option<u64> {
    if samples.is_empty() {
        return None;
    }
    let middle = samples.len() / 2;
    Some(u64::from(*samples.select_nth_unstable(middle).1))
}
