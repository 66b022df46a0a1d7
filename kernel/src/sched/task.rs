//! Tasks: kernel threads pinned to one core, each on its own stack with an
//! unmapped guard page below it. Stacks are recycled through a pool once a
//! task has exited and switched away for the last time.

use super::core_sched;
use crate::arch::context;
use crate::arch::paging::{self, GuardOwner, MappedStack};
use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use spin::Mutex;
use vigil_wake::{Elided, Notify, NotifyOutcome, Parker, State};

/// Usable bytes of each task stack (a guard page sits below).
pub const TASK_STACK_BYTES: u64 = 64 * 1024;

/// A shared handle to a task.
pub type TaskRef = Arc<Task>;

type Entry = Box<dyn FnOnce() + Send>;

/// How the waker found the target core when it made this task runnable
/// (recorded with the wake's TSC stamp, for the latency histograms).
pub use vigil_proto::wake_kind::WakeKind;

/// A kernel task.
pub struct Task {
    id: u64,
    core: usize,
    /// Stack pointer saved by the context switch while the task is not
    /// running. Written and read only by the task's own core.
    saved_rsp: AtomicU64,
    stack: MappedStack,
    entry: Mutex<Option<Entry>>,
    pub(super) parker: Parker,
    done: AtomicBool,
    joiner: Mutex<Option<TaskRef>>,
    /// TSC when the task was last made runnable from a wake (0: none
    /// pending). Written by the waker before the push that publishes it.
    wake_tsc: AtomicU64,
    wake_kind: AtomicU8,
    /// The core that last woke this task from another core.
    wake_from: AtomicU64,
    /// What that waker's notify saw (raw `State`, or `NO_OBSERVATION`).
    notify_observed: AtomicU8,
    /// What that waker's notify decided (see `ACTIONS`).
    notify_action: AtomicU8,
    /// Life-cycle counts for state dumps (Relaxed: observations only).
    pub(super) counts: TaskCounts,
}

/// How often a task parked, was woken (by enqueue or token) and was run:
/// in a healthy task `enqueued` equals `parked` (or is one behind while it
/// sleeps) and `runs` is `enqueued` + 1 (the first run needs no wake).
#[derive(Debug, Default)]
pub struct TaskCounts {
    /// Parks that blocked (no token was waiting).
    pub parked: AtomicU64,
    /// Wakes that found it parked and made it runnable.
    pub enqueued: AtomicU64,
    /// Wakes that left (or joined) a token.
    pub tokens: AtomicU64,
    /// Times a core switched to it.
    pub runs: AtomicU64,
}

impl TaskCounts {
    /// Adds one to `counter` (Relaxed: a statistic).
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// `parked P, enqueued E, tokens T, runs R`.
    pub fn describe(&self) -> alloc::string::String {
        alloc::format!(
            "parked {}, enqueued {}, tokens {}, runs {}",
            self.parked.load(Ordering::Relaxed),
            self.enqueued.load(Ordering::Relaxed),
            self.tokens.load(Ordering::Relaxed),
            self.runs.load(Ordering::Relaxed)
        )
    }
}

const NO_OBSERVATION: u8 = u8::MAX;
/// Names of notify decisions, indexed by the recorded action code: 0 is
/// "sent an IPI", then one per `Elided` reason in `Elided::ALL` order.
const ACTIONS: [&str; 7] = [
    "sent a wake IPI",
    "sent no IPI (target running)",
    "sent no IPI (target halting: wrote DontSleep)",
    "sent no IPI (already claimed)",
    "sent no IPI (inbox already non-empty)",
    "sent no IPI (self)",
    "sent no IPI (polling)",
];

impl core::fmt::Debug for Task {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Task")
            .field("id", &self.id)
            .field("core", &self.core)
            .finish_non_exhaustive()
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static STACK_POOL: Mutex<Vec<MappedStack>> = Mutex::new(Vec::new());

impl Task {
    /// Builds a task that will run `entry` on core `core` (not yet runnable).
    pub fn new(core: usize, entry: Entry) -> TaskRef {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let stack = STACK_POOL.lock().pop().unwrap_or_else(|| {
            paging::map_stack(
                TASK_STACK_BYTES,
                GuardOwner {
                    what: "task stack (first task id)",
                    index: id as usize,
                },
            )
        });
        // SAFETY: the stack is mapped, page-aligned, and ours alone: fresh
        // from `map_stack`, or returned to the pool by a task that exited
        // and will never run again.
        let rsp = unsafe { context::prepare_stack(stack.top.as_u64(), task_start) };
        Arc::new(Task {
            id,
            core,
            saved_rsp: AtomicU64::new(rsp),
            stack,
            entry: Mutex::new(Some(entry)),
            parker: Parker::new(),
            done: AtomicBool::new(false),
            joiner: Mutex::new(None),
            wake_tsc: AtomicU64::new(0),
            wake_kind: AtomicU8::new(WakeKind::Local as u8),
            wake_from: AtomicU64::new(0),
            notify_observed: AtomicU8::new(NO_OBSERVATION),
            notify_action: AtomicU8::new(0),
            counts: TaskCounts::default(),
        })
    }

    /// Unique id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The core this task is pinned to.
    pub fn core(&self) -> usize {
        self.core
    }

    /// Whether the task has finished.
    pub fn is_done(&self) -> bool {
        // Acquire pairs with the Release in `mark_done`: a joiner that sees
        // `done` sees everything the task did.
        self.done.load(Ordering::Acquire)
    }

    pub(super) fn saved_rsp_slot(&self) -> *mut u64 {
        self.saved_rsp.as_ptr()
    }

    pub(super) fn saved_rsp(&self) -> u64 {
        self.saved_rsp.load(Ordering::Relaxed)
    }

    pub(super) fn take_entry(&self) -> Option<Entry> {
        self.entry.lock().take()
    }

    pub(super) fn mark_done(&self) {
        self.done.store(true, Ordering::Release);
    }

    pub(super) fn set_joiner(&self, joiner: TaskRef) {
        *self.joiner.lock() = Some(joiner);
    }

    pub(super) fn take_joiner(&self) -> Option<TaskRef> {
        self.joiner.lock().take()
    }

    /// Gives the stack back to the pool. Called by the idle loop of the
    /// task's core after the task's last switch away.
    pub(super) fn recycle_stack(&self) {
        STACK_POOL.lock().push(self.stack);
    }

    pub(super) fn stamp_wake(&self, tsc: u64, kind: WakeKind) {
        self.wake_kind.store(kind as u8, Ordering::Relaxed);
        self.wake_tsc.store(tsc, Ordering::Relaxed);
    }

    /// Takes the pending wake stamp, if any.
    pub(super) fn take_wake_stamp(&self) -> Option<(u64, WakeKind)> {
        let tsc = self.wake_tsc.swap(0, Ordering::Relaxed);
        (tsc != 0).then(|| {
            (
                tsc,
                WakeKind::from_raw(self.wake_kind.load(Ordering::Relaxed)),
            )
        })
    }

    /// Records which core woke this task and what its notify saw and did
    /// (for lost-wakeup reports; relaxed, read long after).
    pub(super) fn record_notify(&self, from: usize, outcome: &NotifyOutcome) {
        self.wake_from.store(from as u64, Ordering::Relaxed);
        let observed = outcome.observed.map_or(NO_OBSERVATION, State::as_raw);
        self.notify_observed.store(observed, Ordering::Relaxed);
        let action = match outcome.action {
            Notify::Wake => 0,
            Notify::Skip(why) => 1 + Elided::ALL.iter().position(|e| *e == why).unwrap_or(0) as u8,
        };
        self.notify_action.store(action, Ordering::Relaxed);
    }

    /// (waking core, what it saw, what it did), as text.
    pub fn notify_record(&self) -> (u64, &'static str, &'static str) {
        let observed = match State::from_raw(self.notify_observed.load(Ordering::Relaxed)) {
            Some(state) => state.name(),
            None => "nothing (no read)",
        };
        let action =
            ACTIONS[usize::from(self.notify_action.load(Ordering::Relaxed)).min(ACTIONS.len() - 1)];
        (self.wake_from.load(Ordering::Relaxed), observed, action)
    }

    /// When the task was last made runnable by a wake still pending (0: none).
    pub fn pending_wake_tsc(&self) -> u64 {
        self.wake_tsc.load(Ordering::Relaxed)
    }
}

/// First code a task runs (entered by the context switch's `ret`).
extern "C" fn task_start() -> ! {
    let task = core_sched::current_task().expect("task_start without a current task");
    if let Some(entry) = task.take_entry() {
        drop(task);
        entry();
    } else {
        drop(task);
    }
    core_sched::exit_current()
}
