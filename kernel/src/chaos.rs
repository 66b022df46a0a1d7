//! Seeded random delays at the wake protocol's critical points
//! (`chaos=SEED`), so that races that take hours on hardware happen in
//! minutes. Off by default; every delay is drawn from a per-core xorshift
//! generator seeded from the boot seed and the core index, so a run's
//! configuration is repeated by its seed (the interleaving itself still
//! depends on the emulator's scheduling).

use crate::arch::{percpu, tsc};
use crate::smp::cores::MAX_CORES;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Where a delay may be inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Idle side: after the inbox re-check, before the halt commit.
    BeforeCommit,
    /// Waker side: after the push into the target's inbox, before notify.
    BetweenPushAndNotify,
    /// Waker side: after the protocol said "send", before the IPI.
    BeforeIpi,
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static STATE: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];
/// Longest delay, in microseconds.
const MAX_DELAY_US: u64 = 50;
/// One delay in this many visits of a point.
const ONE_IN: u64 = 4;

/// Turns chaos on with `seed` (per-core generators derive from it).
pub fn enable(seed: u64) {
    for (i, s) in STATE.iter().enumerate() {
        // splitmix64 of (seed, core) so cores draw different sequences.
        let mut z = seed.wrapping_add((i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        s.store((z ^ (z >> 31)) | 1, Ordering::Relaxed);
    }
    ENABLED.store(true, Ordering::Relaxed);
}

/// Whether chaos is on.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

fn next(core: usize) -> u64 {
    // Only core `core` uses its generator.
    let mut x = STATE[core].load(Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE[core].store(x, Ordering::Relaxed);
    x
}

/// Maybe spins for a random time at `point` (never when chaos is off).
pub fn delay(point: Point) {
    if !enabled() {
        return;
    }
    let core = percpu::current_index();
    let r = next(core);
    if !r.is_multiple_of(ONE_IN) {
        return;
    }
    let _ = point;
    tsc::spin_us((r >> 8) % (MAX_DELAY_US + 1));
}
