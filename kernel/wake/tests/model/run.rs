//! One model: the kernel's idle driver ([`IdleDriver`]) on core 0 of a
//! [`Machine`], wakers on the other cores calling the kernel's waker side
//! ([`wake_core`]), and the timer and spontaneous-wake actors.
//!
//! Checked in every execution (each failure names itself; the mutation run
//! matches the names):
//! * **no lost wakeup**: the execution never ends with core 0 halted,
//!   nothing latched and work in its inbox ([`LOST_WAKEUP`], raised by the
//!   machine), and the driver's own lost-wakeup check never reports one
//!   (with the detector on; under the correct policies a report is false,
//!   under `racy-flag` it is the bug, found);
//! * **no work rescued unreported**: a halt that ends with work drained was
//!   ended by a wake IPI or by a report, never by a tick, a probe or a
//!   spontaneous wake ([`RESCUED`]);
//! * **one IPI per halt** and **no IPI outside the halt window**
//!   (`state-machine`): the window runs from the end of the re-check to the
//!   wake, so the check is that no IPI goes to a core outside it (a waker
//!   sends only after claiming `Halted`, which lies inside it);
//! * every item is drained exactly once (none lost, none twice).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use loom::thread;
use vigil_wake::{
    BackoffMode, CoreWake, DriverConfig, FoundAt, Idle, IdleDriver, IdleEvent, IdleHooks,
    NotifyOutcome, Policy, WakerHooks, wake_core,
};

use super::machine::{LOST_WAKEUP, Machine, ModelPlatform};
use super::trace::{self, dump_trace, trace};

/// The message of the unreported-rescue failure.
pub const RESCUED: &str = "work rescued unreported";
/// The messages of the IPI-accounting failures.
pub const TWO_IPIS: &str = "two IPIs for one halt";
pub const IPI_TO_RUNNING: &str = "IPI sent to a running core";

/// One model to check.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// The policy under test.
    pub policy: Policy,
    /// One waker core per entry, sending that many items one after another.
    pub items_per_waker: &'static [usize],
    /// Keep idling after the last item is drained, so the core halts again
    /// (and the execution ends with it halted: the machine stops).
    pub final_halt: bool,
    /// The lost-wakeup detector's counts and checks on.
    pub detector: bool,
    /// How many times core 0's one-shot may fire (0: core 0 has no scan
    /// tick). Needs the detector.
    pub timer_fires: usize,
    /// Spontaneous wakes of core 0 (0 or 1).
    pub other_wakes: usize,
    /// Core 0's fixed poll budget before halting, in model ticks (0: off).
    pub poll_ticks: u64,
    /// Loom's preemption bound.
    pub preemption_bound: usize,
}

impl Scenario {
    /// A scenario with the detector, the timer, spontaneous wakes and
    /// polling off, at preemption bound 3.
    pub const fn new(policy: Policy, items_per_waker: &'static [usize]) -> Self {
        Self {
            policy,
            items_per_waker,
            final_halt: false,
            detector: false,
            timer_fires: 0,
            other_wakes: 0,
            poll_ticks: 0,
            preemption_bound: 3,
        }
    }
}

/// What a model run explored.
#[derive(Debug)]
pub struct Explored {
    /// Executions loom ran.
    pub executions: usize,
    /// The preemption bound it ran at.
    pub preemption_bound: usize,
    /// Wall time.
    pub elapsed: Duration,
}

/// Runs loom over every execution of `scenario` (within its preemption
/// bound, or `VIGIL_LOOM_BOUND` if that is set and higher); panics with
/// the first failed check.
pub fn check(scenario: Scenario) -> Explored {
    assert!(
        scenario.timer_fires == 0 || scenario.detector,
        "the scan tick needs the detector"
    );
    explore(scenario.preemption_bound, None, move || run_once(scenario))
}

/// Runs loom over every execution of `body` within `preemption_bound` (or
/// `VIGIL_LOOM_BOUND` if that is set and higher), with loom's branch limit
/// raised to `max_branches` if given; panics with the first failed check.
/// Shared by the protocol and the stealable-work models.
pub fn explore(
    preemption_bound: usize,
    max_branches: Option<usize>,
    body: impl Fn() + Send + Sync + 'static,
) -> Explored {
    trace::configure();
    let preemption_bound = std::env::var("VIGIL_LOOM_BOUND")
        .ok()
        .and_then(|b| b.parse::<usize>().ok())
        .map_or(preemption_bound, |bound| preemption_bound.max(bound));
    if std::env::var_os("VIGIL_LOOM_TRACE").is_some() {
        // A failure loom raises itself (a deadlock, too many branches)
        // prints the execution's trace too. Once per test binary: a hook
        // per check would wrap the last and print the trace again each time.
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            let default = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                dump_trace();
                default(info);
            }));
        });
    }
    let start = Instant::now();
    // Per check, not global: the test harness runs several checks at once.
    let executions = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&executions);
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(preemption_bound);
    if let Some(max_branches) = max_branches {
        builder.max_branches = max_branches;
    }
    builder.check(move || {
        counter.fetch_add(1, SeqCst);
        trace::clear();
        body();
    });
    Explored {
        executions: executions.load(SeqCst),
        preemption_bound,
        elapsed: start.elapsed(),
    }
}

fn run_once(scenario: Scenario) {
    let policy = scenario.policy;
    let wakers = scenario.items_per_waker.len();
    let cores: Arc<Vec<CoreWake<u32>>> = Arc::new(
        (0..=wakers)
            .map(|_| CoreWake::with_detector(policy, scenario.detector))
            .collect(),
    );
    let machine = Machine::new(
        wakers + 1,
        wakers,
        scenario.timer_fires,
        scenario.other_wakes,
    );
    let expected: usize = scenario.items_per_waker.iter().sum();

    let core = {
        let cores = Arc::clone(&cores);
        let machine = Arc::clone(&machine);
        thread::spawn(move || idle_core(&cores, &machine, scenario, expected))
    };
    let timer = (scenario.timer_fires > 0).then(|| {
        let machine = Arc::clone(&machine);
        thread::spawn(move || machine.run_timer(0))
    });
    let other = (scenario.other_wakes > 0).then(|| {
        let machine = Arc::clone(&machine);
        thread::spawn(move || machine.run_other_wake(0))
    });
    let wakers: Vec<_> = scenario
        .items_per_waker
        .iter()
        .enumerate()
        .map(|(w, &items)| {
            let cores = Arc::clone(&cores);
            let machine = Arc::clone(&machine);
            thread::spawn(move || waker(&cores, &machine, policy, w + 1, items))
        })
        .collect();

    for waker in wakers {
        waker.join().expect("waker thread panicked");
    }
    let mut drained = core.join().expect("idle core panicked");
    if let Some(timer) = timer {
        timer.join().expect("timer thread panicked");
    }
    if let Some(other) = other {
        other.join().expect("spontaneous-wake thread panicked");
    }
    drained.sort_unstable();
    let all = drained.len();
    drained.dedup();
    assert_eq!(all, drained.len(), "an item was drained twice");
    assert_eq!(drained.len(), expected, "an item was lost");
    if policy == Policy::StateMachine {
        let (ipis, halts) = (machine.ipis.load(SeqCst), machine.halts.load(SeqCst));
        assert!(ipis <= halts, "{ipis} IPIs for {halts} halts");
    }
}

/// A waker core: gives core 0 `items` items through the kernel's waker side.
fn waker(cores: &[CoreWake<u32>], machine: &Arc<Machine>, policy: Policy, me: usize, items: usize) {
    let platform = ModelPlatform {
        core: me,
        machine: Arc::clone(machine),
    };
    let hooks = ModelWakerHooks {
        machine,
        policy,
        me,
    };
    for k in 0..items {
        let item = u32::try_from(me * 100 + k).expect("small");
        machine.pushed.fetch_add(1, SeqCst);
        let outcome = wake_core(cores, 0, item, &platform, &hooks);
        trace(|| format!("waker {me}: sent {item}: {outcome:?}"));
    }
    machine.wakers_left.fetch_sub(1, SeqCst);
}

struct ModelWakerHooks<'a> {
    machine: &'a Machine,
    policy: Policy,
    me: usize,
}

impl WakerHooks for ModelWakerHooks<'_> {
    fn decided(&self, outcome: &NotifyOutcome) {
        trace(|| format!("waker {}: decided {outcome:?}", self.me));
    }

    fn before_ipi(&self) {
        let machine = self.machine;
        machine.ipis.fetch_add(1, SeqCst);
        if self.policy == Policy::StateMachine {
            assert!(machine.in_halt.load(SeqCst), "{IPI_TO_RUNNING}");
            assert_eq!(machine.ipis_this_halt.fetch_add(1, SeqCst), 0, "{TWO_IPIS}");
        }
    }
}

/// Core 0: the kernel's idle loop around the driver (the run queue is the
/// list of drained items). Returns every item it drained.
fn idle_core(
    cores: &[CoreWake<u32>],
    machine: &Arc<Machine>,
    scenario: Scenario,
    expected: usize,
) -> Vec<u32> {
    let platform = ModelPlatform {
        core: 0,
        machine: Arc::clone(machine),
    };
    let config = DriverConfig {
        backoff: if scenario.poll_ticks == 0 {
            BackoffMode::Off
        } else {
            BackoffMode::FixedUs(scenario.poll_ticks)
        },
        watchdog_tick_us: (scenario.timer_fires > 0).then_some(1),
    };
    let hooks = ModelIdleHooks { machine };
    let mut driver = IdleDriver::new(cores, platform, hooks, config);
    let mut batch = VecDeque::new();
    let mut drained = Vec::new();
    let account = |batch: &mut VecDeque<u32>, drained: &mut Vec<u32>| {
        trace(|| format!("core: has {} item(s) more", batch.len()));
        machine.drained.fetch_add(batch.len(), SeqCst);
        drained.extend(batch.drain(..));
    };
    loop {
        let n = driver.drain(&mut batch);
        trace(|| format!("core: drain -> {n}"));
        account(&mut batch, &mut drained);
        if !scenario.final_halt && drained.len() == expected {
            break;
        }
        let idle = driver.idle(&mut batch);
        account(&mut batch, &mut drained);
        if idle == Idle::MachineStopped {
            break;
        }
    }
    trace(|| format!("core: done, {} drained", drained.len()));
    machine.stopped.store(true, SeqCst);
    drained
}

struct ModelIdleHooks<'a> {
    machine: &'a Machine,
}

impl IdleHooks<u32> for ModelIdleHooks<'_> {
    fn record(&self, event: IdleEvent) {
        trace(|| format!("core: {event:?}"));
        let machine = self.machine;
        match event {
            IdleEvent::Halt => {
                machine.halts.fetch_add(1, SeqCst);
            }
            IdleEvent::DontSleep | IdleEvent::WokeByIpi | IdleEvent::LostWakeupFound => {
                machine.in_halt.store(false, SeqCst);
            }
            _ => {}
        }
    }

    fn between_recheck_and_commit(&self) {
        self.machine.ipis_this_halt.store(0, SeqCst);
        self.machine.in_halt.store(true, SeqCst);
    }

    fn halt_ended(&self, cause: IdleEvent, drained: usize, _halted_ticks: u64) {
        if drained > 0 && !matches!(cause, IdleEvent::WokeByIpi | IdleEvent::LostWakeupFound) {
            dump_trace();
            panic!("{RESCUED}: a halt ended by {cause:?} drained {drained} item(s)");
        }
    }

    fn lost_wakeup(&self, at: FoundAt, batch: &VecDeque<u32>) {
        dump_trace();
        panic!(
            "{LOST_WAKEUP}: the driver's own check found one {}, with {} item(s) drained",
            at.describe(),
            batch.len()
        );
    }
}
