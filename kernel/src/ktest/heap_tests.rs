//! The kernel heap: allocations and frees of many sizes and alignments.

use super::runner::{TestCase, TestResult};
use crate::{ensure, heap};
use alloc::alloc::{Layout, alloc, dealloc};
use alloc::boxed::Box;
use alloc::vec::Vec;

pub const MANY_SIZES: TestCase = TestCase {
    name: "heap::many_sizes",
    run: many_sizes,
};
pub const ALIGNMENTS: TestCase = TestCase {
    name: "heap::alignments",
    run: alignments,
};
pub const INTERLEAVED_FREES: TestCase = TestCase {
    name: "heap::interleaved_frees",
    run: interleaved_frees,
};
pub const LARGE_BLOCK: TestCase = TestCase {
    name: "heap::large_block",
    run: large_block,
};

fn pattern(block: usize, offset: usize) -> u8 {
    (block.wrapping_mul(31) ^ offset.wrapping_mul(7)) as u8
}

/// Sizes from 1 byte to 256 KiB (Fibonacci-ish steps), all alive at once,
/// each filled with its own pattern; all freed, and the heap's used bytes
/// return to where they started.
fn many_sizes() -> TestResult {
    let before = heap::used_bytes();
    let (mut a, mut b) = (1usize, 2usize);
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    while a <= 256 * 1024 {
        let block = blocks.len();
        blocks.push((0..a).map(|i| pattern(block, i)).collect());
        (a, b) = (b, a + b);
    }
    for (block, data) in blocks.iter().enumerate() {
        let bad = data
            .iter()
            .enumerate()
            .find(|&(i, &v)| v != pattern(block, i));
        ensure!(
            bad.is_none(),
            "block {block} of {} bytes corrupted at {bad:?}",
            data.len()
        );
    }
    let count = blocks.len();
    drop(blocks);
    let after = heap::used_bytes();
    ensure!(
        after == before,
        "{count} blocks freed but used bytes {before} -> {after}"
    );
    Ok(())
}

/// Every power-of-two alignment from 1 to 4096 is honoured.
fn alignments() -> TestResult {
    for shift in 0..=12 {
        let align = 1usize << shift;
        for size in [1usize, align, 3 * align + 1] {
            let layout = Layout::from_size_align(size, align).map_err(|e| alloc::format!("{e}"))?;
            // SAFETY: `layout` has non-zero size; the pointer is checked for
            // null and freed with the same layout.
            let ptr = unsafe { alloc(layout) };
            ensure!(
                !ptr.is_null(),
                "allocation of {size} bytes aligned {align} failed"
            );
            ensure!(
                (ptr as usize).is_multiple_of(align),
                "{ptr:p} not aligned to {align}"
            );
            // SAFETY: `ptr` came from `alloc(layout)` above and is freed once.
            unsafe { dealloc(ptr, layout) };
        }
    }
    Ok(())
}

/// Freeing every other block and allocating again leaves survivors intact.
fn interleaved_frees() -> TestResult {
    let mut boxes: Vec<Option<Box<[u64; 8]>>> =
        (0..2000u64).map(|i| Some(Box::new([i; 8]))).collect();
    for slot in boxes.iter_mut().step_by(2) {
        *slot = None;
    }
    let refill: Vec<Box<[u64; 16]>> = (0..1000u64).map(|i| Box::new([u64::MAX - i; 16])).collect();
    for (i, slot) in boxes.iter().enumerate() {
        if let Some(b) = slot {
            ensure!(
                b.iter().all(|&v| v == i as u64),
                "survivor {i} overwritten: {:?}",
                b[0]
            );
        }
    }
    for (i, b) in refill.iter().enumerate() {
        ensure!(
            b.iter().all(|&v| v == u64::MAX - i as u64),
            "refill {i} corrupted"
        );
    }
    Ok(())
}

/// One 8 MiB block: written end to end and read back.
fn large_block() -> TestResult {
    const WORDS: usize = 1 << 20;
    let mut data: Vec<u64> = Vec::with_capacity(WORDS);
    data.extend((0..WORDS as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    let sum = data.iter().fold(0u64, |acc, &v| acc.wrapping_add(v));
    let expected = (0..WORDS as u64).fold(0u64, |acc, i| {
        acc.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    });
    ensure!(
        sum == expected,
        "8 MiB block read back {sum:#x}, expected {expected:#x}"
    );
    Ok(())
}
