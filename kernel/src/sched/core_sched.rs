//! One scheduler per core and its idle loop.
//!
//! Everything here runs with interrupts disabled: tasks are never preempted,
//! and the only place a core enables interrupts is the arch `sti; hlt` at
//! the end of the idle loop's halt path. So an interrupt handler never sees
//! a run queue mid-update, and a wake IPI only ever ends a halt.
//!
//! Tasks run on their own stacks; every switch goes task -> idle loop ->
//! task, the idle loop running on the core's boot stack.

use super::backoff::{self, Backoff, BackoffMode};
use super::idle_history::{HISTORIES, IdleEvent};
use super::latency::LatencyHistograms;
use super::stats::{self, SchedStats};
use super::task::{Task, TaskCounts, TaskRef};
use super::watchdog::{self, FoundAt};
use crate::arch::interrupt_vectors::COUNTS;
use crate::arch::{context, halt, percpu, tsc};
use crate::chaos;
use crate::println;
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::{Mutex, Once};
use vigil_wake::{Commit, CoreWake, Policy, Recheck, State};
use x86_64::instructions::interrupts;

/// One core's scheduler.
#[derive(Debug)]
pub struct CoreSched {
    /// The wake protocol's per-core part: idle state, inbox, counters.
    pub wake: CoreWake<TaskRef>,
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
    /// This core's poll budget before halting.
    backoff: Backoff,
    /// The watchdog core only: its timer-interrupt count when it last armed
    /// the scan tick (`u64::MAX`: never).
    tick_armed_at: AtomicU64,
}

/// Boot-time configuration of every core's scheduler.
#[derive(Debug, Clone, Copy)]
pub struct SchedConfig {
    /// The wake policy.
    pub policy: Policy,
    /// How long an idle core polls its inbox before the halt path.
    pub backoff: BackoffMode,
}

static CORES: Once<Box<[CoreSched]>> = Once::new();
static CONFIG: Once<SchedConfig> = Once::new();

/// Creates the schedulers of `count` cores. Runs once on the bootstrap core
/// before any AP enters [`run_core`].
pub fn init(count: usize, config: SchedConfig) {
    CONFIG.call_once(|| config);
    CORES.call_once(|| {
        (0..count)
            .map(|_| CoreSched {
                wake: CoreWake::new(config.policy),
                run_queue: Mutex::new(VecDeque::new()),
                current: Mutex::new(None),
                idle_rsp: AtomicU64::new(0),
                stats: SchedStats::new(),
                latency: LatencyHistograms::new(),
                backoff: Backoff::new(),
                tick_armed_at: AtomicU64::new(u64::MAX),
            })
            .collect::<Vec<_>>()
            .into_boxed_slice()
    });
}

/// Every core's scheduler, by core index.
pub fn cores() -> &'static [CoreSched] {
    CORES.get().expect("scheduler not initialised")
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
    /// Makes `task` runnable on this core (called on this core only).
    pub(super) fn push_local(&self, task: TaskRef) {
        self.run_queue.lock().push_back(task);
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
pub fn run_core(me: usize) -> ! {
    let core = &cores()[me];
    let mut batch = VecDeque::new();
    loop {
        let drained = core.wake.drain_into(&mut batch);
        if drained > 0 {
            watchdog::note_drained(me, drained);
            core.run_queue.lock().extend(batch.drain(..));
        }
        let next = core.run_queue.lock().pop_front();
        if let Some(task) = next {
            core.run(task);
            continue;
        }
        let idle_from = tsc::now();
        if !spin_for_work(core) {
            halt_path(core, me, &mut batch);
        }
        stats::add(&core.stats.idle_ticks, tsc::now() - idle_from);
    }
}

/// Bounded backoff: polls the inbox for the core's current budget. `true`
/// if work arrived (the core stays `Running` meanwhile, so wakers send no
/// IPI).
fn spin_for_work(core: &CoreSched) -> bool {
    let mode = backoff_mode();
    let budget_us = core.backoff.budget_us(mode);
    if budget_us == 0 {
        return false;
    }
    let start = tsc::now();
    let end = start + tsc::us_to_ticks(budget_us);
    let steal_gap = tsc::us_to_ticks(backoff::STEAL_GAP_US);
    let mut last = start;
    loop {
        if core.wake.inbox_len() > 0 {
            core.backoff
                .caught(mode, tsc::ticks_to_us(tsc::now() - start));
            return true;
        }
        let now = tsc::now();
        if now - last > steal_gap {
            core.backoff.stolen(mode);
            return false;
        }
        if now >= end {
            return false;
        }
        last = now;
    }
}

/// The protocol's halt path, ending in the arch `sti; hlt`.
fn halt_path(core: &CoreSched, me: usize, batch: &mut VecDeque<TaskRef>) {
    let history = &HISTORIES[me];
    watchdog::halt_path_begins(me);
    history.record(IdleEvent::PrepareToHalt);
    let armed = match core.wake.prepare_to_halt().recheck() {
        Recheck::Empty(armed) => armed,
        Recheck::Work => {
            history.record(IdleEvent::RecheckFoundWork);
            return;
        }
    };
    match chaos::idle_window(me) {
        chaos::Window::HeldUntilNotified => history.record(IdleEvent::ChaosHeldUntilNotified),
        chaos::Window::HoldExpired => history.record(IdleEvent::ChaosHoldExpired),
        chaos::Window::Passed | chaos::Window::Delayed => {}
    }
    match armed.commit() {
        Commit::Halt(halted) => {
            history.record(IdleEvent::Halt);
            let halted_from = tsc::now();
            let (woke_by, lost) = sleep(core, me);
            core.backoff
                .halted(backoff_mode(), tsc::ticks_to_us(tsc::now() - halted_from));
            history.record(woke_by);
            let drained = halted.woke_up(batch);
            if drained > 0 {
                watchdog::note_drained(me, drained);
                if woke_by == IdleEvent::WokeByIpi {
                    stats::add(&core.stats.ipi_wakes_with_work, 1);
                }
            }
            if let Some(at) = lost {
                watchdog::report(me, at, batch);
            }
            if drained > 0 {
                core.run_queue.lock().extend(batch.drain(..));
            }
        }
        Commit::DontSleep => history.record(IdleEvent::DontSleep),
        Commit::WorkArrived => history.record(IdleEvent::RecheckFoundWork),
        Commit::Poll => core::hint::spin_loop(),
    }
}

/// Halts (state `Halted`) until a wake IPI, or until the core finds (on
/// the watchdog's probe, the watchdog core's own tick, or another
/// interrupt) that it has lost one. Any other wake halts again, same
/// episode: a probe, a scan tick or a stray interrupt never drains the
/// inbox unreported. Returns what ended the sleep and, for a lost wakeup,
/// where it was found.
fn sleep(core: &CoreSched, me: usize) -> (IdleEvent, Option<FoundAt>) {
    let watchdog_core = me == watchdog::WATCHDOG_CORE && watchdog::enabled();
    let halted_from = tsc::now();
    watchdog::halt_begins(me);
    let woke = if watchdog::check_self(me, false) {
        (IdleEvent::LostWakeupFound, Some(FoundAt::Halt))
    } else {
        loop {
            let ipis = COUNTS.wake[me].load(Ordering::Relaxed);
            let probes = COUNTS.probe[me].load(Ordering::Relaxed);
            let ticks = COUNTS.timer[me].load(Ordering::Relaxed);
            if watchdog_core {
                // Relaxed: a field only this core reads and writes.
                let mut armed_at = core.tick_armed_at.load(Ordering::Relaxed);
                watchdog::arm_tick(me, &mut armed_at);
                core.tick_armed_at.store(armed_at, Ordering::Relaxed);
            }
            halt::enable_interrupts_and_halt();
            interrupts::disable();
            if COUNTS.wake[me].load(Ordering::Relaxed) != ipis {
                break (IdleEvent::WokeByIpi, None);
            }
            let by_tick = watchdog_core && COUNTS.timer[me].load(Ordering::Relaxed) != ticks;
            let by_probe = COUNTS.probe[me].load(Ordering::Relaxed) != probes;
            if by_tick {
                watchdog::scan(me);
            }
            let at = if by_tick {
                FoundAt::Tick
            } else if by_probe {
                FoundAt::Probe
            } else {
                FoundAt::OtherWake
            };
            let strict = if by_tick {
                watchdog::tick_is_strict(me)
            } else {
                by_probe && watchdog::probe_is_strict(me)
            };
            if watchdog::check_self(me, strict) {
                break (IdleEvent::LostWakeupFound, Some(at));
            }
            // Nothing lost: halt again. A waker that pushes from here on
            // finds this halt's state and sends the IPI if it must, which
            // ends the next `hlt` (pending or not).
            if !by_tick {
                HISTORIES[me].record(if by_probe {
                    IdleEvent::WokeByProbe
                } else {
                    IdleEvent::WokeOther
                });
            }
        }
    };
    // The scan tick stays armed: disarming it is another LAPIC access on
    // the path from wake-up to the woken task (an exit into QEMU under
    // TCG). If it fires while the core runs, it stays pending (interrupts
    // are off) and ends the next halt at once as a scan tick.
    watchdog::halt_ends(me);
    stats::add(&core.stats.halted_ticks, tsc::now() - halted_from);
    woke
}
