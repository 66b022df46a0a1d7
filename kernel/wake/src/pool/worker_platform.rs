//! The [`Platform`] of a pool worker: a thread that sleeps in
//! [`std::thread::park`] and is woken by an unpark.
//!
//! How it keeps the platform contract (see `platform.rs`):
//!
//! * **Sleep is atomic with respect to wakes.** A wake is a latched bit per
//!   worker and vector (`wake`, `probe`) set before the unpark; the sleeping
//!   worker checks its latches before every `park`, and `park` returns at
//!   once if an unpark came after the check (the thread's token), so a wake
//!   sent between the protocol's commit and the `park` ends the sleep.
//! * **Wakes coalesce**: two wakes before the worker looks are one latch.
//! * **A wake carries no memory** that the protocol relies on: the latches
//!   are Relaxed, and what the woken worker reads about its work is ordered
//!   by the inbox's own atomics (unpark/park do synchronise in `std`, which
//!   the protocol does not need).
//! * **A sleep may end for nothing**: `park` may return spuriously; the
//!   worker looks at its latches and parks again, so the driver sees only
//!   latched wakes, the one-shot timer, or the pool stopping.
//! * **The one-shot timer** is a deadline checked by the sleeping worker
//!   (`park_timeout`), spent once it fired.

use core::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst, fence};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use crate::platform::{InterruptCounts, Platform, Resume};

/// One worker's wake latches and its sender-side counts, shared by every
/// thread that may wake it.
#[derive(Debug, Default)]
pub(crate) struct WakeLine {
    /// The worker's thread, set once it has started.
    thread: OnceLock<Thread>,
    /// A latched wake (the wake IPI's pending bit).
    wake: AtomicBool,
    /// A latched probe (the lost-wakeup detector's own vector).
    probe: AtomicBool,
    /// Wakes sent to this worker (each an unpark), counted by the senders.
    sent: AtomicU64,
    /// Every `Thread::unpark` call made for this worker (wakes, probes, and
    /// a thief's unpark of it parked in a join).
    unparks: AtomicU64,
    /// Wakes the worker took, counted by the worker (the sleeper's side).
    taken: AtomicU64,
}

impl WakeLine {
    /// Records the worker's thread; called by the worker before it can sleep
    /// (and before it first reads the pool's `stopping`).
    pub(crate) fn register(&self) {
        let _ = self.thread.set(thread::current());
        // The worker's half of the shutdown pair (the other half, and the
        // argument, are in `ThreadPool::stop`) and of the wake pair (in
        // `unpark`): this SeqCst fence orders the registration above before
        // every later read of `stopping` and of the latches by this worker
        // (each in `sleep`, before it parks).
        fence(SeqCst); // FENCE_REGISTER
    }

    /// Unparks the worker after its latch was set (the caller's store).
    fn unpark(&self) {
        // Relaxed: a count for statistics.
        self.unparks.fetch_add(1, Relaxed);
        // The same store-buffering pair as the shutdown's (see
        // `ThreadPool::stop`), with the latch for `stopping`: the caller
        // stored the latch, this fence pairs with FENCE_REGISTER, and
        // either this `get` sees the worker's registration and unparks it,
        // or the worker's check of its latches (after FENCE_REGISTER, before
        // every park) sees the latch. Without it a wake to a worker that
        // had only just registered could find no thread while the worker
        // read its latch unset and parked. One fence per wake, beside an
        // unpark.
        fence(SeqCst);
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }

    /// Latches a wake and unparks the worker, then counts it as sent (as the
    /// kernel counts an IPI after its ICR write).
    pub(crate) fn send_wake(&self) {
        // Relaxed: the latch carries no memory (see the module docs); it only
        // has to be set before the unpark, which program order and the
        // unpark's own synchronisation give.
        self.wake.store(true, Relaxed);
        self.unpark();
        self.sent.fetch_add(1, Relaxed);
    }

    /// Latches a probe and unparks the worker.
    pub(crate) fn send_probe(&self) {
        self.probe.store(true, Relaxed);
        self.unpark();
    }

    /// Wakes sent so far.
    pub(crate) fn wakes_sent(&self) -> u64 {
        self.sent.load(Relaxed)
    }

    /// Wakes this worker took (sleeps that ended on a latched wake).
    pub(crate) fn wakes_taken(&self) -> u64 {
        self.taken.load(Relaxed)
    }

    /// Unparks made so far.
    pub(crate) fn unparks(&self) -> u64 {
        self.unparks.load(Relaxed)
    }

    /// Unparks the worker parked in a join (`join.rs`) whose second half
    /// another worker just finished; counted with the other unparks. No
    /// latch and no fence: the join's own state carries the wait's
    /// condition, and this `get` sees the registration, which the joiner
    /// made before it ran any job: the spawned half reached the thief
    /// through the pool's queues after the joiner pushed it, and that
    /// hand-off (a queue's unlock / lock pair today) orders the
    /// registration before this read.
    pub(crate) fn unpark_joiner(&self) {
        // Relaxed: a count for statistics.
        self.unparks.fetch_add(1, Relaxed);
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }

    /// Unparks the worker without latching anything (the pool stopping).
    pub(crate) fn nudge(&self) {
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }
}

/// What a worker itself counted while it slept (the sleeper's side).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SleepCounts {
    /// Calls to `park` (or `park_timeout`).
    pub(crate) parks: u64,
    /// `park` returns with no latch set and no deadline passed.
    pub(crate) empty_returns: u64,
}

/// A worker's platform handle: its index, the pool's wake lines, and the
/// counts its own sleeps keep (only the worker uses its handle).
#[derive(Debug)]
pub(crate) struct WorkerPlatform<'a> {
    me: usize,
    lines: &'a [WakeLine],
    stopping: &'a AtomicBool,
    epoch: Instant,
    counts: Cell<InterruptCounts>,
    sleep_counts: Cell<SleepCounts>,
    deadline: Cell<Option<Instant>>,
}

impl<'a> WorkerPlatform<'a> {
    pub(crate) fn new(
        me: usize,
        lines: &'a [WakeLine],
        stopping: &'a AtomicBool,
        epoch: Instant,
    ) -> Self {
        Self {
            me,
            lines,
            stopping,
            epoch,
            counts: Cell::new(InterruptCounts::default()),
            sleep_counts: Cell::new(SleepCounts::default()),
            deadline: Cell::new(None),
        }
    }

    pub(crate) fn sleep_counts(&self) -> SleepCounts {
        self.sleep_counts.get()
    }

    fn taken(&self, bump: impl FnOnce(&mut InterruptCounts)) -> Resume {
        let mut counts = self.counts.get();
        bump(&mut counts);
        self.counts.set(counts);
        Resume::Interrupted
    }
}

impl Platform for WorkerPlatform<'_> {
    fn core(&self) -> usize {
        self.me
    }

    fn sleep(&self) -> Resume {
        let line = &self.lines[self.me];
        loop {
            // The wake first, as the driver classifies it first.
            if line.wake.swap(false, Relaxed) {
                // Relaxed: a count; single writer (this worker).
                line.taken.fetch_add(1, Relaxed);
                return self.taken(|c| c.wake += 1);
            }
            if line.probe.swap(false, Relaxed) {
                return self.taken(|c| c.probe += 1);
            }
            if let Some(deadline) = self.deadline.get()
                && Instant::now() >= deadline
            {
                self.deadline.set(None);
                return self.taken(|c| c.timer += 1);
            }
            // Relaxed, after the SeqCst fence in `WakeLine::register` (the
            // worker's half of the shutdown pair, argued in
            // `ThreadPool::stop`): either this load sees `stopping`, or the
            // stopping thread saw the registration and unparks this worker,
            // and the `park` below returns with that unpark's view, in which
            // `stopping` is set.
            if self.stopping.load(Relaxed) {
                return Resume::MachineStopped;
            }
            let mut sleep_counts = self.sleep_counts.get();
            sleep_counts.parks += 1;
            match self.deadline.get() {
                Some(deadline) => {
                    thread::park_timeout(deadline.saturating_duration_since(Instant::now()));
                }
                None => thread::park(),
            }
            if !line.wake.load(Relaxed) && !line.probe.load(Relaxed) {
                sleep_counts.empty_returns += 1;
            }
            self.sleep_counts.set(sleep_counts);
        }
    }

    fn interrupt_counts(&self) -> InterruptCounts {
        self.counts.get()
    }

    fn wake_pending(&self) -> bool {
        self.lines[self.me].wake.load(Relaxed)
    }

    fn send_wake(&self, target: usize) {
        self.lines[target].send_wake();
    }

    fn send_probe(&self, target: usize) {
        self.lines[target].send_probe();
    }

    fn wakes_sent_to(&self, target: usize) -> u64 {
        self.lines[target].wakes_sent()
    }

    fn arm_oneshot_us(&self, us: u64) {
        self.deadline
            .set(Some(Instant::now() + Duration::from_micros(us)));
    }

    fn now_ticks(&self) -> u64 {
        // Nanoseconds since the pool started; u64 lasts 584 years.
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn us_to_ticks(&self, us: u64) -> u64 {
        us.saturating_mul(1000)
    }

    fn ticks_to_us(&self, ticks: u64) -> u64 {
        ticks / 1000
    }

    fn relax(&self) {
        // A worker polling its inbox gives its host core to any thread
        // waiting for that core between two looks (rayon's idle threads do
        // the same; a thread queued on another core gains nothing from it,
        // and the scheduler may return at once). Measured against a spin
        // (`spin_loop`), pollers capped at the host's 2 cores or not, and
        // against a yield with the cap (peer_bench, 2 host cores, two
        // interleaved runs):
        // round-robin at 8 workers 91-95 ns a job against 105-216 spinning
        // and 466-518 capped; spawn-worker at 8 130-132 against 247-345
        // spinning.
        std::thread::yield_now();
    }
}
