//! The work-stealing fork-join (`pool=steal`): a round publishes its job as
//! `chunks` stealable chunks, whichever cores are awake run them (the
//! stealable pool's rule wakes idle cores one at a time while each still
//! finds work), the caller runs chunks too, then waits for the last one.
//!
//! Same interface as the pinned [`ForkJoin`](super::fork_join::ForkJoin):
//! `job(i)` runs once for every `i` in `0..chunks`, and the result cannot
//! depend on which core ran which chunk.

use super::fork_join::{Job, record_round_cores};
use super::latch::Latch;
use super::round_watch;
use super::stealable::{self, Chunk, ChunkBatch};
use crate::smp::cores::{self, MAX_CORES};
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// One round's chunks.
struct Round {
    job: Job,
    /// Chunks not finished yet. AcqRel: each chunk's finisher releases its
    /// writes; the last one (the RMW chain makes it see every earlier
    /// release) opens the latch, which the caller acquires.
    remaining: AtomicUsize,
    done: Latch,
    /// The cores that ran a chunk of this round (Relaxed: read by the
    /// caller after the latch opened).
    ran_on: [AtomicU64; MAX_CORES.div_ceil(64)],
}

impl ChunkBatch for Round {
    fn run_chunk(&self, index: usize, core: usize) {
        (self.job)(index);
        self.ran_on[core / 64].fetch_or(1 << (core % 64), Ordering::Relaxed);
    }

    fn chunk_done(&self) {
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.done.count_down();
        }
    }
}

impl Round {
    fn cores(&self) -> usize {
        self.ran_on
            .iter()
            .map(|word| word.load(Ordering::Relaxed).count_ones() as usize)
            .sum()
    }
}

/// The first round in which `fault=stranded-steal` may strand a round.
pub use vigil_proto::boot_params::STRANDED_ROUND;
static STRAND: AtomicBool = AtomicBool::new(false);

/// Fault injection: one round of the next pool, from [`STRANDED_ROUND`] on,
/// in which every other core is registered idle when it is published,
/// drops its search wake, its caller does not help and the caller's core
/// skips its next look at the pool before it halts (set once, at boot).
/// Each part alone strands nothing: the dropped wake is covered by the
/// caller, the caller by its core's idle loop. Together they are a
/// publisher that hands work off and halts without looking, as an
/// interrupt handler publishing work would.
pub fn strand_one_round() {
    STRAND.store(true, Ordering::Relaxed);
}

/// Whether `fault=stranded-steal` was asked for and never fired.
pub fn strand_unfired() -> bool {
    STRAND.load(Ordering::Relaxed)
}

/// `fault=stranded-steal`: waits (at most a second) until every core
/// but the caller's is registered idle, so that the faulty round strands
/// its chunks whatever the timing (the cores have nothing else to do
/// between rounds).
fn wait_for_other_cores_idle() {
    let deadline = crate::arch::tsc::now() + crate::arch::tsc::us_to_ticks(1_000_000);
    let me = crate::arch::percpu::current_index();
    let others = cores::count() - 1;
    while crate::arch::tsc::now() < deadline {
        // The caller's own core may be registered too (it stays so while
        // it runs pinned work), so the idle count alone is not enough: it
        // let a round be published with one core still finishing the last
        // round's chunk, and the fault never fired.
        if stealable::pool().others_idle(me) >= others {
            return;
        }
        core::hint::spin_loop();
    }
}

/// The pool: each round is as many chunks as its caller says.
#[derive(Debug, Default)]
pub struct StealJoin {
    /// Rounds run (Relaxed: only the caller).
    rounds: AtomicU64,
}

impl StealJoin {
    /// A pool (it has no workers: its rounds run on whichever cores the
    /// stealable pool's rule wakes).
    pub fn new() -> Self {
        Self {
            rounds: AtomicU64::new(0),
        }
    }

    /// Runs `job(i)` for every chunk `i` of `chunks` (at least 1), chunk 0
    /// on the caller, the others on whichever cores are awake.
    pub fn run(&self, job: &Job, chunks: usize) {
        assert!(chunks >= 1);
        let number = self.rounds.load(Ordering::Relaxed) + 1;
        self.rounds.store(number, Ordering::Relaxed);
        // The caller may never halt (it runs every chunk itself when no
        // other core comes): it runs the detectors' scan when one is due.
        super::watchdog::scan_if_due(crate::arch::percpu::current_index());
        round_watch::begin();
        let round = Arc::new(Round {
            job: job.clone(),
            remaining: AtomicUsize::new(chunks),
            done: Latch::new(1),
            ran_on: [const { AtomicU64::new(0) }; MAX_CORES.div_ceil(64)],
        });
        let batch: Arc<dyn ChunkBatch> = round.clone();
        // The caller runs chunk 0 itself, so only the others are published:
        // each published chunk may wake a core (the herd bound counts
        // queued items), and none should be woken for the caller's.
        let chunks = (1..chunks).map(|index| Chunk {
            batch: batch.clone(),
            index,
        });
        let me = crate::arch::percpu::current_index();
        if number >= STRANDED_ROUND && STRAND.load(Ordering::Relaxed) {
            wait_for_other_cores_idle();
        }
        // The search wakes are sent once the publication is done, not from
        // inside it, so that the stranding fault can decide on what the
        // publication saw (a later wake is the same as a slow waker).
        let published = stealable::timed_publish(me, chunks);
        let strand = number >= STRANDED_ROUND
            && !published.woke.is_empty()
            && published.others_idle + 1 == cores::count()
            && STRAND.load(Ordering::Relaxed)
            && STRAND.swap(false, Ordering::Relaxed);
        if strand {
            for &core in published.woke.as_slice() {
                stealable::note_search_target(core);
            }
            crate::println!(
                "fault: stranded-steal: round {number}: the search wake(s) to core(s) {:?} dropped, the caller does not help and its core skips its next look at the pool",
                published.woke.as_slice()
            );
            stealable::skip_next_look(me);
        } else {
            for &core in published.woke.as_slice() {
                stealable::search_wake(core);
            }
            crate::chaos::delay(crate::chaos::Point::AfterPublish);
        }
        // The caller's own chunk, then (unless stranding) it helps: it is
        // running, so it takes chunks outside the rule (it is never idle,
        // never a searcher).
        Chunk { batch, index: 0 }.run();
        if !strand {
            while let Some(chunk) = stealable::timed_try_take() {
                chunk.run();
            }
        }
        round.done.wait();
        record_round_cores(round.cores());
        round_watch::end();
    }
}
