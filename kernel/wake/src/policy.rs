//! The wake policies a core can be built with.

use core::fmt;
use core::str::FromStr;

/// How a core goes idle and how wakers tell it about work. Chosen once, at
/// construction (the kernel picks one at boot), so one kernel image can
/// compare them.
///
/// | policy          | idle core                           | `notify` to another core        | correct? |
/// |-----------------|-------------------------------------|---------------------------------|----------|
/// | `state-machine` | halts after the interlocked re-check | IPI only to a claimed `Halted` core | yes   |
/// | `always-ipi`    | halts after a plain re-check        | always an IPI                   | yes, but pays an IPI per wake |
/// | `racy-flag`     | re-checks, *then* raises a flag, halts | IPI if the flag is up (no interlock) | **no**: seed 004's lost wakeup |
/// | `poll`          | never halts; keeps re-checking      | never an IPI                    | yes, but burns a core per idle core |
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Policy {
    /// The protocol this crate exists for (the default): `Running ->
    /// Halting`, interlocked re-check, `Halting -> Halted` by
    /// compare-exchange; wakers do nothing for `Running`, turn `Halting` into
    /// `DontSleep`, and claim a `Halted` core so that exactly one of them
    /// sends the IPI.
    #[default]
    StateMachine,
    /// Seed 004's merged fix: every notification of another core sends an
    /// IPI, whatever the target is doing. Correct without any interlock
    /// because an IPI that arrives while interrupts are disabled stays
    /// pending and makes the `hlt` return at once; costs an IPI (and an
    /// interrupt on a running target) per wake. The state atomic is still
    /// written, for the stuck-core detector, but nothing depends on it.
    AlwaysIpi,
    /// **Fault-injection fixture, not a policy to run.** Seed 004's bug kept
    /// on purpose: the idle core checks its inbox, *then* sets a plain
    /// "halted" flag and halts; a waker reads the flag with no interlock and
    /// sends an IPI only if it is up. A waker that reads the flag between the
    /// core's check and its store sends nothing, and the core sleeps on the
    /// work. It exists so that the loom model, the deterministic tests and the
    /// kernel's stuck-core detector can prove they catch that bug.
    RacyFlag,
    /// Idle cores never halt and nobody ever sends an IPI: the idle loop keeps
    /// re-checking its inbox. What the kernel's `idle-poll` feature selects.
    Poll,
}

impl Policy {
    /// Every policy, default first.
    pub const ALL: [Policy; 4] = [
        Policy::StateMachine,
        Policy::AlwaysIpi,
        Policy::RacyFlag,
        Policy::Poll,
    ];

    /// The policy's name on the kernel command line and in reports:
    /// `state-machine`, `always-ipi`, `racy-flag`, `poll`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Policy::StateMachine => "state-machine",
            Policy::AlwaysIpi => "always-ipi",
            Policy::RacyFlag => "racy-flag",
            Policy::Poll => "poll",
        }
    }

    /// Whether an idle core under this policy ever executes `hlt`.
    #[must_use]
    pub const fn halts(self) -> bool {
        !matches!(self, Policy::Poll)
    }

    /// Whether this policy is known to lose wakeups (only the `racy-flag`
    /// fixture). A kernel should refuse it unless fault injection was asked
    /// for explicitly.
    #[must_use]
    pub const fn is_fault_injection(self) -> bool {
        matches!(self, Policy::RacyFlag)
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`Policy`] from a name that is not one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownPolicy;

impl fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown wake policy (expected state-machine, always-ipi, racy-flag or poll)")
    }
}

impl FromStr for Policy {
    type Err = UnknownPolicy;

    /// Parses the names [`Policy::name`] returns.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Policy::ALL
            .into_iter()
            .find(|policy| policy.name() == name)
            .ok_or(UnknownPolicy)
    }
}
