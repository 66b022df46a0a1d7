//! How a run ends: the exit codes the harness understands (written to QEMU's
//! isa-debug-exit; QEMU's status is `(code << 1) | 1`). Documented in the
//! README; the harness treats only `Success` (status 33) as success.

use crate::arch::qemu_exit;

/// A run's final verdict, as written to isa-debug-exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ExitCode {
    /// Everything asked for ran and passed (QEMU status 33).
    Success = 0x10,
    /// A test or a workload check failed (35).
    Failed = 0x11,
    /// A Rust panic (37).
    Panic = 0x12,
    /// A boot parameter was unknown or malformed (39).
    BadParameter = 0x13,
    /// An unexpected CPU exception (41).
    CpuException = 0x14,
}

/// Ends the run with `code`.
pub fn exit(code: ExitCode) -> ! {
    qemu_exit::exit_qemu(code as u32)
}

/// Ends the run with a failure `code`, first naming the in-kernel test that
/// was running, if any.
pub fn fail(code: ExitCode) -> ! {
    if let Some(name) = crate::ktest::runner::current_test() {
        crate::emergency_println!("test {name} ... FAILED ({code:?})");
    }
    crate::emergency_println!("vigil: exiting with {code:?} ({:#x})", code as u32);
    exit(code)
}
