//! The panic handler: report core, location and message, then fail the run.

use crate::exit::{ExitCode, fail};
use core::panic::PanicInfo;

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    match info.location() {
        Some(loc) => {
            crate::emergency_println!("PANIC at {}:{}: {}", loc.file(), loc.line(), info.message())
        }
        None => crate::emergency_println!("PANIC: {}", info.message()),
    }
    fail(ExitCode::Panic)
}
