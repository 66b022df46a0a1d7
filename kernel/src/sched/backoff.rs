//! How long an idle core polls its inbox before taking the halt path.
//!
//! Polling is only worth it when work comes back sooner than a halt and a
//! wake IPI would take, *and* the polling core is not taking host time from
//! the cores that have the work (under TCG with more vCPUs than host cores,
//! a spinning vCPU does exactly that). The kernel cannot see the host's core
//! count, so the adaptive mode learns from what its halts cost: a halt that
//! ended soon (the work came back within [`MAX_SPIN_US`]) says a poll of
//! about that length would have caught it; a halt that lasted long, or a poll
//! that caught nothing, says polling is waste here, and the budget decays.
//!
//! The adaptive mode also watches for its own vCPU being descheduled: the
//! poll loop reads the TSC every iteration, and a gap of more than
//! [`STEAL_GAP_US`] between two reads means the host ran something else
//! meanwhile. If such gaps add up to more than a quarter of a poll, there
//! are more runnable vCPUs than host cores and polling takes host time from
//! the cores that have the work: the core stops polling for
//! [`STEAL_COOLDOWN_HALTS`] halts before it tries again.
//!
//! The poll loop reads the inbox count and the TSC without `pause`: under
//! TCG `pause` leaves translated code and takes QEMU's global lock, which
//! every other vCPU then waits for.

use core::sync::atomic::{AtomicU64, Ordering};

/// Longest poll the adaptive mode ever tries.
pub const MAX_SPIN_US: u64 = 300;
/// A gap between two TSC reads of the poll loop longer than this counts as
/// time the vCPU was descheduled by the host.
pub const STEAL_GAP_US: u64 = 50;
/// Halts without polling after a poll saw its vCPU descheduled.
pub const STEAL_COOLDOWN_HALTS: u64 = 1000;

/// The boot-time choice (`backoff=off|adaptive|US`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackoffMode {
    /// Halt at once.
    Off,
    /// Poll a fixed time.
    FixedUs(u64),
    /// Learn the poll time per core from the halts it ends in.
    Adaptive,
}

/// One core's adaptive budget (written by that core only).
#[derive(Debug, Default)]
pub struct Backoff {
    budget_us: AtomicU64,
    /// Halts left before polling is tried again after a steal.
    cooldown_halts: AtomicU64,
}

impl Backoff {
    /// Starts with no polling (the first halts teach the budget).
    pub const fn new() -> Self {
        Self {
            budget_us: AtomicU64::new(0),
            cooldown_halts: AtomicU64::new(0),
        }
    }

    /// How long to poll now.
    pub fn budget_us(&self, mode: BackoffMode) -> u64 {
        match mode {
            BackoffMode::Off => 0,
            BackoffMode::FixedUs(us) => us,
            BackoffMode::Adaptive if self.cooldown_halts.load(Ordering::Relaxed) > 0 => 0,
            BackoffMode::Adaptive => self.budget_us.load(Ordering::Relaxed),
        }
    }

    /// The poll caught work after `waited_us`: keep a budget that covers it.
    pub fn caught(&self, mode: BackoffMode, waited_us: u64) {
        if mode == BackoffMode::Adaptive {
            let budget = self.budget_us.load(Ordering::Relaxed);
            self.set(budget.max((2 * waited_us).min(MAX_SPIN_US)));
        }
    }

    /// The poll saw its vCPU descheduled: stop polling for a while.
    pub fn stolen(&self, mode: BackoffMode) {
        if mode == BackoffMode::Adaptive {
            self.cooldown_halts
                .store(STEAL_COOLDOWN_HALTS, Ordering::Relaxed);
        }
    }

    /// The poll (if any) caught nothing and the core halted for `halted_us`.
    pub fn halted(&self, mode: BackoffMode, halted_us: u64) {
        if mode != BackoffMode::Adaptive {
            return;
        }
        let cooldown = self.cooldown_halts.load(Ordering::Relaxed);
        if cooldown > 0 {
            self.cooldown_halts.store(cooldown - 1, Ordering::Relaxed);
            return;
        }
        let budget = self.budget_us.load(Ordering::Relaxed);
        if halted_us <= MAX_SPIN_US {
            // Work came back soon: a poll of twice that would have caught it.
            self.set((2 * halted_us).clamp(budget, MAX_SPIN_US));
        } else {
            // Polling would not have helped (or did not): decay toward none.
            self.set(budget / 2);
        }
    }

    fn set(&self, us: u64) {
        self.budget_us.store(us, Ordering::Relaxed);
    }
}
