//! How a run ends: the exit codes the harness understands (defined once, in
//! `vigil-proto`; handed to the emulator's exit device by the arch layer:
//! on x86_64 QEMU's isa-debug-exit, whose status is `(code << 1) | 1`). Documented in the README; the harness treats only
//! `Success` (status 33) as success.
//!
//! The lowest layer of the kernel: it imports nothing above `arch`. What a
//! failure should name (the in-kernel test running, say) comes through a
//! hook that the layer above installs ([`set_failure_context`]).

use spin::Once;
use vigil_proto::test_line::{TestLine, TestOutcome};

use crate::arch::{halt, power};

pub use vigil_proto::exit_code::ExitCode;
use vigil_proto::exit_code::ExitLine;

/// Names what was running when a failure ended the run (an in-kernel test),
/// if anything: installed once by the layer that knows.
static FAILURE_CONTEXT: Once<fn() -> Option<&'static str>> = Once::new();

/// Installs the hook [`fail`] asks for the name of the test running. The
/// first call wins; later ones are ignored.
pub fn set_failure_context(current_test: fn() -> Option<&'static str>) {
    FAILURE_CONTEXT.call_once(|| current_test);
}

/// Ends the run with `code`: its verdict line on the serial port, then
/// the emulator's exit device, then (no such device: Bochs, hardware) a
/// power-off.
pub fn exit(code: ExitCode) -> ! {
    crate::emergency_println!("{}", ExitLine(code));
    power::exit_emulator(code.code());
    power::power_off();
    crate::emergency_println!("vigil: the machine did not power off; halting");
    halt::halt_forever()
}

/// Ends the run with a failure `code`, first naming the in-kernel test that
/// was running, if any, as a failed test with its reason.
pub fn fail(code: ExitCode) -> ! {
    if let Some(name) = FAILURE_CONTEXT
        .get()
        .and_then(|current_test| current_test())
    {
        // The code's label, not a formatted string: this path may run on a
        // panic from the allocator, so it allocates nothing.
        let line = TestLine {
            name,
            outcome: TestOutcome::Failed(Some(code.label())),
        };
        crate::emergency_println!("{line}");
    }
    exit(code)
}
