//! The kernel's fork-join pool line, printed after a Laplace run:
//! `[c0] pool: kind=steal chunks=2 work_us=41 rounds=1000
//! cores_per_round_median=1 min=1 max=5 search_wakes=577` (`kind=pinned`
//! for the pinned pool, with `search_wakes=0`): the round plan's choice
//! (pool, chunks per round, a round's measured work on one core) and what
//! the rounds did. The bench reads the chunks and how many distinct cores
//! ran each round's work from it.

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
        })
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
                      [c0] pool: kind=steal chunks=2 work_us=41 rounds=1000 cores_per_round_median=1 min=1 max=5 search_wakes=577\r\n\
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
            })
        );
        let pinned = PoolLine::find_in(
            "[c0] pool: kind=pinned rounds=20 cores_per_round_median=2 min=2 max=2 search_wakes=0",
        )
        .unwrap();
        assert_eq!(pinned.kind, "pinned");
        assert_eq!(pinned.chunks, None);
        assert_eq!(pinned.cores_per_round_median, 2);
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
