//! The kernel console: the `log` facade and `println!` over COM1, every line
//! prefixed with the id of the core that wrote it (`[c3] ...`).

use crate::arch::{percpu, serial};
use core::fmt;

struct SerialLogger;

static LOGGER: SerialLogger = SerialLogger;

impl log::Log for SerialLogger {
    fn enabled(&self, _metadata: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        match record.level() {
            log::Level::Info => print_line(format_args!("{}", record.args())),
            level => print_line(format_args!("{level}: {}", record.args())),
        }
    }

    fn flush(&self) {}
}

/// Installs the serial logger (after `serial::init`).
pub fn init() {
    // A second call fails harmlessly: the logger is already installed.
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(log::LevelFilter::Info);
}

/// The prefix that starts every console line of core `index` (its format
/// is the host's, in `vigil-proto`).
pub use vigil_proto::serial_line::CorePrefix;

/// Prints one prefixed line atomically (other cores' lines never interleave).
pub fn print_line(args: fmt::Arguments<'_>) {
    serial::write_fmt(format_args!(
        "{}{args}\n",
        CorePrefix(percpu::current_index())
    ));
}

/// Prints one prefixed line even if the console lock is held (fatal paths).
pub fn print_line_emergency(args: fmt::Arguments<'_>) {
    serial::write_fmt_emergency(format_args!(
        "{}{args}\n",
        CorePrefix(percpu::current_index())
    ));
}

/// `println!` for the kernel: one line with the core prefix.
#[macro_export]
macro_rules! println {
    ($($arg:tt)*) => { $crate::console::print_line(format_args!($($arg)*)) };
}

/// Like `println!`, but usable from panic and exception paths.
#[macro_export]
macro_rules! emergency_println {
    ($($arg:tt)*) => { $crate::console::print_line_emergency(format_args!($($arg)*)) };
}
