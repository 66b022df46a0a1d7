//! The values each key takes: one enum per key with named values, each
//! with its names once (`name()`) and every value in the order the kernel
//! lists them when it rejects another (`ALL`).

use super::ranges::{BACKOFF_US_RANGE, WATCHDOG_MS_RANGE};
use vigil_wake::{BackoffMode, Policy};

/// The word `backoff=`, `watchdog=` and `chaos=` take to turn their
/// feature off.
pub const OFF: &str = "off";

/// An enum of named values: `name()`, `ALL` (in declaration order) and
/// `from_name()`.
macro_rules! named_values {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$variant_meta:meta])* $variant:ident => $text:expr, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$variant_meta])* $variant, )+
        }

        impl $name {
            /// Every value, in the order the kernel lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value as the parameter line spells it.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $text, )+
                }
            }

            /// The value spelled `name`, if there is one.
            #[must_use]
            pub fn from_name(name: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|value| value.name() == name)
            }
        }
    };
}

named_values! {
    /// What the kernel does after boot (`mode=`).
    pub enum Mode {
        /// Run the selected workload and print statistics.
        Run => "run",
        /// Run the in-kernel test suite.
        Test => "test",
    }
}

named_values! {
    /// Fault injected on purpose, so the harness can prove it detects each
    /// kind (`fault=`).
    pub enum Fault {
        /// No fault.
        None => "none",
        /// `panic!` on the bootstrap core.
        Panic => "panic",
        /// Load an empty IDT and raise an exception: a triple fault.
        Triple => "triple-fault",
        /// Stop making progress forever (interrupts off, halted).
        Hang => "hang",
        /// Touch an unmapped guard page.
        GuardPageRead => "page-fault",
        /// Overflow core 1's stack into its guard page.
        ApStackOverflow => "ap-stack-overflow",
        /// Drop one fork-join release wake (round 10, the last worker): a
        /// task wake lost above the wake protocol, for the stuck-round watch
        /// to find.
        DroppedTaskWake => "dropped-task-wake",
        /// At a seeded round, a waker claims a halted core and sends no IPI.
        DroppedIpi => "dropped-ipi",
        /// At a seeded round, a waker claims a halted core and sends the IPI
        /// to another core.
        MisdirectedIpi => "misdirected-ipi",
        /// At a seeded round, one wake IPI is sent but left out of the
        /// guest's per-destination count (for the host's QEMU-trace oracle
        /// to catch).
        MiscountedIpi => "miscounted-ipi",
        /// `pool=steal`: in one round (from [`STRANDED_ROUND`], when every
        /// other core is registered idle), the publisher drops the search
        /// wake it chose and parks without taking a chunk: stealable work
        /// stranded with every core halted, for the strand watch and the
        /// host to find.
        StrandedSteal => "stranded-steal",
        /// `pool=steal`, the in-kernel test of stealable work beside a
        /// busy core (`mode=test`): the first core other than core 0 that
        /// runs pinned work while registered idle stays registered (it
        /// never leaves the idle set nor hands a search on): a publisher
        /// then makes it the searcher while it is busy, and the search
        /// waits for its pinned work, for the held-search watch and the
        /// host to find.
        BusySearcher => "busy-searcher",
        /// From fork-join round [`STALLED_ROUND`] on, the first waker on a
        /// core other than core 0 stops for good after its push, before its
        /// notify finishes (interrupts off, spinning): its target sleeps on
        /// the item with a waker forever mid-notify, which gates every
        /// lost-wakeup check, for the stalled-waker watch to find.
        StalledWaker => "stalled-waker",
    }
}

impl Fault {
    /// What the fault does, in one line (the fault table of
    /// `docs/harness.md` is generated from it).
    #[must_use]
    pub const fn summary(self) -> &'static str {
        match self {
            Self::None => "no fault",
            Self::Panic => "panic on the bootstrap core",
            Self::Triple => "load an empty IDT and raise an exception: a triple fault",
            Self::Hang => "stop making progress forever (interrupts off, halted)",
            Self::GuardPageRead => "touch an unmapped guard page",
            Self::ApStackOverflow => "overflow core 1's stack into its guard page",
            Self::DroppedTaskWake => {
                "drop one fork-join release wake (round 10, the last worker): a task wake lost above the wake protocol, for the stuck-round watch"
            }
            Self::DroppedIpi => {
                "once, at the first protocol wake IPI of round 1 + seed % (iterations / 2) or later, the waker claims a halted core and sends no IPI"
            }
            Self::MisdirectedIpi => "as dropped-ipi, but the IPI goes to another core",
            Self::MiscountedIpi => {
                "as dropped-ipi, but the IPI is sent and left out of the guest's count (for the host's QEMU-trace oracle)"
            }
            Self::StrandedSteal => {
                "stealable pool: in the first round from 10 on published with every other core idle, the search wake is dropped and the caller does not help (for the strand watch)"
            }
            Self::BusySearcher => {
                "stealable pool, 3+ cores, for the in-kernel test stealable_work_runs_beside_a_busy_core: the first core other than core 0 to run pinned work skips the work-conserving rule (no busy mark, no hand-on), so it can hold the search while busy (for the held-search watch)"
            }
            Self::StalledWaker => {
                "3+ cores: from round 10, the first waker on a core other than core 0 stops for ever after its push (for the stalled-waker watch)"
            }
        }
    }
}

/// The first fork-join round in which [`Fault::StrandedSteal`] may strand a
/// round: a run needs at least this many `iterations=` for it to fire.
pub const STRANDED_ROUND: u64 = 10;

/// The first fork-join round in which [`Fault::StalledWaker`] stops a
/// waker.
pub const STALLED_ROUND: u64 = 10;

named_values! {
    /// The workload run in [`Mode::Run`] (`workload=`).
    pub enum Workload {
        /// Jacobi iteration on a `size`×`size` grid, `iterations` fork-join
        /// rounds over every core.
        Laplace => "laplace",
        /// Laplace with bare IPI-released workers: no tasks or protocol on
        /// the critical path (the platform's floor).
        Floor => "floor",
        /// Every core idles for `idle_ms`.
        Idle => "idle",
        /// Boot, report, exit.
        None => "none",
        /// Ping-pong between tasks on cores 0 and 1 (`iterations` round
        /// trips).
        PingPong => "ping-pong",
    }
}

named_values! {
    /// How a fork-join round wakes its workers (`release=`).
    pub enum Release {
        /// The caller wakes every worker.
        Flat => "flat",
        /// Each woken worker wakes its two children first (the default).
        Tree => "tree",
    }
}

named_values! {
    /// How a fork-join round hands out its work (`pool=`).
    pub enum Pool {
        /// One job per worker, each worker a task pinned to its core.
        Pinned => "pinned",
        /// Stealable chunks run by whichever cores are awake.
        Steal => "steal",
    }
}

named_values! {
    /// Whether a workload's first rounds time one more stealable chunk
    /// than its plan and keep the faster (`trial=`).
    pub enum Trial {
        /// Where the plan may have split too little: one more chunk within
        /// the cores, the rows and the host parallelism's reach (the
        /// default).
        Auto => "auto",
        /// Wherever one more chunk fits the cores and the rows, whatever
        /// the host parallelism (a trial the tests can count on).
        Always => "always",
        /// Never: every round runs the plan's chunks.
        Off => OFF,
    }
}

named_values! {
    /// An on/off setting (`chaos=`).
    pub enum Switch {
        /// Off (the default).
        Off => OFF,
        /// On.
        On => "on",
    }
}

impl Switch {
    /// `On` for `true`.
    #[must_use]
    pub const fn from_bool(on: bool) -> Self {
        if on { Self::On } else { Self::Off }
    }

    /// Whether it is `On`.
    #[must_use]
    pub const fn is_on(self) -> bool {
        matches!(self, Self::On)
    }
}

named_values! {
    /// The named values of `backoff=` (which also takes a fixed poll time
    /// in µs, in [`BACKOFF_US_RANGE`]).
    pub enum Backoff {
        /// No poll: straight to the halt path.
        Off => OFF,
        /// The adaptive poll (the default).
        Adaptive => "adaptive",
    }
}

impl Backoff {
    /// The wake crate's mode it selects.
    #[must_use]
    pub const fn mode(self) -> BackoffMode {
        match self {
            Self::Off => BackoffMode::Off,
            Self::Adaptive => BackoffMode::Adaptive,
        }
    }
}

/// The `backoff=` value selecting `mode`: a name, or the fixed poll time in
/// µs.
#[must_use]
pub fn backoff_value(mode: BackoffMode) -> alloc::string::String {
    use alloc::string::ToString;
    match mode {
        BackoffMode::Off => Backoff::Off.name().to_string(),
        BackoffMode::Adaptive => Backoff::Adaptive.name().to_string(),
        BackoffMode::FixedUs(us) => us.to_string(),
    }
}

/// What `expected` says when a `backoff=` value is rejected.
pub(super) fn backoff_expected() -> alloc::string::String {
    alloc::format!(
        "`{}`, `{}` or a poll time in us in {}..={}",
        Backoff::Off.name(),
        Backoff::Adaptive.name(),
        BACKOFF_US_RANGE.start(),
        BACKOFF_US_RANGE.end()
    )
}

/// The lost-wakeup watchdog setting (`watchdog=off|MS`). With feature
/// `serde` the host writes it as `"off"` or `{"ms": MS}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum Watchdog {
    /// `off`: every in-guest lost-wakeup check off, cores truly tickless (a
    /// lost wakeup hangs the guest, for the host to examine).
    Off,
    /// Lost-wakeup checks on, the watchdog core scanning every this many
    /// ms (in [`WATCHDOG_MS_RANGE`]).
    Ms(u32),
}

impl Watchdog {
    /// The scan period in ms, `None` when off.
    #[must_use]
    pub const fn scan_period_ms(self) -> Option<u32> {
        match self {
            Self::Off => None,
            Self::Ms(ms) => Some(ms),
        }
    }

    /// The `watchdog=` value.
    #[must_use]
    pub fn value(self) -> alloc::string::String {
        use alloc::string::ToString;
        match self {
            Self::Off => OFF.to_string(),
            Self::Ms(ms) => ms.to_string(),
        }
    }
}

/// `off` or `20 ms`, as reports say it.
impl core::fmt::Display for Watchdog {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Off => f.write_str(OFF),
            Self::Ms(ms) => write!(f, "{ms} ms"),
        }
    }
}

/// What `expected` says when a `watchdog=` value is rejected.
pub(super) fn watchdog_expected() -> alloc::string::String {
    alloc::format!(
        "`{OFF}` or a scan period in ms in {}..={}",
        WATCHDOG_MS_RANGE.start(),
        WATCHDOG_MS_RANGE.end()
    )
}

/// The policies `policy=` takes: the wake crate's, less `poll` (what an
/// `idle-poll` build runs, never a parameter). Their names are the wake
/// crate's (`Policy::name`), defined there once.
pub const POLICY_PARAMS: [Policy; 3] = [Policy::StateMachine, Policy::AlwaysIpi, Policy::RacyFlag];
