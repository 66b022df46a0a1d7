//! What a QEMU run means: the kernel's isa-debug-exit codes and the verdict
//! (with its one-line reason) derived from how QEMU ended.

use std::fmt;

pub use vigil_proto::exit_code::{DEBUG_EXIT_PORT as DEBUG_EXIT_IOBASE, ExitCode};

/// How the QEMU process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QemuExit {
    /// QEMU exited by itself with this status.
    Status(i32),
    /// QEMU was killed by this signal (not by us).
    Signal(i32),
    /// We killed QEMU because the run outlived its timeout.
    TimedOut {
        /// The timeout that expired.
        timeout_s: u64,
    },
    /// We killed QEMU because the guest printed nothing for this long.
    Stalled {
        /// Seconds without serial output.
        stall_s: u64,
    },
}

/// What a run of the kernel amounts to. Only [`Verdict::Success`] is a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Debug-exit code 0x10 (QEMU status 33).
    Success,
    /// Debug-exit code 0x11 (QEMU status 35).
    CheckFailed,
    /// Debug-exit code 0x12 (QEMU status 37).
    Panic,
    /// Debug-exit code 0x13 (QEMU status 39).
    BadParam,
    /// Debug-exit code 0x14 (QEMU status 41).
    Exception,
    /// QEMU status 0: with `-no-reboot` a triple fault (or a guest that shut
    /// the machine down without the debug-exit port).
    TripleFault,
    /// Killed by us at the timeout.
    Timeout,
    /// Killed by us after the guest printed nothing for the stall limit
    /// (the host's stuck-core detector).
    Stuck,
    /// The guest exited with success but its Laplace/floor result differs
    /// from the host's computation (set after the run by
    /// [`crate::runner::qemu::run`]; never derived from the exit alone).
    ChecksumMismatch,
    /// The guest exited with success but its count of wake IPIs differs
    /// from QEMU's (set after the run by [`crate::runner::qemu::run`] when the IPI
    /// oracle is on).
    IpiCountMismatch,
    /// Killed by a signal we did not send.
    Signal(i32),
    /// Any other exit status: QEMU's own error (1: bad option, missing
    /// file, ...) or a debug-exit code outside the contract.
    QemuError(i32),
}

impl Verdict {
    /// Maps how QEMU ended to a verdict.
    pub fn from_exit(exit: QemuExit) -> Self {
        match exit {
            QemuExit::Status(status) => Self::from_status(status),
            QemuExit::Signal(signal) => Self::Signal(signal),
            QemuExit::TimedOut { .. } => Self::Timeout,
            QemuExit::Stalled { .. } => Self::Stuck,
        }
    }

    fn from_status(status: i32) -> Self {
        match ExitCode::from_qemu_status(status) {
            Some(ExitCode::Success) => Self::Success,
            Some(ExitCode::CheckFailed) => Self::CheckFailed,
            Some(ExitCode::Panic) => Self::Panic,
            Some(ExitCode::BadParameter) => Self::BadParam,
            Some(ExitCode::CpuException) => Self::Exception,
            None if status == 0 => Self::TripleFault,
            None => Self::QemuError(status),
        }
    }

    /// The kernel's exit code behind this verdict, if the kernel chose it.
    pub fn exit_code(self) -> Option<ExitCode> {
        match self {
            Self::Success => Some(ExitCode::Success),
            Self::CheckFailed => Some(ExitCode::CheckFailed),
            Self::Panic => Some(ExitCode::Panic),
            Self::BadParam => Some(ExitCode::BadParameter),
            Self::Exception => Some(ExitCode::CpuException),
            _ => None,
        }
    }

    /// True only for [`Verdict::Success`].
    pub fn is_success(self) -> bool {
        self == Self::Success
    }
}

/// The one-line reason for how a run ended, e.g. `panic: exit code 0x12`
/// or `timeout after 60 s`.
pub fn reason(exit: QemuExit) -> String {
    let verdict = Verdict::from_exit(exit);
    match (verdict, exit) {
        (_, QemuExit::TimedOut { timeout_s }) => format!("timeout after {timeout_s} s"),
        (_, QemuExit::Stalled { stall_s }) => {
            format!("stuck: no serial output for {stall_s} s")
        }
        (Verdict::Signal(signal), _) => format!("QEMU killed by signal {signal}"),
        (Verdict::TripleFault, _) => "triple fault: QEMU exited with status 0".to_string(),
        (Verdict::QemuError(status), _) if status & 1 == 1 && status > 1 => format!(
            "unexpected exit code {:#04x}: QEMU exited with status {status}",
            status >> 1
        ),
        (Verdict::QemuError(status), _) => format!("QEMU error: exited with status {status}"),
        (verdict, QemuExit::Status(status)) => {
            let what = verdict.exit_code().map_or("?", ExitCode::label);
            format!("{what}: exit code {:#04x}", status >> 1)
        }
        (_, QemuExit::Signal(_)) => unreachable!("signals map to Verdict::Signal"),
    }
}

/// The line printed after a run: `vigil: ok (success: exit code 0x10)` or
/// `vigil: FAILED (panic: exit code 0x12)`.
pub fn verdict_line(exit: QemuExit) -> String {
    let reason = reason(exit);
    if Verdict::from_exit(exit).is_success() {
        format!("vigil: ok ({reason})")
    } else {
        format!("vigil: FAILED ({reason})")
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(code) = self.exit_code() {
            return f.write_str(code.label());
        }
        match self {
            Self::TripleFault => f.write_str("triple fault"),
            Self::Timeout => f.write_str("timeout"),
            Self::Stuck => f.write_str("stuck"),
            Self::ChecksumMismatch => f.write_str("checksum mismatch"),
            Self::IpiCountMismatch => f.write_str("IPI count mismatch"),
            Self::Signal(signal) => write!(f, "killed by signal {signal}"),
            Self::QemuError(status) => write!(f, "QEMU exit status {status}"),
            Self::Success | Self::CheckFailed | Self::Panic | Self::BadParam | Self::Exception => {
                unreachable!("the kernel's own codes are labelled above")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: i32) -> QemuExit {
        QemuExit::Status(status)
    }

    #[test]
    fn every_kernel_code_has_its_verdict_and_back() {
        for code in ExitCode::ALL {
            let verdict = Verdict::from_exit(status(code.qemu_status()));
            assert_eq!(verdict.exit_code(), Some(code));
            assert_eq!(verdict.to_string(), code.label());
        }
    }

    #[test]
    fn each_contract_status_has_its_verdict() {
        assert_eq!(Verdict::from_exit(status(33)), Verdict::Success);
        assert_eq!(Verdict::from_exit(status(35)), Verdict::CheckFailed);
        assert_eq!(Verdict::from_exit(status(37)), Verdict::Panic);
        assert_eq!(Verdict::from_exit(status(39)), Verdict::BadParam);
        assert_eq!(Verdict::from_exit(status(41)), Verdict::Exception);
    }

    #[test]
    fn only_status_33_is_success() {
        for s in (0..=255).filter(|&s| s != 33) {
            assert!(!Verdict::from_exit(status(s)).is_success(), "status {s}");
        }
        assert!(!Verdict::from_exit(QemuExit::Signal(9)).is_success());
        assert!(!Verdict::from_exit(QemuExit::TimedOut { timeout_s: 1 }).is_success());
        assert!(!Verdict::from_exit(QemuExit::Stalled { stall_s: 1 }).is_success());
    }

    #[test]
    fn a_stall_is_stuck_with_its_own_reason() {
        let exit = QemuExit::Stalled { stall_s: 60 };
        assert_eq!(Verdict::from_exit(exit), Verdict::Stuck);
        assert_eq!(
            verdict_line(exit),
            "vigil: FAILED (stuck: no serial output for 60 s)"
        );
    }

    #[test]
    fn status_0_is_a_triple_fault_not_a_success() {
        assert_eq!(Verdict::from_exit(status(0)), Verdict::TripleFault);
        assert_eq!(
            verdict_line(status(0)),
            "vigil: FAILED (triple fault: QEMU exited with status 0)"
        );
    }

    #[test]
    fn reasons_name_the_exit_code() {
        assert_eq!(
            verdict_line(status(33)),
            "vigil: ok (success: exit code 0x10)"
        );
        assert_eq!(
            verdict_line(status(35)),
            "vigil: FAILED (check failed: exit code 0x11)"
        );
        assert_eq!(
            verdict_line(status(37)),
            "vigil: FAILED (panic: exit code 0x12)"
        );
        assert_eq!(
            verdict_line(status(39)),
            "vigil: FAILED (bad boot parameter: exit code 0x13)"
        );
        assert_eq!(
            verdict_line(status(41)),
            "vigil: FAILED (CPU exception: exit code 0x14)"
        );
    }

    #[test]
    fn timeouts_signals_and_qemu_errors_have_reasons() {
        assert_eq!(
            verdict_line(QemuExit::TimedOut { timeout_s: 60 }),
            "vigil: FAILED (timeout after 60 s)"
        );
        assert_eq!(
            Verdict::from_exit(QemuExit::Signal(15)),
            Verdict::Signal(15)
        );
        assert_eq!(reason(QemuExit::Signal(15)), "QEMU killed by signal 15");
        assert_eq!(Verdict::from_exit(status(1)), Verdict::QemuError(1));
        assert_eq!(reason(status(1)), "QEMU error: exited with status 1");
        assert_eq!(Verdict::from_exit(status(3)), Verdict::QemuError(3));
        assert_eq!(
            reason(status(3)),
            "unexpected exit code 0x01: QEMU exited with status 3"
        );
    }
}
