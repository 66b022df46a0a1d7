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
    InterruptCounts, NoHooks, Platform, Policy, Resume, wake_core,
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
        0
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
}

/// One `idle` pass of core 0's driver (the watchdog core if `watchdog`),
/// which must end `Ready`: what the hooks saw, and what it drained.
fn one_idle_pass(machine: &Rc<Machine>, watchdog: bool) -> (Seen, VecDeque<u32>) {
    let seen = Seen::default();
    let config = DriverConfig {
        backoff: BackoffMode::Off,
        watchdog_tick_us: watchdog.then_some(1000),
    };
    let mut driver = IdleDriver::new(&machine.cores, On(0, Rc::clone(machine)), &seen, config);
    let mut batch = VecDeque::new();
    assert_eq!(driver.idle(&mut batch), Idle::Ready);
    drop(driver);
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
