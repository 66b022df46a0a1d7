//! How long an idle core polls its inbox before taking the halt path.
//!
//! Polling is only worth it when work comes back sooner than a halt and a
//! wake IPI would take, *and* the polling core is not taking host time from
//! the cores that have the work (under TCG with more vCPUs than host cores,
//! a spinning vCPU does exactly that). This crate does not know the host's
//! core count (a kernel may: Vigil's measures it at boot and lets at most
//! that many cores poll at once, through `IdleHooks::may_poll`), and the
//! host's load changes as it runs, so the adaptive mode learns from what
//! its halts cost: a halt
//! that ended soon (the work came back within [`MAX_SPIN_US`]) says a poll
//! of about that length would have caught it; a halt that lasted long, or a
//! poll that caught nothing, says polling is waste here, and the budget
//! decays.
//!
//! The adaptive mode also watches for its own vCPU being descheduled: the
//! poll loop reads the clock every iteration, and a gap of more than
//! [`STEAL_GAP_US`] between two reads means the host ran something else
//! meanwhile. Then there may be more runnable vCPUs than host cores, and
//! polling takes host time from the cores that have the work: the core
//! stops polling for a cooldown before it tries again. One gap is not
//! proof (a host interrupt, QEMU translating a new block, another program's
//! burst), so the cooldown is short at first ([`STEAL_COOLDOWN_FIRST_HALTS`]
//! halts) and doubles with every poll in a row that sees a gap, up to
//! [`STEAL_COOLDOWN_MAX_HALTS`]; a poll that sees none and waits starts it
//! over, and so does a budget decayed to no polling (no poll is left to
//! tell).
//!
//! A host that really has no core for the poller costs it a logarithmic
//! number of stolen polls, and a blip costs a few halts, not the rest of
//! the run (a flat 1000-halt cooldown after any gap switched polling off
//! for most of a 1000-round Laplace).
//!
//! Polling is not part of the protocol's correctness: the core stays
//! `Running` while it polls (wakers send no IPI), and the halt path that
//! follows re-checks the inbox as always.

/// Longest poll the adaptive mode ever tries.
pub const MAX_SPIN_US: u64 = 300;
/// A gap between two clock reads of the poll loop longer than this counts
/// as time the vCPU was descheduled by the host.
pub const STEAL_GAP_US: u64 = 50;
/// Halts without polling after a poll saw its vCPU descheduled, the first
/// time (after a poll that saw no gap).
pub const STEAL_COOLDOWN_FIRST_HALTS: u64 = 4;
/// The longest cooldown, reached after polls in a row that each saw their
/// vCPU descheduled (doubling from [`STEAL_COOLDOWN_FIRST_HALTS`]).
pub const STEAL_COOLDOWN_MAX_HALTS: u64 = 1024;

/// How one poll of the inbox ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollOutcome {
    /// Work arrived while it polled.
    Caught,
    /// It polled its whole budget and nothing arrived.
    RanOut,
    /// It saw a gap of more than [`STEAL_GAP_US`] between two clock reads
    /// (its vCPU descheduled) and stopped.
    Stolen,
}

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
    /// The cooldown the next steal starts.
    next_cooldown_halts: u64,
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
            next_cooldown_halts: STEAL_COOLDOWN_FIRST_HALTS,
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

    /// The poll caught work after `waited_us` with no gap (the driver looks
    /// for the gap first): keep a budget that covers it, and if it waited
    /// at all, the next steal's cooldown starts over. Work already there
    /// when the poll began (0 µs) says nothing of the host: the vCPU may
    /// have been descheduled just before, where no poll sees a gap.
    pub fn caught(&mut self, waited_us: u64) {
        if self.mode == BackoffMode::Adaptive {
            self.budget_us = self.budget_us.max((2 * waited_us).min(MAX_SPIN_US));
            if waited_us > 0 {
                self.next_cooldown_halts = STEAL_COOLDOWN_FIRST_HALTS;
            }
        }
    }

    /// The poll ran its whole budget with no gap and caught nothing (what
    /// that says of the budget is for [`Backoff::halted`]): the next
    /// steal's cooldown starts over.
    pub fn ran_out(&mut self) {
        if self.mode == BackoffMode::Adaptive {
            self.next_cooldown_halts = STEAL_COOLDOWN_FIRST_HALTS;
        }
    }

    /// The poll saw its vCPU descheduled: stop polling for the cooldown,
    /// and make the next one (if the next poll sees a gap too) twice as
    /// long.
    pub fn stolen(&mut self) {
        if self.mode == BackoffMode::Adaptive {
            self.cooldown_halts = self.next_cooldown_halts;
            self.next_cooldown_halts = (2 * self.next_cooldown_halts).min(STEAL_COOLDOWN_MAX_HALTS);
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
        if self.budget_us == 0 {
            // No polling now, so no poll will say whether the host still
            // deschedules this vCPU: what the last steals taught is stale,
            // and the next one is a blip again until polls in a row say not.
            self.next_cooldown_halts = STEAL_COOLDOWN_FIRST_HALTS;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backoff that has learnt a budget from halts that ended soon.
    fn polling() -> Backoff {
        let mut backoff = Backoff::new(BackoffMode::Adaptive);
        backoff.halted(50);
        assert_eq!(backoff.budget_us(), 100);
        backoff
    }

    /// Halts until the cooldown ends; how many it took.
    fn halts_until_polling(backoff: &mut Backoff) -> u64 {
        let mut halts = 0;
        while backoff.budget_us() == 0 {
            backoff.halted(50);
            halts += 1;
            assert!(halts <= STEAL_COOLDOWN_MAX_HALTS, "cooldown never ends");
        }
        halts
    }

    #[test]
    fn one_gap_costs_a_short_cooldown() {
        let mut backoff = polling();
        backoff.stolen();
        assert_eq!(
            halts_until_polling(&mut backoff),
            STEAL_COOLDOWN_FIRST_HALTS
        );
        // A clean poll: the next gap is a blip again.
        backoff.ran_out();
        backoff.stolen();
        assert_eq!(
            halts_until_polling(&mut backoff),
            STEAL_COOLDOWN_FIRST_HALTS
        );
        backoff.caught(10);
        backoff.stolen();
        assert_eq!(
            halts_until_polling(&mut backoff),
            STEAL_COOLDOWN_FIRST_HALTS
        );
    }

    #[test]
    fn gaps_in_a_row_double_the_cooldown_up_to_the_cap() {
        let mut backoff = polling();
        let mut expected = STEAL_COOLDOWN_FIRST_HALTS;
        let mut stolen_polls = 0;
        let mut halts = 0;
        while halts < 10 * STEAL_COOLDOWN_MAX_HALTS {
            backoff.stolen();
            stolen_polls += 1;
            let cooldown = halts_until_polling(&mut backoff);
            assert_eq!(cooldown, expected);
            halts += cooldown;
            expected = (2 * expected).min(STEAL_COOLDOWN_MAX_HALTS);
        }
        // A host with no core for the poller: the polls it wastes are the
        // doublings up to the cap, then one per capped cooldown.
        let doublings = u64::from((STEAL_COOLDOWN_MAX_HALTS / STEAL_COOLDOWN_FIRST_HALTS).ilog2());
        assert!(
            stolen_polls <= doublings + 1 + halts / STEAL_COOLDOWN_MAX_HALTS,
            "{stolen_polls} stolen polls in {halts} halts"
        );
    }

    #[test]
    fn work_already_there_does_not_reset_the_doubling() {
        let mut backoff = polling();
        backoff.stolen();
        halts_until_polling(&mut backoff);
        backoff.caught(0);
        backoff.stolen();
        assert_eq!(
            halts_until_polling(&mut backoff),
            2 * STEAL_COOLDOWN_FIRST_HALTS
        );
        backoff.caught(1);
        backoff.stolen();
        assert_eq!(
            halts_until_polling(&mut backoff),
            STEAL_COOLDOWN_FIRST_HALTS
        );
    }

    #[test]
    fn a_stale_steal_history_is_forgotten_when_polling_stops() {
        let mut backoff = polling();
        for _ in 0..5 {
            backoff.stolen();
            halts_until_polling(&mut backoff);
        }
        // Long halts decay the budget to none: no poll happens, so no poll
        // resets the doubling; the decay does.
        while backoff.budget_us() > 0 {
            backoff.halted(10 * MAX_SPIN_US);
        }
        backoff.halted(50);
        backoff.stolen();
        assert_eq!(
            halts_until_polling(&mut backoff),
            STEAL_COOLDOWN_FIRST_HALTS
        );
    }

    #[test]
    fn fixed_and_off_modes_ignore_gaps() {
        for mode in [BackoffMode::Off, BackoffMode::FixedUs(300)] {
            let mut backoff = Backoff::new(mode);
            let before = backoff.budget_us();
            backoff.stolen();
            assert_eq!(backoff.budget_us(), before);
            assert_eq!(backoff.cooldown_halts, 0);
        }
    }
}
