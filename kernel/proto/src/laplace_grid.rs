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

/// About how much work, in grid points, one stealable chunk has (the
/// grid's interior is split evenly into whole rows, so a chunk can be a
/// little under it: 2 chunks of 31 rows of 62 points for 64×64). A chunk
/// costs a lock, a queue pop, a latch count and, for a core woken to run
/// it, a search wake, besides its rows. Measured on the kernel (2 host
/// cores, TCG, release, sync-heavy 64×64): with one chunk per core the
/// grid at 32 vCPUs was 32 chunks of 2 rows and took 190-320 ms; chunk
/// floors of 250, 500, 1000 and 2000 points (13, 7, 4 and 2 chunks at 32
/// vCPUs) took 147-267, 137-148, 92-132 and 35-52 ms at 32 vCPUs and were
/// alike at 2. A floor suits the host it was measured on: with more host
/// cores than 2, more (smaller) chunks could run at once.
pub const MIN_CHUNK_POINTS: usize = 2000;

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

/// How many stealable chunks a round of a grid of side `size` is split
/// into with `workers` workers: as many chunks of about
/// [`MIN_CHUNK_POINTS`] as the grid holds (whole rows), at most one per
/// worker.
#[must_use]
pub fn stealable_chunks(size: usize, workers: usize) -> usize {
    let interior = size - 2;
    let rows_per_chunk = MIN_CHUNK_POINTS.div_ceil(interior);
    workers.min(interior.div_ceil(rows_per_chunk)).max(1)
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
    fn chunks_follow_the_point_floor() {
        // 64x64: 62 interior rows of 62 points, 33 rows a chunk: 2 chunks.
        assert_eq!(stealable_chunks(64, 32), 2);
        assert_eq!(stealable_chunks(64, 1), 1);
        // 512x512: 510 points a row, 4 rows a chunk, 128 chunks, capped.
        assert_eq!(stealable_chunks(512, 32), 32);
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
