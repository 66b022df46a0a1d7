//! The parameter line's keys.

/// A boot-parameter key: the `key` of a `key=value` word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    /// `mode=`: what the kernel does after boot ([`Mode`](super::Mode)).
    Mode,
    /// `test=`: run only the in-kernel tests whose name contains it.
    Test,
    /// `fault=`: a fault injected on purpose ([`Fault`](super::Fault)).
    Fault,
    /// `workload=`: what run mode runs ([`Workload`](super::Workload)).
    Workload,
    /// `size=`: the grid side of the grid workloads.
    Size,
    /// `iterations=`: rounds (or round trips) of the workload.
    Iterations,
    /// `policy=`: the wake policy ([`POLICY_PARAMS`](super::POLICY_PARAMS)).
    Policy,
    /// `seed=`: the seed of every seeded choice (faults, chaos).
    Seed,
    /// `chaos=`: seeded delays at the protocol's critical points
    /// ([`Switch`](super::Switch)).
    Chaos,
    /// `backoff=`: how long an idle core polls before it halts
    /// ([`Backoff`](super::Backoff)).
    Backoff,
    /// `watchdog=`: the lost-wakeup watchdog ([`Watchdog`](super::Watchdog)).
    Watchdog,
    /// `idle_ms=`: how long `workload=idle` idles.
    IdleMs,
    /// `release=`: how a fork-join round wakes its workers
    /// ([`Release`](super::Release)).
    Release,
    /// `pool=`: how a fork-join round hands out its work
    /// ([`Pool`](super::Pool)).
    Pool,
    /// `parallelism=`: how many cores the kernel takes the host to run at
    /// once, instead of what it measured at boot.
    Parallelism,
    /// `chunks=`: stealable chunks per fork-join round, instead of the
    /// round plan's choice.
    Chunks,
    /// `pollers=`: how many idle cores may poll at once, instead of the
    /// host parallelism.
    Pollers,
    /// `trial=`: whether a workload times one more chunk than its plan in
    /// its first rounds ([`Trial`](super::Trial)).
    Trial,
}

impl Key {
    /// Every key, in the order the kernel lists them when it rejects an
    /// unknown one.
    pub const ALL: [Key; 18] = [
        Key::Mode,
        Key::Test,
        Key::Fault,
        Key::Workload,
        Key::Size,
        Key::Iterations,
        Key::Policy,
        Key::Seed,
        Key::Chaos,
        Key::Backoff,
        Key::Watchdog,
        Key::IdleMs,
        Key::Release,
        Key::Pool,
        Key::Parallelism,
        Key::Chunks,
        Key::Pollers,
        Key::Trial,
    ];

    /// The key as the line spells it (case-sensitive).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Key::Mode => "mode",
            Key::Test => "test",
            Key::Fault => "fault",
            Key::Workload => "workload",
            Key::Size => "size",
            Key::Iterations => "iterations",
            Key::Policy => "policy",
            Key::Seed => "seed",
            Key::Chaos => "chaos",
            Key::Backoff => "backoff",
            Key::Watchdog => "watchdog",
            Key::IdleMs => "idle_ms",
            Key::Release => "release",
            Key::Pool => "pool",
            Key::Parallelism => "parallelism",
            Key::Chunks => "chunks",
            Key::Pollers => "pollers",
            Key::Trial => "trial",
        }
    }

    /// What the key sets, in one line (the parameter table of
    /// `docs/harness.md` is generated from it).
    #[must_use]
    pub const fn summary(self) -> &'static str {
        match self {
            Key::Mode => "run a workload, or the in-kernel test suite",
            Key::Test => "run only the in-kernel tests whose name contains it",
            Key::Fault => {
                "a fault injected on purpose, for the harness to show it detects each kind (see the faults below)"
            }
            Key::Workload => "what run mode runs (docs/design.md)",
            Key::Size => {
                "Laplace/floor grid side; with the pinned pool and for the floor at least cores + 2 (every core gets a row)"
            }
            Key::Iterations => "Laplace/floor iterations, ping-pong round trips",
            Key::Policy => {
                "wake policy (the racy flag is seed 004's bug, a fault-injection fixture); rejected in an idle-poll build"
            }
            Key::Seed => "seed for chaos and every seeded choice, printed at boot",
            Key::Chaos => {
                "seeded random delays at the protocol's critical points, and rare holds of an idle core between its re-check and its commit"
            }
            Key::Backoff => {
                "how long an idle core polls its inbox before halting; adaptive learns it per core and stops when it sees its vCPU descheduled"
            }
            Key::Watchdog => {
                "lost-wakeup detection: each core checks itself at its halts, the watchdog scans the halted cores every period; off turns every check off (a lost wakeup is a hang for the host)"
            }
            Key::IdleMs => "how long the idle workload idles",
            Key::Release => {
                "how a pinned fork-join round wakes its workers: tree (each woken worker wakes two more) or flat (the caller wakes them all)"
            }
            Key::Pool => {
                "how a fork-join round hands out its work: stealable chunks run by whichever cores are awake, or one job per core to a pinned worker task; default: the round plan's choice (pinned only where every core has a host core and its round is cheaper)"
            }
            Key::Parallelism => {
                "how many cores the host runs at once, for the round plan and the poll slots; default: measured at boot (every core counts chunks of register work for 40 ms; the chunks done, over what one core does alone in that time)"
            }
            Key::Chunks => {
                "stealable chunks per fork-join round; default: the round plan's, min(parallelism, cores, rows, work / (2 x a round's overhead))"
            }
            Key::Pollers => {
                "how many idle cores may poll their inbox at once before halting; default: the host parallelism"
            }
            Key::Trial => {
                "whether a workload's first rounds time one more stealable chunk than its plan and keep the faster (again later, at doubling gaps, while the plan is kept): auto where the plan may have split too little (docs/design.md; where only the cores seen at once keep one more chunk out, the workload looks again from time to time and a trial starts where a look sees more), always wherever one more chunk fits the cores and rows, off never"
            }
        }
    }

    /// The key spelled `name`, if there is one.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|key| key.name() == name)
    }

    /// Its place in [`Key::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_found_by_its_name_at_its_index() {
        for (index, key) in Key::ALL.into_iter().enumerate() {
            assert_eq!(Key::from_name(key.name()), Some(key));
            assert_eq!(key.index(), index);
        }
        assert_eq!(Key::from_name("Mode"), None);
        assert_eq!(Key::from_name("idle-ms"), None);
    }
}
