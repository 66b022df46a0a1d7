//! The interrupts Vigil uses on AArch64 (GIC INTIDs: SGIs between cores,
//! the virtual timer's PPI) and their handler. Handlers do the least
//! possible: count, call a registered hook (never allocating), end the
//! interrupt. The wake SGI's handler in particular only acknowledges: the
//! interrupted idle loop does the work.

use super::{gic, percpu, timer, tsc};
use crate::arch::irq_counts::run_test_hook;
pub use crate::arch::irq_counts::{COUNTS, MAX_CORES, set_test_hook};
use core::sync::atomic::Ordering;

/// The wake IPI (SGI 0): ends a halt, nothing more.
pub const WAKE_VECTOR: u8 = 0;
/// The lost-wakeup probe (SGI 1): the watchdog core asks a halted core to
/// check itself. Lower priority than the wake SGI, so a wake pending at
/// the same time is taken first (as on x86_64).
pub const PROBE_VECTOR: u8 = 1;
/// An IPI for tests (SGI 2; calls the registered test hook).
pub const TEST_VECTOR: u8 = 2;
/// The one-shot: the EL1 virtual timer's PPI.
pub const TIMER_VECTOR: u8 = 27;

/// Each interrupt's priority in the GIC (lower is more urgent).
pub const PRIORITIES: [(u32, u8); 4] = [
    (WAKE_VECTOR as u32, 0x80),
    (TEST_VECTOR as u32, 0x80),
    (PROBE_VECTOR as u32, 0x90),
    (TIMER_VECTOR as u32, 0x90),
];

/// The IRQ exception's handler: acknowledges one interrupt, counts it,
/// ends it.
pub fn handle_irq() {
    let intid = gic::acknowledge();
    let core = percpu::current_index();
    if intid >= gic::SPECIAL_INTID {
        COUNTS[core].spurious.fetch_add(1, Ordering::Relaxed);
        return;
    }
    match intid {
        i if i == u32::from(WAKE_VECTOR) => {
            COUNTS[core].wake.fetch_add(1, Ordering::Relaxed);
        }
        i if i == u32::from(PROBE_VECTOR) => {
            COUNTS[core].probe.fetch_add(1, Ordering::Relaxed);
        }
        i if i == u32::from(TEST_VECTOR) => {
            COUNTS[core].test.fetch_add(1, Ordering::Relaxed);
            run_test_hook(core);
        }
        i if i == u32::from(TIMER_VECTOR) => {
            timer::acknowledge();
            COUNTS[core]
                .timer_last_tsc
                .store(tsc::now(), Ordering::Relaxed);
            COUNTS[core].timer.fetch_add(1, Ordering::Relaxed);
        }
        other => crate::println!("unexpected interrupt INTID {other}"),
    }
    gic::end_of_interrupt(intid);
}
