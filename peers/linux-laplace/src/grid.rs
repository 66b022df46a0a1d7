//! The two grids of a Laplace run and one block of one iteration: Vigil's
//! kernel's `workloads/laplace.rs` with the same arithmetic
//! ([`vigil_proto::laplace_grid`]), the same split into blocks and the same
//! result, for Linux threads instead of Vigil's cores.

use std::sync::atomic::{AtomicI64, Ordering};

use vigil_proto::laplace_grid::{self, Fnv1a64};

/// Both grids and the per-block residuals of the last iteration.
#[derive(Debug)]
pub struct Grids {
    size: usize,
    blocks: usize,
    iterations: usize,
    a: Vec<AtomicI64>,
    b: Vec<AtomicI64>,
    residuals: Vec<AtomicI64>,
}

fn initial_grid(size: usize) -> Vec<AtomicI64> {
    (0..size * size)
        .map(|k| AtomicI64::new(laplace_grid::initial_value(size, k)))
        .collect()
}

impl Grids {
    /// Fresh grids for `iterations` iterations split into `blocks` blocks.
    pub fn new(size: usize, iterations: usize, blocks: usize) -> Self {
        Self {
            size,
            blocks,
            iterations,
            a: initial_grid(size),
            b: initial_grid(size),
            residuals: (0..blocks).map(|_| AtomicI64::new(0)).collect(),
        }
    }

    /// Blocks per iteration.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Computes block `block` of iteration `iteration` (even: a -> b, odd:
    /// b -> a), recording its residual in the last iteration.
    ///
    /// Relaxed: an iteration's reads and writes are ordered against the
    /// other threads' by the fork-join hand-offs (the barrier's, or rayon's
    /// job latches: each a release by the finisher and an acquire by the
    /// waiter), and within an iteration no two blocks write the same point
    /// or read a point written in the same iteration.
    pub fn compute_block(&self, iteration: usize, block: usize) {
        let n = self.size;
        let (src, dst) = if iteration % 2 == 0 {
            (&self.a, &self.b)
        } else {
            (&self.b, &self.a)
        };
        let record = iteration + 1 == self.iterations;
        let mut residual = 0i64;
        for i in laplace_grid::block_rows(n, self.blocks, block) {
            for j in 1..n - 1 {
                let up = src[(i - 1) * n + j].load(Ordering::Relaxed);
                let down = src[(i + 1) * n + j].load(Ordering::Relaxed);
                let left = src[i * n + j - 1].load(Ordering::Relaxed);
                let right = src[i * n + j + 1].load(Ordering::Relaxed);
                let new = laplace_grid::relax(up, down, left, right);
                if record {
                    residual += (new - src[i * n + j].load(Ordering::Relaxed)).abs();
                }
                dst[i * n + j].store(new, Ordering::Relaxed);
            }
        }
        if record {
            self.residuals[block].store(residual, Ordering::Relaxed);
        }
    }

    /// The residual of the last iteration (0 if none ran).
    pub fn residual(&self) -> i64 {
        self.residuals
            .iter()
            .map(|r| r.load(Ordering::Relaxed))
            .sum()
    }

    /// FNV-1a 64 of the final grid (`b` after an odd number of
    /// iterations, `a` after an even one).
    pub fn checksum(&self) -> u64 {
        let last = if self.iterations % 2 == 1 {
            &self.b
        } else {
            &self.a
        };
        let mut hash = Fnv1a64::new();
        for value in last {
            hash.write_i64(value.load(Ordering::Relaxed));
        }
        hash.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's known answer for 64x64 after 300 iterations (the
    /// host's reference checks it too), with 1 and with 5 blocks.
    #[test]
    fn the_known_answer_whatever_the_blocks() {
        for blocks in [1, 5] {
            let grids = Grids::new(64, 300, blocks);
            for iteration in 0..300 {
                for block in 0..blocks {
                    grids.compute_block(iteration, block);
                }
            }
            assert_eq!(grids.residual(), 759_484_750);
            assert_eq!(grids.checksum(), 0x22b5_0acc_c8dd_2c19);
        }
    }
}
