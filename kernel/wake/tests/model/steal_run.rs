//! The stealable-work model: several cores of the [`Machine`] each run the
//! kernel's idle loop (the crate's [`IdleDriver`] for the halt, the
//! [`Stealable`] pool's rule before it and around its pinned work). The
//! stealable items come from core 0 (the fork-join caller), from core 0
//! pushing onto its own queue (the hosted pool's `Worker::spawn`, in a
//! pool built with local queues) and then waiting for its first item
//! without helping, or from a producer core that runs no driver (which may
//! push each item onto the outside queue instead, `Stealable::push_outside`
//! in a pool with local queues, the hosted pool's `Producer::spawn`); the
//! producer may also send pinned
//! jobs (that run for several model steps, and may wait for a stealable
//! item to have run) and may hold a search wake back between its choice
//! and its ticket (the kernel's `BeforeSearchWake` window: chosen under the
//! lock, the lock released, the ticket pushed later), and may wait for an
//! item to have run before its next act. A stealable item may wait,
//! without helping, for another to have run (a task blocked on a later
//! spawn), and core 0 may wait for an item to have run before it pushes.
//! Every such wait parks (see [`wait_for_item`]). A waker core may send a
//! one-step pinned item to core 1.
//!
//! A search wake is what it is in the kernel: a ticket pushed into the
//! chosen core's inbox through [`wake_core`], so it travels the pinned
//! protocol, IPI included (latched, no memory edge). The ghost counts each
//! core's tickets in flight: from the choice (the pool's `wake` callback)
//! to the drain.
//!
//! Checked in every execution, each with its own message (the mutation run
//! matches them):
//! * (i) **nothing stranded**: the machine never stops (every driver core
//!   halted, nothing latched, nothing left to wake one) with a stealable
//!   item queued ([`STRANDED`]) or an inbox item undrained
//!   ([`LOST_WAKEUP`]);
//! * (ii) **the search never rests on a busy core**: a core busy with
//!   pinned work is never chosen to search ([`BUSY_CHOSEN`], at the
//!   choice), and at every step of a pinned job no busy core holds the
//!   searcher slot while another core sleeps with a stealable item queued
//!   ([`HELD_BY_BUSY`]);
//! * (iii) **one search wake in flight per core** ([`TWO_TICKETS`], at the
//!   choice);
//! * (iv) **a job waiting on a shared job completes**: a pinned job that
//!   waits for a stealable item, a stealable item that waits for another,
//!   or core 0 waiting for the first item it pushed onto its own queue,
//!   never finds every other driver core asleep for good or itself
//!   waiting for an item not run, with the item not run ([`BLOCKED`]);
//! * (v) **the herd bound**: no choice leaves more searchers than queued
//!   items (the pool's own count of such choices, taken under its lock,
//!   stays 0: [`HERD`]);
//! * (vi) **ramp-up in log2 steps**: each search wake has a generation (a
//!   publication's are 1, a searcher of generation g that finds an item
//!   chooses generation g + 1, a search handed on keeps its generation),
//!   and no generation exceeds ceil(log2(items + 1)) for the items
//!   published in all ([`RAMP`]): a rule that wakes one core at a time
//!   reaches generation k for k items;
//! * every stealable item is taken exactly once, every pinned job run
//!   once.
//!
//! Not checked here: that the ramp wakes *enough* cores (a rule that never
//! wakes a second searcher strands nothing: the cores awake take every
//! item); the pool's unit tests check the doubling step by step, and the
//! bench measures how many cores ran work.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

use loom::thread;
use vigil_wake::{
    BackoffMode, CoreWake, DriverConfig, FoundAt, Idle, IdleDriver, IdleEvent, IdleHooks, NoHooks,
    Policy, Searcher, Stealable, wake_core,
};

use super::machine::{BLOCKED, Machine, ModelPlatform};
use super::run::{Explored, explore};
use super::trace::{dump_trace, trace};

/// (v) A choice left more searchers than queued items.
pub const HERD: &str = "thundering herd";
/// (vi) A search wake of a later generation than log2 of the items allows.
pub const RAMP: &str = "ramp-up slower than log2 of the items";
/// (ii) A core busy with pinned work was chosen to search.
pub const BUSY_CHOSEN: &str = "a core busy with pinned work chosen to search";
/// (ii) The searcher slot held by a busy core while work waits.
pub const HELD_BY_BUSY: &str = "search held by a busy core while another sleeps with work queued";
/// (iii) A second search wake chosen for a core before it drained the first.
pub const TWO_TICKETS: &str = "two search wakes in flight to one core";

/// What a driver core finds in its inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    /// Pinned work: runs on this core only.
    Pinned(Job),
    /// A search wake: look for stealable work.
    Search,
}

/// A pinned job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// Model steps it runs for (each a scheduling point), its core busy.
    pub steps: usize,
    /// The stealable item it then waits for (run by some other core),
    /// without helping: a private job blocked on a shared one.
    pub waits_for: Option<u32>,
}

/// The producer's script, one act after another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// Publishes this many items (numbered on from 0); the search wake, if
    /// one is chosen, is sent at once.
    Publish(usize),
    /// Publishes this many items, holding the search wake back until the
    /// next [`Act::Flush`] (the chosen core has a ticket in flight).
    PublishHeld(usize),
    /// Sends the search wakes held back.
    Flush,
    /// Sends a pinned job to a driver core.
    Pinned(usize, Job),
    /// Waits (parked) until this stealable item has run, a spawner that
    /// waits for one job before it spawns the next, or until no driver
    /// core can run it any more (every one halted or waiting: the item
    /// waits for a search wake the producer holds back), and goes on.
    AwaitRan(u32),
}

/// One stealable-work model.
#[derive(Clone, Copy, Debug)]
pub struct StealScenario {
    /// Driver cores (core 0 is also the publisher).
    pub cores: usize,
    /// Stealable items published, per publication (unless `script`).
    pub publications: &'static [usize],
    /// Who publishes: core 0, which then takes items too (the kernel's
    /// fork-join caller), or a core that runs no idle driver and takes
    /// nothing (a producer that only hands work off: the case in which
    /// only the wake rule stands between the items and a stranded queue).
    pub publisher: Publisher,
    /// The producer's acts (if not empty): instead of `publications` if the
    /// publisher is the producer, besides core 0's if it is core 0.
    pub script: &'static [Act],
    /// A waker core sends one pinned item to core 1.
    pub pinned_to_core_1: bool,
    /// Stealable items that, when run, wait without helping for another
    /// stealable item to have run: `(item, the item it waits for)`.
    pub item_waits: &'static [(u32, u32)],
    /// With [`Publisher::Core0Local`]: core 0 waits until this item has
    /// run (or no other core can run it) before its pushes, a task that
    /// spawns after an earlier job finished.
    pub core0_pushes_after: Option<u32>,
    /// Loom's preemption bound.
    pub preemption_bound: usize,
}

/// Who publishes the stealable items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Publisher {
    /// Driver core 0, before its loop.
    Core0,
    /// Driver core 0, before its loop, each item pushed onto its own queue
    /// ([`Stealable::push_local`], the pool built with local queues); it
    /// then waits, without helping, until its first item has run on
    /// another core: only the push / registration pair and the choices
    /// that count local items get it there.
    Core0Local,
    /// A core of its own that only publishes.
    Producer,
    /// A core of its own that pushes each item onto the outside queue
    /// ([`Stealable::push_outside`], the pool built with local queues: the
    /// hosted pool's `Producer::spawn`): only the outside push /
    /// registration pair and the choices that count the outside queue's
    /// items stand between the items and a stranded queue.
    ProducerOutside,
}

impl Publisher {
    /// A core of its own publishes, not core 0.
    fn is_producer(self) -> bool {
        matches!(self, Self::Producer | Self::ProducerOutside)
    }
}

impl StealScenario {
    /// A producer thread runs: the publisher, or the script's actor.
    fn producer(&self) -> bool {
        self.publisher.is_producer() || !self.script.is_empty()
    }

    fn published(&self) -> usize {
        let publications = if !self.publisher.is_producer() || self.script.is_empty() {
            self.publications.iter().sum()
        } else {
            0
        };
        let scripted: usize = self
            .script
            .iter()
            .map(|act| match act {
                Act::Publish(items) | Act::PublishHeld(items) => *items,
                Act::Flush | Act::Pinned(..) | Act::AwaitRan(_) => 0,
            })
            .sum();
        publications + scripted
    }

    fn pinned_jobs(&self) -> usize {
        let scripted = self
            .script
            .iter()
            .filter(|act| matches!(act, Act::Pinned(..)))
            .count();
        scripted + usize::from(self.pinned_to_core_1)
    }
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
    drivers: usize,
    /// The producer pushes onto the outside queue instead of publishing.
    pushes_outside: bool,
    /// Ghost: what each core ran, stealable and pinned (std: no branches).
    ran: StdMutex<Vec<u32>>,
    pinned_ran: AtomicUsize,
    /// Ghost, per core (the producer's too): the stealable item it waits
    /// for without helping (`NOT_WAITING`: none), and its thread while it
    /// is parked.
    waiting_for: Vec<AtomicUsize>,
    waiter: Vec<StdMutex<Option<thread::Thread>>>,
    /// Ghost: search wakes the producer has chosen and holds back
    /// ([`Act::PublishHeld`] to [`Act::Flush`]).
    held_tickets: AtomicUsize,
    /// Ghost, per driver core: running a pinned job (from the return of
    /// `before_pinned_work` to the job's end).
    busy: Vec<AtomicBool>,
    /// Ghost, per driver core: search wakes chosen for it and not drained.
    tickets: Vec<AtomicUsize>,
    /// Ghost, per driver core: the generation of the search wake last
    /// chosen for it (0: none yet).
    generation: Vec<AtomicUsize>,
    /// Ghost: ceil(log2(items + 1)) for the items published in all, the
    /// latest generation (vi) allows.
    max_generation: usize,
}

fn run_once(scenario: StealScenario) {
    let producer = scenario.producer();
    let wakers = usize::from(scenario.pinned_to_core_1) + usize::from(producer);
    let cores = scenario.cores + wakers;
    let world = Arc::new(World {
        cores: (0..cores)
            .map(|_| CoreWake::with_detector(Policy::StateMachine, false))
            .collect(),
        pool: if matches!(
            scenario.publisher,
            Publisher::Core0Local | Publisher::ProducerOutside
        ) {
            Stealable::with_local_queues(scenario.cores)
        } else {
            Stealable::new(scenario.cores)
        },
        machine: Machine::with_drivers(cores, scenario.cores, wakers, 0, 0),
        drivers: scenario.cores,
        pushes_outside: scenario.publisher == Publisher::ProducerOutside,
        ran: StdMutex::new(Vec::new()),
        pinned_ran: AtomicUsize::new(0),
        waiting_for: (0..cores).map(|_| AtomicUsize::new(NOT_WAITING)).collect(),
        waiter: (0..cores).map(|_| StdMutex::new(None)).collect(),
        held_tickets: AtomicUsize::new(0),
        busy: (0..scenario.cores)
            .map(|_| AtomicBool::new(false))
            .collect(),
        tickets: (0..scenario.cores).map(|_| AtomicUsize::new(0)).collect(),
        generation: (0..scenario.cores).map(|_| AtomicUsize::new(0)).collect(),
        max_generation: (usize::BITS - scenario.published().leading_zeros()) as usize,
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
            let job = Job {
                steps: 0,
                waits_for: None,
            };
            send_pinned(&world, me, 1, job);
            world.machine.waker_done();
        })
    });
    let producer = producer.then(|| {
        let world = Arc::clone(&world);
        thread::spawn(move || {
            let me = scenario.cores;
            if scenario.script.is_empty() {
                publish_all(&world, me, scenario.publications);
            } else {
                // Numbered apart from core 0's items.
                let first = if !scenario.publisher.is_producer() {
                    100
                } else {
                    0
                };
                run_script(&world, me, first, scenario.script);
            }
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
    let published = scenario.published();
    let mut ran = world.ran.lock().expect("ghost").clone();
    ran.sort_unstable();
    let all = ran.len();
    ran.dedup();
    assert_eq!(all, ran.len(), "a stealable item ran twice");
    assert_eq!(ran.len(), published, "a stealable item was lost");
    assert_eq!(
        world.pinned_ran.load(SeqCst),
        scenario.pinned_jobs(),
        "a pinned job did not run once"
    );
}

/// (v), after every call into the pool: the pool counts, under its lock,
/// each choice that left more searchers than queued items.
fn herd_bound(world: &World) {
    let counts = world.pool.snapshot();
    if counts.over_chosen > 0 {
        dump_trace();
        panic!(
            "{HERD}: {} choice(s) left more searchers than queued items (now {} searching, {} queued)",
            counts.over_chosen, counts.searching, counts.queued
        );
    }
}

/// (ii), at a step of a pinned job: the searcher slot is not held by a
/// busy core while a stealable item is queued and another core sleeps.
fn search_not_held_by_busy(world: &World) {
    let Some(searcher) = world.pool.snapshot().searcher else {
        return;
    };
    let machine = &world.machine;
    if world.busy[searcher].load(SeqCst)
        && machine.stealable_queued.load(SeqCst) > 0
        && (0..world.drivers).any(|core| core != searcher && machine.asleep(core))
    {
        dump_trace();
        panic!(
            "{HELD_BY_BUSY}: core {searcher} runs pinned work holding the search, {} item(s) queued",
            machine.stealable_queued.load(SeqCst)
        );
    }
}

/// How a search wake's generation follows from its chooser's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Generation {
    /// Chosen by a publication: generation 1.
    Published,
    /// Chosen by driver core `me`, a searcher that found an item: one
    /// later than the wake that made `me` a searcher.
    Ramp,
    /// Handed on by driver core `me` before pinned work: the same as the
    /// wake that made `me` a searcher.
    HandedOn,
}

/// The pool chose `target` to search (its `wake` callback, after the
/// lock): checks (ii), (iii) and (vi) and counts the ticket in flight.
fn chosen(world: &World, me: usize, target: usize, how: Generation) {
    trace(|| format!("core {me}: chose core {target} to search ({how:?})"));
    let mine = world.generation.get(me).map_or(0, |g| g.load(SeqCst));
    let generation = match how {
        Generation::Published => 1,
        Generation::Ramp => mine + 1,
        Generation::HandedOn => mine.max(1),
    };
    world.generation[target].store(generation, SeqCst);
    if generation > world.max_generation {
        dump_trace();
        panic!(
            "{RAMP}: core {me} chose core {target} as generation {generation}, at most {} for the items published",
            world.max_generation
        );
    }
    // This runs after the chooser's unlock, so the target may have turned
    // busy since the choice: the rule lets a core chosen as it turns busy
    // hand the search on in its `before_pinned_work` (the busy / chosen
    // pair). A busy target that still holds the search did not.
    if world.busy[target].load(SeqCst) && world.pool.snapshot().searcher == Some(target) {
        dump_trace();
        panic!("{BUSY_CHOSEN}: core {me} chose core {target}");
    }
    let before = world.tickets[target].fetch_add(1, SeqCst);
    if before > 0 {
        dump_trace();
        panic!("{TWO_TICKETS}: core {me} chose core {target}, {before} already on the way");
    }
}

/// A search wake from core `me` to `target`: a ticket through the pinned
/// protocol.
fn send_ticket(world: &World, me: usize, target: usize) {
    let platform = ModelPlatform {
        core: me,
        machine: Arc::clone(&world.machine),
    };
    world.machine.pushed.fetch_add(1, SeqCst);
    let outcome = wake_core(&world.cores, target, Item::Search, &platform, &NoHooks);
    trace(|| format!("core {me}: search wake to core {target}: {outcome:?}"));
}

/// A search wake sent at once: the choice and the ticket.
fn search_wake(world: &World, me: usize, target: usize, how: Generation) {
    chosen(world, me, target, how);
    send_ticket(world, me, target);
}

/// A pinned job from core `me` to driver core `target`.
fn send_pinned(world: &World, me: usize, target: usize, job: Job) {
    let platform = ModelPlatform {
        core: me,
        machine: Arc::clone(&world.machine),
    };
    world.machine.pushed.fetch_add(1, SeqCst);
    let outcome = wake_core(&world.cores, target, Item::Pinned(job), &platform, &NoHooks);
    trace(|| format!("core {me}: pinned {job:?} to core {target}: {outcome:?}"));
}

/// Publishes `items` items numbered from `first`, calling `wake` with the
/// chosen core; returns the next number.
fn publish_with(
    world: &World,
    me: usize,
    first: u32,
    items: usize,
    wake: impl FnMut(usize),
) -> u32 {
    let end = first + u32::try_from(items).expect("small");
    if world.pushes_outside && me >= world.drivers {
        // One push each, as `Producer::spawn` pushes.
        let mut wake = wake;
        for item in first..end {
            world.machine.stealable_queued.fetch_add(1, SeqCst);
            let woke = world.pool.push_outside(item, &mut wake);
            trace(|| format!("core {me}: pushed {item} from outside, chose {woke:?}"));
            herd_bound(world);
        }
        return end;
    }
    world.machine.stealable_queued.fetch_add(items, SeqCst);
    let published = world.pool.publish(me, first..end, wake);
    trace(|| format!("core {me}: published {items}: {published:?}"));
    herd_bound(world);
    end
}

/// Publishes `items` items numbered from `first`, the search wake sent at
/// once; returns the next number.
fn publish(world: &World, me: usize, first: u32, items: usize) -> u32 {
    publish_with(world, me, first, items, |target| {
        search_wake(world, me, target, Generation::Published);
    })
}

/// Core `me` pushes `items` items numbered from `first` onto its own
/// queue, one push each, the search wakes sent at once; returns the next
/// number.
fn push_local(world: &World, me: usize, searcher: &mut Searcher, first: u32, items: usize) -> u32 {
    let end = first + u32::try_from(items).expect("small");
    for item in first..end {
        world.machine.stealable_queued.fetch_add(1, SeqCst);
        let woke = world.pool.push_local(searcher, item, |target| {
            search_wake(world, me, target, Generation::Published);
        });
        trace(|| format!("core {me}: pushed {item} onto its own queue, chose {woke:?}"));
        herd_bound(world);
    }
    end
}

/// `World::waiting_for` of a core that waits for no item.
const NOT_WAITING: usize = usize::MAX;

/// Core `me` waits, without helping, until stealable item `item` has run
/// on another core: (iv). It blocks (loom's `park`, ended by the `unpark`
/// of the core that runs the item, [`ran`]) rather than spinning: two
/// cores spinning at once, each a branch at every turn, did not finish
/// one three-core model in 20 minutes at preemption bound 1. The unpark's
/// edge (the runner's memory ordered before the waiter's) comes after
/// everything the pool's rule did for the item, so it hides nothing the
/// checks look for in a driver core that waits; a producer that waits
/// ([`Act::AwaitRan`]) has it before its next publication, as a real
/// spawner has when it reads the job's result. Blocked for good
/// ([`Machine::blocked`], checked here and by every core going to its
/// halt): no waker left, and every other driver core asleep for good or
/// itself waiting for an item not run. (Not re-checked by a waiter when
/// the last waker finishes: a model in which every driver core waits here
/// at that moment would end in loom's own deadlock report, not this one;
/// none has more than two of its three drivers waiting.)
///
/// [`await_ran`]'s waiters are also woken when every other driver core is
/// stuck ([`Machine::notify_stuck_watchers`]), an unpark that orders the
/// waking core's memory before theirs. That happens only with every other
/// driver halted or waiting and nothing of theirs in flight; in the model
/// that uses it, the interleaving it checks ends the wait by the item's
/// run instead (whose waiters are unregistered before any later core
/// could wake them).
fn wait_for_item(world: &World, me: usize, item: u32) {
    let has_run = || world.ran.lock().expect("ghost").contains(&item);
    world.waiting_for[me].store(item as usize, SeqCst);
    world.machine.set_waiting(me, true);
    while !has_run() {
        if world.machine.blocked() {
            dump_trace();
            panic!(
                "{BLOCKED}: core {me} waits for stealable item {item}, every other core halted for good or waiting"
            );
        }
        *world.waiter[me].lock().expect("ghost") = Some(thread::current());
        // Run between the look above and here: its runner found no waiter
        // to unpark, so look again before parking.
        if has_run() {
            break;
        }
        world.machine.notify_stuck_watchers();
        thread::park();
    }
    world.waiting_for[me].store(NOT_WAITING, SeqCst);
    world.waiter[me].lock().expect("ghost").take();
    world.machine.set_waiting(me, false);
}

/// Core `me` (the producer, or a driver core before it pushes) waits
/// until stealable item `item` has run ([`Act::AwaitRan`],
/// [`StealScenario::core0_pushes_after`]). It goes on without the item
/// only while a search wake is held back ([`World::held_tickets`]) and
/// every driver core but `me` is stuck: the item then waits for that
/// wake, which the producer sends later. With no wake held, every driver
/// stuck and nothing left to act (the producer itself waits, or is done),
/// nobody will run the item: [`BLOCKED`]. A driver core waiting here is
/// a waiting core for the other checks.
fn await_ran(world: &World, me: usize, item: u32) {
    let has_run = || world.ran.lock().expect("ghost").contains(&item);
    let machine = &world.machine;
    let driver = me < world.drivers;
    let held = || world.held_tickets.load(SeqCst) > 0;
    world.waiting_for[me].store(item as usize, SeqCst);
    if driver {
        machine.set_waiting(me, true);
    }
    // What the wait depends on: the item run, the other drivers stuck, a
    // wake held, a waker left.
    let state = || {
        (
            has_run(),
            machine.drivers_stuck_but(me),
            held(),
            machine.wakers_left.load(SeqCst),
        )
    };
    loop {
        let seen = state();
        let (ran, stuck, held, wakers_left) = seen;
        if ran || (stuck && held) {
            break;
        }
        if stuck && (!driver || wakers_left == 0) {
            dump_trace();
            panic!(
                "{BLOCKED}: core {me} waits for stealable item {item}, every driver core halted or waiting, no search wake held back"
            );
        }
        if driver {
            // Before it watches: its own entry must not wake it.
            machine.notify_stuck_watchers();
        }
        *world.waiter[me].lock().expect("ghost") = Some(thread::current());
        machine.watch_for_stuck_drivers(me);
        // Changed between the look above and here: look again before
        // parking.
        if state() != seen {
            continue;
        }
        thread::park();
    }
    world.waiting_for[me].store(NOT_WAITING, SeqCst);
    world.waiter[me].lock().expect("ghost").take();
    machine.stop_watching(me);
    if driver {
        machine.set_waiting(me, false);
    }
    trace(|| format!("core {me}: awaited item {item}, ran: {}", has_run()));
}

/// Stealable item `item` has run: the ghost records it, and every core
/// waiting for it stops waiting (and watching) and is unparked.
fn ran(world: &World, item: u32) {
    world.ran.lock().expect("ghost").push(item);
    for core in 0..world.waiting_for.len() {
        if world.waiting_for[core].load(SeqCst) == item as usize {
            world.machine.set_waiting(core, false);
            world.machine.stop_watching(core);
            if let Some(waiter) = world.waiter[core].lock().expect("ghost").take() {
                waiter.unpark();
            }
        }
    }
}

/// The producer: every publication, one after another.
fn publish_all(world: &World, me: usize, publications: &[usize]) {
    let mut next = 0;
    for &items in publications {
        next = publish(world, me, next, items);
    }
}

/// The producer's script.
fn run_script(world: &World, me: usize, first: u32, script: &[Act]) {
    let mut next = first;
    let mut held = Vec::new();
    for &act in script {
        match act {
            Act::Publish(items) => next = publish(world, me, next, items),
            Act::PublishHeld(items) => {
                next = publish_with(world, me, next, items, |target| {
                    chosen(world, me, target, Generation::Published);
                    world.held_tickets.fetch_add(1, SeqCst);
                    held.push(target);
                });
                world.machine.notify_stuck_watchers();
            }
            Act::Flush => {
                for target in held.drain(..) {
                    send_ticket(world, me, target);
                    world.held_tickets.fetch_sub(1, SeqCst);
                }
            }
            Act::Pinned(target, job) => send_pinned(world, me, target, job),
            Act::AwaitRan(item) => await_ran(world, me, item),
        }
    }
    assert!(held.is_empty(), "a held search wake never sent");
}

/// Driver core `me` runs a pinned job: leaves the idle set first (the
/// pool's rule), then runs its steps and waits for its item, checking
/// (ii) and (iv) at every step.
fn run_pinned(world: &World, me: usize, searcher: &mut Searcher, job: Job) {
    world.pool.before_pinned_work(searcher, |target| {
        search_wake(world, me, target, Generation::HandedOn);
    });
    herd_bound(world);
    world.busy[me].store(true, SeqCst);
    trace(|| format!("core {me}: runs pinned {job:?}"));
    for _ in 0..job.steps {
        search_not_held_by_busy(world);
        thread::yield_now();
    }
    if let Some(item) = job.waits_for {
        search_not_held_by_busy(world);
        wait_for_item(world, me, item);
    }
    search_not_held_by_busy(world);
    world.busy[me].store(false, SeqCst);
    world.pinned_ran.fetch_add(1, SeqCst);
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
    let mut publications = if me == 0 && !scenario.publisher.is_producer() {
        scenario.publications
    } else {
        &[]
    };
    let mut next_item = 0u32;
    if me == 0 && scenario.publisher == Publisher::Core0Local {
        if let Some(item) = scenario.core0_pushes_after {
            await_ran(world, me, item);
        }
        for &items in core::mem::take(&mut publications) {
            next_item = push_local(world, me, &mut searcher, next_item, items);
        }
        wait_for_item(world, me, 0);
    }
    let mut batch = VecDeque::new();
    let mut run_queue = VecDeque::new();
    let accept =
        |batch: &mut VecDeque<Item>, run_queue: &mut VecDeque<Job>, searcher: &mut Searcher| {
            world.machine.drained.fetch_add(batch.len(), SeqCst);
            for item in batch.drain(..) {
                match item {
                    Item::Pinned(job) => run_queue.push_back(job),
                    Item::Search => {
                        world.tickets[me].fetch_sub(1, SeqCst);
                        searcher.search_wake_drained();
                    }
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
        if let Some(job) = run_queue.pop_front() {
            run_pinned(world, me, &mut searcher, job);
            continue;
        }
        let taken = world.pool.take(&mut searcher, |target| {
            search_wake(world, me, target, Generation::Ramp);
        });
        herd_bound(world);
        if let Some(item) = taken {
            world.machine.stealable_queued.fetch_sub(1, SeqCst);
            trace(|| format!("core {me}: runs stealable {item}"));
            if let Some(&(_, awaited)) = scenario.item_waits.iter().find(|(it, _)| *it == item) {
                wait_for_item(world, me, awaited);
            }
            ran(world, item);
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
