//! One scheduler per core and its idle loop.
//!
//! Everything here runs with interrupts disabled: tasks are never preempted,
//! and the only place a core enables interrupts is the arch `sti; hlt` at
//! the end of the idle loop's halt path. So an interrupt handler never sees
//! a run queue mid-update, and a wake IPI only ever ends a halt.
//!
//! Tasks run on their own stacks; every switch goes task -> idle loop ->
//! task, the idle loop running on the core's boot stack.

use super::idle_hooks::KernelIdleHooks;
use super::inbound::Inbound;
use super::latency::LatencyHistograms;
use super::stats::{self, SchedStats};
use super::stealable;
use super::task::{Task, TaskCounts, TaskRef};
use super::watchdog;
use crate::arch::idle_platform::CorePlatform;
use crate::arch::{context, percpu, tsc};
use crate::println;
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::{Mutex, Once};
use vigil_wake::{BackoffMode, CoreWake, DriverConfig, IdleDriver, Policy, Searcher, State};

/// One core's scheduler.
#[derive(Debug)]
pub struct CoreSched {
    /// The wake protocol's per-core part: idle state, inbox, counters,
    /// lost-wakeup record (this core's entry of [`wakes`]).
    pub wake: &'static CoreWake<Inbound>,
    /// Tasks ready to run here. Only this core touches it (the lock is
    /// uncontended; it keeps the code free of `unsafe`).
    run_queue: Mutex<VecDeque<TaskRef>>,
    current: Mutex<Option<TaskRef>>,
    /// The idle loop's saved stack pointer while a task runs.
    idle_rsp: AtomicU64,
    /// Scheduler statistics.
    pub stats: SchedStats,
    /// Wake-latency histograms (tasks resumed on this core).
    pub latency: LatencyHistograms,
}

/// Boot-time configuration of every core's scheduler.
#[derive(Debug, Clone, Copy)]
pub struct SchedConfig {
    /// The wake policy.
    pub policy: Policy,
    /// How long an idle core polls its inbox before the halt path.
    pub backoff: BackoffMode,
}

static WAKES: Once<Box<[CoreWake<Inbound>]>> = Once::new();
static CORES: Once<Box<[CoreSched]>> = Once::new();
static CONFIG: Once<SchedConfig> = Once::new();

/// Creates the schedulers of `count` cores. Runs once on the bootstrap core
/// before any AP enters [`run_core`].
pub fn init(count: usize, config: SchedConfig) {
    CONFIG.call_once(|| config);
    let wakes = WAKES.call_once(|| {
        (0..count)
            .map(|_| CoreWake::with_detector(config.policy, watchdog::enabled()))
            .collect::<Vec<_>>()
            .into_boxed_slice()
    });
    CORES.call_once(|| {
        wakes
            .iter()
            .map(|wake| CoreSched {
                wake,
                run_queue: Mutex::new(VecDeque::new()),
                current: Mutex::new(None),
                idle_rsp: AtomicU64::new(0),
                stats: SchedStats::new(),
                latency: LatencyHistograms::new(),
            })
            .collect::<Vec<_>>()
            .into_boxed_slice()
    });
}

/// Every core's scheduler, by core index.
pub fn cores() -> &'static [CoreSched] {
    CORES.get().expect("scheduler not initialised")
}

/// Every core's wake-protocol part, by core index (what the idle driver and
/// the wakers share).
pub fn wakes() -> &'static [CoreWake<Inbound>] {
    WAKES.get().expect("scheduler not initialised")
}

/// The scheduler of the running core.
pub fn this_core() -> &'static CoreSched {
    &cores()[percpu::current_index()]
}

/// The wake policy in force.
pub fn policy() -> Policy {
    CONFIG.get().map_or(Policy::StateMachine, |c| c.policy)
}

fn backoff_mode() -> BackoffMode {
    CONFIG.get().map_or(BackoffMode::Off, |c| c.backoff)
}

/// The task running on this core, if any.
pub fn current_task() -> Option<TaskRef> {
    this_core().current.lock().clone()
}

impl CoreSched {
    /// Whether this core is running a task now (`None`: its lock is busy,
    /// the core is switching). For watches on other cores: it only tries
    /// the lock.
    pub fn runs_a_task(&self) -> Option<bool> {
        self.current.try_lock().map(|current| current.is_some())
    }

    /// Makes `task` runnable on this core (called on this core only).
    pub(super) fn push_local(&self, task: TaskRef) {
        self.run_queue.lock().push_back(task);
    }

    /// Moves drained inbox items to the run queue; a search wake carries no
    /// work (the stealable pool already counts this core as its searcher),
    /// it is only noted for the core's `searcher`.
    fn accept(&self, batch: &mut VecDeque<Inbound>, searcher: &mut Searcher) {
        let mut run_queue = self.run_queue.lock();
        for item in batch.drain(..) {
            match item {
                Inbound::Task(task) => run_queue.push_back(task),
                Inbound::Search => searcher.search_wake_drained(),
            }
        }
    }

    /// Runs `task` until it blocks, yields or exits.
    fn run(&self, task: TaskRef) {
        if let Some((woken_at, kind)) = task.take_wake_stamp() {
            self.latency
                .record(kind, tsc::now().saturating_sub(woken_at));
        }
        let load_rsp = task.saved_rsp();
        TaskCounts::bump(&task.counts.runs);
        *self.current.lock() = Some(task.clone());
        stats::add(&self.stats.switches, 1);
        // SAFETY: `idle_rsp` is this core's slot for the idle loop's stack
        // pointer; `load_rsp` was produced by `prepare_stack` or by the
        // task's own last switch away, on this core (tasks are pinned), and
        // its stack is not in use anywhere else.
        unsafe { context::switch(self.idle_rsp.as_ptr(), load_rsp) };
        *self.current.lock() = None;
        if task.is_done() {
            // The task switched away for the last time: its stack is free.
            task.recycle_stack();
            stats::add(&self.stats.tasks_finished, 1);
            if let Some(joiner) = task.take_joiner() {
                super::wakeup::wake(&joiner);
            }
        }
    }
}

/// Prints, for a state dump, every core that is not simply idle (protocol
/// state, inbox, run queue, current task) and how many are. Locks are only
/// tried: the caller must not spin on a lock a stuck core holds.
pub fn dump_cores() {
    let mut idle = 0;
    for (index, core) in cores().iter().enumerate() {
        let state = core.wake.state();
        let inbox = core.wake.inbox_len();
        let run_queue = core.run_queue.try_lock().map(|queue| queue.len());
        let current = core
            .current
            .try_lock()
            .map(|current| current.as_ref().map(|task| task.id()));
        if state == State::Halted && inbox == 0 && run_queue == Some(0) && current == Some(None) {
            idle += 1;
            continue;
        }
        let run_queue = run_queue.map_or_else(|| "busy".into(), |len| alloc::format!("{len}"));
        let current = match current {
            None => "busy".into(),
            Some(None) => "none".into(),
            Some(Some(id)) => alloc::format!("task {id}"),
        };
        println!(
            "  core {index}: state={state} inbox={inbox} run_queue={run_queue} current={current}"
        );
    }
    println!("  {idle} core(s) halted with nothing queued and no current task");
}

/// Switches from the current task back to this core's idle loop; returns
/// when the task is next run.
pub(super) fn switch_to_idle(task: &Task) {
    let core = this_core();
    let idle_rsp = core.idle_rsp.load(Ordering::Relaxed);
    // SAFETY: we are on `task`'s stack (it is the current task of this
    // core); the idle loop's context was saved by `CoreSched::run` on this
    // core and is resumed exactly once per switch into a task.
    unsafe { context::switch(task.saved_rsp_slot(), idle_rsp) };
}

/// Ends the current task.
pub fn exit_current() -> ! {
    let task = current_task().expect("exit outside a task");
    task.mark_done();
    let slot = task.saved_rsp_slot();
    drop(task);
    let idle_rsp = this_core().idle_rsp.load(Ordering::Relaxed);
    // SAFETY: `slot` points into the task, which stays alive through this
    // switch: the idle loop's `run` holds a `TaskRef` to it until the switch
    // returns there. The idle context was saved by `run` on this core. The
    // task is never resumed (it is done), so nothing reads the slot again.
    unsafe { context::switch(slot, idle_rsp) };
    unreachable!("an exited task was resumed")
}

/// The idle loop of core `me` (never returns). Interrupts must be disabled.
/// The protocol (drain, poll, halt path, halt, wake-up, lost-wakeup check)
/// is the wake crate's `IdleDriver`; this loop only runs what it drains.
pub fn run_core(me: usize) -> ! {
    let core = &cores()[me];
    let config = DriverConfig {
        backoff: backoff_mode(),
        watchdog_tick_us: if me == watchdog::WATCHDOG_CORE {
            watchdog::period_us()
        } else {
            None
        },
    };
    let mut driver = IdleDriver::new(
        wakes(),
        CorePlatform::of_core(me),
        KernelIdleHooks::new(core, me),
        config,
    );
    let mut batch = VecDeque::new();
    let mut searcher = stealable::searcher_for(me);
    // The last chunk run here, reported done after the next call into the
    // pool (`Chunk::run_report_later` says why): every path through the
    // loop reports it before it can halt, after `take` or
    // `before_pinned_work`, and a pass whose report made a task runnable
    // here goes round again before it halts.
    let mut unreported: Option<stealable::DoneChunk> = None;
    loop {
        // Whichever core passes its idle loop when a scan is due runs it
        // (a compare-exchange elects one per period): the detectors no
        // longer wait for the watchdog core to halt.
        watchdog::scan_if_due(me);
        if driver.drain(&mut batch) > 0 {
            core.accept(&mut batch, &mut searcher);
        }
        let next = core.run_queue.lock().pop_front();
        if let Some(task) = next {
            stealable::before_pinned_work(&mut searcher);
            if let Some(done) = unreported.take() {
                done.report();
            }
            core.run(task);
            continue;
        }
        let chunk = stealable::take(&mut searcher);
        let reported = unreported
            .take()
            .map(stealable::DoneChunk::report)
            .is_some();
        if let Some(chunk) = chunk {
            unreported = Some(chunk.run_report_later());
            crate::chaos::delay(crate::chaos::Point::AfterChunk);
            continue;
        }
        // A report may have made a task runnable here: the last chunk of a
        // round whose caller waits on this core opens its latch, and that
        // wake puts the caller on this run queue with no inbox item and no
        // IPI, which the halt below would not see. So back to the top if
        // the run queue has a task (a wake from another core comes through
        // the inbox, which the halt path sees). Not a second look at the
        // pool: this core looked and registered idle, and a publication
        // after that chooses it from the idle set (`fault=stranded-steal`
        // relies on no core looking again after it registered).
        if reported && !core.run_queue.lock().is_empty() {
            continue;
        }
        // Never `MachineStopped` on this platform.
        let _ready = driver.idle(&mut batch);
        core.accept(&mut batch, &mut searcher);
    }
}
