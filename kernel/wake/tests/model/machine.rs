//! The model machine: a [`Platform`] for loom that behaves like the
//! hardware and no better, with one exception: a wake IPI is pending at the
//! target the moment it is sent (QEMU's TCG can set the bit microseconds
//! after the sender has counted it and finished notifying; loom's thread
//! limit leaves no thread for an IPI in flight), so the detector's trust in
//! the sent count is not what decides any check here.
//!
//! Per core: an interrupt flag (off everywhere but inside
//! [`Platform::sleep`], as in the kernel), and one
//! **latched pending bit per vector** (wake IPI, probe, timer, "other"):
//! two IPIs sent before the core takes the first coalesce into one.
//!
//! * `sleep` takes every latched interrupt at once
//!   (the `sti` shadow: a latched bit ends the `hlt` immediately), bumping
//!   the core's interrupt counts as its handlers do; with nothing latched
//!   the core waits until something is raised.
//! * An IPI **does not synchronise memory**: the latch and the waiting are
//!   plain `std` atomics outside loom's memory model, so loom sees no
//!   happens-before edge from sender to receiver. Whatever the woken core
//!   reads about the work is ordered by the protocol's own atomics, or not
//!   at all. (loom's `park`/`unpark`, which the first model used for the
//!   halt, does give such an edge; and with more than one driver core,
//!   the steal models still halt by `park` and wake by `unpark`, so there
//!   every wake of a parked core is a happens-before edge the hardware does
//!   not give: reads after such a wake are not explored stale.) The count of IPIs sent is a loom atomic
//!   (Relaxed, as the kernel's), because the detector orders it by the
//!   wakers' Release.
//! * The **one-shot timer** fires at any point while it is armed: a model
//!   thread that loom schedules wherever it likes, up to a fixed number of
//!   fires. Once fired it is spent until the next arm.
//! * **Spontaneous wakes**: a model thread raises the "other" vector
//!   once, at any point (before the halt too: it stays latched).
//! * The **clock** advances one tick per read.
//!
//! The ghost state (what the checks need and the hardware does not have)
//! is `std` atomics too: loom runs one thread at a time, so they read the
//! true current value and add no branches. When every driver core (one in
//! the protocol models, several in the stealable-work models) waits in its
//! halt with every other actor finished and nothing latched, the machine
//! has stopped: it checks that no work is left in any inbox (the
//! lost-wakeup assertion) and no stealable item is queued (the stranding
//! assertion), and every driver's halt returns [`Resume::MachineStopped`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64 as StdU64, AtomicUsize, Ordering::SeqCst};

use loom::sync::atomic::{AtomicU64, Ordering};
use vigil_wake::{InterruptCounts, Platform, Resume};

use super::trace::{dump_trace, trace};

/// The message of the lost-wakeup failures (the mutation run looks for it).
pub const LOST_WAKEUP: &str = "lost wakeup";
/// The message of a machine stopped with stealable work still queued.
pub const STRANDED: &str = "stealable work stranded";
/// A job waits for a stealable item no core will run (the stealable-work
/// models' (iv)).
pub const BLOCKED: &str = "a private job waiting on a shared job never completes";

const WAKE: usize = 0;
const PROBE: usize = 1;
const TIMER: usize = 2;
const OTHER: usize = 3;
const VECTORS: usize = 4;

/// One core's interrupt hardware.
#[derive(Default)]
struct CoreLines {
    /// Latched, not yet taken, per vector.
    pending: [AtomicBool; VECTORS],
    /// Taken, per vector (the handlers' counts; only the core itself).
    taken: [StdU64; VECTORS],
    /// The one-shot timer is armed.
    timer_armed: AtomicBool,
    /// Ghost: the core is in its halt with nothing latched.
    waiting: AtomicBool,
    /// Ghost: the core waits for a job's stealable item not run yet.
    waiting_for_item: AtomicBool,
    /// The core's model thread while it waits in a blocking halt (see
    /// [`Machine::with_drivers`]).
    sleeper: std::sync::Mutex<Option<loom::thread::Thread>>,
}

/// The whole model machine, shared by every model thread.
pub struct Machine {
    lines: Vec<CoreLines>,
    /// Wake IPIs sent, by destination (counted after the "ICR write").
    sent_to: Vec<AtomicU64>,
    clock: StdU64,
    /// Actors that have not finished: wakers, the timer's fires left, the
    /// spontaneous wakes left.
    pub wakers_left: AtomicUsize,
    pub timer_fires_left: AtomicUsize,
    pub other_wakes_left: AtomicUsize,
    /// The driver's core has returned (its thread is done).
    pub stopped: AtomicBool,
    /// Ghost: items pushed by wakers, and drained by the driver's core
    /// (counted by its loop after each driver call).
    pub pushed: AtomicUsize,
    pub drained: AtomicUsize,
    /// Ghost: the driver's core is between its re-check window and the end
    /// of its halt (IPIs are only due inside it, under state-machine).
    pub in_halt: AtomicBool,
    pub ipis_this_halt: AtomicUsize,
    pub ipis: AtomicUsize,
    pub halts: AtomicUsize,
    /// The cores that run an idle driver (`0..drivers`): the machine stops
    /// when all of them wait in their halt at once with nothing to come.
    drivers: usize,
    /// Ghost: stealable items queued (published and not yet taken).
    pub stealable_queued: AtomicUsize,
    /// Set once the machine has stopped: every waiting driver returns.
    halted_for_good: AtomicBool,
    /// Threads waiting for the other driver cores to be all stuck, each
    /// with its core ([`Machine::watch_for_stuck_drivers`]).
    stuck_watchers: std::sync::Mutex<Vec<(usize, loom::thread::Thread)>>,
}

impl Machine {
    /// A machine of `cores` cores with its actors' budgets.
    pub fn new(cores: usize, wakers: usize, timer_fires: usize, other_wakes: usize) -> Arc<Self> {
        Self::with_drivers(cores, 1, wakers, timer_fires, other_wakes)
    }

    /// A machine whose cores `0..drivers` run idle drivers. With more than
    /// one, a halt with nothing latched **blocks** (loom's `park`, ended by
    /// the `unpark` of whoever latches an interrupt for the core) instead of
    /// spinning: several cores spinning in their halts at once multiply
    /// loom's branches past what it can explore (one stealable-work model
    /// with two halted cores did not finish in minutes at preemption bound
    /// 1). The price: loom's `unpark` orders the latcher's memory before
    /// the woken core's, an edge the hardware does not give. The
    /// stealable-work models that use this check the pool's rule, whose
    /// state is under one lock and needs no such edge; the protocol models
    /// (one driver core) keep the spinning, edge-free halt.
    pub fn with_drivers(
        cores: usize,
        drivers: usize,
        wakers: usize,
        timer_fires: usize,
        other_wakes: usize,
    ) -> Arc<Self> {
        Arc::new(Self {
            lines: (0..cores).map(|_| CoreLines::default()).collect(),
            sent_to: (0..cores).map(|_| AtomicU64::new(0)).collect(),
            clock: StdU64::new(0),
            wakers_left: AtomicUsize::new(wakers),
            timer_fires_left: AtomicUsize::new(timer_fires),
            other_wakes_left: AtomicUsize::new(other_wakes),
            stopped: AtomicBool::new(false),
            pushed: AtomicUsize::new(0),
            drained: AtomicUsize::new(0),
            in_halt: AtomicBool::new(false),
            ipis_this_halt: AtomicUsize::new(0),
            ipis: AtomicUsize::new(0),
            halts: AtomicUsize::new(0),
            drivers,
            stealable_queued: AtomicUsize::new(0),
            halted_for_good: AtomicBool::new(false),
            stuck_watchers: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The timer actor of core `core`: fires whenever loom runs it while
    /// the timer is armed, until its fires are used up or the core is done.
    pub fn run_timer(&self, core: usize) {
        let lines = &self.lines[core];
        loop {
            if self.timer_fires_left.load(SeqCst) == 0 || self.stopped.load(SeqCst) {
                return;
            }
            if lines.timer_armed.swap(false, SeqCst) {
                trace(|| "timer: fires".into());
                self.raise(core, TIMER);
                self.timer_fires_left.fetch_sub(1, SeqCst);
            } else {
                loom::thread::yield_now();
            }
        }
    }

    /// Latches `vector` at `core` and, in a blocking-halt machine, wakes the
    /// core's thread if it waits.
    fn raise(&self, core: usize, vector: usize) {
        self.lines[core].pending[vector].store(true, SeqCst);
        self.unpark(core);
    }

    /// A waker actor has finished: in a blocking-halt machine every waiting
    /// core looks again whether the machine has stopped.
    pub fn waker_done(&self) {
        self.wakers_left.fetch_sub(1, SeqCst);
        for core in 0..self.drivers {
            self.unpark(core);
        }
        // A core waiting for an item with the other drivers stuck looks
        // again: with no waker left, nothing else will act.
        self.notify_stuck_watchers();
    }

    fn unpark(&self, core: usize) {
        if self.drivers > 1
            && let Some(thread) = self.lines[core]
                .sleeper
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take()
        {
            thread.unpark();
        }
    }

    /// The spontaneous-wake actor of core `core`: raises the "other" vector
    /// once, wherever loom runs it.
    pub fn run_other_wake(&self, core: usize) {
        trace(|| "other: raised".into());
        self.raise(core, OTHER);
        self.other_wakes_left.fetch_sub(1, SeqCst);
    }

    /// Every actor but the driver cores has finished, no timer can fire
    /// any more, and every driver core waits in its halt with nothing
    /// latched.
    fn quiescent(&self) -> bool {
        self.wakers_left.load(SeqCst) == 0
            && self.other_wakes_left.load(SeqCst) == 0
            && (0..self.drivers).all(|core| self.asleep(core))
    }

    /// Ghost: every driver core is asleep for good ([`asleep`](Self::asleep))
    /// or waits for a job's stealable item ([`set_waiting`](Self::set_waiting)),
    /// at least one of them waits, and nothing is left to wake one: a job
    /// waits for an item no core will run.
    pub fn blocked(&self) -> bool {
        self.wakers_left.load(SeqCst) == 0
            && self.other_wakes_left.load(SeqCst) == 0
            && self.drivers_stuck_but(usize::MAX)
            && (0..self.drivers).any(|core| self.waits_for_item(core))
    }

    /// Ghost: every driver core but `except` (a core index, or any other
    /// number for none) is asleep ([`asleep`](Self::asleep)) or waits for
    /// a job's stealable item: none of them runs until someone else acts.
    pub fn drivers_stuck_but(&self, except: usize) -> bool {
        (0..self.drivers)
            .filter(|&core| core != except)
            .all(|core| self.asleep(core) || self.waits_for_item(core))
    }

    fn waits_for_item(&self, core: usize) -> bool {
        self.lines[core].waiting_for_item.load(SeqCst)
    }

    fn stuck_watchers(&self) -> std::sync::MutexGuard<'_, Vec<(usize, loom::thread::Thread)>> {
        self.stuck_watchers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Ghost: the calling thread, core `me`, is unparked when every driver
    /// core but `me` is next stuck ([`drivers_stuck_but`](Self::drivers_stuck_but)).
    pub fn watch_for_stuck_drivers(&self, me: usize) {
        let mut watchers = self.stuck_watchers();
        watchers.retain(|(core, _)| *core != me);
        watchers.push((me, loom::thread::current()));
    }

    /// Ghost: core `me` no longer watches. (An unpark joins the unparker's
    /// causality into the target at once, parked or not: a watcher left
    /// registered would order a later parking driver's memory before the
    /// watcher's.)
    pub fn stop_watching(&self, me: usize) {
        self.stuck_watchers().retain(|(core, _)| *core != me);
    }

    /// Something a watcher waits on may have changed (a driver core is
    /// about to park, in its halt or waiting for an item; the last waker
    /// is done; the producer holds a search wake back): every watcher for
    /// which the other driver cores are stuck is unparked.
    pub fn notify_stuck_watchers(&self) {
        let mut watchers = self.stuck_watchers();
        let mut index = 0;
        while index < watchers.len() {
            if self.drivers_stuck_but(watchers[index].0) {
                watchers.swap_remove(index).1.unpark();
            } else {
                index += 1;
            }
        }
    }

    /// Ghost: driver core `core` waits (or no longer waits) for a job's
    /// stealable item that has not run.
    pub fn set_waiting(&self, core: usize, waiting: bool) {
        self.lines[core].waiting_for_item.store(waiting, SeqCst);
    }

    /// Ghost: driver core `core` waits in its halt with nothing latched and
    /// no timer to come.
    pub fn asleep(&self, core: usize) -> bool {
        let lines = &self.lines[core];
        lines.waiting.load(SeqCst)
            && lines.pending.iter().all(|pending| !pending.load(SeqCst))
            && (self.timer_fires_left.load(SeqCst) == 0 || !lines.timer_armed.load(SeqCst))
    }
}

/// The machine as seen from one core.
#[derive(Clone)]
pub struct ModelPlatform {
    pub core: usize,
    pub machine: Arc<Machine>,
}

impl Platform for ModelPlatform {
    fn core(&self) -> usize {
        self.core
    }

    fn sleep(&self) -> Resume {
        let lines = &self.machine.lines[self.core];
        loop {
            // Interrupts on: take everything latched (the handlers bump the
            // counts), then interrupts off again.
            let mut took = false;
            for vector in 0..VECTORS {
                if lines.pending[vector].swap(false, SeqCst) {
                    lines.taken[vector].fetch_add(1, SeqCst);
                    took = true;
                }
            }
            if took {
                lines.waiting.store(false, SeqCst);
                trace(|| format!("core {}: hlt returned", self.core));
                return Resume::Interrupted;
            }
            lines.waiting.store(true, SeqCst);
            if self.machine.halted_for_good.load(SeqCst) {
                return Resume::MachineStopped;
            }
            if self.machine.quiescent() {
                let machine = &self.machine;
                let left = machine.pushed.load(SeqCst) - machine.drained.load(SeqCst);
                let queued = machine.stealable_queued.load(SeqCst);
                if left != 0 || queued != 0 {
                    dump_trace();
                }
                assert!(
                    left == 0,
                    "{LOST_WAKEUP}: every driver core is halted with {left} item(s) in an inbox, nothing latched and nothing left to wake them"
                );
                assert!(
                    queued == 0,
                    "{STRANDED}: every core is halted with {queued} stealable item(s) queued, nothing latched and nothing left to wake them"
                );
                machine.halted_for_good.store(true, SeqCst);
                for core in 0..machine.drivers {
                    machine.unpark(core);
                }
                return Resume::MachineStopped;
            }
            if self.machine.blocked() {
                dump_trace();
                panic!(
                    "{BLOCKED}: every core but those waiting for a stealable item is halted, nothing latched and nothing left to wake them"
                );
            }
            if self.machine.drivers > 1 {
                *lines
                    .sleeper
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some(loom::thread::current());
                // Raised between the look above and here: the raiser found
                // no sleeper to unpark, so look again before parking.
                if lines.pending.iter().any(|pending| pending.load(SeqCst)) {
                    continue;
                }
                self.machine.notify_stuck_watchers();
                loom::thread::park();
            } else {
                loom::thread::yield_now();
            }
        }
    }

    fn interrupt_counts(&self) -> InterruptCounts {
        let taken = &self.machine.lines[self.core].taken;
        InterruptCounts {
            wake: taken[WAKE].load(SeqCst),
            probe: taken[PROBE].load(SeqCst),
            timer: taken[TIMER].load(SeqCst),
        }
    }

    fn wake_pending(&self) -> bool {
        self.machine.lines[self.core].pending[WAKE].load(SeqCst)
    }

    fn send_wake(&self, target: usize) {
        // A scheduling point first: plain code between two loom operations
        // runs as one step, so without it the latch would be set in the
        // same step as the waker's previous atomic, and no other core could
        // ever look between the two (a waker that counts its notify
        // finished before its IPI went undetected by the model). A yield
        // costs no preemption.
        loom::thread::yield_now();
        // The "ICR write": latch the target's bit (no memory edge), then
        // count it, as the kernel does.
        self.machine.raise(target, WAKE);
        self.machine.sent_to[target].fetch_add(1, Ordering::Relaxed);
    }

    fn send_probe(&self, target: usize) {
        self.machine.raise(target, PROBE);
    }

    fn wakes_sent_to(&self, target: usize) -> u64 {
        self.machine.sent_to[target].load(Ordering::Relaxed)
    }

    fn arm_oneshot_us(&self, _us: u64) {
        trace(|| format!("core {}: arms the timer", self.core));
        self.machine.lines[self.core]
            .timer_armed
            .store(true, SeqCst);
    }

    fn now_ticks(&self) -> u64 {
        self.machine.clock.fetch_add(1, SeqCst)
    }

    fn us_to_ticks(&self, us: u64) -> u64 {
        us
    }

    fn ticks_to_us(&self, ticks: u64) -> u64 {
        ticks
    }

    fn relax(&self) {
        loom::thread::yield_now();
    }
}
