//! What a pool hands back: the loop's time and Linux's counters around it.

use std::time::Duration;

use crate::costs::Snapshot;

/// One timed loop of iterations.
#[derive(Debug, Clone)]
pub struct TimedLoop {
    /// Wall time of the iterations (`Instant`: Linux's monotonic clock).
    pub elapsed: Duration,
    /// The counters just before the first iteration.
    pub before: Snapshot,
    /// The counters just after the last one.
    pub after: Snapshot,
}
