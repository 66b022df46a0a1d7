//! The wake crate's [`Platform`] on x86_64: what the idle driver
//! (`vigil_wake::IdleDriver`) runs on in the kernel.
//!
//! How this platform keeps the crate's contract (`vigil_wake::Platform`):
//! - `sti; hlt` is one asm block ([`halt::enable_interrupts_and_halt`]), so
//!   a wake IPI latched while interrupts were off ends the `hlt`; `cli`
//!   right after it returns, so the driver runs with interrupts off again.
//! - The interrupt counts are [`COUNTS`], bumped by this core's handlers
//!   only (one relaxed load each; the halt asm is not `nomem`, so the
//!   compiler cannot move these loads across it).
//! - The wake IPI's ICR write is an uncached store (xAPIC), not reordered
//!   with the earlier push; it is counted after the write
//!   (`sched::wake_ipi`, which also applies the `fault=...-ipi` injections
//!   to protocol IPIs). That counting and fault layer lives in `sched/`;
//!   this is its one caller from the arch layer.
//! - The one-shot is the LAPIC timer ([`lapic::arm_oneshot_us`]); the clock
//!   the TSC.

use super::interrupt_vectors::{COUNTS, WAKE_VECTOR};
use super::{halt, lapic, tsc};
use crate::sched::wake_ipi;
use core::sync::atomic::{AtomicBool, Ordering};
use vigil_wake::{InterruptCounts, Platform, Resume};
use x86_64::instructions::interrupts;

/// Per core: inside its `sti; hlt` (set before it, cleared after). What
/// the final statistics report as `halted_at_end`: the protocol state
/// cannot say it, because a waker that claimed a halted core wrote
/// `Running` into it, and under `fault=dropped-ipi` that core then sleeps
/// in its `hlt` with its state `Running`. Relaxed: only this core writes
/// it, and the one reader (the statistics at the end of a run) takes it as
/// a snapshot.
static IN_HLT: [AtomicBool; super::interrupt_vectors::MAX_CORES] =
    [const { AtomicBool::new(false) }; super::interrupt_vectors::MAX_CORES];

/// Whether core `core` is inside its `sti; hlt` now (a snapshot).
pub fn in_hlt(core: usize) -> bool {
    IN_HLT[core].load(Ordering::Relaxed)
}

/// The platform as seen from core `core` (a plain index: only that core
/// may use it for the halt, the counts and the timer).
#[derive(Debug, Clone, Copy)]
pub struct X86Platform {
    core: usize,
}

impl X86Platform {
    /// The handle of core `core`; call on that core.
    pub fn of_core(core: usize) -> Self {
        Self { core }
    }
}

impl Platform for X86Platform {
    #[inline]
    fn core(&self) -> usize {
        self.core
    }

    #[inline]
    fn sleep(&self) -> Resume {
        IN_HLT[self.core].store(true, Ordering::Relaxed);
        halt::enable_interrupts_and_halt();
        interrupts::disable();
        IN_HLT[self.core].store(false, Ordering::Relaxed);
        Resume::Interrupted
    }

    #[inline]
    fn interrupt_counts(&self) -> InterruptCounts {
        // Relaxed: written by this core's own handlers (program order with
        // the interrupt), read on this core.
        InterruptCounts {
            wake: COUNTS.wake[self.core].load(Ordering::Relaxed),
            probe: COUNTS.probe[self.core].load(Ordering::Relaxed),
            timer: COUNTS.timer[self.core].load(Ordering::Relaxed),
        }
    }

    #[inline]
    fn wake_pending(&self) -> bool {
        lapic::is_pending(WAKE_VECTOR)
    }

    #[inline]
    fn send_wake(&self, target: usize) {
        wake_ipi::send_for_protocol(self.core, target);
    }

    #[inline]
    fn send_probe(&self, target: usize) {
        wake_ipi::send_probe(target);
    }

    #[inline]
    fn wakes_sent_to(&self, target: usize) -> u64 {
        wake_ipi::sent_to(target)
    }

    #[inline]
    fn arm_oneshot_us(&self, us: u64) {
        lapic::arm_oneshot_us(us);
    }

    #[inline]
    fn now_ticks(&self) -> u64 {
        tsc::now()
    }

    #[inline]
    fn us_to_ticks(&self, us: u64) -> u64 {
        tsc::us_to_ticks(us)
    }

    #[inline]
    fn ticks_to_us(&self, ticks: u64) -> u64 {
        tsc::ticks_to_us(ticks)
    }
}
