//! The kernel's fork-join pool line, printed after a Laplace run:
//! `[c0] pool: kind=steal chunks=2 work_us=41 rounds=1000
//! cores_per_round_median=1 min=1 max=5 search_wakes=577` (`kind=pinned`
//! for the pinned pool, with `search_wakes=0`), then `lock_contended=N
//! pool_call_us=N`, then `round_longest_block_ns=N round_rest_ns=N`: the
//! round plan's choice (pool, chunks per round, a round's measured work on
//! one core), what the rounds did, what the stealable pool's lock cost
//! them, and the pooled rounds' medians of their longest row block and of
//! the rest of their time. The bench reads the chunks, how many distinct
//! cores ran each round's work, the lock's cost per round and the split
//! from it.

use serde::Serialize;

use crate::guest::test_output::strip_core_prefix;

/// Prefix of the pool line, after the core prefix.
pub const POOL_PREFIX: &str = "pool: ";

/// One `pool:` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoolLine {
    /// `pinned` or `steal`.
    pub kind: String,
    /// Chunks (stealing pool) or workers (pinned pool) per round, as the
    /// round plan chose (`None` from a kernel that printed no plan).
    pub chunks: Option<u64>,
    /// A round's work on one core as the kernel measured it, µs (`None`:
    /// not printed).
    pub work_us: Option<u64>,
    /// Fork-join rounds counted.
    pub rounds: u64,
    /// Median over rounds of the distinct cores that ran a round's work.
    pub cores_per_round_median: u64,
    /// Fewest cores any round ran on.
    pub min: u64,
    /// Most cores any round ran on.
    pub max: u64,
    /// Wakes of an idle core to search for stealable work (0 when pinned).
    pub search_wakes: u64,
    /// Acquisitions of the stealable pool's lock that found it held, over
    /// the workload (`None`: not printed, an older kernel).
    pub lock_contended: Option<u64>,
    /// Microseconds every core spent in the stealable pool's calls (its
    /// lock's wait included), summed over cores, over the workload.
    pub pool_call_us: Option<u64>,
    /// Median over the pooled rounds of each round's longest row block,
    /// ns: the compute the round could not be shorter than, which the
    /// host's speed moves (`None`: not printed, an older kernel or no
    /// pooled round).
    pub round_longest_block_ns: Option<u64>,
    /// Median over the pooled rounds of each round's time less its longest
    /// block, ns: publishing, waking or finding cores, their steals, the
    /// join (`None`: as for `round_longest_block_ns`).
    pub round_rest_ns: Option<u64>,
}

impl PoolLine {
    /// Parses a message (after the core prefix); `None` if it is not a
    /// pool line or a field is missing or malformed.
    pub fn parse(message: &str) -> Option<Self> {
        let fields = message.strip_prefix(POOL_PREFIX)?;
        let field = |name: &str| {
            fields
                .split_whitespace()
                .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        };
        let number = |name: &str| field(name)?.parse().ok();
        Some(Self {
            kind: field("kind")?.to_string(),
            chunks: number("chunks"),
            work_us: number("work_us"),
            rounds: number("rounds")?,
            cores_per_round_median: number("cores_per_round_median")?,
            min: number("min")?,
            max: number("max")?,
            search_wakes: number("search_wakes")?,
            lock_contended: number("lock_contended"),
            pool_call_us: number("pool_call_us"),
            round_longest_block_ns: number("round_longest_block_ns"),
            round_rest_ns: number("round_rest_ns"),
        })
    }

    /// Microseconds in the pool's calls per round, summed over cores.
    pub fn pool_call_us_per_round(&self) -> Option<f64> {
        let us = self.pool_call_us?;
        (self.rounds > 0).then(|| us as f64 / self.rounds as f64)
    }

    /// Contended acquisitions of the pool's lock per round.
    pub fn lock_contended_per_round(&self) -> Option<f64> {
        let contended = self.lock_contended?;
        (self.rounds > 0).then(|| contended as f64 / self.rounds as f64)
    }

    /// The last pool line in a serial log, if any.
    pub fn find_in(serial: &str) -> Option<Self> {
        serial
            .lines()
            .rev()
            .filter_map(strip_core_prefix)
            .find_map(|(_core, message)| Self::parse(message.trim_end()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_lines_parse() {
        let serial = "[c0] laplace: size=64 iterations=1000 workers=2 elapsed_us=1 residual=0 checksum=0x0\n\
                      [c0] pool: kind=steal chunks=2 work_us=41 rounds=1000 cores_per_round_median=1 min=1 max=5 search_wakes=577 lock_contended=250 pool_call_us=4000 round_longest_block_ns=28400 round_rest_ns=6300\r\n\
                      [c0] VIGIL-STATS {}\n";
        assert_eq!(
            PoolLine::find_in(serial),
            Some(PoolLine {
                kind: "steal".to_string(),
                chunks: Some(2),
                work_us: Some(41),
                rounds: 1000,
                cores_per_round_median: 1,
                min: 1,
                max: 5,
                search_wakes: 577,
                lock_contended: Some(250),
                pool_call_us: Some(4000),
                round_longest_block_ns: Some(28400),
                round_rest_ns: Some(6300),
            })
        );
        let line = PoolLine::find_in(serial).unwrap();
        assert_eq!(line.pool_call_us_per_round(), Some(4.0));
        assert_eq!(line.lock_contended_per_round(), Some(0.25));
        let pinned = PoolLine::find_in(
            "[c0] pool: kind=pinned rounds=20 cores_per_round_median=2 min=2 max=2 search_wakes=0",
        )
        .unwrap();
        assert_eq!(pinned.kind, "pinned");
        assert_eq!(pinned.chunks, None);
        assert_eq!(pinned.cores_per_round_median, 2);
        assert_eq!(pinned.pool_call_us_per_round(), None);
        assert_eq!(pinned.round_longest_block_ns, None);
        assert_eq!(pinned.round_rest_ns, None);
    }

    #[test]
    fn no_line_or_a_broken_one_gives_none() {
        assert_eq!(PoolLine::find_in("[c0] floor: size=16\n"), None);
        assert_eq!(
            PoolLine::find_in("[c0] pool: kind=steal rounds=10 min=1 max=2 search_wakes=0"),
            None
        );
        assert_eq!(
            PoolLine::find_in(
                "[c0] pool: kind=steal rounds=x cores_per_round_median=1 min=1 max=2 search_wakes=0"
            ),
            None
        );
        // Not at the start of the message: not the pool line.
        assert_eq!(
            PoolLine::parse(
                "vigil: pool: kind=steal rounds=1 cores_per_round_median=1 min=1 max=1 search_wakes=0"
            ),
            None
        );
    }
}
