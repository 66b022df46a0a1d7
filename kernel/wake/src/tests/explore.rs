//! An exhaustive, deterministic interleaving explorer at the granularity of
//! the protocol's steps: no threads, no timing.
//!
//! One idle core (the target) and some wakers, each a little state machine
//! whose every step is one protocol step:
//!
//! * idle core: drain, `prepare_to_halt`, re-check, commit, and (only when an
//!   IPI is pending) wake up;
//! * waker, per item: push (plus any decision that needs no read of the
//!   state), the one read of the state, the compare-exchanges acting on it.
//!
//! Every schedule of those steps is run (depth-first, replaying the prefix
//! from a fresh world each time, so no step is ever undone). When the wakers
//! are done the idle core runs alone until it is asleep with no IPI pending,
//! and the run is checked: nothing lost, each item drained once; under
//! `state-machine` also no IPI to a running core and no second IPI for one
//! halt. An IPI is a latched bit, as on the hardware: several coalesce, and
//! one that arrives while the core is awake makes its next halt return at
//! once.
//!
//! This explores the protocol's *logic* under sequential consistency; the
//! memory-ordering side is loom's job (`tests/loom_*.rs`).

use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::{Armed, Commit, CoreWake, HaltAttempt, Halted, Notify, Policy, Recheck, State};

/// What to explore.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Config {
    pub(crate) policy: Policy,
    /// Items each waker sends, one after the other.
    pub(crate) items_per_waker: &'static [usize],
    /// How many times the idle core may start its loop (drain, or wake up)
    /// while wakers are still running. Bounds the exploration; 0 keeps a
    /// core that starts halted asleep until the wakers are done.
    pub(crate) idle_laps: usize,
    /// Start with the target already halted (committed, no IPI pending).
    pub(crate) start_halted: bool,
}

/// The result of exploring every schedule.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// Schedules run to completion.
    pub(crate) schedules: usize,
    /// The first failure found, with its schedule.
    pub(crate) failure: Option<String>,
    /// Largest number of IPIs any schedule sent.
    pub(crate) max_ipis: u64,
    /// Smallest number of IPIs any schedule sent.
    pub(crate) min_ipis: u64,
    /// Schedules in which the idle core saw `DontSleep`.
    pub(crate) dont_sleep_aborts: u64,
}

/// Runs every schedule for `config`, stopping at the first failure.
pub(crate) fn explore(config: Config) -> Report {
    let mut report = Report {
        min_ipis: u64::MAX,
        ..Report::default()
    };
    let mut stack: Vec<Vec<usize>> = alloc::vec![Vec::new()];
    while let Some(prefix) = stack.pop() {
        match run(config, &prefix) {
            Step::Branch(runnable) => {
                for actor in runnable.into_iter().rev() {
                    let mut next = prefix.clone();
                    next.push(actor);
                    stack.push(next);
                }
            }
            Step::Finished(Ok(stats)) => {
                report.schedules += 1;
                report.max_ipis = report.max_ipis.max(stats.ipis);
                report.min_ipis = report.min_ipis.min(stats.ipis);
                report.dont_sleep_aborts += u64::from(stats.dont_sleep_aborts > 0);
            }
            Step::Finished(Err(failure)) => {
                report.schedules += 1;
                report.failure = Some(format!("{failure}\n  schedule (0 = idle core): {prefix:?}"));
                break;
            }
        }
    }
    report
}

enum Step {
    /// The prefix ran; these actors can take the next step.
    Branch(Vec<usize>),
    /// No actor can step: the run was finished and checked.
    Finished(Result<Stats, String>),
}

struct Stats {
    ipis: u64,
    dont_sleep_aborts: u64,
}

enum IdlePhase<'a> {
    Drain,
    Prepare,
    Recheck(HaltAttempt<'a, u32>),
    Commit(Armed<'a, u32>),
    Asleep(Halted<'a, u32>),
}

#[derive(Clone, Copy)]
enum WakerPhase {
    Push,
    Observe,
    Act(State),
}

struct Waker {
    next_item: usize,
    items: usize,
    phase: WakerPhase,
}

struct World<'a> {
    config: Config,
    target: &'a CoreWake<u32>,
    wakers: &'a [CoreWake<u32>],
    idle: Option<IdlePhase<'a>>,
    laps_left: usize,
    waker_state: Vec<Waker>,
    /// The target's latched IPI bit.
    ipi_pending: bool,
    /// Between the idle core's commit and its wakeup.
    in_halt: bool,
    ipis_this_halt: u32,
    ipis: u64,
    pushed: usize,
    drained: Vec<u32>,
    buffer: VecDeque<u32>,
    trace: Vec<String>,
}

fn run(config: Config, schedule: &[usize]) -> Step {
    let target = CoreWake::new(config.policy);
    let wakers: Vec<CoreWake<u32>> = config
        .items_per_waker
        .iter()
        .map(|_| CoreWake::new(config.policy))
        .collect();
    let mut world = World {
        config,
        target: &target,
        wakers: &wakers,
        idle: Some(IdlePhase::Drain),
        laps_left: config.idle_laps,
        waker_state: config
            .items_per_waker
            .iter()
            .map(|&items| Waker {
                next_item: 0,
                items,
                phase: WakerPhase::Push,
            })
            .collect(),
        ipi_pending: false,
        in_halt: false,
        ipis_this_halt: 0,
        ipis: 0,
        pushed: 0,
        drained: Vec::new(),
        buffer: VecDeque::new(),
        trace: Vec::new(),
    };
    if config.start_halted {
        world.start_halted();
    }
    for &actor in schedule {
        if let Err(failure) = world.step(actor) {
            return Step::Finished(Err(world.explain(&failure)));
        }
    }
    let runnable = world.runnable();
    if !runnable.is_empty() {
        return Step::Branch(runnable);
    }
    Step::Finished(world.finish().map_err(|failure| world.explain(&failure)))
}

impl<'a> World<'a> {
    fn start_halted(&mut self) {
        let Commit::Halt(halted) = self.target.prepare_to_halt().try_halt() else {
            unreachable!("an empty inbox halts")
        };
        self.in_halt = true;
        self.idle = Some(IdlePhase::Asleep(halted));
        self.trace.push("idle: start halted".into());
    }

    fn runnable(&self) -> Vec<usize> {
        let mut runnable = Vec::new();
        if self.idle_can_step(true) {
            runnable.push(0);
        }
        for (i, waker) in self.waker_state.iter().enumerate() {
            if waker.next_item < waker.items {
                runnable.push(i + 1);
            }
        }
        runnable
    }

    fn idle_can_step(&self, bounded: bool) -> bool {
        match self.idle {
            Some(IdlePhase::Asleep(_)) => self.ipi_pending && (!bounded || self.laps_left > 0),
            Some(IdlePhase::Drain) => !bounded || self.laps_left > 0,
            Some(_) => true,
            None => false,
        }
    }

    fn step(&mut self, actor: usize) -> Result<(), String> {
        if actor == 0 {
            self.step_idle();
            Ok(())
        } else {
            self.step_waker(actor - 1)
        }
    }

    fn step_idle(&mut self) {
        let phase = self
            .idle
            .take()
            .expect("idle core stepped after it stopped");
        self.idle = Some(match phase {
            IdlePhase::Drain => {
                self.laps_left = self.laps_left.saturating_sub(1);
                let n = self.target.drain_into(&mut self.buffer);
                self.drained.extend(self.buffer.drain(..));
                self.trace.push(format!("idle: drain -> {n}"));
                IdlePhase::Prepare
            }
            IdlePhase::Prepare => {
                self.trace.push("idle: prepare_to_halt".into());
                IdlePhase::Recheck(self.target.prepare_to_halt())
            }
            IdlePhase::Recheck(attempt) => match attempt.recheck() {
                Recheck::Work => {
                    self.trace.push("idle: recheck -> work".into());
                    IdlePhase::Drain
                }
                Recheck::Empty(armed) => {
                    self.trace.push("idle: recheck -> empty".into());
                    IdlePhase::Commit(armed)
                }
            },
            IdlePhase::Commit(armed) => {
                self.in_halt = true;
                self.ipis_this_halt = 0;
                match armed.commit() {
                    Commit::Halt(halted) => {
                        self.trace.push("idle: commit -> HALT".into());
                        IdlePhase::Asleep(halted)
                    }
                    other => {
                        self.in_halt = false;
                        self.trace.push(format!("idle: commit -> {other:?}"));
                        IdlePhase::Drain
                    }
                }
            }
            IdlePhase::Asleep(halted) => {
                self.ipi_pending = false;
                self.in_halt = false;
                let n = halted.woke_up(&mut self.buffer);
                self.drained.extend(self.buffer.drain(..));
                self.trace.push(format!("idle: IPI, woke up -> {n}"));
                IdlePhase::Drain
            }
        });
    }

    fn step_waker(&mut self, index: usize) -> Result<(), String> {
        let from = &self.wakers[index];
        let idle = self.target.idle();
        let waker = &mut self.waker_state[index];
        let item = u32::try_from(index * 1000 + waker.next_item).expect("small");
        let action = match waker.phase {
            WakerPhase::Push => {
                let pushed = self.target.push(item, from);
                self.pushed += 1;
                self.trace.push(format!(
                    "waker {index}: push {item} (was_empty {})",
                    pushed.was_empty
                ));
                match idle.decide_without_read(pushed.was_empty) {
                    Some(why) => Some(Notify::Skip(why)),
                    None => {
                        waker.phase = WakerPhase::Observe;
                        None
                    }
                }
            }
            WakerPhase::Observe => {
                let observed = idle.observe();
                self.trace
                    .push(format!("waker {index}: observe {observed}"));
                waker.phase = WakerPhase::Act(observed);
                None
            }
            WakerPhase::Act(observed) => Some(idle.act(observed)),
        };
        let Some(action) = action else {
            return Ok(());
        };
        from.count_notify(action);
        self.trace.push(format!("waker {index}: {action:?}"));
        let waker = &mut self.waker_state[index];
        waker.phase = WakerPhase::Push;
        waker.next_item += 1;
        if action == Notify::Wake {
            self.ipis += 1;
            if self.config.policy == Policy::StateMachine {
                if !self.in_halt {
                    return Err("IPI sent to a running core".into());
                }
                self.ipis_this_halt += 1;
                if self.ipis_this_halt > 1 {
                    return Err("two IPIs for one halt".into());
                }
            }
            self.ipi_pending = true;
        }
        Ok(())
    }

    /// All wakers are done: let the idle core run alone until it is asleep
    /// with no IPI pending (or, for `poll`, has gone round once with nothing
    /// left), then check the run.
    fn finish(&mut self) -> Result<Stats, String> {
        let mut steps = 0;
        loop {
            if matches!(self.idle, Some(IdlePhase::Asleep(_))) && !self.ipi_pending {
                break;
            }
            if self.config.policy == Policy::Poll
                && matches!(self.idle, Some(IdlePhase::Drain))
                && self.drained.len() == self.pushed
                && steps > 0
            {
                break;
            }
            steps += 1;
            if steps > 64 {
                return Err("the idle core never settled".into());
            }
            self.step_idle();
        }
        if self.drained.len() != self.pushed || self.target.inbox_len() != 0 {
            return Err(format!(
                "lost wakeup: the core is halted with no IPI pending and {} item(s) in its inbox",
                self.pushed - self.drained.len()
            ));
        }
        let mut drained = self.drained.clone();
        drained.sort_unstable();
        drained.dedup();
        if drained.len() != self.pushed {
            return Err("an item was drained twice".into());
        }
        let counters = self.target.counters().snapshot();
        if self.config.policy == Policy::StateMachine && self.ipis > counters.halts {
            return Err(format!("{} IPIs for {} halts", self.ipis, counters.halts));
        }
        Ok(Stats {
            ipis: self.ipis,
            dont_sleep_aborts: counters.aborts_dont_sleep,
        })
    }

    fn explain(&self, failure: &str) -> String {
        let mut text = format!("{}: {failure}\n  trace:", self.config.policy);
        for line in &self.trace {
            text.push_str("\n    ");
            text.push_str(line);
        }
        text
    }
}
