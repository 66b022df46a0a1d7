//! The wake crate's [`Platform`]: what the idle driver
//! (`vigil_wake::IdleDriver`) runs on in the kernel, on every architecture
//! (the same code over each arch layer's modules).
//!
//! How it keeps the crate's contract (`vigil_wake::Platform`):
//! - The sleep is [`halt::enable_interrupts_and_halt`], which a wake
//!   interrupt that became pending while interrupts were off always ends
//!   (x86_64: `sti; hlt` in one asm block, the `sti` shadow; AArch64:
//!   `wfi` with interrupts still masked, which a pending interrupt ends
//!   whatever the mask; each arch's `halt.rs` argues it). Interrupts are
//!   disabled again right after it returns, so the driver runs with them
//!   off.
//! - The interrupt counts are [`COUNTS`], bumped by this core's handlers
//!   only (one relaxed load each; the halt asm is not `nomem`, so the
//!   compiler cannot move these loads across it).
//! - The wake IPI is never reordered before the push it announces (x86_64:
//!   the ICR write; AArch64: `dsb` before the SGI register write, `isb`
//!   after it; each arch's `ipi.rs` says why) and is counted after the
//!   send (`sched::wake_ipi`, which also applies the `fault=...-ipi`
//!   injections to protocol IPIs). That counting and fault layer lives in
//!   `sched/`; this is its one caller from the arch layer.
//! - The one-shot is each arch's [`timer`] (x86_64: the LAPIC timer;
//!   AArch64: the generic timer's virtual timer), the clock its [`tsc`].

use super::interrupt_vectors::{COUNTS, WAKE_VECTOR};
use super::{halt, interrupts, ipi, timer, tsc};
use crate::sched::wake_ipi;
use core::sync::atomic::{AtomicBool, Ordering};
use vigil_wake::{InterruptCounts, Platform, Resume};

/// Per core: inside its sleep (set before it, cleared after). What the
/// final statistics report as `halted_at_end`: the protocol state cannot
/// say it, because a waker that claimed a halted core wrote `Running` into
/// it, and under `fault=dropped-ipi` that core then sleeps with its state
/// `Running`. Relaxed: only this core writes
/// it, and the one reader (the statistics at the end of a run) takes it as
/// a snapshot.
static SLEEPING: [AtomicBool; super::interrupt_vectors::MAX_CORES] =
    [const { AtomicBool::new(false) }; super::interrupt_vectors::MAX_CORES];

/// Whether core `core` is inside its sleep (`sti; hlt`) now (a snapshot).
pub fn sleeping(core: usize) -> bool {
    SLEEPING[core].load(Ordering::Relaxed)
}

/// The platform as seen from core `core` (a plain index: only that core
/// may use it for the halt, the counts and the timer).
#[derive(Debug, Clone, Copy)]
pub struct CorePlatform {
    core: usize,
}

impl CorePlatform {
    /// The handle of core `core`; call on that core.
    pub fn of_core(core: usize) -> Self {
        Self { core }
    }
}

impl Platform for CorePlatform {
    #[inline]
    fn core(&self) -> usize {
        self.core
    }

    #[inline]
    fn sleep(&self) -> Resume {
        SLEEPING[self.core].store(true, Ordering::Relaxed);
        halt::enable_interrupts_and_halt();
        interrupts::disable();
        SLEEPING[self.core].store(false, Ordering::Relaxed);
        Resume::Interrupted
    }

    #[inline]
    fn interrupt_counts(&self) -> InterruptCounts {
        // Relaxed: written by this core's own handlers (program order with
        // the interrupt), read on this core.
        InterruptCounts {
            wake: COUNTS[self.core].wake.load(Ordering::Relaxed),
            probe: COUNTS[self.core].probe.load(Ordering::Relaxed),
            timer: COUNTS[self.core].timer.load(Ordering::Relaxed),
        }
    }

    #[inline]
    fn wake_pending(&self) -> bool {
        ipi::is_pending(WAKE_VECTOR)
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
        timer::arm_oneshot_us(us);
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
