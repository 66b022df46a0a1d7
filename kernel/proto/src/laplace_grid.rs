//! The Laplace workload's arithmetic, defined once for everything that
//! runs it in a guest: Vigil's kernel and the Linux peer's program compute
//! the same grid with the same blocks, and print the same result line
//! ([`GridResult`](crate::serial_line::GridResult)). The host's reference
//! (`xtask`'s `laplace_reference`) is written on its own, so that a mistake
//! here shows up as a checksum mismatch rather than agreeing with itself.
//!
//! - values are `i64` with [`ONE`] = 1.0; the top boundary row is `ONE`,
//!   the other boundaries and the initial interior are 0
//!   ([`initial_value`]);
//! - each interior point becomes `(up + down + left + right) >> 2`
//!   (arithmetic shift, i.e. floor division by 4: [`relax`]);
//! - the residual is the sum over interior points of `|new - old|` in the
//!   last iteration (integer addition: order-independent);
//! - the checksum is FNV-1a 64 over the final grid's values, row-major,
//!   each value as 8 little-endian bytes ([`Fnv1a64`]).

use core::ops::Range;

/// Fixed-point 1.0.
pub const ONE: i64 = 1 << 30;

/// The value of point `index` (row-major) of a fresh `size`×`size` grid:
/// [`ONE`] on the top row, 0 elsewhere.
#[must_use]
pub const fn initial_value(size: usize, index: usize) -> i64 {
    if index < size { ONE } else { 0 }
}

/// The new value of an interior point from its four neighbours.
#[must_use]
pub const fn relax(up: i64, down: i64, left: i64, right: i64) -> i64 {
    (up + down + left + right) >> 2
}

/// The interior rows of block `block` of `blocks`: contiguous, sizes
/// differ by at most one, together every interior row once.
#[must_use]
pub const fn block_rows(size: usize, blocks: usize, block: usize) -> Range<usize> {
    let interior = size - 2;
    let start = 1 + interior * block / blocks;
    let end = 1 + interior * (block + 1) / blocks;
    start..end
}

/// How many workers a grid of side `size` gets on `cores` cores: one per
/// core, at most one per interior row.
#[must_use]
pub fn worker_count(size: usize, cores: usize) -> usize {
    cores.min(size - 2).max(1)
}

/// FNV-1a 64 over `i64` values, each as 8 little-endian bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv1a64(u64);

impl Fnv1a64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// The hash of nothing (the offset basis).
    #[must_use]
    pub const fn new() -> Self {
        Self(Self::OFFSET)
    }

    /// Hashes one value in.
    pub fn write_i64(&mut self, value: i64) {
        for byte in value.to_le_bytes() {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    /// The hash so far.
    #[must_use]
    pub const fn finish(self) -> u64 {
        self.0
    }
}

impl Default for Fnv1a64 {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_every_interior_row_once() {
        for size in [4, 5, 64, 65, 512] {
            for blocks in 1..=(size - 2).min(40) {
                let mut next = 1;
                for block in 0..blocks {
                    let rows = block_rows(size, blocks, block);
                    assert_eq!(rows.start, next, "size {size} blocks {blocks}");
                    assert!(!rows.is_empty(), "size {size} blocks {blocks}");
                    next = rows.end;
                }
                assert_eq!(next, size - 1);
            }
        }
    }

    #[test]
    fn one_worker_per_core_and_per_interior_row_at_most() {
        assert_eq!(worker_count(4, 32), 2);
        assert_eq!(worker_count(64, 8), 8);
    }

    #[test]
    fn fnv_of_nothing_is_the_offset_basis() {
        assert_eq!(Fnv1a64::new().finish(), 0xcbf2_9ce4_8422_2325);
        let mut hash = Fnv1a64::new();
        hash.write_i64(0);
        assert_ne!(hash.finish(), Fnv1a64::new().finish());
    }

    #[test]
    fn relax_is_floor_division() {
        assert_eq!(relax(ONE, 0, 0, 0), ONE >> 2);
        assert_eq!(relax(-1, 0, 0, 0), -1);
    }
}
