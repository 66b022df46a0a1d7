//! The wake policies a core can be built with.

use core::fmt;
use core::str::FromStr;

/// How a core goes idle and how wakers tell it about work. Chosen once, at
/// construction (the kernel picks one at boot), so one kernel image can
/// compare them. "Wake" below is the platform's wake signal: an IPI in a
/// kernel, an unpark (futex wake) in a user-space pool.
///
/// | policy          | idle core                           | notify another core             | correct? |
/// |-----------------|-------------------------------------|---------------------------------|----------|
/// | `state-machine` | sleeps after the interlocked re-check | wake only a claimed `Halted` core | yes   |
/// | `always-ipi`    | sleeps after the same re-check      | always a wake                   | yes, but pays a wake per notification |
/// | `racy-flag`     | re-checks, *then* raises a flag, sleeps | wake if the flag is up (no interlock) | **no**: loses wakeups (feature `fault-fixtures` only) |
/// | `poll`          | never sleeps; keeps re-checking     | never a wake                    | yes, but burns a core per idle core |
///
/// `#[non_exhaustive]`: policies may be added; match with a wildcard arm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Policy {
    /// The protocol this crate exists for (the default): `Running ->
    /// Halting`, interlocked re-check, `Halting -> Halted` by
    /// compare-exchange; wakers do nothing for `Running`, turn `Halting` into
    /// `DontSleep`, and claim a `Halted` core so that exactly one of them
    /// sends the wake.
    #[default]
    StateMachine,
    /// Every notification of another core sends a wake, whatever the target
    /// is doing (the usual fix for a lost-wakeup bug: correct because a wake
    /// sent while the target is between its re-check and its sleep stays
    /// latched and ends the sleep at once). Costs a wake (an interrupt on a
    /// running target, a futex call in user space) per notification. The
    /// state atomic is still written, for stuck-core detectors, but nothing
    /// depends on it.
    AlwaysIpi,
    /// **Fault-injection fixture, not a policy to run** (feature
    /// `fault-fixtures`). The lost-wakeup bug kept on purpose: the idle core
    /// checks its inbox, *then* sets a plain "halted" flag and sleeps; a
    /// waker reads the flag with no interlock and wakes only if it is up. A
    /// waker that reads the flag between the core's check and its store
    /// sends nothing, and the core sleeps on the work. It exists so that
    /// model checkers, deterministic tests and stuck-core detectors can
    /// prove they catch that bug.
    #[cfg(feature = "fault-fixtures")]
    RacyFlag,
    /// Idle cores never sleep and nobody ever sends a wake: the idle loop
    /// keeps re-checking its inbox. What the kernel's `idle-poll` feature
    /// selects.
    Poll,
}

impl Policy {
    /// Every policy, default first.
    #[cfg(feature = "fault-fixtures")]
    pub const ALL: &'static [Policy] = &[
        Policy::StateMachine,
        Policy::AlwaysIpi,
        Policy::RacyFlag,
        Policy::Poll,
    ];

    /// Every policy, default first.
    #[cfg(not(feature = "fault-fixtures"))]
    pub const ALL: &'static [Policy] = &[Policy::StateMachine, Policy::AlwaysIpi, Policy::Poll];

    /// The policy's name on the kernel command line and in reports:
    /// `state-machine`, `always-ipi`, `racy-flag`, `poll`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Policy::StateMachine => "state-machine",
            Policy::AlwaysIpi => "always-ipi",
            #[cfg(feature = "fault-fixtures")]
            Policy::RacyFlag => "racy-flag",
            Policy::Poll => "poll",
        }
    }

    /// Whether an idle core under this policy ever sleeps.
    #[must_use]
    pub const fn halts(self) -> bool {
        !matches!(self, Policy::Poll)
    }

    /// Whether this policy is known to lose wakeups (only the `racy-flag`
    /// fixture). A kernel should refuse it unless fault injection was asked
    /// for explicitly.
    #[must_use]
    pub const fn is_fault_injection(self) -> bool {
        #[cfg(feature = "fault-fixtures")]
        {
            matches!(self, Policy::RacyFlag)
        }
        #[cfg(not(feature = "fault-fixtures"))]
        {
            let _ = self;
            false
        }
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
        f.write_str("unknown wake policy (expected one of:")?;
        for policy in Policy::ALL {
            write!(f, " {policy}")?;
        }
        f.write_str(")")
    }
}

impl FromStr for Policy {
    type Err = UnknownPolicy;

    /// Parses the names [`Policy::name`] returns.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Policy::ALL
            .iter()
            .copied()
            .find(|policy| policy.name() == name)
            .ok_or(UnknownPolicy)
    }
}
