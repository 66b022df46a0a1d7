//! What the Linux peer's program (`peers/linux-laplace`, the `/init` of an
//! initramfs booted on Debian's own kernel) takes and says besides the grid
//! result line: the parameter keys it honours, Linux's kernel command-line
//! word for its idle choice, and its cost line (what Linux paid for the
//! run's fork-join rounds, next to Vigil's `VIGIL-STATS`).

use core::fmt;

use crate::boot_params::Key;

/// The parameter keys the peer honours (the same `key=value` words as
/// Vigil's, passed after `--` on Linux's command line, so they reach
/// `/init` as its arguments). Any other key is a bad parameter there: the
/// peer has no wake policy, chaos, fault, backoff or watchdog to set.
pub const PEER_KEYS: [Key; 5] = [
    Key::Workload,
    Key::Size,
    Key::Iterations,
    Key::Pool,
    Key::Seed,
];

/// The key of Linux's idle choice on its command line.
const IDLE_WORD: &str = "idle=";

/// How the peer's Linux idles (the kernel command line's `idle=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum LinuxIdle {
    /// No `idle=`: Linux's own choice (a cpuidle driver, or `default_idle`'s
    /// `sti; hlt` without one).
    Default,
    /// `idle=poll`: idle CPUs spin on their need-resched flag and never
    /// halt (the peer of Vigil's `idle-poll` build).
    Poll,
}

impl LinuxIdle {
    /// Both, default first.
    pub const ALL: [Self; 2] = [Self::Default, Self::Poll];

    /// The word on Linux's command line (`None`: nothing).
    #[must_use]
    pub const fn kernel_word(self) -> Option<&'static str> {
        match self {
            Self::Default => None,
            Self::Poll => Some("idle=poll"),
        }
    }

    /// Its name: `default`, or the value of its `idle=` word (`poll`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self.kernel_word() {
            None => "default",
            Some(word) => word.strip_prefix(IDLE_WORD).unwrap_or(word),
        }
    }

    /// The choice a kernel command line (`/proc/cmdline`) made: its last
    /// `idle=` word decides; `idle=poll` is [`Self::Poll`], anything else
    /// (or none) Linux's default.
    #[must_use]
    pub fn of_cmdline(cmdline: &str) -> Self {
        match cmdline
            .split_whitespace()
            .take_while(|word| *word != "--")
            .filter(|word| word.starts_with(IDLE_WORD))
            .last()
        {
            Some(word) if Some(word) == Self::Poll.kernel_word() => Self::Poll,
            _ => Self::Default,
        }
    }
}

/// The line the peer prints just before its timed loop: the host's limit
/// on a Linux configuration counts from it (Linux's boot, 5 s at 4 vCPUs
/// and 23 s at 32 here, is not the workload's time).
pub const LOOP_START: &str = "linux-laplace: iterations start";

/// How the cost line starts.
pub const COSTS_PREFIX: &str = "linux-costs: ";

/// What Linux paid for the peer's fork-join rounds, measured by the peer
/// around its timed loop: `linux-costs: idle_choice=default
/// idle_driver=none cpus=4 iterations=1000 voluntary_switches=3998
/// involuntary_switches=12 rescheduling_ipis=1 function_call_ipis=4012`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LinuxCosts {
    /// The idle choice of Linux's command line (`/proc/cmdline`).
    pub idle: LinuxIdle,
    /// `/sys/devices/system/cpu/cpuidle/current_driver` (`none` when Linux
    /// registered no cpuidle driver, `-` when the file is missing).
    pub idle_driver: alloc::string::String,
    /// CPUs online (`/proc/interrupts`' columns).
    pub cpus: u64,
    /// Iterations of the timed loop.
    pub iterations: u64,
    /// Voluntary context switches of the process's threads over the loop
    /// (`getrusage(RUSAGE_SELF)`'s `ru_nvcsw`: a thread that blocked, on a
    /// futex here).
    pub voluntary_switches: u64,
    /// Involuntary ones (`ru_nivcsw`: preempted).
    pub involuntary_switches: u64,
    /// Rescheduling IPIs over the loop, all CPUs (`/proc/interrupts`' `RES`
    /// row, after minus before).
    pub rescheduling_ipis: u64,
    /// Function-call IPIs over the loop, all CPUs (the `CAL` row): Linux
    /// 6.1 wakes a thread on an idle, non-polling CPU with one (its wake
    /// list, `ttwu_queue_wakelist`), so most of its wake IPIs are here.
    pub function_call_ipis: u64,
}

impl fmt::Display for LinuxCosts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{COSTS_PREFIX}idle_choice={} idle_driver={} cpus={} iterations={} voluntary_switches={} involuntary_switches={} rescheduling_ipis={} function_call_ipis={}",
            self.idle.name(),
            self.idle_driver,
            self.cpus,
            self.iterations,
            self.voluntary_switches,
            self.involuntary_switches,
            self.rescheduling_ipis,
            self.function_call_ipis
        )
    }
}

impl LinuxCosts {
    /// Parses the line (after the core prefix); `None` if it is not one or
    /// a field is missing or malformed.
    #[must_use]
    pub fn parse(message: &str) -> Option<Self> {
        let fields = message.trim_end().strip_prefix(COSTS_PREFIX)?;
        let field = |name: &str| {
            fields
                .split_whitespace()
                .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        };
        let number = |name: &str| field(name)?.parse::<u64>().ok();
        let idle = LinuxIdle::ALL
            .into_iter()
            .find(|idle| Some(idle.name()) == field("idle_choice"))?;
        Some(Self {
            idle,
            idle_driver: field("idle_driver")?.into(),
            cpus: number("cpus")?,
            iterations: number("iterations")?,
            voluntary_switches: number("voluntary_switches")?,
            involuntary_switches: number("involuntary_switches")?,
            rescheduling_ipis: number("rescheduling_ipis")?,
            function_call_ipis: number("function_call_ipis")?,
        })
    }

    /// Context switches (voluntary and involuntary) per iteration.
    #[must_use]
    pub fn switches_per_iteration(&self) -> Option<f64> {
        (self.iterations > 0).then(|| {
            (self.voluntary_switches + self.involuntary_switches) as f64 / self.iterations as f64
        })
    }

    /// Linux's IPIs that can wake a CPU (rescheduling and function-call)
    /// per iteration: the figure next to Vigil's wake IPIs per iteration.
    #[must_use]
    pub fn ipis_per_iteration(&self) -> Option<f64> {
        (self.iterations > 0).then(|| {
            (self.rescheduling_ipis + self.function_call_ipis) as f64 / self.iterations as f64
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn the_cost_line_round_trips() {
        let costs = LinuxCosts {
            idle: LinuxIdle::Poll,
            idle_driver: "none".into(),
            cpus: 4,
            iterations: 1000,
            voluntary_switches: 3998,
            involuntary_switches: 12,
            rescheduling_ipis: 12,
            function_call_ipis: 4000,
        };
        let text = costs.to_string();
        assert_eq!(
            text,
            "linux-costs: idle_choice=poll idle_driver=none cpus=4 iterations=1000 voluntary_switches=3998 involuntary_switches=12 rescheduling_ipis=12 function_call_ipis=4000"
        );
        assert_eq!(LinuxCosts::parse(&text), Some(costs.clone()));
        assert_eq!(costs.ipis_per_iteration(), Some(4.012));
        assert_eq!(costs.switches_per_iteration(), Some(4.01));
        assert_eq!(LinuxCosts::parse("linux-costs: idle_choice=poll"), None);
        assert_eq!(
            LinuxCosts::parse(&text.replace("idle_choice=poll", "idle_choice=halt")),
            None
        );
        assert_eq!(LinuxIdle::Poll.name(), "poll");
        assert_eq!(LinuxIdle::Default.name(), "default");
    }

    #[test]
    fn the_idle_choice_is_read_from_the_command_line() {
        assert_eq!(
            LinuxIdle::of_cmdline("console=ttyS0 quiet"),
            LinuxIdle::Default
        );
        assert_eq!(
            LinuxIdle::of_cmdline("console=ttyS0 idle=poll quiet\n"),
            LinuxIdle::Poll
        );
        assert_eq!(
            LinuxIdle::of_cmdline("idle=poll idle=halt"),
            LinuxIdle::Default
        );
        // Words after `--` are the program's, not the kernel's.
        assert_eq!(
            LinuxIdle::of_cmdline("quiet -- idle=poll"),
            LinuxIdle::Default
        );
    }
}
