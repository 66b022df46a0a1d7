//! Where the Laplace row loop lies: its function starts a page, so that
//! QEMU's TCG chains its back edge (`workloads::laplace::compute_block_untimed`).

use super::runner::{TestCase, TestResult};
use crate::ensure;
use crate::memory::frames::FRAME_BYTES;
use crate::workloads::laplace::compute_block_untimed;

pub const ROW_BLOCK_FN_PAGE_ALIGNED: TestCase = TestCase {
    name: "workloads::laplace_row_block_fn_page_aligned",
    run: row_block_fn_page_aligned,
};

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
