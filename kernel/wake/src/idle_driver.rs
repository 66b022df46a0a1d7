//! [`IdleDriver`]: the idle loop's protocol part, the code every core of
//! the kernel runs when its run queue is empty, and the very code the loom
//! models drive on a model machine.
//!
//! One pass, with interrupts disabled throughout except inside the halt:
//!
//! 1. [`drain`](IdleDriver::drain) the inbox (the kernel runs what it got;
//!    the driver counts it for the lost-wakeup detector);
//! 2. [`idle`](IdleDriver::idle): poll the inbox for the core's backoff
//!    budget; then the halt path: `Running -> Halting`, re-check,
//!    [`between_recheck_and_commit`](crate::IdleHooks::between_recheck_and_commit),
//!    commit; then the halt itself ([`Platform::sleep`]),
//!    repeated within one episode until a **wake IPI** ends it (its count
//!    moved) or the core finds a **lost wakeup**: a probe, the watchdog
//!    core's scan tick or any other interrupt makes the core check itself
//!    and, finding nothing, halt again without draining (only a wake IPI or
//!    a report ends a halt, so nothing else rescues announced work
//!    unreported); then `woke_up` (back to `Running`, drain).
//!
//! The wake cause is classified from the interrupt counts read before and
//! after each `hlt`, **wake IPI first**: several interrupts may be taken in
//! one return, and a wake IPI taken together with a tick or a probe must
//! still end the halt (its latch is spent: the waker that claimed the halt
//! sends no other).
//!
//! The watchdog core (the one built with a scan period) arms its one-shot
//! before a halt whenever the last one has fired (keyed on the timer count,
//! never the clock: a one-shot that fired is spent, whenever it fired), and
//! on its tick scans every other core's detector record and probes the
//! suspects, then checks itself.

use alloc::collections::VecDeque;

use crate::backoff::{Backoff, BackoffMode, PollOutcome, STEAL_GAP_US};
use crate::core_wake::{Commit, CoreWake, Recheck};
use crate::idle_hooks::{FoundAt, IdleEvent, IdleHooks};
use crate::lost_wakeup;
use crate::platform::{Platform, Resume};

/// How a driver is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriverConfig {
    /// The poll-before-halt budget.
    pub backoff: BackoffMode,
    /// `Some(period)` on the watchdog core only: arm a scan tick every
    /// `period` µs while halted, scan the other cores on it. Needs the
    /// detector on (cores built with [`CoreWake::with_detector`]).
    pub watchdog_tick_us: Option<u64>,
}

/// What an idle pass ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "on `Ready`, run what was drained and go round again"]
pub enum Idle {
    /// Go round the loop: drained work (if any) is in the caller's batch.
    Ready,
    /// The model machine stopped (never on hardware).
    MachineStopped,
}

/// One core's idle driver: its platform handle, its hooks, its backoff
/// budget and (on the watchdog core) its tick. The core builds one at
/// boot and keeps it on its idle stack; only that core uses it.
#[derive(Debug)]
pub struct IdleDriver<'a, T, P, H> {
    cores: &'a [CoreWake<T>],
    platform: P,
    hooks: H,
    backoff: Backoff,
    watchdog_tick_us: Option<u64>,
    /// The timer count when the scan tick was last armed (`None`: never).
    tick_armed_at: Option<u64>,
}

impl<'a, T, P: Platform, H: IdleHooks<T>> IdleDriver<'a, T, P, H> {
    /// The driver of core `platform.core()`, one of `cores`.
    pub fn new(cores: &'a [CoreWake<T>], platform: P, hooks: H, config: DriverConfig) -> Self {
        assert!(
            platform.core() < cores.len(),
            "idle driver for core {} of {}",
            platform.core(),
            cores.len()
        );
        Self {
            cores,
            platform,
            hooks,
            backoff: Backoff::new(config.backoff),
            watchdog_tick_us: config.watchdog_tick_us,
            tick_armed_at: None,
        }
    }

    /// The driver's platform handle.
    pub fn platform(&self) -> &P {
        &self.platform
    }

    fn core(&self) -> &'a CoreWake<T> {
        &self.cores[self.platform.core()]
    }

    /// Step 1: moves everything in this core's inbox to the back of `out`
    /// and returns how many items it moved.
    pub fn drain(&mut self, out: &mut VecDeque<T>) -> usize {
        let core = self.core();
        let drained = core.drain_into(out);
        if drained > 0 {
            core.lost_wakeup_record().note_drained(drained);
        }
        drained
    }

    /// Step 2, with nothing left to run: poll for the backoff budget, then
    /// the halt path. What a halt's `woke_up` drained is at the back of
    /// `out`.
    pub fn idle(&mut self, out: &mut VecDeque<T>) -> Idle {
        let idle_from = self.platform.now_ticks();
        let idle = if self.poll_for_work() {
            Idle::Ready
        } else {
            self.halt_path(out)
        };
        self.hooks
            .idle_ended(self.platform.now_ticks().wrapping_sub(idle_from));
        idle
    }

    /// Bounded backoff: polls the inbox for the current budget, if the
    /// kernel lets it ([`IdleHooks::may_poll`]). `true` if work arrived
    /// (the core stays `Running` meanwhile, so wakers send no IPI).
    fn poll_for_work(&mut self) -> bool {
        let budget_us = self.backoff.budget_us();
        if budget_us == 0 || !self.hooks.may_poll() {
            return false;
        }
        let outcome = self.poll_inbox(budget_us);
        self.hooks.poll_ended(outcome);
        outcome == PollOutcome::Caught
    }

    /// Polls the inbox for `budget_us`, updating the backoff from what it
    /// saw.
    fn poll_inbox(&mut self, budget_us: u64) -> PollOutcome {
        let platform = &self.platform;
        let core = self.core();
        let start = platform.now_ticks();
        let end = start + platform.us_to_ticks(budget_us);
        let steal_gap = platform.us_to_ticks(STEAL_GAP_US);
        let mut last = start;
        loop {
            // The gap first: a vCPU descheduled while it polled is often
            // descheduled for the very core that then gives it work, so
            // work found after a gap says the poll was stolen, not that it
            // paid (the halt path's re-check takes the work at once).
            let now = platform.now_ticks();
            if now.wrapping_sub(last) > steal_gap {
                self.backoff.stolen();
                return PollOutcome::Stolen;
            }
            if core.inbox_len() > 0 {
                self.backoff
                    .caught(platform.ticks_to_us(now.wrapping_sub(start)));
                return PollOutcome::Caught;
            }
            if now >= end {
                self.backoff.ran_out();
                return PollOutcome::RanOut;
            }
            last = now;
            platform.relax();
        }
    }

    /// The protocol's halt path: prepare, re-check, window, commit, halt,
    /// wake up.
    fn halt_path(&mut self, out: &mut VecDeque<T>) -> Idle {
        let core = self.core();
        let record = core.lost_wakeup_record();
        record.halt_path_begins(&self.platform);
        self.hooks.record(IdleEvent::PrepareToHalt);
        let armed = match core.prepare_to_halt().recheck() {
            Recheck::Empty(armed) => armed,
            Recheck::Work => {
                self.hooks.record(IdleEvent::RecheckFoundWork);
                return Idle::Ready;
            }
        };
        self.hooks.between_recheck_and_commit();
        match armed.commit() {
            Commit::Halt(halted) => {
                self.hooks.record(IdleEvent::Halt);
                let halted_from = self.platform.now_ticks();
                let slept = self.sleep();
                let halted_ticks = self.platform.now_ticks().wrapping_sub(halted_from);
                self.backoff.halted(self.platform.ticks_to_us(halted_ticks));
                self.hooks.record(slept.cause);
                let drained = halted.woke_up(out);
                if drained > 0 {
                    record.note_drained(drained);
                }
                self.hooks.halt_ended(slept.cause, drained, halted_ticks);
                if let Some(at) = slept.lost {
                    self.hooks.lost_wakeup(at, out);
                }
                if slept.stopped {
                    return Idle::MachineStopped;
                }
            }
            Commit::DontSleep => self.hooks.record(IdleEvent::DontSleep),
            Commit::WorkArrived => self.hooks.record(IdleEvent::RecheckFoundWork),
            Commit::Poll => {
                core::hint::spin_loop();
                self.platform.relax();
            }
        }
        Idle::Ready
    }

    /// Halts (state `Halted`) until a wake IPI, or until the core finds
    /// that it has lost one. Any other wake halts again, same episode.
    fn sleep(&mut self) -> Slept {
        let record = self.core().lost_wakeup_record();
        let watchdog_core = self.watchdog_tick_us.is_some();
        record.halt_begins();
        let slept = if record.check_self(&self.platform, false) {
            Slept::lost(FoundAt::Halt)
        } else {
            loop {
                let before = self.platform.interrupt_counts();
                if watchdog_core {
                    self.arm_tick(before.timer);
                }
                if self.platform.sleep() == Resume::MachineStopped {
                    break Slept {
                        cause: IdleEvent::WokeOther,
                        lost: None,
                        stopped: true,
                    };
                }
                let after = self.platform.interrupt_counts();
                // The wake IPI first: taken together with a tick or a probe,
                // it still ends the halt.
                if after.wake != before.wake {
                    break Slept {
                        cause: IdleEvent::WokeByIpi,
                        lost: None,
                        stopped: false,
                    };
                }
                let by_tick = watchdog_core && after.timer != before.timer;
                let by_probe = after.probe != before.probe;
                if by_tick && self.hooks.claim_scan() {
                    let records = self.cores.iter().map(CoreWake::lost_wakeup_record);
                    let probes = lost_wakeup::scan(records, &self.platform, None);
                    self.hooks.watchdog_tick(probes);
                }
                let at = if by_tick {
                    FoundAt::Tick
                } else if by_probe {
                    FoundAt::Probe
                } else {
                    FoundAt::OtherWake
                };
                let strict = if by_tick {
                    record.tick_is_strict(&self.platform)
                } else {
                    by_probe && record.probe_is_strict()
                };
                if record.check_self(&self.platform, strict) {
                    break Slept::lost(at);
                }
                // Nothing lost: halt again. A waker that pushes from here on
                // finds this halt's state and sends the IPI if it must,
                // which ends the next halt (pending or not).
                if !by_tick {
                    self.hooks.record(if by_probe {
                        IdleEvent::WokeByProbe
                    } else {
                        IdleEvent::WokeOther
                    });
                }
            }
        };
        // The scan tick stays armed: disarming it is another LAPIC access on
        // the path from wake-up to the woken task (an exit into QEMU under
        // TCG). If it fires while the core runs, it stays pending
        // (interrupts are off) and ends the next halt at once as a tick.
        record.halt_ends();
        slept
    }

    /// The watchdog core's timer: arms the next scan tick unless the one
    /// armed last has not fired yet (`fired`: the timer count now).
    fn arm_tick(&mut self, fired: u64) {
        let Some(period_us) = self.watchdog_tick_us else {
            return;
        };
        if self.tick_armed_at != Some(fired) {
            self.platform.arm_oneshot_us(period_us);
            self.tick_armed_at = Some(fired);
        }
    }
}

/// How a sleep ended.
struct Slept {
    cause: IdleEvent,
    lost: Option<FoundAt>,
    stopped: bool,
}

impl Slept {
    fn lost(at: FoundAt) -> Self {
        Self {
            cause: IdleEvent::LostWakeupFound,
            lost: Some(at),
            stopped: false,
        }
    }
}
