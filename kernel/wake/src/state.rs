//! The four values of a core's idle-state atomic.

use core::fmt;

/// What a core is doing, as far as wakers are concerned.
///
/// Who may write which transition (the rest of the protocol depends on it):
///
/// | from        | to          | written by | when                                     |
/// |-------------|-------------|------------|------------------------------------------|
/// | `Running`   | `Halting`   | idle core  | `prepare_to_halt`                        |
/// | `Halting`   | `Running`   | idle core  | re-check found work, or caller aborted   |
/// | `Halting`   | `Halted`    | idle core  | `commit` (compare-exchange)              |
/// | `Halting`   | `DontSleep` | a waker    | `notify` (compare-exchange)              |
/// | `DontSleep` | `Running`   | idle core  | `commit` saw it: no halt                 |
/// | `Halted`    | `Running`   | a waker    | `notify` claims the core, sends one IPI  |
/// | `Halted`    | `Running`   | idle core  | `woke_up` after `hlt` returned           |
///
/// Wakers only ever write with compare-exchange, and only from `Halting` or
/// `Halted`, which the idle core alone creates. So the idle core's plain stores
/// can never overwrite a waker's write except `DontSleep`, and it only does
/// that when it is staying awake anyway.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum State {
    /// The core is running (or polling); it re-checks its inbox before it
    /// could ever halt, so a waker need do nothing.
    Running = 0,
    /// The core announced it is about to halt and is re-checking its inbox.
    Halting = 1,
    /// The core committed to `hlt`: only an IPI wakes it.
    Halted = 2,
    /// A waker saw `Halting` and asked the core not to halt this time.
    DontSleep = 3,
}

impl State {
    /// All four states, in raw-value order.
    pub const ALL: [State; 4] = [
        State::Running,
        State::Halting,
        State::Halted,
        State::DontSleep,
    ];

    /// The value stored in the atomic (what the stuck-core detector reads).
    #[inline]
    #[must_use]
    pub const fn as_raw(self) -> u8 {
        self as u8
    }

    /// The state a raw value stands for, if it is one.
    #[inline]
    #[must_use]
    pub const fn from_raw(raw: u8) -> Option<State> {
        match raw {
            0 => Some(State::Running),
            1 => Some(State::Halting),
            2 => Some(State::Halted),
            3 => Some(State::DontSleep),
            _ => None,
        }
    }

    /// Decodes a value read from the state atomic. Only this crate writes it,
    /// and only with [`State::as_raw`], so every value decodes.
    #[inline]
    pub(crate) fn decode(raw: u8) -> State {
        match State::from_raw(raw) {
            Some(state) => state,
            None => unreachable!("idle state atomic holds {raw}, which no State encodes"),
        }
    }

    /// The lower-case name used in logs and statistics.
    #[inline]
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            State::Running => "running",
            State::Halting => "halting",
            State::Halted => "halted",
            State::DontSleep => "dont-sleep",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
