//! The stealable-work model: several cores of the [`Machine`] each run the
//! kernel's idle loop (the crate's [`IdleDriver`] for the halt, the
//! [`Stealable`] pool's rule before it), core 0 publishes stealable items,
//! and a waker core may send a pinned item to core 1.
//!
//! A search wake is what it is in the kernel: a ticket pushed into the
//! chosen core's inbox through [`wake_core`], so it travels the pinned
//! protocol, IPI included (latched, no memory edge).
//!
//! Checked in every execution:
//! * **nothing stranded**: the machine never stops (every driver core
//!   halted, nothing latched, nothing left to wake one) with a stealable
//!   item queued ([`STRANDED`]) or an inbox item undrained
//!   ([`LOST_WAKEUP`]);
//! * every stealable item is taken exactly once, the pinned item drained
//!   once;
//! * **no thundering herd** ([`HERD`]): after every call into the pool, at
//!   most one core is chosen to search (one search wake in flight), and
//!   search wakes never outnumber the stealable items published.
//!
//! Not checked here: that the chain of search wakes wakes *enough* cores
//! (a rule that never wakes a second searcher strands nothing: the cores
//! awake take every item); the bench measures how many cores ran work.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use loom::thread;
use vigil_wake::{
    BackoffMode, CoreWake, DriverConfig, FoundAt, Idle, IdleDriver, IdleEvent, IdleHooks, NoHooks,
    Policy, Searcher, Stealable, wake_core,
};

use super::machine::{Machine, ModelPlatform};
use super::run::{Explored, explore};
use super::trace::{dump_trace, trace};

/// The message of more than one core chosen to search at once (or more
/// search wakes than items).
pub const HERD: &str = "thundering herd";

/// What a driver core finds in its inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    /// Pinned work: runs on this core only.
    Pinned(u32),
    /// A search wake: look for stealable work.
    Search,
}

/// One stealable-work model.
#[derive(Clone, Copy, Debug)]
pub struct StealScenario {
    /// Driver cores (core 0 is also the publisher).
    pub cores: usize,
    /// Stealable items published, per publication.
    pub publications: &'static [usize],
    /// Who publishes: core 0, which then takes items too (the kernel's
    /// fork-join caller), or a core that runs no idle driver and takes
    /// nothing (a producer that only hands work off: the case in which
    /// only the wake rule stands between the items and a stranded queue).
    pub publisher: Publisher,
    /// A waker core sends one pinned item to core 1.
    pub pinned_to_core_1: bool,
    /// Loom's preemption bound.
    pub preemption_bound: usize,
}

/// Who publishes the stealable items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Publisher {
    /// Driver core 0, before its loop.
    Core0,
    /// A core of its own that only publishes.
    Producer,
}

/// Runs loom over every execution of `scenario`.
pub fn check_steal(scenario: StealScenario) -> Explored {
    // Longer executions than the protocol models' (several cores, each
    // halting and waking more than once): more than loom's default branch
    // limit, though every loop in them is bounded.
    explore(scenario.preemption_bound, Some(100_000), move || {
        run_once(scenario);
    })
}

struct World {
    cores: Vec<CoreWake<Item>>,
    pool: Stealable<u32>,
    machine: Arc<Machine>,
    /// Ghost: what each core ran, stealable and pinned (std: no branches).
    ran: StdMutex<Vec<u32>>,
    pinned_ran: AtomicUsize,
}

fn run_once(scenario: StealScenario) {
    let producer = scenario.publisher == Publisher::Producer;
    let wakers = usize::from(scenario.pinned_to_core_1) + usize::from(producer);
    let cores = scenario.cores + wakers;
    let world = Arc::new(World {
        cores: (0..cores)
            .map(|_| CoreWake::with_detector(Policy::StateMachine, false))
            .collect(),
        pool: Stealable::new(scenario.cores),
        machine: Machine::with_drivers(cores, scenario.cores, wakers, 0, 0),
        ran: StdMutex::new(Vec::new()),
        pinned_ran: AtomicUsize::new(0),
    });
    let drivers: Vec<_> = (0..scenario.cores)
        .map(|me| {
            let world = Arc::clone(&world);
            thread::spawn(move || driver_core(&world, scenario, me))
        })
        .collect();
    let waker = scenario.pinned_to_core_1.then(|| {
        let world = Arc::clone(&world);
        thread::spawn(move || {
            let me = scenario.cores + usize::from(producer);
            let platform = ModelPlatform {
                core: me,
                machine: Arc::clone(&world.machine),
            };
            world.machine.pushed.fetch_add(1, SeqCst);
            let outcome = wake_core(&world.cores, 1, Item::Pinned(900), &platform, &NoHooks);
            trace(|| format!("waker: pinned item to core 1: {outcome:?}"));
            world.machine.waker_done();
        })
    });
    let producer = producer.then(|| {
        let world = Arc::clone(&world);
        thread::spawn(move || {
            let me = scenario.cores;
            publish_all(&world, me, scenario.publications);
            world.machine.waker_done();
        })
    });
    if let Some(waker) = waker {
        waker.join().expect("waker panicked");
    }
    if let Some(producer) = producer {
        producer.join().expect("producer panicked");
    }
    for driver in drivers {
        driver.join().expect("driver core panicked");
    }
    let published: usize = scenario.publications.iter().sum();
    let mut ran = world.ran.lock().expect("ghost").clone();
    ran.sort_unstable();
    let all = ran.len();
    ran.dedup();
    assert_eq!(all, ran.len(), "a stealable item ran twice");
    assert_eq!(ran.len(), published, "a stealable item was lost");
    assert_eq!(
        world.pinned_ran.load(SeqCst),
        usize::from(scenario.pinned_to_core_1),
        "the pinned item did not run once"
    );
    let wakes = world.pool.snapshot().search_wakes;
    if wakes > published as u64 {
        dump_trace();
        panic!("{HERD}: {wakes} search wakes for {published} item(s)");
    }
}

/// The herd check, after every call into the pool.
fn one_searcher(world: &World) {
    let searching = world.pool.snapshot().searching;
    if searching > 1 {
        dump_trace();
        panic!("{HERD}: {searching} cores chosen to search at once");
    }
}

/// A search wake from core `me` to `target`: a ticket through the pinned
/// protocol.
fn search_wake(world: &World, me: usize, target: usize) {
    let platform = ModelPlatform {
        core: me,
        machine: Arc::clone(&world.machine),
    };
    world.machine.pushed.fetch_add(1, SeqCst);
    let outcome = wake_core(&world.cores, target, Item::Search, &platform, &NoHooks);
    trace(|| format!("core {me}: search wake to core {target}: {outcome:?}"));
}

/// Publishes `items` items numbered from `first`; returns the next number.
fn publish(world: &World, me: usize, first: u32, items: usize) -> u32 {
    let end = first + u32::try_from(items).expect("small");
    world.machine.stealable_queued.fetch_add(items, SeqCst);
    let published = world
        .pool
        .publish(me, first..end, |target| search_wake(world, me, target));
    trace(|| format!("core {me}: published {items}: {published:?}"));
    one_searcher(world);
    end
}

/// The producer: every publication, one after another.
fn publish_all(world: &World, me: usize, publications: &[usize]) {
    let mut next = 0;
    for &items in publications {
        next = publish(world, me, next, items);
    }
}

/// One driver core: the kernel's `run_core` loop (pinned work first, then
/// stealable work, then the halt path), core 0 publishing first.
fn driver_core(world: &World, scenario: StealScenario, me: usize) {
    let platform = ModelPlatform {
        core: me,
        machine: Arc::clone(&world.machine),
    };
    let config = DriverConfig {
        backoff: BackoffMode::Off,
        watchdog_tick_us: None,
    };
    let mut driver = IdleDriver::new(&world.cores, platform, ModelIdleHooks { me }, config);
    let mut searcher = Searcher::new(me);
    let mut publications = if me == 0 && scenario.publisher == Publisher::Core0 {
        scenario.publications
    } else {
        &[]
    };
    let mut next_item = 0u32;
    let mut batch = VecDeque::new();
    let mut run_queue = VecDeque::new();
    let accept =
        |batch: &mut VecDeque<Item>, run_queue: &mut VecDeque<u32>, searcher: &mut Searcher| {
            world.machine.drained.fetch_add(batch.len(), SeqCst);
            for item in batch.drain(..) {
                match item {
                    Item::Pinned(id) => run_queue.push_back(id),
                    Item::Search => searcher.search_wake_drained(),
                }
            }
        };
    loop {
        if let Some((&items, rest)) = publications.split_first() {
            publications = rest;
            next_item = publish(world, me, next_item, items);
        }
        driver.drain(&mut batch);
        accept(&mut batch, &mut run_queue, &mut searcher);
        if let Some(id) = run_queue.pop_front() {
            world
                .pool
                .before_pinned_work(&mut searcher, |target| search_wake(world, me, target));
            one_searcher(world);
            trace(|| format!("core {me}: runs pinned {id}"));
            world.pinned_ran.fetch_add(1, SeqCst);
            continue;
        }
        let taken = world
            .pool
            .take(&mut searcher, |target| search_wake(world, me, target));
        one_searcher(world);
        if let Some(item) = taken {
            world.machine.stealable_queued.fetch_sub(1, SeqCst);
            trace(|| format!("core {me}: runs stealable {item}"));
            world.ran.lock().expect("ghost").push(item);
            continue;
        }
        if !publications.is_empty() {
            // Core 0 has more to publish: it is not idle yet (the pool
            // registered it; its next call takes it out again).
            continue;
        }
        trace(|| format!("core {me}: nothing to run, halt path"));
        let idle = driver.idle(&mut batch);
        accept(&mut batch, &mut run_queue, &mut searcher);
        if idle == Idle::MachineStopped {
            break;
        }
    }
    trace(|| format!("core {me}: machine stopped"));
}

struct ModelIdleHooks {
    me: usize,
}

impl IdleHooks<Item> for ModelIdleHooks {
    fn record(&self, event: IdleEvent) {
        trace(|| format!("core {}: {event:?}", self.me));
    }

    fn lost_wakeup(&self, at: FoundAt, _batch: &VecDeque<Item>) {
        dump_trace();
        panic!("core {}: lost wakeup reported {}", self.me, at.describe());
    }
}
