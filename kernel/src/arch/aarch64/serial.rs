//! The console: QEMU `virt`'s PL011 UART (`-serial stdio` makes it the
//! harness's view of the kernel). Transmit only, polled: a byte is written
//! once the transmit FIFO has room.

use super::interrupts;
use core::fmt::{self, Write};
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Mutex;

/// Data register.
const DR: u64 = 0x00;
/// Flag register; bit 5: transmit FIFO full.
const FR: u64 = 0x18;
const FR_TXFF: u32 = 1 << 5;

/// The UART's registers (0 until [`init`]).
static BASE: AtomicU64 = AtomicU64::new(0);
/// Serialises whole lines.
static LOCK: Mutex<()> = Mutex::new(());

struct Pl011(u64);

impl Write for Pl011 {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for byte in s.bytes() {
            // SAFETY: `self.0` is the PL011's register page, mapped as
            // Device memory (identity); FR and DR are its registers.
            unsafe {
                while ((self.0 + FR) as *const u32).read_volatile() & FR_TXFF != 0 {
                    core::hint::spin_loop();
                }
                ((self.0 + DR) as *mut u32).write_volatile(u32::from(byte));
            }
        }
        Ok(())
    }
}

/// Starts using the UART at `base` (QEMU's PL011 needs no set-up to
/// transmit).
pub fn init(base: u64) {
    BASE.store(base, Ordering::Relaxed);
}

/// Writes to the UART at `base` with no lock (before the MMU is on, when
/// the boot fails before [`init`]).
pub fn write_early(base: u64, args: fmt::Arguments<'_>) {
    let _ = Pl011(base).write_fmt(args);
}

/// Writes formatted text. Interrupts are off while the lock is held, so
/// that a handler that prints cannot deadlock against the code it
/// interrupted on the same core.
pub fn write_fmt(args: fmt::Arguments<'_>) {
    let base = BASE.load(Ordering::Relaxed);
    if base == 0 {
        return;
    }
    interrupts::without(|| {
        let _guard = LOCK.lock();
        // The UART cannot fail a write; a formatting error is a bug in a
        // Display impl and dropping the rest of the line is all we can do.
        let _ = Pl011(base).write_fmt(args);
    });
}

/// Writes even if another context holds the console lock (it may be the
/// code that just panicked or faulted on this core). Used only on the way
/// out.
pub fn write_fmt_emergency(args: fmt::Arguments<'_>) {
    interrupts::disable();
    let base = BASE.load(Ordering::Relaxed);
    if base == 0 {
        return;
    }
    if LOCK.is_locked() {
        // SAFETY: on a path that never returns (panic/exception exit) with
        // interrupts off; the holder is this core (which will never resume
        // the interrupted write) or another core whose output may
        // interleave with ours, which is acceptable for a last report.
        unsafe { LOCK.force_unlock() };
    }
    let _guard = LOCK.lock();
    let _ = Pl011(base).write_fmt(args);
}
