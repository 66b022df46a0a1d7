//! The release kernel, the one the bench boots and users run, has each of
//! its hot loops within one 4 KiB page (`xtask::runner::hot_loop_pages`):
//! under QEMU's TCG a loop across a page boundary ran the Laplace row
//! blocks 3x slower, with no source change asking for it.

use xtask::runner::hot_loop_pages::{HOT_LOOPS, check};
use xtask::{BuildConfig, build_kernel};

#[test]
fn the_release_kernels_hot_loops_each_lie_within_one_page() {
    let kernel = build_kernel(&BuildConfig {
        release: true,
        ..BuildConfig::default()
    })
    .unwrap_or_else(|err| panic!("kernel build failed: {err}"));
    if let Err(why) = check(&kernel.elf, &HOT_LOOPS) {
        panic!("{why}");
    }
}
