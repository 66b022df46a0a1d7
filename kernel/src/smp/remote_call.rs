//! Running a function on another core, before (and beside) the scheduler:
//! each core has a one-slot mailbox. An AP with nothing to do waits in the
//! arch halt; posting a job always sends a wake IPI (the always-IPI policy,
//! which is correct without any interlock: the AP checks its mailbox with
//! interrupts disabled and halts with `sti; hlt`, so an IPI that arrives
//! after the check ends the halt).

use super::cores;
use crate::arch::interrupt_vectors::WAKE_VECTOR;
use crate::arch::{halt, lapic, percpu, tsc};
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Mutex;
use x86_64::instructions::interrupts;

/// A job: runs on the core whose index it receives; `Err` reports a failure.
pub type Job = Arc<dyn Fn(usize) -> Result<(), String> + Send + Sync>;

struct Mailbox {
    job: Mutex<Option<Job>>,
    result: Mutex<Option<Result<(), String>>>,
    /// Jobs completed. Release on completion pairs with Acquire in `wait`,
    /// so the waiter sees the job's effects and its result.
    done: AtomicU64,
}

static MAILBOXES: [Mailbox; cores::MAX_CORES] = [const {
    Mailbox {
        job: Mutex::new(None),
        result: Mutex::new(None),
        done: AtomicU64::new(0),
    }
}; cores::MAX_CORES];

/// The AP's loop once online: run posted jobs, halt when there are none.
pub fn serve_forever(me: usize) -> ! {
    loop {
        interrupts::disable();
        let job = MAILBOXES[me].job.lock().take();
        match job {
            Some(job) => {
                interrupts::enable();
                let result = job(me);
                *MAILBOXES[me].result.lock() = Some(result);
                MAILBOXES[me].done.fetch_add(1, Ordering::Release);
            }
            None => halt::enable_interrupts_and_halt(),
        }
    }
}

/// Posts `job` to core `target` (not this core) and sends it a wake IPI.
/// Returns the completion count to wait for.
fn post(target: usize, job: Job) -> u64 {
    let ticket = MAILBOXES[target].done.load(Ordering::Acquire) + 1;
    let previous = MAILBOXES[target].job.lock().replace(job);
    assert!(previous.is_none(), "core {target} already had a job posted");
    lapic::send_ipi(cores::apic_id(target), WAKE_VECTOR);
    ticket
}

fn wait(target: usize, ticket: u64, timeout_ms: u64) -> Result<(), String> {
    let deadline = tsc::now() + tsc::us_to_ticks(timeout_ms * 1000);
    while MAILBOXES[target].done.load(Ordering::Acquire) < ticket {
        if tsc::now() > deadline {
            return Err(format!(
                "core {target} did not finish its job within {timeout_ms} ms"
            ));
        }
        core::hint::spin_loop();
    }
    MAILBOXES[target].result.lock().take().unwrap_or(Ok(()))
}

/// Runs `job` on core `target` (another core) and waits for it.
pub fn run_on(target: usize, timeout_ms: u64, job: Job) -> Result<(), String> {
    join(spawn_on(target, job), timeout_ms)
}

/// Runs `job` on every online core at once (this one included) and waits for
/// all; the result names the first core that failed.
pub fn run_everywhere(timeout_ms: u64, job: Job) -> Result<(), String> {
    let me = percpu::current_index();
    let tickets: Vec<(usize, u64)> = (0..cores::count())
        .filter(|&c| c != me && cores::is_online(c))
        .map(|c| (c, post(c, job.clone())))
        .collect();
    let mine = job(me).map_err(|e| format!("core {me}: {e}"));
    let mut first_error = mine.err();
    for (core, ticket) in tickets {
        if let Err(e) = wait(core, ticket, timeout_ms) {
            first_error.get_or_insert(format!("core {core}: {e}"));
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// A job posted with [`spawn_on`], to be [`join`]ed.
#[derive(Debug)]
#[must_use = "join the job to learn its result"]
pub struct Pending {
    target: usize,
    ticket: u64,
}

/// Posts `job` to core `target` (another core) without waiting.
pub fn spawn_on(target: usize, job: Job) -> Pending {
    assert_ne!(
        target,
        percpu::current_index(),
        "spawn_on targets another core"
    );
    Pending {
        target,
        ticket: post(target, job),
    }
}

/// Waits for a job posted with [`spawn_on`].
pub fn join(pending: Pending, timeout_ms: u64) -> Result<(), String> {
    wait(pending.target, pending.ticket, timeout_ms)
}
