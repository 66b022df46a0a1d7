//! When a core back from a stolen chunk reports it done
//! (`sched::stealable::Chunk::run_report_later`): only once it is
//! registered idle again, so that a round's join never opens while the
//! core that ran its last chunk is still on its way back to the pool, and
//! the next round's publication finds it there instead of waking a halted
//! core; and a report that wakes a task on the reporting core itself is
//! seen before that core halts.

use super::runner::{TestCase, TestResult};
use crate::sched::latch::Latch;
use crate::sched::stealable::{self, Chunk, ChunkBatch};
use crate::sched::{core_sched, wakeup};
use crate::smp::cores;
use crate::{ensure, require};
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

pub const REPORTED_WHEN_IDLE: TestCase = TestCase {
    name: "sched::steal_chunk_reported_when_idle",
    run: reported_when_idle,
};

pub const CALLER_WOKEN_BY_ITS_OWN_CORE: TestCase = TestCase {
    name: "sched::steal_caller_woken_by_its_own_core",
    run: caller_woken_by_its_own_core,
};

/// Skips a test that needs the stealable pool and cores that halt (the
/// defaults) when either is ruled out.
pub fn steal_pool_that_halts() -> TestResult {
    require!(stealable::enabled(), "needs pool=steal (the default)");
    require!(
        core_sched::policy().halts(),
        "policy {} never halts",
        core_sched::policy().name()
    );
    Ok(())
}

/// Rounds of one published chunk each.
const ROUNDS: u64 = 200;

/// Publishes one chunk at a time from this core (which never takes it
/// itself) and waits for its report; each report checks that the core
/// reporting it is registered idle in the pool. Reported straight after
/// the chunk ran (the order before), every report fails: the core took
/// the chunk and left the idle set, and has not looked at the pool since.
fn reported_when_idle() -> TestResult {
    let n = cores::count();
    require!(n >= 2, "needs another core to run the chunks, have {n}");
    steal_pool_that_halts()?;
    struct Reports {
        /// Chunks reported (Release by each report, after its check;
        /// Acquire by the publisher, which then sees the check's counts).
        reported: AtomicU64,
        /// Reports from a core not registered idle at its report.
        not_idle: AtomicU64,
        /// The last core found not idle, for the message.
        last_not_idle: AtomicUsize,
    }
    struct Batch(Arc<Reports>);
    impl ChunkBatch for Batch {
        fn run_chunk(&self, _index: usize, _core: usize) {}

        fn chunk_done(&self) {
            let core = crate::arch::percpu::current_index();
            // Checked before the count below: the publisher publishes the
            // next chunk (and may choose this core, taking it out of the
            // idle set) only after it sees the count.
            if !stealable::pool().is_idle(core) {
                self.0.not_idle.fetch_add(1, Ordering::Relaxed);
                self.0.last_not_idle.store(core, Ordering::Relaxed);
            }
            self.0.reported.fetch_add(1, Ordering::Release);
        }
    }
    let reports = Arc::new(Reports {
        reported: AtomicU64::new(0),
        not_idle: AtomicU64::new(0),
        last_not_idle: AtomicUsize::new(usize::MAX),
    });
    let batch: Arc<dyn ChunkBatch> = Arc::new(Batch(reports.clone()));
    let me = crate::arch::percpu::current_index();
    for round in 0..ROUNDS {
        let chunk = Chunk {
            batch: batch.clone(),
            index: 0,
        };
        stealable::pool().publish(me, [chunk], stealable::search_wake);
        while reports.reported.load(Ordering::Acquire) <= round {
            wakeup::yield_now();
        }
    }
    let not_idle = reports.not_idle.load(Ordering::Relaxed);
    ensure!(
        not_idle == 0,
        "{not_idle} of {ROUNDS} chunks were reported done by a core not registered idle in the pool (last: core {}): a round's join opened before the core that ran its chunk was back in the idle set",
        reports.last_not_idle.load(Ordering::Relaxed)
    );
    Ok(())
}

/// Rounds of one chunk whose publisher waits without helping.
const UNHELPED_ROUNDS: usize = 20;

/// Publishes one chunk and blocks on a latch its report opens, without
/// taking the chunk itself; on one core (and whenever the others are
/// slower) this core's own idle loop runs the chunk and reports it, and
/// that report makes the waiting task runnable on this core's run queue,
/// with no inbox item and no IPI. The idle loop must look at its run queue
/// again before it halts: with the report followed straight by the halt
/// path, the first round hangs on one core (the halt waits for an IPI
/// nobody sends).
fn caller_woken_by_its_own_core() -> TestResult {
    steal_pool_that_halts()?;
    struct Opens(Latch);
    impl ChunkBatch for Opens {
        fn run_chunk(&self, _index: usize, _core: usize) {}

        fn chunk_done(&self) {
            self.0.count_down();
        }
    }
    let me = crate::arch::percpu::current_index();
    for _ in 0..UNHELPED_ROUNDS {
        let opens = Arc::new(Opens(Latch::new(1)));
        let batch: Arc<dyn ChunkBatch> = opens.clone();
        stealable::pool().publish(me, [Chunk { batch, index: 0 }], stealable::search_wake);
        opens.0.wait();
    }
    Ok(())
}
