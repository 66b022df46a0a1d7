//! The wake crate's mutants, as data: for each, the file, the exact text
//! to find (it must occur exactly once) and its replacement, the loom model
//! that covers it, and the assertion messages that count as its kill.
//!
//! Each mutation makes one read-modify-write or ordering weaker, or breaks
//! one step of the protocol's or the driver's logic (skip the re-check,
//! commit or claim by a plain store, a waker that ignores `Halting`, a
//! `DontSleep` consumed by halting anyway, an unpark without its
//! compare-exchange, a wake IPI taken with a tick handled as the tick, a
//! quiet wake that ends the halt, drained work left uncounted, a notify
//! counted finished before its IPI, always-ipi's old plain re-check, the
//! stealable pool's wake rule broken).
//!
//! To add a mutant, append an entry to [`MUTANTS`]; the fields not given
//! come from [`Mutant::BASE`] (the `state_machine` model, killed by
//! [`LOST_WAKEUP`], not quick, not equivalent, no helpers):
//!
//! ```text
//! Mutant {
//!     name: "choose-busy-core",          // new, lowercase-with-dashes
//!     file: "src/steal.rs",              // relative to kernel/wake
//!     find: "exact text, once in the file\n",
//!     replace: "its mutation\n",
//!     model: STEAL,                      // or a new `Model` const
//!     killed_by: &[HERD],                // a const per model assertion
//!     quick: true,                       // also in `cargo xtask test`
//!     ..Mutant::BASE
//! },
//! ```
//!
//! Multi-line text is written with `concat!("line\n", "    line\n")` so
//! that indentation is exact. A new assertion message gets a const here
//! next to the others (copied from the model's own); a mutant the models
//! cannot kill gets `equivalent: Some("why")`. `cargo test -p xtask
//! mutants` then checks that the find-text occurs exactly once in the
//! current tree, that the name is new, that each assertion is a string the
//! models contain and that the model's test file and filter exist;
//! `cargo xtask mutants NAME` runs it.

/// One loom test binary of the wake crate (`kernel/wake/tests/<test>.rs`)
/// and the name filter passed to it (`None`: every test in it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Model {
    /// The test target, as `cargo test --test` names it.
    pub test: &'static str,
    /// Substring filter on the test names, as libtest takes it.
    pub filter: Option<&'static str>,
}

impl Model {
    /// How the run's lines name the model: `loom_parker (all)`.
    pub fn describe(&self) -> String {
        format!("{} {}", self.test, self.filter.unwrap_or("(all)"))
    }
}

/// The protocol model's `state_machine` tests (`tests/loom_protocol.rs`).
pub const STATE_MACHINE: Model = Model {
    test: "loom_protocol",
    filter: Some("state_machine"),
};
/// The protocol model's spontaneous-wake test alone: a wake with nothing
/// announced, then the final halt (it kills the detector's mutants in
/// seconds, where the whole `state_machine` set takes 100 s and more).
pub const SPONTANEOUS_WAKE: Model = Model {
    test: "loom_protocol",
    filter: Some("state_machine_spontaneous_wake"),
};
/// The protocol model's `always_ipi` tests.
pub const ALWAYS_IPI: Model = Model {
    test: "loom_protocol",
    filter: Some("always_ipi"),
};
/// The task parker's model (`tests/loom_parker.rs`), every test.
pub const PARKER: Model = Model {
    test: "loom_parker",
    filter: None,
};
/// A join's model (`tests/loom_join.rs`), every test.
pub const JOIN: Model = Model {
    test: "loom_join",
    filter: None,
};
/// The stealable pool's model (`tests/loom_steal.rs`), every test.
pub const STEAL: Model = Model {
    test: "loom_steal",
    filter: None,
};
/// The stealable pool's model with a busy core that must not be chosen.
pub const STEAL_BUSY_CORE: Model = Model {
    test: "loom_steal",
    filter: Some("busy_core_is_never_chosen"),
};
/// The stealable pool's model whose chosen core gets a job waiting for
/// the item.
pub const STEAL_CHOSEN_CORE: Model = Model {
    test: "loom_steal",
    filter: Some("chosen_core_with_a_job_waiting"),
};
/// The stealable pool's model with a search wake held between its choice
/// and its ticket.
pub const STEAL_HELD_TICKET: Model = Model {
    test: "loom_steal",
    filter: Some("held_ticket"),
};
/// The stealable pool's models of a core pushing onto its own queue and
/// waiting for the item.
pub const STEAL_LOCAL: Model = Model {
    test: "loom_steal",
    filter: Some("local_push"),
};
/// The stealable pool's model of a core pushing onto its own queue past a
/// core busy with pinned work.
pub const STEAL_LOCAL_BUSY: Model = Model {
    test: "loom_steal",
    filter: Some("local_push_past_a_busy_core"),
};
/// The stealable pool's model of a core pushing onto its own queue past a
/// searcher still to look (the push / search pair).
pub const STEAL_SEARCHER_TO_LOOK: Model = Model {
    test: "loom_steal",
    filter: Some("pushed_past_a_searcher_still_to_look"),
};
/// The stealable pool's model of a push past a searcher that takes a
/// shared item waiting for the pushed one.
pub const STEAL_SEARCHER_TAKES_WAITING: Model = Model {
    test: "loom_steal",
    filter: Some("pushed_past_a_searcher_that_takes_a_waiting_item"),
};
/// The stealable pool's models of a producer pushing onto the outside
/// queue (the hosted pool's `Producer::spawn`).
pub const STEAL_OUTSIDE: Model = Model {
    test: "loom_steal",
    filter: Some("outside_push"),
};
/// The stealable pool's model of a producer pushing onto the outside queue
/// past the only core, busy with pinned work.
pub const STEAL_OUTSIDE_BUSY: Model = Model {
    test: "loom_steal",
    filter: Some("outside_push_past_a_busy_core"),
};
/// The stealable pool's two-publication producer model.
pub const STEAL_TWO_PUBLICATIONS: Model = Model {
    test: "loom_steal",
    filter: Some("producer_two_publications_two_cores"),
};
/// The stealable pool's model of a producer's two items for three cores.
pub const STEAL_TWO_ITEMS_THREE_CORES: Model = Model {
    test: "loom_steal",
    filter: Some("producer_two_items_three_cores"),
};
/// The stealable pool's model of a producer's three items for three cores.
pub const STEAL_THREE_ITEMS_THREE_CORES: Model = Model {
    test: "loom_steal",
    filter: Some("producer_three_items_three_cores"),
};

// The models' assertion messages (kernel/wake/tests/model/machine.rs,
// run.rs and steal_run.rs, tests/loom_parker.rs): a kill must show one of
// them in its panic message.

/// A core halted with work announced to it (`tests/model/machine.rs`).
pub const LOST_WAKEUP: &str = "lost wakeup";
/// A halt ended by a quiet wake drained work unreported (`tests/model/run.rs`).
pub const RESCUED: &str = "work rescued unreported";
/// A second IPI for one halt (`tests/model/run.rs`).
pub const TWO_IPIS: &str = "two IPIs for one halt";
/// An IPI to a core already woken (`tests/model/run.rs`).
pub const IPI_TO_RUNNING: &str = "IPI sent to a running core";
/// The parked task never woke (`tests/loom_parker.rs`).
pub const LOST_WAKE: &str = "lost wake";
/// One park enqueued twice (`tests/loom_parker.rs`).
pub const DOUBLE_ENQUEUE: &str = "two enqueues of one park";
/// The woken task did not see the waker's data (`tests/loom_parker.rs`).
pub const MISSED_DATA: &str = "missed the published data";
/// The enqueuer did not see the task's writes (`tests/loom_parker.rs`).
pub const MISSED_TASK_WRITES: &str = "missed the task's writes";
/// A join's half ran twice (`tests/loom_join.rs`).
pub const JOIN_RAN_TWICE: &str = "a join's half ran twice";
/// The joiner parked with nobody to unpark it (`tests/loom_join.rs`).
pub const JOIN_LOST_WAKE: &str = "lost wake: the joiner parked with nobody to unpark it";
/// The joiner did not see the half's result (`tests/loom_join.rs`).
pub const JOIN_MISSED_RESULT: &str = "the joiner missed the half's result";
/// The joiner parked while nobody ran the half (`tests/loom_join.rs`).
pub const JOIN_WAITED_UNSTARTED: &str = "the joiner waits for a half nobody is running";
/// Stealable work left with nobody to run it (`tests/model/machine.rs`).
pub const STRANDED: &str = "stealable work stranded";
/// A choice left more searchers than queued items (`tests/model/steal_run.rs`).
pub const HERD: &str = "thundering herd";
/// A search wake of a later generation than log2 of the items allows
/// (`tests/model/steal_run.rs`).
pub const RAMP: &str = "ramp-up slower than log2 of the items";
/// A core running pinned work chosen to search, and still holding the
/// search (`tests/model/steal_run.rs`).
pub const BUSY_CHOSEN: &str = "a core busy with pinned work chosen to search";
/// The search held by a core running pinned work while another core
/// sleeps with work queued (`tests/model/steal_run.rs`).
pub const HELD_BY_BUSY: &str = "search held by a busy core while another sleeps with work queued";
/// Two search wakes on their way to one core (`tests/model/steal_run.rs`).
pub const TWO_TICKETS: &str = "two search wakes in flight to one core";
/// A pinned job waiting for a stealable item that nobody runs
/// (`tests/model/steal_run.rs`).
pub const BLOCKED: &str = "a private job waiting on a shared job never completes";
/// A stealable item never ran (`tests/model/steal_run.rs`, at the end of
/// an execution).
pub const ITEM_LOST: &str = "a stealable item was lost";

/// A claim that is not exclusive sends a second IPI, which the model sees
/// either as the second for the halt or as one to the core the first IPI
/// woke.
pub const DOUBLE_IPI: &[&str] = &[TWO_IPIS, IPI_TO_RUNNING];
/// A second enqueue of one park shows as an enqueuer reading an older
/// park's note.
pub const ENQUEUED_TWICE: &[&str] = &[DOUBLE_ENQUEUE, MISSED_TASK_WRITES];

/// Appended to `src/idle_state.rs` for the mutants that call them: a
/// compare-exchange and a swap each split into a load and a store.
pub const IDLE_STATE_SPLITS: &str = r#"
impl IdleState {
    /// MUTANT: a compare-exchange split into a load and a store.
    fn load_then_store(&self, current: State, new: State) -> Result<State, State> {
        let seen = State::decode(self.state.load(Ordering::Relaxed));
        if seen == current {
            self.state.store(new.as_raw(), Ordering::Relaxed);
            Ok(seen)
        } else {
            Err(seen)
        }
    }

    /// MUTANT: a swap split into a load and a store.
    fn store_then_old(&self, new: State) -> State {
        let seen = State::decode(self.state.load(Ordering::Relaxed));
        self.state.store(new.as_raw(), Ordering::Relaxed);
        seen
    }
}
"#;

/// Appended to `src/parker.rs` for the mutants that call `mutant_cas`: a
/// compare-exchange split into a load and a store (with the given
/// orderings) on the parker's atomic.
pub const PARKER_CAS_SPLIT: &str = r#"
trait MutantCas {
    fn mutant_cas(&self, current: u8, new: u8, load: Ordering, store: Ordering) -> Result<u8, u8>;
}

impl MutantCas for AtomicU8 {
    /// MUTANT: a compare-exchange split into a load and a store.
    fn mutant_cas(&self, current: u8, new: u8, load: Ordering, store: Ordering) -> Result<u8, u8> {
        let seen = self.load(load);
        if seen == current {
            self.store(new, store);
            Ok(seen)
        } else {
            Err(seen)
        }
    }
}
"#;

/// One mutation of the wake crate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mutant {
    /// Unique; how the command line and the verdict lines name it.
    pub name: &'static str,
    /// The mutated file, relative to `kernel/wake`.
    pub file: &'static str,
    /// The exact original text; it must occur exactly once in `file`.
    pub find: &'static str,
    /// What replaces it.
    pub replace: &'static str,
    /// Code appended to `file` (helpers `replace` calls), or empty.
    pub helpers: &'static str,
    /// The loom model that must kill it.
    pub model: Model,
    /// The assertion messages that count as a kill (any one of them, as a
    /// substring of a panic message).
    pub killed_by: &'static [&'static str],
    /// In the subset `--quick` and `cargo xtask test` run.
    pub quick: bool,
    /// Why the mutant is expected to survive, if it is.
    pub equivalent: Option<&'static str>,
}

impl Mutant {
    /// The fields most entries leave as they are: no helpers, the
    /// `state_machine` model, killed by the lost-wakeup check, not quick,
    /// not equivalent. Entries write `..Mutant::BASE` last.
    pub const BASE: Self = Self {
        name: "",
        file: "",
        find: "",
        replace: "",
        helpers: "",
        model: STATE_MACHINE,
        killed_by: &[LOST_WAKEUP],
        quick: false,
        equivalent: None,
    };
}

/// Every mutant, in the order they run.
pub static MUTANTS: &[Mutant] = &[
    // The protocol's read-modify-writes and orderings (inbox.rs,
    // idle_state.rs).
    Mutant {
        name: "recheck-rmw-to-load",
        file: "src/inbox.rs",
        find: "self.len.fetch_add(0, Ordering::Release)",
        replace: "self.len.load(Ordering::Acquire)",
        ..Mutant::BASE
    },
    Mutant {
        name: "recheck-release-to-relaxed",
        file: "src/inbox.rs",
        find: "self.len.fetch_add(0, Ordering::Release)",
        replace: "self.len.fetch_add(0, Ordering::Relaxed)",
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        name: "push-rmw-to-load-store",
        file: "src/inbox.rs",
        find: "let before = self.len.fetch_add(1, Ordering::Acquire);",
        replace: "let before = self.len.load(Ordering::Acquire); \
                  self.len.store(before + 1, Ordering::Relaxed);",
        ..Mutant::BASE
    },
    Mutant {
        name: "push-acquire-to-relaxed",
        file: "src/inbox.rs",
        find: "let before = self.len.fetch_add(1, Ordering::Acquire);",
        replace: "let before = self.len.fetch_add(1, Ordering::Relaxed);",
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        name: "commit-cas-to-load-store",
        file: "src/idle_state.rs",
        find: "match self.compare_exchange(State::Halting, State::Halted) {",
        replace: "match self.load_then_store(State::Halting, State::Halted) {",
        helpers: IDLE_STATE_SPLITS,
        ..Mutant::BASE
    },
    Mutant {
        name: "dont-sleep-cas-to-load-store",
        file: "src/idle_state.rs",
        find: "match self.compare_exchange(State::Halting, State::DontSleep) {",
        replace: "match self.load_then_store(State::Halting, State::DontSleep) {",
        helpers: IDLE_STATE_SPLITS,
        ..Mutant::BASE
    },
    Mutant {
        name: "claim-cas-to-load-store",
        file: "src/idle_state.rs",
        find: "match self.compare_exchange(State::Halted, State::Running) {",
        replace: "match self.load_then_store(State::Halted, State::Running) {",
        helpers: IDLE_STATE_SPLITS,
        killed_by: DOUBLE_IPI,
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        name: "abort-swap-to-store",
        file: "src/idle_state.rs",
        find: "let _halting_or_dont_sleep = self.swap(State::Running);",
        replace: "let _halting_or_dont_sleep = self.store_then_old(State::Running);",
        helpers: IDLE_STATE_SPLITS,
        ..Mutant::BASE
    },
    Mutant {
        name: "drain-rmw-to-load-store",
        file: "src/inbox.rs",
        find: "self.len.fetch_sub(moved, Ordering::Relaxed);",
        replace: "let now = self.len.load(Ordering::Relaxed); \
                  self.len.store(now - moved, Ordering::Relaxed);",
        equivalent: Some(
            "the model's core never drains between its re-check and its commit, \
             the one window where a plain store would break the re-check's \
             release sequence (see inbox.rs): defensive, not exercised",
        ),
        ..Mutant::BASE
    },
    // The task parker (parker.rs).
    Mutant {
        name: "park-cas-to-load-store",
        file: "src/parker.rs",
        find: ".compare_exchange(EMPTY, PARKED, Ordering::Release, Ordering::Relaxed)",
        replace: ".mutant_cas(EMPTY, PARKED, Ordering::Relaxed, Ordering::Release)",
        helpers: PARKER_CAS_SPLIT,
        model: PARKER,
        killed_by: &[LOST_WAKE],
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        // Two unparkers' read-then-write lose one's token: a lost wake.
        name: "unpark-cas-to-load-store",
        file: "src/parker.rs",
        find: concat!(
            "match self.state.compare_exchange_weak(\n",
            "                current,\n",
            "                next,\n",
            "                Ordering::AcqRel,\n",
            "                Ordering::Relaxed,\n",
            "            ) {",
        ),
        replace: "match self.state.mutant_cas(current, next, Ordering::Acquire, Ordering::Release) {",
        helpers: PARKER_CAS_SPLIT,
        model: PARKER,
        killed_by: &[LOST_WAKE],
        ..Mutant::BASE
    },
    Mutant {
        // Only the claim (`PARKED -> EMPTY`) split: two unparkers that both
        // read `PARKED` both get `MustEnqueue`.
        name: "unpark-claim-to-load-store",
        file: "src/parker.rs",
        find: "PARKED => (EMPTY, Unparked::MustEnqueue),",
        replace: "PARKED => { \
                  if self.state.load(Ordering::Acquire) == PARKED { \
                  self.state.store(EMPTY, Ordering::Release); return Unparked::MustEnqueue; } \
                  current = self.state.load(Ordering::Relaxed); continue; }",
        model: PARKER,
        killed_by: ENQUEUED_TWICE,
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        // The token is consumed without the Acquire pairing of a successful
        // RMW read: the task runs without the waker's data.
        name: "consume-cas-to-load-store",
        file: "src/parker.rs",
        find: ".compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)",
        replace: ".mutant_cas(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)",
        helpers: PARKER_CAS_SPLIT,
        model: PARKER,
        killed_by: &[MISSED_DATA],
        ..Mutant::BASE
    },
    Mutant {
        // The parker as it was in the kernel: a wake that finds a token
        // only loads it.
        name: "join-token-rmw-to-load",
        file: "src/parker.rs",
        find: "NOTIFIED => (NOTIFIED, Unparked::TokenLeft),",
        replace: "NOTIFIED => return Unparked::TokenLeft,",
        model: PARKER,
        killed_by: &[MISSED_DATA, LOST_WAKE],
        ..Mutant::BASE
    },
    Mutant {
        // The parker as it was in the kernel: a token that arrived between
        // the two attempts is consumed by a store after an Acquire read.
        name: "late-consume-swap-to-store",
        file: "src/parker.rs",
        find: "let token = self.state.swap(EMPTY, Ordering::Acquire);",
        replace: "let token = self.state.load(Ordering::Acquire); \
                  self.state.store(EMPTY, Ordering::Relaxed);",
        model: PARKER,
        killed_by: &[MISSED_DATA],
        ..Mutant::BASE
    },
    Mutant {
        name: "consume-acquire-to-relaxed",
        file: "src/parker.rs",
        find: ".compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)",
        replace: ".compare_exchange(NOTIFIED, EMPTY, Ordering::Relaxed, Ordering::Relaxed)",
        model: PARKER,
        killed_by: &[MISSED_DATA],
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        name: "late-consume-acquire-to-relaxed",
        file: "src/parker.rs",
        find: "let token = self.state.swap(EMPTY, Ordering::Acquire);",
        replace: "let token = self.state.swap(EMPTY, Ordering::Relaxed);",
        model: PARKER,
        killed_by: &[MISSED_DATA],
        ..Mutant::BASE
    },
    Mutant {
        name: "park-release-to-relaxed",
        file: "src/parker.rs",
        find: ".compare_exchange(EMPTY, PARKED, Ordering::Release, Ordering::Relaxed)",
        replace: ".compare_exchange(EMPTY, PARKED, Ordering::Relaxed, Ordering::Relaxed)",
        model: PARKER,
        killed_by: &[MISSED_TASK_WRITES],
        ..Mutant::BASE
    },
    Mutant {
        name: "unpark-acqrel-to-acquire",
        file: "src/parker.rs",
        find: "                Ordering::AcqRel,\n",
        replace: "                Ordering::Acquire,\n",
        model: PARKER,
        killed_by: &[MISSED_DATA],
        ..Mutant::BASE
    },
    Mutant {
        name: "unpark-acqrel-to-release",
        file: "src/parker.rs",
        find: "                Ordering::AcqRel,\n",
        replace: "                Ordering::Release,\n",
        model: PARKER,
        killed_by: &[MISSED_TASK_WRITES],
        ..Mutant::BASE
    },
    // Logic mutants: one protocol step broken, not just weakened.
    Mutant {
        name: "skip-recheck",
        file: "src/idle_state.rs",
        find: "Policy::StateMachine | Policy::AlwaysIpi => inbox.recheck_for_halt(),",
        replace: concat!(
            "Policy::StateMachine => { let _ = inbox; 0 }\n",
            "            Policy::AlwaysIpi => inbox.recheck_for_halt(),",
        ),
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        name: "commit-by-plain-store",
        file: "src/idle_state.rs",
        find: "match self.compare_exchange(State::Halting, State::Halted) {",
        replace: "match { self.store(State::Halted); Ok::<State, State>(State::Halting) } {",
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        name: "claim-by-plain-store",
        file: "src/idle_state.rs",
        find: "match self.compare_exchange(State::Halted, State::Running) {",
        replace: "match { self.store(State::Running); Ok::<State, State>(State::Halted) } {",
        killed_by: DOUBLE_IPI,
        ..Mutant::BASE
    },
    Mutant {
        name: "waker-ignores-halting",
        file: "src/idle_state.rs",
        find: "State::Running => Notify::Skip(Elided::TargetRunning),",
        replace: "State::Running | State::Halting => Notify::Skip(Elided::TargetRunning),",
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        name: "dont-sleep-consumed-by-halting",
        file: "src/idle_state.rs",
        find: "self.store(State::Running);\n                        CommitStep::DontSleep",
        replace: "self.store(State::Halted);\n                        CommitStep::Halt",
        quick: true,
        ..Mutant::BASE
    },
    // The idle driver (idle_driver.rs), the waker side (waker.rs) and the
    // always-ipi finding: each breaks one step the kernel runs.
    Mutant {
        // A tick taken in the same `hlt` return as the wake IPI is taken
        // for a tick: the core re-halts with the IPI spent. Only a model
        // with a timer can fail it.
        name: "wake-ipi-classified-after-tick",
        file: "src/idle_driver.rs",
        find: "if after.wake != before.wake {",
        replace: "if after.wake != before.wake && after.timer == before.timer {",
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        // A probe, tick or spontaneous wake that finds nothing lost ends
        // the halt instead of halting again: announced work drained
        // unreported.
        name: "quiet-wake-ends-halt",
        file: "src/idle_driver.rs",
        find: concat!(
            "                if record.check_self(&self.platform, strict) {\n",
            "                    break Slept::lost(at);\n",
            "                }",
        ),
        replace: concat!(
            "                let _ = (at, strict);\n",
            "                break Slept { cause: IdleEvent::WokeOther, lost: None, stopped: false };",
        ),
        killed_by: &[RESCUED],
        model: SPONTANEOUS_WAKE,
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        // What `woke_up` drains is not counted: the detector then takes
        // drained work for announced work still waiting (a false report).
        name: "woke-up-drain-uncounted",
        file: "src/idle_driver.rs",
        find: concat!(
            "                let drained = halted.woke_up(out);\n",
            "                if drained > 0 {\n",
            "                    record.note_drained(drained);\n",
            "                }",
        ),
        replace: "                let drained = halted.woke_up(out);",
        ..Mutant::BASE
    },
    Mutant {
        // The waker counts its notify finished before its IPI is sent: the
        // halted core sees announced work, no IPI sent and none pending (a
        // false report).
        name: "notify-finished-before-ipi",
        file: "src/waker.rs",
        find: concat!(
            "    if outcome.must_wake() {\n",
            "        hooks.before_ipi();\n",
            "        platform.send_wake(target);\n",
            "    }\n",
            "    record.notify_finished();",
        ),
        replace: concat!(
            "    record.notify_finished();\n",
            "    if outcome.must_wake() {\n",
            "        hooks.before_ipi();\n",
            "        platform.send_wake(target);\n",
            "    }",
        ),
        model: SPONTANEOUS_WAKE,
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        // The finding: always-ipi's re-check as it was, a plain load.
        // Correct only if the IPI carried the waker's writes to the woken
        // core.
        name: "always-ipi-recheck-plain-load",
        file: "src/idle_state.rs",
        find: "Policy::StateMachine | Policy::AlwaysIpi => inbox.recheck_for_halt(),",
        replace: concat!(
            "Policy::StateMachine => inbox.recheck_for_halt(),\n",
            "            Policy::AlwaysIpi => inbox.len(),",
        ),
        model: ALWAYS_IPI,
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        name: "notify-finished-release-to-relaxed",
        file: "src/lost_wakeup.rs",
        find: "self.notify_finished.fetch_add(1, Ordering::Release);",
        replace: "self.notify_finished.fetch_add(1, Ordering::Relaxed);",
        ..Mutant::BASE
    },
    // The stealable pool's rule (steal.rs), checked by `loom_steal`.
    // The stealable pool: publish chooses nobody.
    Mutant {
        name: "steal-publish-wakes-nobody",
        file: "src/steal.rs",
        find: concat!(
            "            self.search_ends(&mut shared, me);\n",
            "            self.choose_searchers(&mut shared, me, FAN_OUT)\n",
        ),
        replace: concat!(
            "            self.search_ends(&mut shared, me);\n",
            "            Woken::NONE // MUTANT: publish wakes nobody\n",
        ),
        model: STEAL,
        killed_by: &[STRANDED],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: a core that finds nothing halts unregistered.
    Mutant {
        name: "steal-idle-core-unregistered",
        file: "src/steal.rs",
        find: "                shared.idle.insert(searcher.me);\n",
        replace: "",
        model: STEAL,
        killed_by: &[STRANDED],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: the herd bound ignores the searchers on their way.
    Mutant {
        name: "steal-searchers-not-counted",
        file: "src/steal.rs",
        find: "        let uncovered = queued.saturating_sub(shared.searching.len());\n",
        replace: "        let uncovered = queued; // MUTANT: searchers on their way not counted\n",
        model: STEAL_TWO_ITEMS_THREE_CORES,
        killed_by: &[HERD],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: one core woken at a time (the rule before the
    // ramp-up): a publication and a searcher that finds work wake one.
    Mutant {
        name: "steal-one-at-a-time",
        file: "src/steal.rs",
        find: "        let want = want.min(uncovered);\n",
        replace: "        let want = want.min(uncovered).min(1); // MUTANT: one core at a time\n",
        model: STEAL_THREE_ITEMS_THREE_CORES,
        killed_by: &[RAMP],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: the work-conserving rule broken: the choice ignores the busy mark.
    Mutant {
        name: "steal-choose-busy-core",
        file: "src/steal.rs",
        find: "            if flags.busy.load(Ordering::Relaxed) == 0 {",
        replace: "            if true { // MUTANT: busy cores not passed over",
        model: STEAL_BUSY_CORE,
        killed_by: &[BUSY_CHOSEN],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: the rule before the work-conserving one: a registered core runs pinned work unmarked.
    Mutant {
        name: "steal-before-pinned-work-skipped",
        file: "src/steal.rs",
        find: "        if searcher.registered_idle && self.covers(searcher.me) {",
        replace: "        if false && searcher.registered_idle && self.covers(searcher.me) {",
        model: STEAL_BUSY_CORE,
        killed_by: &[BUSY_CHOSEN],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: the busy / chosen pair without the core's fence.
    Mutant {
        name: "steal-busy-fence-dropped",
        file: "src/steal.rs",
        find: concat!(
            "                // chooser's fence.\n",
            "                fence(Ordering::SeqCst);",
        ),
        replace: "                // chooser's fence. MUTANT: no fence",
        model: STEAL_BUSY_CORE,
        killed_by: &[BUSY_CHOSEN],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: the searcher that starts pinned work keeps the slot.
    Mutant {
        name: "steal-no-hand-on",
        file: "src/steal.rs",
        find: concat!(
            "        let next = if searcher.searching {\n",
            "            searcher.searching = false;\n",
            "            self.search_ends(&mut shared, searcher.me);\n",
            "            if self.queued(&shared) == 0 {",
        ),
        replace: concat!(
            "        let next = if false {\n",
            "            // MUTANT: the busy searcher keeps the slot\n",
            "            searcher.searching = false;\n",
            "            self.search_ends(&mut shared, searcher.me);\n",
            "            if self.queued(&shared) == 0 {",
        ),
        model: STEAL_CHOSEN_CORE,
        killed_by: &[HELD_BY_BUSY],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: the searcher that starts pinned work drops the search.
    Mutant {
        name: "steal-hand-on-dropped",
        file: "src/steal.rs",
        find: concat!(
            "            if self.queued(&shared) == 0 {\n",
            "                Woken::NONE\n",
            "            } else {\n",
            "                self.choose_searchers(&mut shared, searcher.me, 1)\n",
            "            }",
        ),
        replace: "            Woken::NONE // MUTANT: the search is dropped, not handed on",
        model: STEAL_CHOSEN_CORE,
        killed_by: &[BLOCKED],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: take does not look as a resumed core.
    Mutant {
        name: "steal-resume-skipped",
        file: "src/steal.rs",
        find: concat!(
            "        let mut shared = self.shared.lock();\n",
            "        self.resume(&mut shared, searcher);\n",
            "        // Every look ends a search",
        ),
        replace: concat!(
            "        let mut shared = self.shared.lock();\n",
            "        // MUTANT: no resume\n",
            "        // Every look ends a search",
        ),
        model: STEAL_TWO_PUBLICATIONS,
        killed_by: &[STRANDED],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: the fast path taken by a core that drained a search wake.
    Mutant {
        name: "steal-fast-path-ignores-wake-seen",
        file: "src/steal.rs",
        find: concat!(
            "        if searcher.registered_idle\n",
            "            && !searcher.search_wake_seen\n",
            "            && self.mirror.queued",
        ),
        replace: concat!(
            "        if searcher.registered_idle\n",
            "            && self.mirror.queued",
        ),
        model: STEAL_TWO_PUBLICATIONS,
        killed_by: &[STRANDED],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: the fast path taken by a core not registered idle.
    Mutant {
        name: "steal-fast-path-ignores-registration",
        file: "src/steal.rs",
        find: concat!(
            "        if searcher.registered_idle\n",
            "            && !searcher.search_wake_seen\n",
            "            && self.mirror.queued",
        ),
        replace: concat!(
            "        if !searcher.search_wake_seen\n",
            "            && self.mirror.queued",
        ),
        model: STEAL_TWO_PUBLICATIONS,
        killed_by: &[STRANDED],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: the choice ignores the tickets in flight.
    Mutant {
        name: "steal-stale-ticket-accepted",
        file: "src/steal.rs",
        find: "                Some(&shared.ticket_pending),\n",
        replace: "                None, // MUTANT: tickets in flight ignored\n",
        model: STEAL_HELD_TICKET,
        killed_by: &[TWO_TICKETS],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool: a look that drained no ticket clears the mark.
    Mutant {
        name: "steal-pending-cleared-without-ticket",
        file: "src/steal.rs",
        find: concat!(
            "        if searcher.search_wake_seen {\n",
            "            shared.ticket_pending.remove(searcher.me);\n",
            "        }",
        ),
        replace: "        shared.ticket_pending.remove(searcher.me); // MUTANT: unconditionally",
        model: STEAL_HELD_TICKET,
        killed_by: &[TWO_TICKETS],
        quick: true,
        ..Mutant::BASE
    },
    // The stealable pool's local queues: the push / registration pair and
    // the choices that count local items (steal.rs, `LocalQueue`).
    // A core registering idle stores the idle count only at the unlock,
    // after its scan of the local queues.
    Mutant {
        name: "steal-local-idle-stored-after-scan",
        file: "src/steal.rs",
        find: concat!(
            "        // `LocalQueue`): stored before the first queue's lock below.\n",
            "        self.idle_for_pushers\n",
            "            .store(shared.idle.len(), Ordering::Relaxed);\n",
        ),
        replace: "        // MUTANT: the idle count stored only at the unlock\n",
        model: STEAL_LOCAL,
        killed_by: &[BLOCKED],
        quick: true,
        ..Mutant::BASE
    },
    // A core registering idle looks at no local queue.
    Mutant {
        name: "steal-local-queues-not-scanned",
        file: "src/steal.rs",
        find: "        for step in 0..cores {\n",
        replace: "        for step in 0..0 { // MUTANT: no local queue looked at\n",
        model: STEAL_LOCAL,
        killed_by: &[BLOCKED],
        quick: true,
        ..Mutant::BASE
    },
    // A push onto a core's own queue never reads the idle count.
    Mutant {
        name: "steal-local-push-ignores-idle",
        file: "src/steal.rs",
        find: "        if self.idle_for_pushers.load(Ordering::Relaxed) == 0 {\n",
        replace: "        if true { // MUTANT: the idle count not read\n",
        model: STEAL_LOCAL,
        killed_by: &[BLOCKED],
        quick: true,
        ..Mutant::BASE
    },
    // The choices count only the shared queue's items.
    Mutant {
        name: "steal-local-items-not-counted",
        file: "src/steal.rs",
        find: "        let queued = self.queued(shared);\n",
        replace: "        let queued = shared.queue.len(); // MUTANT: local items not counted\n",
        model: STEAL_LOCAL,
        killed_by: &[BLOCKED],
        quick: true,
        ..Mutant::BASE
    },
    // The queued count mirrored at the unlock leaves the local items out:
    // a busy core passed over reads 0 after its pinned work and halts.
    Mutant {
        name: "steal-local-items-not-mirrored",
        file: "src/steal.rs",
        find: "        m.queued.store(self.queued(&shared), Ordering::Relaxed);\n",
        replace: "        m.queued.store(shared.queue.len(), Ordering::Relaxed); // MUTANT: local items not mirrored\n",
        model: STEAL_LOCAL_BUSY,
        killed_by: &[BLOCKED],
        quick: true,
        ..Mutant::BASE
    },
    // The chooser's half of the queued / busy pair leaves the local items
    // out of the count it stores before its fence.
    Mutant {
        name: "steal-local-items-not-stored-by-the-chooser",
        file: "src/steal.rs",
        find: "        self.mirror.queued.store(queued, Ordering::Relaxed);\n",
        replace: "        self.mirror.queued.store(shared.queue.len(), Ordering::Relaxed); // MUTANT\n",
        model: STEAL_LOCAL_BUSY,
        killed_by: &[BLOCKED],
        quick: true,
        ..Mutant::BASE
    },
    // A thief's loot (the older half it moves onto its own queue) lost.
    Mutant {
        name: "steal-local-loot-dropped",
        file: "src/steal.rs",
        find: "                    own_items.append(&mut loot);\n",
        replace: "                    loot.clear(); // MUTANT: the loot dropped\n",
        model: STEAL_LOCAL,
        // The ghost count of queued items keeps the lost one: the machine
        // stops with it "queued" before the end-of-run count is reached.
        killed_by: &[STRANDED, ITEM_LOST],
        quick: true,
        ..Mutant::BASE
    },
    // The push / search pair (steal.rs, `push_local`): a searcher leaves
    // the count of searchers still to look only after its look read the
    // queues, so a pusher that read it counted skips the lock past a look
    // that missed its item (killed in about a minute).
    Mutant {
        name: "steal-search-left-after-the-look",
        file: "src/steal.rs",
        find: concat!(
            "        let ended_search = searcher.searching;\n",
            "        if ended_search {\n",
            "            searcher.searching = false;\n",
            "            self.search_ends(&mut shared, searcher.me);\n",
            "        }\n",
            "        let mut item = shared.queue.pop_front();\n",
            "        if item.is_none() && !self.locals.is_empty() {\n",
            "            item = self.register_and_steal(&mut shared, searcher.me);\n",
            "        }\n",
        ),
        replace: concat!(
            "        let mut item = shared.queue.pop_front();\n",
            "        if item.is_none() && !self.locals.is_empty() {\n",
            "            item = self.register_and_steal(&mut shared, searcher.me);\n",
            "        }\n",
            "        // MUTANT: the search left after the look\n",
            "        let ended_search = searcher.searching;\n",
            "        if ended_search {\n",
            "            searcher.searching = false;\n",
            "            self.search_ends(&mut shared, searcher.me);\n",
            "        }\n",
        ),
        model: STEAL_SEARCHER_TO_LOOK,
        killed_by: &[BLOCKED],
        quick: true,
        ..Mutant::BASE
    },
    // The push / search pair's pusher reads the count with a Relaxed
    // read-modify-write: a searcher that takes a shared item waiting for
    // the push may read the pushed queue's length stale and choose nobody
    // for it (killed in about 2 s).
    Mutant {
        name: "steal-push-search-pair-relaxed",
        file: "src/steal.rs",
        find: "        let to_look = self.mirror.to_look.fetch_add(0, Ordering::AcqRel);\n",
        replace: "        let to_look = self.mirror.to_look.fetch_add(0, Ordering::Relaxed); // MUTANT\n",
        model: STEAL_SEARCHER_TAKES_WAITING,
        killed_by: &[BLOCKED],
        quick: true,
        ..Mutant::BASE
    },
    // The push / search pair's chooser adds to the count with a plain load
    // and store (the first version): a store between a push's read and a
    // searcher's leaving cuts the pusher's release sequence.
    Mutant {
        name: "steal-push-search-chooser-plain-store",
        file: "src/steal.rs",
        find: "            self.mirror.to_look.fetch_add(1, Ordering::Relaxed);\n",
        replace: concat!(
            "            let to_look = &self.mirror.to_look; // MUTANT: a plain store\n",
            "            to_look.store(to_look.load(Ordering::Relaxed) + 1, Ordering::Relaxed);\n",
        ),
        model: STEAL_SEARCHER_TAKES_WAITING,
        killed_by: &[BLOCKED],
        equivalent: Some(
            "the searcher the store leaves unsynchronized takes a shared item and chooses \
             nobody for the push (a review of 1a28dc4); the store is a second choice after \
             the push, whose searcher looks too and finds the pushed item under its queue's \
             lock unless it also takes a shared item that waits for it: two such items and \
             a fourth core, more than the three-core model with one waiting item has. Not \
             exercised",
        ),
        ..Mutant::BASE
    },
    // The outside queue (steal.rs, `push_outside`): the outside push /
    // registration pair, closed by a fence on each side, and the choices
    // that count the outside queue's items.
    // The pusher reads the idle count with no fence after its push.
    Mutant {
        name: "steal-outside-pusher-fence-dropped",
        file: "src/steal.rs",
        find: concat!(
            "        // `register_and_steal`.\n",
            "        fence(Ordering::SeqCst);\n",
        ),
        replace: "        // MUTANT: no fence between the push and the idle count's load\n",
        model: STEAL_OUTSIDE,
        killed_by: &[STRANDED],
        quick: true,
        ..Mutant::BASE
    },
    // A core registering idle looks at the outside queue with no fence
    // after its store of the idle count.
    Mutant {
        name: "steal-outside-registration-fence-dropped",
        file: "src/steal.rs",
        find: concat!(
            "        // first: one item, never a batch (see `outside_queue`).\n",
            "        fence(Ordering::SeqCst);\n",
        ),
        replace: "        // MUTANT: no fence between the idle count's store and the look\n",
        model: STEAL_OUTSIDE,
        killed_by: &[STRANDED],
        quick: true,
        ..Mutant::BASE
    },
    // A core registering idle never looks at the outside queue.
    Mutant {
        name: "steal-outside-queue-not-looked-at",
        file: "src/steal.rs",
        find: "        if let Some(item) = self.outside.pop() {\n",
        replace: "        if let Some(item) = None::<T> { // MUTANT: the outside queue not looked at\n",
        model: STEAL_OUTSIDE,
        killed_by: &[STRANDED],
        quick: true,
        ..Mutant::BASE
    },
    // The choices and the mirrored count leave the outside queue's items
    // out: the busy core passed over reads 0 after its job and halts.
    Mutant {
        name: "steal-outside-items-not-counted",
        file: "src/steal.rs",
        find: "            + self.outside.len()\n",
        replace: "            + 0 // MUTANT: the outside queue's items not counted\n",
        model: STEAL_OUTSIDE_BUSY,
        killed_by: &[STRANDED],
        quick: true,
        ..Mutant::BASE
    },
    // A join's state (join_state.rs): the claim, the joiner's wait and
    // the thief's finish.
    Mutant {
        // The thief's claim by a load and a store: the joiner claims in
        // between, and both run the half.
        name: "join-thief-claim-to-load-store",
        file: "src/join_state.rs",
        find: concat!(
            "        self.state\n",
            "            .compare_exchange(UNCLAIMED, RUNNING, Ordering::Relaxed, Ordering::Relaxed)\n",
            "            .is_ok()\n",
        ),
        replace: concat!(
            "        let seen = self.state.load(Ordering::Relaxed); // MUTANT: load, store\n",
            "        seen == UNCLAIMED && { self.state.store(RUNNING, Ordering::Relaxed); true }\n",
        ),
        model: JOIN,
        killed_by: &[JOIN_RAN_TWICE],
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        // The joiner registers with a plain store: it overwrites FINISHED
        // and parks with nobody to unpark it.
        name: "join-register-to-store",
        file: "src/join_state.rs",
        find: concat!(
            "                return match self.state.compare_exchange(\n",
            "                    RUNNING,\n",
            "                    JOINER_PARKED,\n",
            "                    Ordering::Relaxed,\n",
            "                    Ordering::Acquire,\n",
            "                ) {\n",
        ),
        replace: concat!(
            "                return match { self.state.store(JOINER_PARKED, Ordering::Relaxed); \n",
            "                    Ok::<u8, u8>(RUNNING) } { // MUTANT: a plain store\n",
        ),
        model: JOIN,
        killed_by: &[JOIN_LOST_WAKE],
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        // The thief unparks only a joiner it did not find registered.
        name: "join-finish-unparks-nobody",
        file: "src/join_state.rs",
        find: "self.state.swap(FINISHED, Ordering::Release) == JOINER_PARKED",
        replace: "self.state.swap(FINISHED, Ordering::Release) == RUNNING // MUTANT",
        model: JOIN,
        killed_by: &[JOIN_LOST_WAKE],
        ..Mutant::BASE
    },
    Mutant {
        // The finish publishes nothing: a joiner that reads FINISHED
        // takes the result before it was stored.
        name: "join-finish-relaxed",
        file: "src/join_state.rs",
        find: "self.state.swap(FINISHED, Ordering::Release) == JOINER_PARKED",
        replace: "self.state.swap(FINISHED, Ordering::Relaxed) == JOINER_PARKED // MUTANT",
        model: JOIN,
        killed_by: &[JOIN_MISSED_RESULT],
        quick: true,
        ..Mutant::BASE
    },
    Mutant {
        // The registration's failure reads FINISHED without acquiring it.
        name: "join-register-failure-relaxed",
        file: "src/join_state.rs",
        find: concat!(
            "                    Ordering::Relaxed,\n",
            "                    Ordering::Acquire,\n",
        ),
        replace: concat!(
            "                    Ordering::Relaxed,\n",
            "                    Ordering::Relaxed, // MUTANT\n",
        ),
        model: JOIN,
        killed_by: &[JOIN_MISSED_RESULT],
        ..Mutant::BASE
    },
    Mutant {
        // A parked joiner's check reads FINISHED without acquiring it.
        name: "join-wait-check-relaxed",
        file: "src/join_state.rs",
        find: "self.state.load(Ordering::Acquire) == FINISHED",
        replace: "self.state.load(Ordering::Relaxed) == FINISHED // MUTANT",
        model: JOIN,
        killed_by: &[JOIN_MISSED_RESULT],
        ..Mutant::BASE
    },
    Mutant {
        // A claim that read FINISHED goes on without the Acquire reload.
        name: "join-claim-finished-no-reload",
        file: "src/join_state.rs",
        find: "            Err(FINISHED) => {}\n",
        replace: "            Err(FINISHED) => return JoinerClaim::Finished, // MUTANT\n",
        model: JOIN,
        killed_by: &[JOIN_MISSED_RESULT],
        ..Mutant::BASE
    },
    Mutant {
        // The joiner waits for the spawned half to come round instead of
        // claiming it: it registers from UNCLAIMED, and the thief's claim
        // then fails too, so nobody runs the half.
        name: "join-joiner-waits-unclaimed",
        file: "src/join_state.rs",
        find: concat!(
            "            UNCLAIMED,\n",
            "            JOINER_RUNS,\n",
            "            Ordering::Relaxed,\n",
            "            Ordering::Relaxed,\n",
            "        ) {\n",
            "            Ok(_) => return JoinerClaim::RunsItself,\n",
        ),
        replace: concat!(
            "            UNCLAIMED,\n",
            "            JOINER_PARKED, // MUTANT: waits instead of claiming\n",
            "            Ordering::Relaxed,\n",
            "            Ordering::Relaxed,\n",
            "        ) {\n",
            "            Ok(_) => return JoinerClaim::MustPark,\n",
        ),
        model: JOIN,
        killed_by: &[JOIN_WAITED_UNSTARTED],
        quick: true,
        ..Mutant::BASE
    },
];

/// The mutant named `name`.
pub fn find(name: &str) -> Option<&'static Mutant> {
    MUTANTS.iter().find(|mutant| mutant.name == name)
}

/// The subset `--quick` and `cargo xtask test` run: each assertion, each
/// mutated file, the logic mutants that are cheapest to kill, and every
/// mutant of the stealable pool's rule (4-10 s each after the baseline:
/// `loom_steal` is small).
pub fn quick() -> impl Iterator<Item = &'static Mutant> {
    MUTANTS.iter().filter(|mutant| mutant.quick)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::fs;

    use super::*;
    use crate::mutants::scratch::{mutate, wake_crate_dir};

    fn source(file: &str) -> String {
        fs::read_to_string(wake_crate_dir().join(file))
            .unwrap_or_else(|err| panic!("reading kernel/wake/{file}: {err}"))
    }

    /// The string literals of the loom models' sources (`tests/*.rs`,
    /// `tests/model/*.rs`), naively: the text between quotes on a line.
    fn model_literals() -> Vec<String> {
        let mut literals = Vec::new();
        for dir in ["tests", "tests/model"] {
            for entry in fs::read_dir(wake_crate_dir().join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|ext| ext == "rs") {
                    let text = fs::read_to_string(&path).unwrap();
                    for line in text.lines() {
                        literals.extend(line.split('"').skip(1).step_by(2).map(String::from));
                    }
                }
            }
        }
        literals
    }

    #[test]
    fn every_find_text_occurs_exactly_once_in_the_tree() {
        for mutant in MUTANTS {
            let text = source(mutant.file);
            let found = text.matches(mutant.find).count();
            assert_eq!(
                found, 1,
                "{}: {:?} occurs {found} times in kernel/wake/{} (the code drifted: update the catalogue)",
                mutant.name, mutant.find, mutant.file
            );
            let mutated = mutate(&text, mutant).unwrap();
            assert_ne!(
                mutated, text,
                "{}: the mutation changes nothing",
                mutant.name
            );
        }
    }

    #[test]
    fn names_are_unique_and_filled_in() {
        let mut seen = BTreeSet::new();
        for mutant in MUTANTS {
            assert!(!mutant.name.is_empty() && !mutant.file.is_empty());
            assert!(
                mutant
                    .name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}: a name is lowercase words joined by '-'",
                mutant.name
            );
            assert!(seen.insert(mutant.name), "{} twice", mutant.name);
            assert_ne!(mutant.find, mutant.replace, "{}", mutant.name);
            assert!(!mutant.killed_by.is_empty(), "{}", mutant.name);
        }
    }

    #[test]
    fn every_assertion_is_one_the_models_contain() {
        let literals = model_literals();
        for mutant in MUTANTS {
            for message in mutant.killed_by {
                assert!(
                    literals.iter().any(|literal| literal.contains(message)),
                    "{}: no model has an assertion {message:?}",
                    mutant.name
                );
            }
        }
    }

    #[test]
    fn every_model_names_a_loom_test_and_its_filter_matches() {
        for mutant in MUTANTS {
            let Model { test, filter } = mutant.model;
            let text = source(&format!("tests/{test}.rs"));
            assert!(text.contains("#![cfg(loom)]"), "{test} is not a loom test");
            if let Some(filter) = filter {
                assert!(
                    text.contains(&format!("fn {filter}")),
                    "{}: no test in {test} matches {filter:?}",
                    mutant.name
                );
            }
        }
    }

    #[test]
    fn the_helpers_a_mutation_calls_are_appended() {
        for mutant in MUTANTS {
            for (helper, defined_in) in [
                ("mutant_cas(", PARKER_CAS_SPLIT),
                ("load_then_store(", IDLE_STATE_SPLITS),
                ("store_then_old(", IDLE_STATE_SPLITS),
            ] {
                if mutant.replace.contains(helper) {
                    assert_eq!(mutant.helpers, defined_in, "{}", mutant.name);
                }
            }
            if !mutant.helpers.is_empty() {
                assert!(
                    !source(mutant.file).contains(mutant.helpers.trim()),
                    "{}",
                    mutant.name
                );
            }
        }
    }

    #[test]
    fn the_quick_subset_runs_every_model() {
        let models: BTreeSet<_> = MUTANTS.iter().map(|mutant| mutant.model).collect();
        let quick_models: BTreeSet<_> = quick().map(|mutant| mutant.model).collect();
        assert_eq!(models, quick_models);
    }
}
