//! What each arch's boot found of the boot parameters (shared: the
//! kernel above parses the line and says what is wrong with it).

use alloc::string::String;
use vigil_proto::boot_params::ParamSource;

/// Where the boot parameters came from, or why they could not be read.
#[derive(Debug)]
pub enum ParamLine {
    /// A line from `source` (possibly empty).
    Found(ParamSource, String),
    /// No carrier holds parameters.
    Absent,
    /// A carrier exists but its line cannot be read: what is wrong.
    Unreadable(String),
}
