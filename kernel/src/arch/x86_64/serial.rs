//! COM1 serial console (16550 UART, port 0x3f8). QEMU's `-serial stdio` turns
//! it into the harness's view of the kernel.

use core::fmt::{self, Write};
use spin::Mutex;
use uart_16550::{Config, Uart16550Tty, backend::PioBackend};
use x86_64::instructions::interrupts;

const COM1_PORT: u16 = 0x3f8;

static COM1: Mutex<Option<Uart16550Tty<PioBackend>>> = Mutex::new(None);

/// Initialises COM1. Called once by the bootstrap core before anything logs.
pub fn init() {
    // SAFETY: 0x3f8 is COM1 on every PC-compatible machine QEMU emulates, and
    // this module is the only code that touches those eight ports.
    let tty = unsafe { Uart16550Tty::new_port(COM1_PORT, Config::default()) };
    if let Ok(tty) = tty {
        *COM1.lock() = Some(tty);
    }
}

/// Writes formatted text to COM1. Interrupts are disabled while the lock is
/// held so that an interrupt handler that logs cannot deadlock against the
/// code it interrupted on the same core.
pub fn write_fmt(args: fmt::Arguments<'_>) {
    super::interrupts::without(|| {
        if let Some(tty) = COM1.lock().as_mut() {
            // The UART cannot fail a write; a formatting error is a bug in a
            // Display impl and dropping the rest of the line is all we can do.
            let _ = tty.write_fmt(args);
        }
    });
}

/// Writes even if another context holds the console lock (it may be the code
/// that just panicked or faulted on this core). Used only on the way out.
pub fn write_fmt_emergency(args: fmt::Arguments<'_>) {
    interrupts::disable();
    if COM1.is_locked() {
        // SAFETY: we are on a path that never returns (panic/exception exit)
        // and interrupts are off; the holder is either this core (which will
        // never resume the interrupted write) or another core whose output may
        // interleave with ours, which is acceptable for a last report.
        unsafe { COM1.force_unlock() };
    }
    if let Some(tty) = COM1.lock().as_mut() {
        let _ = tty.write_fmt(args);
    }
}
