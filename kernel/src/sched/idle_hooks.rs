//! The kernel's side of the idle driver's seam (`vigil_wake::IdleHooks`,
//! `vigil_wake::WakerHooks`): the idle history, chaos mode, statistics,
//! the lost-wakeup report and the watchdog core's own periodic checks. No
//! protocol step lives here.

use super::core_sched::CoreSched;
use super::idle_history::HISTORIES;
use super::inbound::Inbound;
use super::stats;
use super::task::TaskRef;
use super::watchdog;
use crate::chaos;
use alloc::collections::VecDeque;
use vigil_wake::{FoundAt, IdleEvent, IdleHooks, NotifyOutcome, PollOutcome, WakerHooks};

/// Idle-side hooks of core `me`.
#[derive(Debug)]
pub struct KernelIdleHooks {
    core: &'static CoreSched,
    me: usize,
}

impl KernelIdleHooks {
    /// The hooks of core `me`, whose scheduler is `core`.
    pub fn new(core: &'static CoreSched, me: usize) -> Self {
        Self { core, me }
    }
}

impl IdleHooks<Inbound> for KernelIdleHooks {
    fn record(&self, event: IdleEvent) {
        HISTORIES[self.me].record(event);
    }

    fn between_recheck_and_commit(&self) {
        match chaos::idle_window(self.me) {
            chaos::Window::HeldUntilNotified => {
                HISTORIES[self.me].record(IdleEvent::ChaosHeldUntilNotified);
            }
            chaos::Window::HoldExpired => HISTORIES[self.me].record(IdleEvent::ChaosHoldExpired),
            chaos::Window::Passed | chaos::Window::Delayed => {}
        }
    }

    fn idle_ended(&self, idle_ticks: u64) {
        stats::add(&self.core.stats.idle_ticks, idle_ticks);
    }

    fn halt_ended(&self, cause: IdleEvent, drained: usize, halted_ticks: u64) {
        stats::add(&self.core.stats.halted_ticks, halted_ticks);
        if drained > 0 && cause == IdleEvent::WokeByIpi {
            stats::add(&self.core.stats.ipi_wakes_with_work, 1);
        }
    }

    fn lost_wakeup(&self, at: FoundAt, batch: &VecDeque<Inbound>) {
        watchdog::report(self.me, at, batch);
    }

    fn may_poll(&self) -> bool {
        super::poll_slots::acquire()
    }

    fn poll_ended(&self, outcome: PollOutcome) {
        super::poll_slots::release();
        stats::add(&self.core.stats.polls, 1);
        match outcome {
            PollOutcome::Caught => stats::add(&self.core.stats.polls_caught, 1),
            PollOutcome::Stolen => stats::add(&self.core.stats.polls_stolen, 1),
            PollOutcome::RanOut => {}
        }
    }

    fn claim_scan(&self) -> bool {
        watchdog::claim_scan()
    }

    fn watchdog_tick(&self, probes_sent: usize) {
        watchdog::periodic_checks(self.me, probes_sent);
        watchdog::release_scan(self.me, true);
    }
}

/// Waker-side hooks of one wake: core `me` gives `task` to core `target`.
#[derive(Debug)]
pub struct KernelWakerHooks<'a> {
    task: &'a TaskRef,
    me: usize,
    target: usize,
}

impl<'a> KernelWakerHooks<'a> {
    /// The hooks of core `me` waking `task` on core `target`.
    pub fn new(task: &'a TaskRef, me: usize, target: usize) -> Self {
        Self { task, me, target }
    }
}

impl WakerHooks for KernelWakerHooks<'_> {
    fn between_push_and_notify(&self) {
        watchdog::maybe_stall_waker(self.me, self.target);
        chaos::delay(chaos::Point::BetweenPushAndNotify);
    }

    fn decided(&self, outcome: &NotifyOutcome) {
        self.task.record_notify(self.me, outcome);
    }

    fn before_ipi(&self) {
        chaos::delay(chaos::Point::BeforeIpi);
    }

    fn notified(&self) {
        chaos::notified(self.target);
    }
}

/// Waker-side hooks of a search wake: a core tells core `target` to search
/// the stealable pool.
#[derive(Debug)]
pub struct KernelSearchWakeHooks {
    target: usize,
}

impl KernelSearchWakeHooks {
    /// The hooks of a search wake of core `target`.
    pub fn new(target: usize) -> Self {
        Self { target }
    }
}

impl WakerHooks for KernelSearchWakeHooks {
    fn between_push_and_notify(&self) {
        watchdog::maybe_stall_waker(crate::arch::percpu::current_index(), self.target);
        chaos::delay(chaos::Point::BetweenPushAndNotify);
    }

    fn before_ipi(&self) {
        chaos::delay(chaos::Point::BeforeIpi);
    }

    fn notified(&self) {
        chaos::notified(self.target);
    }
}
