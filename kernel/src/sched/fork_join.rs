//! A fork-join pool with one persistent worker task per core: `run` hands
//! every worker the same job (with its worker index), runs share 0 on the
//! calling task, and returns when all shares are done.
//!
//! Releasing a round is one cross-core wake per worker, either all from the
//! caller (`Release::Flat`) or spread over a binary tree (`Release::Tree`):
//! the caller (worker 0) wakes workers 1 and 2, and worker `i` wakes
//! `2i + 1` and `2i + 2` before it computes its own share, so the last worker
//! is released after about log2(n) wakes instead of n - 1 in a row from one
//! core. Joining is one wake of the caller, by the last worker to finish.

use super::latch::Latch;
use super::task::TaskRef;
use super::wakeup::{self, JoinHandle, park};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::{Mutex, Once};

/// How a round is released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// The caller wakes every worker.
    Flat,
    /// Each woken worker wakes its two children first.
    Tree,
}

static RELEASE: spin::Once<Release> = spin::Once::new();

/// Sets the release shape for every pool (once, at boot).
pub fn configure(release: Release) {
    RELEASE.call_once(|| release);
}

fn release() -> Release {
    RELEASE.get().copied().unwrap_or(Release::Tree)
}

/// A round's job: called once per worker index.
pub type Job = Arc<dyn Fn(usize) + Send + Sync>;

struct Slot {
    job: Mutex<Option<Job>>,
    task: Once<TaskRef>,
}

struct Shared {
    slots: Vec<Slot>,
    round_done: Latch,
    started: Latch,
    shutdown: AtomicBool,
}

/// The pool. Worker `i` (1..n) is pinned to core `i`; the caller is worker 0.
pub struct ForkJoin {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle>,
}

impl core::fmt::Debug for ForkJoin {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ForkJoin")
            .field("workers", &self.workers.len())
            .finish()
    }
}

impl ForkJoin {
    /// Starts workers on cores 1..`n` (the caller, on core 0, is worker 0).
    pub fn new(n: usize) -> Self {
        assert!(n >= 1);
        let shared = Arc::new(Shared {
            slots: (0..n)
                .map(|_| Slot {
                    job: Mutex::new(None),
                    task: Once::new(),
                })
                .collect(),
            round_done: Latch::new(0),
            started: Latch::new(n - 1),
            shutdown: AtomicBool::new(false),
        });
        let workers = (1..n)
            .map(|i| {
                let shared = shared.clone();
                wakeup::spawn_on(i, move || worker(&shared, i))
            })
            .collect();
        shared.started.wait();
        Self { shared, workers }
    }

    /// Number of workers (including the caller).
    pub fn width(&self) -> usize {
        self.shared.slots.len()
    }

    /// Runs `job(i)` for every worker index `i`, share 0 on the caller.
    pub fn run(&self, job: &Job) {
        let n = self.width();
        self.shared.round_done.reset(n - 1);
        for slot in &self.shared.slots[1..] {
            *slot.job.lock() = Some(job.clone());
            if release() == Release::Flat {
                wakeup::wake(slot.task.get().expect("worker registered"));
            }
        }
        wake_children(&self.shared, 0);
        job(0);
        self.shared.round_done.wait();
    }

    /// Stops the workers and waits for them.
    pub fn shutdown(self) {
        self.shared.shutdown.store(true, Ordering::Release);
        // Every worker is parked on an empty slot: wake each one directly.
        for slot in &self.shared.slots[1..] {
            wakeup::wake(slot.task.get().expect("worker registered"));
        }
        for handle in self.workers {
            handle.join();
        }
    }
}

/// Wakes worker `index`'s children in the release tree (nothing when the
/// release is flat).
fn wake_children(shared: &Shared, index: usize) {
    if release() == Release::Flat {
        return;
    }
    for child in [2 * index + 1, 2 * index + 2] {
        if let Some(slot) = shared.slots.get(child) {
            wakeup::wake(slot.task.get().expect("worker registered"));
        }
    }
}

fn worker(shared: &Shared, index: usize) {
    let slot = &shared.slots[index];
    slot.task.call_once(wakeup::current);
    shared.started.count_down();
    loop {
        let job = slot.job.lock().take();
        match job {
            Some(job) => {
                wake_children(shared, index);
                job(index);
                shared.round_done.count_down();
            }
            None if shared.shutdown.load(Ordering::Acquire) => return,
            None => park(),
        }
    }
}
