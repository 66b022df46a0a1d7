//! Where the Laplace row loop lies: within one page, so that QEMU's TCG
//! chains its back edge (`workloads::laplace::compute_block_untimed`).

use super::runner::{TestCase, TestResult};
use crate::ensure;
use crate::workloads::laplace::{ROW_LOOP_ALIGN, compute_block_untimed};

pub const ROW_LOOP_WITHIN_A_PAGE: TestCase = TestCase {
    name: "workloads::laplace_row_loop_within_a_page",
    run: row_loop_within_a_page,
};

/// The row-block function starts a page: its code (under a page long, see
/// `ROW_LOOP_ALIGN`) cannot straddle a page boundary, wherever the rest of
/// the kernel moves it.
fn row_loop_within_a_page() -> TestResult {
    let start = compute_block_untimed as fn(&_, usize) as usize;
    ensure!(
        start.is_multiple_of(ROW_LOOP_ALIGN),
        "compute_block_untimed starts at {start:#x}, not on a {ROW_LOOP_ALIGN}-byte page: a kernel change can put its row loop across a page boundary, which TCG runs about 3x slower"
    );
    Ok(())
}
