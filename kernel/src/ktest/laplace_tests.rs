//! Where the Laplace row loop lies: its function starts a page, so that
//! QEMU's TCG chains its back edge (`workloads::laplace::compute_block_untimed`).
//! And a round's longest row block is that round's own: the coordinator's
//! take leaves 0 for the next round.

use super::runner::{TestCase, TestResult};
use crate::ensure;
use crate::memory::frames::FRAME_BYTES;
use crate::workloads::laplace::{Grids, compute_block, compute_block_untimed};

pub const ROW_BLOCK_FN_PAGE_ALIGNED: TestCase = TestCase {
    name: "workloads::laplace_row_block_fn_page_aligned",
    run: row_block_fn_page_aligned,
};

pub const LONGEST_BLOCK_TAKEN_PER_ROUND: TestCase = TestCase {
    name: "workloads::laplace_longest_block_is_taken_per_round",
    run: longest_block_taken_per_round,
};

/// The coordinator takes the round's longest block after each round's
/// join (the `pool:` line's medians and the round trial read it): the take
/// reads the timed block and leaves 0, so that a take with no block since
/// reads 0. A take that only read the value (a load for the swap) would
/// give every later round the longest block of the run so far, and a
/// round's rest (its time beyond that block) would shrink to nothing.
fn longest_block_taken_per_round() -> TestResult {
    let grids = Grids::new(64, 2, 1, 1);
    grids.set_iteration(0);
    compute_block(&grids, 0);
    let block_ticks = grids.take_longest_block_ticks();
    ensure!(
        block_ticks > 0,
        "a 64x64 grid's one row block read 0 TSC ticks: compute_block timed nothing"
    );
    let next_ticks = grids.take_longest_block_ticks();
    ensure!(
        next_ticks == 0,
        "a take with no block run since the last read {next_ticks} ticks (the block before took {block_ticks}): the take must leave 0 for the next round"
    );
    Ok(())
}

/// The row-block function starts a page, wherever the rest of the kernel
/// moves it, in the suite's own builds. The release build the bench boots,
/// and the function's size, are checked on the host
/// (`qemu-tests/tests/hot_loop_pages.rs`).
fn row_block_fn_page_aligned() -> TestResult {
    let start = compute_block_untimed as fn(&_, usize) as usize;
    ensure!(
        (start as u64).is_multiple_of(FRAME_BYTES),
        "compute_block_untimed starts at {start:#x}, not on a {FRAME_BYTES}-byte page: a kernel change can put its row loop across a page boundary, which TCG runs about 3x slower"
    );
    Ok(())
}
