//! Fault injection at the wake protocol's critical points (`chaos=on`,
//! seeded by `seed=N`), so that races that take hours on hardware happen
//! in minutes, and the one the protocol exists for happens on demand.
//!
//! Two kinds of interference, both drawn from a per-core xorshift generator
//! seeded from the boot seed and the core index (a run's configuration is
//! repeated by its seed; the interleaving still depends on the emulator's
//! scheduling):
//!
//! - **delays**: one visit in [`DELAY_ONE_IN`] of any point spins for up to
//!   [`MAX_DELAY_US`]. How often a delay lines up with a racing waker
//!   depends on how the host schedules the vCPU threads, so on its own it
//!   makes races likelier, not certain.
//! - **holds**, at the idle side's window only (after the re-check, before
//!   the halt commit): one visit in [`HOLD_ONE_IN`] keeps the core in the
//!   window until a waker has finished notifying it (pushed into its inbox
//!   *and* read its idle state to decide about the IPI), or
//!   [`HOLD_LIMIT_MS`] passes. That is the worst interleaving for the
//!   window, forced instead of waited for: a policy with no interlock
//!   between the re-check and the commit (`racy-flag`) loses that wakeup
//!   every time a hold ends on a notify, whatever the host's timing, while
//!   a correct policy must absorb it (`state-machine`: the waker turned
//!   `Halting` into `DontSleep`, the commit fails; `always-ipi`: the IPI is
//!   pending and ends the `hlt` at once).

use crate::arch::{percpu, tsc};
use crate::println;
use crate::smp::cores::MAX_CORES;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A point outside the idle window where a delay may be inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Waker: after the push into the target's inbox, before notify.
    BetweenPushAndNotify,
    /// Waker: after the protocol said "send", before the IPI.
    BeforeIpi,
    /// Fork-join caller: between publishing one worker's job and the next.
    BetweenJobStores,
    /// Fork-join worker: after its count-down, before it looks for its next
    /// job (so the next round can start while it is still awake).
    AfterCountDown,
    /// Stealable pool: a core chose a searcher (the pool's lock released),
    /// before it sends the search wake.
    BeforeSearchWake,
    /// Stealable pool: between publishing a round's chunks and the
    /// caller taking its first one.
    AfterPublish,
    /// Stealable pool: after a chunk ran, before the core looks again.
    AfterChunk,
}

/// What chaos did in the idle side's window (after the re-check, before the
/// commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// Nothing (chaos off, or not drawn this time).
    Passed,
    /// A random delay.
    Delayed,
    /// Held until a waker finished notifying this core.
    HeldUntilNotified,
    /// Held for [`HOLD_LIMIT_MS`] with no notify to this core.
    HoldExpired,
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static STATE: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];
/// Per target core: notifies of it completed (only counted with chaos on).
static NOTIFIES_DONE: [AtomicU64; MAX_CORES] = [const { AtomicU64::new(0) }; MAX_CORES];
/// Holds that ended on a notify, and holds that expired (statistics only:
/// Relaxed, read once at the end of the run).
static HOLDS_NOTIFIED: AtomicU64 = AtomicU64::new(0);
static HOLDS_EXPIRED: AtomicU64 = AtomicU64::new(0);
/// Longest delay, in microseconds.
const MAX_DELAY_US: u64 = 50;
/// One delay in this many visits of a point.
const DELAY_ONE_IN: u64 = 4;
/// One hold in this many visits of the idle window. Rare, because each hold
/// under `racy-flag` costs a lost-wakeup report (or the run); at the default
/// Laplace run this is a few holds per core per boot.
const HOLD_ONE_IN: u64 = 256;
/// Longest hold, in milliseconds: several Laplace iterations, so that a
/// hold started between rounds sees the next round's notify.
const HOLD_LIMIT_MS: u64 = 20;

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
    let r = next(percpu::current_index());
    if r.is_multiple_of(DELAY_ONE_IN) {
        let _ = point;
        tsc::spin_us((r >> 8) % (MAX_DELAY_US + 1));
    }
}

/// The idle side's window on core `me`: maybe a delay, maybe a hold (never
/// anything when chaos is off).
pub fn idle_window(me: usize) -> Window {
    if !enabled() {
        return Window::Passed;
    }
    let r = next(me);
    // Independent bits for the two draws: the low ones pick a delay, the
    // high ones a hold.
    if (r >> 40).is_multiple_of(HOLD_ONE_IN) {
        return hold(me);
    }
    if r.is_multiple_of(DELAY_ONE_IN) {
        tsc::spin_us((r >> 8) % (MAX_DELAY_US + 1));
        return Window::Delayed;
    }
    Window::Passed
}

fn hold(me: usize) -> Window {
    // Acquire: pairs with the Release increment in `notified`, so the
    // waker's read of this core's state (before its increment) happens
    // before anything this core does after seeing the new count: its commit
    // cannot be what that read returned. With Relaxed the waker's read could
    // still see the commit, and the hold would force nothing.
    let before = NOTIFIES_DONE[me].load(Ordering::Acquire);
    let end = tsc::now() + tsc::us_to_ticks(HOLD_LIMIT_MS * 1000);
    while tsc::now() < end {
        if NOTIFIES_DONE[me].load(Ordering::Acquire) != before {
            HOLDS_NOTIFIED.fetch_add(1, Ordering::Relaxed);
            return Window::HeldUntilNotified;
        }
        core::hint::spin_loop();
    }
    HOLDS_EXPIRED.fetch_add(1, Ordering::Relaxed);
    Window::HoldExpired
}

/// Prints how many holds the run had (`chaos: holds=N notified=M
/// expired=K`), if chaos is on.
pub fn report() {
    if !enabled() {
        return;
    }
    let notified = HOLDS_NOTIFIED.load(Ordering::Relaxed);
    let expired = HOLDS_EXPIRED.load(Ordering::Relaxed);
    println!(
        "chaos: holds={} notified={notified} expired={expired}",
        notified + expired
    );
}

/// Waker side: this core has finished notifying `target` (pushed into its
/// inbox, read its idle state, acted, and sent the IPI if it decided to).
/// Ends a hold of `target`'s window, so the held core commits with the
/// waker's whole notify behind it: a lost wakeup is then visible to the
/// core's own check at its halt, and an IPI sent meanwhile is pending.
pub fn notified(target: usize) {
    if !enabled() {
        return;
    }
    // Release: pairs with the Acquire loads in `hold` (see there).
    NOTIFIES_DONE[target].fetch_add(1, Ordering::Release);
}
