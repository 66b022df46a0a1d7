//! The kinds of wake the kernel's latency histograms tell apart (the keys
//! of the `VIGIL-STATS` record's `wake_latency_us` map): by the state the
//! target core was in when the task was woken.

use crate::State;

/// What the woken task's core was doing when it was woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum WakeKind {
    /// Woken from its own core: no inbox, no protocol.
    Local = 0,
    /// The target core was running.
    Running = 1,
    /// The target core was between `Running -> Halting` and its commit.
    Halting = 2,
    /// The target core was halted (or committing to halt).
    Halted = 3,
}

impl WakeKind {
    /// Every kind, in histogram order.
    pub const ALL: [WakeKind; 4] = [
        WakeKind::Local,
        WakeKind::Running,
        WakeKind::Halting,
        WakeKind::Halted,
    ];

    /// Name in reports: `local`, or the target's wake state's name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            WakeKind::Local => "local",
            WakeKind::Running => State::Running.name(),
            WakeKind::Halting => State::Halting.name(),
            WakeKind::Halted => State::Halted.name(),
        }
    }

    /// The kind stored as `raw` (its `repr(u8)` value); anything unknown
    /// is `Local`, the kind a task starts with.
    #[must_use]
    pub const fn from_raw(raw: u8) -> WakeKind {
        match raw {
            1 => WakeKind::Running,
            2 => WakeKind::Halting,
            3 => WakeKind::Halted,
            _ => WakeKind::Local,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WakeKind;

    #[test]
    fn kinds_round_trip_through_their_byte_and_name_the_target_state() {
        for kind in WakeKind::ALL {
            assert_eq!(WakeKind::from_raw(kind as u8), kind);
        }
        let names = WakeKind::ALL.map(WakeKind::name);
        assert_eq!(names, ["local", "running", "halting", "halted"]);
        assert_eq!(WakeKind::from_raw(200), WakeKind::Local);
    }
}
