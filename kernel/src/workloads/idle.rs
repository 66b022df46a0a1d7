//! The idle workload: every core idles for a fixed guest time, so the host
//! can measure what an idle guest costs it (QEMU's CPU time over the wall
//! time between the `idle: start` and `idle: end` lines). Core 0 waits in
//! the arch halt (`sti; hlt` on x86_64), woken by its one-shot timer; the other cores
//! sit in their scheduler idle loops (halted, or polling in an `idle-poll`
//! build).

use crate::arch::{halt, interrupts, timer, tsc};
use crate::println;
use vigil_proto::serial_line::{IDLE_END, IDLE_START};

/// Idles for `idle_ms` of guest time.
pub fn run(idle_ms: u64) {
    println!("{IDLE_START} idle_ms={idle_ms}");
    let deadline = tsc::now() + tsc::us_to_ticks(idle_ms * 1000);
    loop {
        interrupts::disable();
        let now = tsc::now();
        if now >= deadline {
            break;
        }
        timer::arm_oneshot_us(tsc::ticks_to_us(deadline - now).max(1));
        halt::enable_interrupts_and_halt();
    }
    timer::cancel();
    println!("{IDLE_END}");
}
