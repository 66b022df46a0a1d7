//! A Laplace round's time split into its longest row block and the rest
//! (`workloads::round_split`): the medians, a block read longer than its
//! round, and the bound on what a long run keeps.

use super::runner::{TestCase, TestResult};
use crate::ensure;
use crate::workloads::round_split::{MAX_KEPT_ROUNDS, RoundSplitMedians, RoundSplits};

pub const MEDIANS: TestCase = TestCase {
    name: "workloads::round_split_medians",
    run: medians,
};

pub const LONG_RUN_KEEPS_EVERY_KTH_ROUND: TestCase = TestCase {
    name: "workloads::round_split_long_run_keeps_every_kth_round",
    run: long_run_keeps_every_kth_round,
};

fn medians() -> TestResult {
    ensure!(
        RoundSplits::new(0).medians().is_none(),
        "no round: a median"
    );
    // Blocks of 0..5 µs in rounds 10 µs longer: medians 2 and 10.
    let mut splits = RoundSplits::new(5);
    for longest in [4_000, 0, 3_000, 1_000, 2_000] {
        splits.record(longest + 10_000, longest);
    }
    let expected = RoundSplitMedians {
        longest_block_ns: 2_000,
        rest_ns: 10_000,
    };
    let got = splits.medians();
    ensure!(got == Some(expected), "{got:?}, not {expected:?}");
    // A block read as longer than its round (the two clocks are different
    // cores') is the whole round, with no rest; an even count gives the
    // upper median.
    let mut splits = RoundSplits::new(2);
    splits.record(5_000, 7_000);
    splits.record(9_000, 1_000);
    let expected = RoundSplitMedians {
        longest_block_ns: 5_000,
        rest_ns: 8_000,
    };
    let got = splits.medians();
    ensure!(got == Some(expected), "{got:?}, not {expected:?}");
    Ok(())
}

fn long_run_keeps_every_kth_round() -> TestResult {
    // 2^16 rounds are kept at most: a run of 3 x 2^16 rounds keeps every
    // third, so a run whose rounds grow one by one has its middle round's
    // block as the median, not the first 2^16 rounds' middle.
    let rounds: u64 = 3 << 16;
    let mut splits = RoundSplits::new(rounds as usize);
    for round in 0..rounds {
        splits.record(round + 1_000, round);
    }
    let kept = splits.kept_rounds();
    ensure!(kept <= MAX_KEPT_ROUNDS, "kept {kept} rounds of {rounds}");
    let got = splits.medians();
    let middle = rounds / 2;
    ensure!(
        got.is_some_and(|m| m.longest_block_ns.abs_diff(middle) <= 3 && m.rest_ns == 1_000),
        "{got:?}: the median block is not the run's middle ({middle})"
    );
    // A run offered more rounds than it was made for keeps no more: the
    // first rounds' blocks, not the later ones'.
    let mut splits = RoundSplits::new(3);
    for longest in [1_000, 2_000, 3_000, 100_000, 100_000] {
        splits.record(longest * 2, longest);
    }
    let got = splits.medians().map(|m| m.longest_block_ns);
    ensure!(got == Some(2_000), "{got:?}: kept rounds past its size");
    Ok(())
}
