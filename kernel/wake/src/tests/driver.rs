//! The idle driver stepped by hand on a scripted platform: each `hlt` runs
//! the next step of a script (what the other cores and the interrupt
//! controller do while this core sleeps), so the wake-cause and detector
//! paths run deterministically.

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::{
    BackoffMode, CoreWake, DriverConfig, FoundAt, Idle, IdleDriver, IdleEvent, IdleHooks,
    InterruptCounts, NoHooks, Platform, Policy, PollOutcome, Resume, wake_core,
};

type Step = Box<dyn FnOnce(&Rc<Machine>)>;

/// Two cores; the driver runs on core 0, core 1 wakes it.
struct Machine {
    cores: Vec<CoreWake<u32>>,
    counts: Cell<InterruptCounts>,
    pending_wake: Cell<bool>,
    sent_to_0: Cell<u64>,
    /// Dropped-IPI fault: core 1 decides to send and sends nothing.
    drop_ipis: Cell<bool>,
    timer_arms: Cell<u64>,
    script: RefCell<VecDeque<Step>>,
    halts: Cell<u64>,
    /// The clock's readings, one per read (then the last one for ever).
    clock: RefCell<VecDeque<u64>>,
    clock_now: Cell<u64>,
    /// What the other cores do during each pause of a poll loop.
    on_relax: RefCell<VecDeque<Step>>,
}

impl Machine {
    fn new(script: Vec<Step>) -> Rc<Self> {
        Rc::new(Self {
            cores: (0..2)
                .map(|_| CoreWake::with_detector(Policy::StateMachine, true))
                .collect(),
            counts: Cell::new(InterruptCounts::default()),
            pending_wake: Cell::new(false),
            sent_to_0: Cell::new(0),
            drop_ipis: Cell::new(false),
            timer_arms: Cell::new(0),
            script: RefCell::new(script.into()),
            halts: Cell::new(0),
            clock: RefCell::new(VecDeque::new()),
            clock_now: Cell::new(0),
            on_relax: RefCell::new(VecDeque::new()),
        })
    }

    /// Core 1 gives core 0 `item` through the kernel's waker side.
    fn wake(self: &Rc<Self>, item: u32) {
        let _ = wake_core(&self.cores, 0, item, &On(1, Rc::clone(self)), &NoHooks);
    }

    fn raise(&self, bump: impl FnOnce(&mut InterruptCounts)) {
        let mut counts = self.counts.get();
        bump(&mut counts);
        self.counts.set(counts);
    }
}

/// The machine as seen from one core.
struct On(usize, Rc<Machine>);

impl Platform for On {
    fn core(&self) -> usize {
        self.0
    }

    fn sleep(&self) -> Resume {
        let machine = &self.1;
        machine.halts.set(machine.halts.get() + 1);
        if machine.pending_wake.replace(false) {
            machine.raise(|c| c.wake += 1);
        }
        let step = machine.script.borrow_mut().pop_front();
        match step {
            Some(step) => {
                step(machine);
                if machine.pending_wake.replace(false) {
                    machine.raise(|c| c.wake += 1);
                }
                Resume::Interrupted
            }
            None => Resume::MachineStopped,
        }
    }

    fn interrupt_counts(&self) -> InterruptCounts {
        self.1.counts.get()
    }

    fn wake_pending(&self) -> bool {
        self.1.pending_wake.get()
    }

    fn send_wake(&self, target: usize) {
        assert_eq!(target, 0);
        if !self.1.drop_ipis.get() {
            self.1.pending_wake.set(true);
            self.1.sent_to_0.set(self.1.sent_to_0.get() + 1);
        }
    }

    fn send_probe(&self, _target: usize) {}

    fn wakes_sent_to(&self, target: usize) -> u64 {
        if target == 0 {
            self.1.sent_to_0.get()
        } else {
            0
        }
    }

    fn arm_oneshot_us(&self, _us: u64) {
        self.1.timer_arms.set(self.1.timer_arms.get() + 1);
    }

    fn now_ticks(&self) -> u64 {
        if let Some(now) = self.1.clock.borrow_mut().pop_front() {
            self.1.clock_now.set(now);
        }
        self.1.clock_now.get()
    }

    fn relax(&self) {
        let step = self.1.on_relax.borrow_mut().pop_front();
        if let Some(step) = step {
            step(&self.1);
        }
    }

    fn us_to_ticks(&self, us: u64) -> u64 {
        us
    }

    fn ticks_to_us(&self, ticks: u64) -> u64 {
        ticks
    }
}

/// What the driver told the kernel.
#[derive(Default)]
struct Seen {
    events: RefCell<Vec<IdleEvent>>,
    ended: RefCell<Vec<(IdleEvent, usize)>>,
    lost: RefCell<Vec<(FoundAt, usize)>>,
    ticks: Cell<usize>,
    polls: RefCell<Vec<PollOutcome>>,
}

impl IdleHooks<u32> for &Seen {
    fn record(&self, event: IdleEvent) {
        self.events.borrow_mut().push(event);
    }

    fn halt_ended(&self, cause: IdleEvent, drained: usize, _halted_ticks: u64) {
        self.ended.borrow_mut().push((cause, drained));
    }

    fn lost_wakeup(&self, at: FoundAt, batch: &VecDeque<u32>) {
        self.lost.borrow_mut().push((at, batch.len()));
    }

    fn watchdog_tick(&self, _probes_sent: usize) {
        self.ticks.set(self.ticks.get() + 1);
    }

    fn poll_ended(&self, outcome: PollOutcome) {
        self.polls.borrow_mut().push(outcome);
    }
}

/// One `idle` pass of core 0's driver (the watchdog core if `watchdog`),
/// which must end `Ready`: what the hooks saw, and what it drained.
fn one_idle_pass(machine: &Rc<Machine>, watchdog: bool) -> (Seen, VecDeque<u32>) {
    idle_pass_with(machine, watchdog, BackoffMode::Off)
}

/// [`one_idle_pass`] with a backoff.
fn idle_pass_with(
    machine: &Rc<Machine>,
    watchdog: bool,
    backoff: BackoffMode,
) -> (Seen, VecDeque<u32>) {
    let seen = Seen::default();
    let config = DriverConfig {
        backoff,
        watchdog_tick_us: watchdog.then_some(1000),
    };
    let mut driver = IdleDriver::new(&machine.cores, On(0, Rc::clone(machine)), &seen, config);
    let mut batch = VecDeque::new();
    let idle = driver.idle(&mut batch);
    drop(driver);
    assert_eq!(
        idle,
        Idle::Ready,
        "events {:?}, polls {:?}",
        seen.events.borrow(),
        seen.polls.borrow()
    );
    (seen, batch)
}

#[test]
fn a_wake_ipi_taken_with_a_tick_ends_the_halt() {
    let machine = Machine::new(alloc::vec![Box::new(|m: &Rc<Machine>| {
        // While core 0 sleeps: core 1 claims it and sends the IPI, and the
        // scan tick fires; both are taken in one return from `hlt`.
        m.wake(7);
        m.raise(|c| c.timer += 1);
    }) as Step]);
    let (seen, batch) = one_idle_pass(&machine, true);
    assert_eq!(batch, [7]);
    assert_eq!(*seen.ended.borrow(), [(IdleEvent::WokeByIpi, 1)]);
    assert_eq!(machine.halts.get(), 1, "one hlt: the wake IPI ended it");
    assert!(seen.lost.borrow().is_empty());
}

#[test]
fn a_quiet_tick_halts_again_in_the_same_episode() {
    let machine = Machine::new(alloc::vec![
        Box::new(|m: &Rc<Machine>| m.raise(|c| c.timer += 1)) as Step,
        Box::new(|m: &Rc<Machine>| m.wake(9)) as Step,
    ]);
    let (seen, batch) = one_idle_pass(&machine, true);
    assert_eq!(batch, [9]);
    assert_eq!(machine.halts.get(), 2, "the tick re-halted");
    assert_eq!(seen.ticks.get(), 1, "the tick scanned");
    // Armed before the first hlt, and again once it had fired.
    assert_eq!(machine.timer_arms.get(), 2);
    assert_eq!(*seen.ended.borrow(), [(IdleEvent::WokeByIpi, 1)]);
    assert_eq!(
        machine.cores[0].lost_wakeup_record().counts().episodes,
        1,
        "one episode across both hlts"
    );
}

#[test]
fn a_spontaneous_wake_drains_nothing_and_halts_again() {
    let machine = Machine::new(alloc::vec![
        Box::new(|_: &Rc<Machine>| {}) as Step,
        Box::new(|m: &Rc<Machine>| m.wake(3)) as Step,
    ]);
    let (seen, batch) = one_idle_pass(&machine, false);
    assert_eq!(batch, [3]);
    assert_eq!(machine.halts.get(), 2);
    assert!(seen.events.borrow().contains(&IdleEvent::WokeOther));
    assert_eq!(
        machine.timer_arms.get(),
        0,
        "only the watchdog core arms a tick"
    );
}

#[test]
fn a_claim_whose_ipi_was_dropped_is_reported_on_the_tick() {
    // Core 1 claims the halted core 0 and its IPI is dropped (the
    // `fault=dropped-ipi` of the kernel); then the scan tick fires.
    let machine = Machine::new(alloc::vec![Box::new(|m: &Rc<Machine>| {
        m.drop_ipis.set(true);
        m.wake(5);
        m.raise(|c| c.timer += 1);
    }) as Step]);
    let (seen, batch) = one_idle_pass(&machine, true);
    assert_eq!(*seen.lost.borrow(), [(FoundAt::Tick, 1)]);
    assert_eq!(batch, [5], "the report's batch is the work it slept on");
    assert_eq!(*seen.ended.borrow(), [(IdleEvent::LostWakeupFound, 1)]);
}

/// A 100 µs poll (the platform's tick is 1 µs) on a scripted clock: 0 for
/// the idle pass's and the poll's starts, then `readings`, and `relax` run
/// during the pauses.
fn poll_pass(
    readings: &[u64],
    relax: Vec<Step>,
    script: Vec<Step>,
) -> (Seen, Rc<Machine>, VecDeque<u32>) {
    let machine = Machine::new(script);
    machine
        .clock
        .borrow_mut()
        .extend([0, 0].into_iter().chain(readings.iter().copied()));
    machine.on_relax.borrow_mut().extend(relax);
    let (seen, batch) = idle_pass_with(&machine, false, BackoffMode::FixedUs(100));
    (seen, machine, batch)
}

#[test]
fn a_poll_that_sees_work_without_a_gap_caught_it() {
    let (seen, machine, batch) = poll_pass(
        &[1, 2],
        alloc::vec![Box::new(|m: &Rc<Machine>| m.wake(4)) as Step],
        Vec::new(),
    );
    assert_eq!(*seen.polls.borrow(), [PollOutcome::Caught]);
    assert!(batch.is_empty(), "the caller drains what a poll caught");
    assert_eq!(machine.cores[0].inbox_len(), 1);
    assert_eq!(machine.halts.get(), 0, "the poll caught it: no hlt");
}

#[test]
fn work_found_after_a_gap_is_a_stolen_poll() {
    // Core 0's vCPU is descheduled for 1000 µs while core 1 gives it work:
    // the poll did not pay for itself, whatever it finds.
    let (seen, machine, batch) = poll_pass(
        &[1, 1001],
        alloc::vec![Box::new(|m: &Rc<Machine>| m.wake(6)) as Step],
        Vec::new(),
    );
    assert_eq!(*seen.polls.borrow(), [PollOutcome::Stolen]);
    assert!(seen.events.borrow().contains(&IdleEvent::RecheckFoundWork));
    assert!(
        batch.is_empty(),
        "the halt path's re-check left it to the caller"
    );
    assert_eq!(machine.cores[0].inbox_len(), 1);
    assert_eq!(machine.halts.get(), 0);
}

#[test]
fn a_poll_that_runs_its_budget_out_halts() {
    let readings: Vec<u64> = (1..=11).map(|i| i * 10).collect();
    let (seen, machine, batch) = poll_pass(
        &readings,
        Vec::new(),
        alloc::vec![Box::new(|m: &Rc<Machine>| m.wake(8)) as Step],
    );
    assert_eq!(*seen.polls.borrow(), [PollOutcome::RanOut]);
    assert_eq!(batch, [8]);
    assert_eq!(machine.halts.get(), 1);
}
