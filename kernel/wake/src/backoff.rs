//! How long an idle core polls its inbox before taking the halt path.
//!
//! Polling is only worth it when work comes back sooner than a halt and a
//! wake IPI would take, *and* the polling core is not taking host time from
//! the cores that have the work (under TCG with more vCPUs than host cores,
//! a spinning vCPU does exactly that). The kernel cannot see the host's
//! core count, so the adaptive mode learns from what its halts cost: a halt
//! that ended soon (the work came back within [`MAX_SPIN_US`]) says a poll
//! of about that length would have caught it; a halt that lasted long, or a
//! poll that caught nothing, says polling is waste here, and the budget
//! decays.
//!
//! The adaptive mode also watches for its own vCPU being descheduled: the
//! poll loop reads the clock every iteration, and a gap of more than
//! [`STEAL_GAP_US`] between two reads means the host ran something else
//! meanwhile. Then there are more runnable vCPUs than host cores and
//! polling takes host time from the cores that have the work: the core
//! stops polling for [`STEAL_COOLDOWN_HALTS`] halts before it tries again.
//!
//! Polling is not part of the protocol's correctness: the core stays
//! `Running` while it polls (wakers send no IPI), and the halt path that
//! follows re-checks the inbox as always.

/// Longest poll the adaptive mode ever tries.
pub const MAX_SPIN_US: u64 = 300;
/// A gap between two clock reads of the poll loop longer than this counts
/// as time the vCPU was descheduled by the host.
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

/// One core's adaptive budget (its driver's own).
#[derive(Debug, Clone)]
pub struct Backoff {
    mode: BackoffMode,
    budget_us: u64,
    /// Halts left before polling is tried again after a steal.
    cooldown_halts: u64,
}

impl Backoff {
    /// Starts with no polling (under `Adaptive` the first halts teach the
    /// budget).
    #[must_use]
    pub const fn new(mode: BackoffMode) -> Self {
        Self {
            mode,
            budget_us: 0,
            cooldown_halts: 0,
        }
    }

    /// How long to poll now.
    #[must_use]
    pub fn budget_us(&self) -> u64 {
        match self.mode {
            BackoffMode::Off => 0,
            BackoffMode::FixedUs(us) => us,
            BackoffMode::Adaptive if self.cooldown_halts > 0 => 0,
            BackoffMode::Adaptive => self.budget_us,
        }
    }

    /// The poll caught work after `waited_us`: keep a budget that covers it.
    pub fn caught(&mut self, waited_us: u64) {
        if self.mode == BackoffMode::Adaptive {
            self.budget_us = self.budget_us.max((2 * waited_us).min(MAX_SPIN_US));
        }
    }

    /// The poll saw its vCPU descheduled: stop polling for a while.
    pub fn stolen(&mut self) {
        if self.mode == BackoffMode::Adaptive {
            self.cooldown_halts = STEAL_COOLDOWN_HALTS;
        }
    }

    /// The poll (if any) caught nothing and the core halted for `halted_us`.
    pub fn halted(&mut self, halted_us: u64) {
        if self.mode != BackoffMode::Adaptive {
            return;
        }
        if self.cooldown_halts > 0 {
            self.cooldown_halts -= 1;
            return;
        }
        self.budget_us = if halted_us <= MAX_SPIN_US {
            // Work came back soon: a poll of twice that would have caught it.
            (2 * halted_us).clamp(self.budget_us, MAX_SPIN_US)
        } else {
            // Polling would not have helped (or did not): decay toward none.
            self.budget_us / 2
        };
    }
}
