//! How a run ends: the code the kernel writes to QEMU's `isa-debug-exit`
//! device, which makes QEMU exit with status `(code << 1) | 1`. Status 0 is
//! never produced by the device, so the host can tell a triple fault
//! (`-no-reboot`: status 0) from any code the kernel chose.

/// The I/O port of QEMU's `isa-debug-exit` device (`iobase=0xf4`, 4 bytes).
pub const DEBUG_EXIT_PORT: u16 = 0xf4;

/// A run's final verdict, as written to the debug-exit port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ExitCode {
    /// Everything asked for ran and passed (QEMU status 33).
    Success = 0x10,
    /// A check failed: an in-kernel test, a workload's own check, or the
    /// lost-wakeup detector (35). The serial output says which.
    CheckFailed = 0x11,
    /// A Rust panic (37).
    Panic = 0x12,
    /// A boot parameter was unknown or malformed (39).
    BadParameter = 0x13,
    /// An unexpected CPU exception (41).
    CpuException = 0x14,
}

impl ExitCode {
    /// Every code, success first.
    pub const ALL: [ExitCode; 5] = [
        ExitCode::Success,
        ExitCode::CheckFailed,
        ExitCode::Panic,
        ExitCode::BadParameter,
        ExitCode::CpuException,
    ];

    /// The value written to the port.
    #[must_use]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The exit status QEMU reports for it: `(code << 1) | 1`.
    #[must_use]
    pub const fn qemu_status(self) -> i32 {
        ((self as i32) << 1) | 1
    }

    /// The code behind a QEMU exit status, if it is one of these.
    #[must_use]
    pub fn from_qemu_status(status: i32) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|code| code.qemu_status() == status)
    }

    /// What the host calls it: `success`, `check failed`, `panic`, `bad boot
    /// parameter`, `CPU exception`.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            ExitCode::Success => "success",
            ExitCode::CheckFailed => "check failed",
            ExitCode::Panic => "panic",
            ExitCode::BadParameter => "bad boot parameter",
            ExitCode::CpuException => "CPU exception",
        }
    }
}

impl ExitCode {
    /// The code with this port value, if it is one.
    #[must_use]
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|known| known.code() == code)
    }
}

/// The kernel's last line, printed before it writes its code: the verdict
/// on the serial port for machines without the exit device (the host reads
/// it there after an ACPI power-off): `vigil: exit 0x10 (success)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitLine(pub ExitCode);

const EXIT_LINE_PREFIX: &str = "vigil: exit ";

impl core::fmt::Display for ExitLine {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{EXIT_LINE_PREFIX}{:#04x} ({})",
            self.0.code(),
            self.0.label()
        )
    }
}

impl ExitLine {
    /// Parses the line (after the core prefix; trailing whitespace ignored).
    #[must_use]
    pub fn parse(message: &str) -> Option<Self> {
        let rest = message.trim_end().strip_prefix(EXIT_LINE_PREFIX)?;
        let (code, label) = rest.split_once(' ')?;
        let code = ExitCode::from_code(u8::from_str_radix(code.strip_prefix("0x")?, 16).ok()?)?;
        (label.strip_prefix('(')?.strip_suffix(')')? == code.label()).then_some(Self(code))
    }
}

#[cfg(test)]
mod tests {
    use super::{ExitCode, ExitLine};
    use std::string::ToString;

    #[test]
    fn the_exit_line_round_trips_for_every_code() {
        for code in ExitCode::ALL {
            let line = ExitLine(code);
            assert_eq!(ExitLine::parse(&line.to_string()), Some(line));
        }
        assert_eq!(
            ExitLine(ExitCode::Success).to_string(),
            "vigil: exit 0x10 (success)"
        );
        assert_eq!(ExitLine::parse("vigil: exit 0x10 (panic)"), None);
        assert_eq!(ExitLine::parse("vigil: exit 0x77 (success)"), None);
    }

    #[test]
    fn every_code_round_trips_through_its_qemu_status() {
        for code in ExitCode::ALL {
            assert_eq!(ExitCode::from_qemu_status(code.qemu_status()), Some(code));
        }
        assert_eq!(ExitCode::Success.qemu_status(), 33);
        assert_eq!(ExitCode::CpuException.qemu_status(), 41);
        // A triple fault under -no-reboot, and QEMU's own errors.
        assert_eq!(ExitCode::from_qemu_status(0), None);
        assert_eq!(ExitCode::from_qemu_status(1), None);
    }
}
