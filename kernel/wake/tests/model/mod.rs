//! The loom model of one idle core and its wakers, shared by the loom tests.
//!
//! * The idle core is the model's main thread, running the kernel's idle
//!   loop against the real [`CoreWake`]; **halt is `park()`**.
//! * Each waker is a loom thread that `send`s its items and, on
//!   `SendIpi`, **sends the IPI as `unpark()`** of the core. As on the
//!   hardware the IPI is a latched bit: several coalesce, and one that
//!   arrives while the core is awake makes its next halt return at once.
//! * When the last waker has finished it unparks the core once more (the
//!   "end of execution" tick), so a core halted on lost work does not just
//!   deadlock the model but is checked and reported.
//!
//! Checked in every execution:
//! * **no lost wakeup**: the execution never ends with the core halted, no
//!   IPI pending and work in its inbox;
//! * **one IPI per halt** (`state-machine`): no halt is claimed twice;
//! * **no IPI to a running core** (`state-machine`): every IPI is sent while
//!   the core is between its commit and its wakeup;
//! * every item is drained exactly once.
//!
//! The bookkeeping that checks these (the "ghost" state) uses `std` atomics,
//! not loom's: loom runs one thread at a time, so they read the true current
//! value, and they add no branches to the exploration.

#![allow(dead_code, reason = "each test binary uses part of the model")]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

use loom::sync::Arc;
use loom::thread;
use vigil_wake::{Commit, CoreWake, Policy, Recheck};

/// One model to check.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// The policy under test.
    pub policy: Policy,
    /// One waker thread per entry, sending that many items one after another.
    pub items_per_waker: &'static [usize],
    /// Keep idling after the last item is drained, so the core halts again
    /// (and is then woken only by the end-of-execution tick).
    pub final_halt: bool,
    /// Loom's preemption bound.
    pub preemption_bound: usize,
}

/// What a model run explored.
#[derive(Debug)]
pub struct Explored {
    /// Executions loom ran.
    pub executions: usize,
    /// Wall time.
    pub elapsed: Duration,
}

/// The message of the lost-wakeup failure (the mutation tests look for it).
pub const LOST_WAKEUP: &str = "lost wakeup";

/// With `VIGIL_LOOM_TRACE` set (and `--test-threads=1`: the trace is global),
/// each execution records what the core and the
/// wakers saw, and a failing execution prints it.
static TRACE_ON: AtomicBool = AtomicBool::new(false);
static TRACE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn trace(event: impl FnOnce() -> String) {
    if TRACE_ON.load(SeqCst) {
        TRACE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(event());
    }
}

fn dump_trace() {
    for event in TRACE.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        eprintln!("  {event}");
    }
}

struct Ghost {
    ipi_pending: AtomicBool,
    in_halt: AtomicBool,
    ipis_this_halt: AtomicUsize,
    ipis: AtomicUsize,
    halts: AtomicUsize,
    pushed: AtomicUsize,
    wakers_left: AtomicUsize,
    all_sent: AtomicBool,
}

/// Runs loom over every execution of `scenario` (within the preemption
/// bound); panics with the first failed check.
pub fn check(scenario: Scenario) -> Explored {
    TRACE_ON.store(std::env::var_os("VIGIL_LOOM_TRACE").is_some(), SeqCst);
    let start = Instant::now();
    // Per check, not global: the test harness runs several checks at once.
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(scenario.preemption_bound);
    builder.check(move || {
        counter.fetch_add(1, SeqCst);
        TRACE.lock().unwrap_or_else(|p| p.into_inner()).clear();
        run_once(scenario);
    });
    Explored {
        executions: executions.load(SeqCst),
        elapsed: start.elapsed(),
    }
}

fn run_once(scenario: Scenario) {
    let policy = scenario.policy;
    let target = Arc::new(CoreWake::<u32>::new(policy));
    let ghost = Arc::new(Ghost {
        ipi_pending: AtomicBool::new(false),
        in_halt: AtomicBool::new(false),
        ipis_this_halt: AtomicUsize::new(0),
        ipis: AtomicUsize::new(0),
        halts: AtomicUsize::new(0),
        pushed: AtomicUsize::new(0),
        wakers_left: AtomicUsize::new(scenario.items_per_waker.len()),
        all_sent: AtomicBool::new(false),
    });
    let expected: usize = scenario.items_per_waker.iter().sum();
    // The idle core runs on its own thread, so that the main thread (which
    // joins) is never unparked by a model IPI.
    let core = {
        let target = Arc::clone(&target);
        let ghost = Arc::clone(&ghost);
        thread::spawn(move || idle_core(&target, &ghost, expected, scenario.final_halt))
    };
    let core_thread = core.thread().clone();

    let wakers: Vec<_> = scenario
        .items_per_waker
        .iter()
        .enumerate()
        .map(|(w, &items)| {
            let target = Arc::clone(&target);
            let ghost = Arc::clone(&ghost);
            let core = core_thread.clone();
            thread::spawn(move || {
                let me = CoreWake::new(policy);
                for k in 0..items {
                    let item = u32::try_from(w * 100 + k).expect("small");
                    ghost.pushed.fetch_add(1, SeqCst);
                    let outcome = target.send(item, &me);
                    trace(|| format!("waker {w}: sent {item}: {outcome:?}"));
                    if outcome.send_ipi() {
                        ghost.ipis.fetch_add(1, SeqCst);
                        if policy == Policy::StateMachine {
                            assert!(
                                ghost.in_halt.load(SeqCst),
                                "IPI sent to a running core ({outcome:?})"
                            );
                            assert_eq!(
                                ghost.ipis_this_halt.fetch_add(1, SeqCst),
                                0,
                                "two IPIs for one halt"
                            );
                        }
                        ghost.ipi_pending.store(true, SeqCst);
                        core.unpark();
                    }
                }
                if ghost.wakers_left.fetch_sub(1, SeqCst) == 1 {
                    ghost.all_sent.store(true, SeqCst);
                    core.unpark();
                }
            })
        })
        .collect();

    for waker in wakers {
        waker.join().expect("waker thread panicked");
    }
    let mut drained = core.join().expect("idle core panicked");
    drained.sort_unstable();
    drained.dedup();
    assert_eq!(drained.len(), expected, "an item was lost or drained twice");
    if policy == Policy::StateMachine {
        let (ipis, halts) = (ghost.ipis.load(SeqCst), ghost.halts.load(SeqCst));
        assert!(ipis <= halts, "{ipis} IPIs for {halts} halts");
    }
}

/// The kernel's idle loop, with `park` for `sti; hlt`. Returns every item
/// it drained.
fn idle_core(target: &CoreWake<u32>, ghost: &Ghost, expected: usize, final_halt: bool) -> Vec<u32> {
    let mut batch = VecDeque::new();
    let mut drained = Vec::new();
    loop {
        let n = target.drain_into(&mut batch);
        trace(|| format!("core: drain -> {n}"));
        drained.extend(batch.drain(..));
        if !final_halt && drained.len() == expected {
            return drained;
        }
        let armed = match target.prepare_to_halt().recheck() {
            Recheck::Work => {
                trace(|| "core: recheck -> work".into());
                continue;
            }
            Recheck::Empty(armed) => armed,
        };
        ghost.ipis_this_halt.store(0, SeqCst);
        ghost.in_halt.store(true, SeqCst);
        let commit = armed.commit();
        trace(|| format!("core: commit -> {commit:?}"));
        let halted = match commit {
            Commit::Halt(halted) => halted,
            Commit::WorkArrived | Commit::DontSleep | Commit::Poll => {
                ghost.in_halt.store(false, SeqCst);
                continue;
            }
        };
        ghost.halts.fetch_add(1, SeqCst);
        // `sti; hlt`: returns at once if an IPI is pending, sleeps otherwise.
        // The IPI bit is the truth; `park` is only how the thread waits for
        // it, and it is re-checked after every return from `park` (a stale or
        // coalesced unpark is not an IPI).
        loop {
            if ghost.ipi_pending.swap(false, SeqCst) {
                break;
            }
            if ghost.all_sent.load(SeqCst) {
                // Every waker has finished and no IPI is pending: the
                // execution ends with this core halted. It must have nothing
                // to do.
                let left = ghost.pushed.load(SeqCst) - drained.len();
                if left != 0 {
                    dump_trace();
                }
                assert!(
                    left == 0,
                    "{LOST_WAKEUP}: the core is halted with {left} item(s) in its inbox and no IPI pending"
                );
                return drained;
            }
            thread::park();
        }
        ghost.in_halt.store(false, SeqCst);
        let n = halted.woke_up(&mut batch);
        trace(|| format!("core: woke up, drained {n}"));
        drained.extend(batch.drain(..));
    }
}
