//! Running a function on another core: a task pinned to that core, joined.
//! Jobs run with interrupts disabled, like every task: interrupts are only
//! ever enabled inside the idle loop's `sti; hlt` (and by the few tests of
//! IPIs and timers that enable them for their own window, see
//! `ktest/smp_tests.rs`). If a job leaves them enabled, they are disabled
//! again when it returns.

use crate::arch::{interrupts, percpu};
use crate::sched::wakeup::{self, JoinHandle};
use crate::smp::cores;
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use spin::Mutex;

/// A job: runs on the core whose index it receives; `Err` reports a failure.
pub type Job = Arc<dyn Fn(usize) -> Result<(), String> + Send + Sync>;

/// A job started with [`spawn_on`], to be [`join`]ed.
#[derive(Debug)]
#[must_use = "join the job to learn its result"]
pub struct Pending {
    target: usize,
    handle: JoinHandle,
    result: Arc<Mutex<Option<Result<(), String>>>>,
}

fn run_job(job: &Job, core: usize) -> Result<(), String> {
    let result = job(core);
    interrupts::disable();
    result
}

/// Starts `job` on core `target` (another core) without waiting.
pub fn spawn_on(target: usize, job: Job) -> Pending {
    assert_ne!(
        target,
        percpu::current_index(),
        "spawn_on targets another core"
    );
    let result = Arc::new(Mutex::new(None));
    let slot = result.clone();
    let handle = wakeup::spawn_on(target, move || {
        *slot.lock() = Some(run_job(&job, target));
    });
    Pending {
        target,
        handle,
        result,
    }
}

/// Waits for a job started with [`spawn_on`].
pub fn join(pending: Pending) -> Result<(), String> {
    pending.handle.join();
    let result = pending.result.lock().take();
    result.unwrap_or_else(|| {
        Err(format!(
            "core {}: job ended without a result",
            pending.target
        ))
    })
}

/// Runs `job` on core `target` (another core) and waits for it.
pub fn run_on(target: usize, job: Job) -> Result<(), String> {
    join(spawn_on(target, job))
}

/// Runs `job` on every core at once (this one included) and waits for all;
/// the result names the first core that failed.
pub fn run_everywhere(job: Job) -> Result<(), String> {
    run_on_first(cores::count(), job)
}

/// Runs `job` at once on cores `0..n` (at most every core; this one among
/// them when its index is below `n`) and waits for all; the result names
/// the first core that failed.
pub fn run_on_first(n: usize, job: Job) -> Result<(), String> {
    let me = percpu::current_index();
    let n = n.min(cores::count());
    let pending: Vec<Pending> = (0..n)
        .filter(|&c| c != me)
        .map(|c| spawn_on(c, job.clone()))
        .collect();
    let mut first_error = if me < n {
        run_job(&job, me).err().map(|e| format!("core {me}: {e}"))
    } else {
        None
    };
    for p in pending {
        let core = p.target;
        if let Err(e) = join(p) {
            first_error.get_or_insert(format!("core {core}: {e}"));
        }
    }
    first_error.map_or(Ok(()), Err)
}
