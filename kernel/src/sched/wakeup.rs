//! Making tasks runnable: spawning, waking, parking, yielding and joining.
//!
//! A task woken from its own core goes straight onto the local run queue:
//! no inbox, no protocol, no IPI. A task woken from another core goes
//! through its core's inbox, and the wake protocol decides whether that core
//! needs an IPI.

use super::core_sched::{self, switch_to_idle};
use super::idle_hooks::KernelWakerHooks;
use super::inbound::Inbound;
use super::task::{Task, TaskCounts, TaskRef, WakeKind};
use crate::arch::idle_platform::CorePlatform;
use crate::arch::{percpu, tsc};
use crate::smp::cores;
use alloc::boxed::Box;
use vigil_wake::{State, Unparked};

/// Spawns `entry` as a task pinned to core `core`.
pub fn spawn_on(core: usize, entry: impl FnOnce() + Send + 'static) -> JoinHandle {
    assert!(
        core < cores::count(),
        "spawn_on core {core} of {}",
        cores::count()
    );
    let task = Task::new(core, Box::new(entry));
    make_runnable(task.clone(), false);
    JoinHandle { task }
}

/// Wakes `task` (from any core, task or idle context): if it is parked it
/// becomes runnable on its core; otherwise it keeps a wake token and its
/// next `park` returns at once.
pub fn wake(task: &TaskRef) {
    match task.parker.unpark() {
        Unparked::MustEnqueue => {
            TaskCounts::bump(&task.counts.enqueued);
            make_runnable(task.clone(), true);
        }
        Unparked::TokenLeft => TaskCounts::bump(&task.counts.tokens),
    }
}

fn make_runnable(task: TaskRef, stamp: bool) {
    let me = percpu::current_index();
    let target = task.core();
    let cores = core_sched::cores();
    if target == me {
        if stamp {
            task.stamp_wake(tsc::now(), WakeKind::Local);
        }
        cores[me].push_local(task);
        return;
    }
    if stamp {
        // The target's state just before the push: what the wake found it
        // doing (a relaxed read; the protocol's own read follows in `send`).
        let kind = match cores[target].wake.state() {
            State::Running | State::DontSleep => WakeKind::Running,
            State::Halting => WakeKind::Halting,
            State::Halted => WakeKind::Halted,
        };
        task.stamp_wake(tsc::now(), kind);
    }
    let record = task.clone();
    let hooks = KernelWakerHooks::new(&record, me, target);
    let _outcome = vigil_wake::wake_core(
        core_sched::wakes(),
        target,
        Inbound::Task(task),
        &CorePlatform::of_core(me),
        &hooks,
    );
}

/// Blocks the current task until [`wake`] (returns at once if a wake came
/// first). Callers re-check their condition: a return may be spurious.
pub fn park() {
    let task = core_sched::current_task().expect("park outside a task");
    if task.parker.try_consume_or_park() {
        return;
    }
    TaskCounts::bump(&task.counts.parked);
    switch_to_idle(&task);
}

/// Lets other runnable tasks of this core run first.
pub fn yield_now() {
    let task = core_sched::current_task().expect("yield outside a task");
    core_sched::this_core().push_local(task.clone());
    switch_to_idle(&task);
}

/// The current task.
pub fn current() -> TaskRef {
    core_sched::current_task().expect("no current task")
}

/// A spawned task, to wait for.
#[derive(Debug)]
#[must_use = "a task that is never joined still runs; join it to wait for it"]
pub struct JoinHandle {
    task: TaskRef,
}

impl JoinHandle {
    /// Blocks the current task until the spawned task has finished.
    pub fn join(self) {
        if self.task.is_done() {
            return;
        }
        self.task.set_joiner(current());
        while !self.task.is_done() {
            park();
        }
    }
}
