//! The two ways an xtask can fail, and the exit status each one maps to.

use std::fmt;

/// Exit status for bad input (arguments, parameters, missing tools that we
/// may not install ourselves).
pub const EXIT_USAGE: u8 = 2;
/// Exit status for a failed build, boot or test.
pub const EXIT_FAILED: u8 = 1;

/// Why an xtask did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XtaskError {
    /// The input was wrong: nothing was built or run. Exit status 2.
    Usage(String),
    /// Something we built or ran failed. Exit status 1.
    Failed(String),
    /// Failed, and the reason has already been printed (as the last line
    /// of a run or a test summary, which must stay last). Exit status 1.
    Reported,
}

impl XtaskError {
    /// The process exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => EXIT_USAGE,
            Self::Failed(_) | Self::Reported => EXIT_FAILED,
        }
    }

    /// Shorthand for a [`XtaskError::Failed`] built from anything printable.
    pub fn failed(message: impl fmt::Display) -> Self {
        Self::Failed(message.to_string())
    }

    /// Shorthand for a [`XtaskError::Usage`] built from anything printable.
    pub fn usage(message: impl fmt::Display) -> Self {
        Self::Usage(message.to_string())
    }
}

impl fmt::Display for XtaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Usage(message) | Self::Failed(message) => f.write_str(message),
            Self::Reported => f.write_str("failed (reason printed above)"),
        }
    }
}

impl std::error::Error for XtaskError {}

/// Result type of the xtask library.
pub type Result<T, E = XtaskError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_exit_2_and_failures_exit_1() {
        assert_eq!(XtaskError::usage("bad --smp").exit_code(), 2);
        assert_eq!(XtaskError::failed("boot failed").exit_code(), 1);
        assert_eq!(XtaskError::Reported.exit_code(), 1);
        assert_eq!(XtaskError::usage("bad --smp").to_string(), "bad --smp");
    }
}
