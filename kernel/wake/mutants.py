#!/usr/bin/env python3
"""Mutation run for the wake protocol's `state-machine` path, the task
parker, the idle driver and its waker side: every mutant must be killed by
the model's own assertion.

Each mutation below makes one read-modify-write or ordering weaker, or
breaks one step of the protocol's or the driver's logic (skip the
re-check, commit or claim by a plain store, a waker that ignores
`Halting`, a `DontSleep` consumed by halting anyway, an unpark without its
compare-exchange, a wake IPI taken with a tick handled as the tick, a quiet
wake that ends the halt, drained work left uncounted, a notify counted
finished before its IPI, always-ipi's old plain re-check), or one step of
the stealable pool's rule (a publication that wakes nobody, a second
searcher, a busy core left in the idle set, a search not handed on or
dropped, a look without its resume, a fast path taken after a search
wake or without the registration, a ticket in flight ignored or its mark
cleared without the ticket). For each, the crate is copied to a scratch
directory, the mutation applied, and the loom models that cover it run
(`loom_protocol`'s `state_machine` or `always_ipi` tests, `loom_parker`,
`loom_steal` or one of its models), under a per-mutant timeout; the
report names the models that failed.

A mutant counts as killed only if loom failed *with the assertion named
for it* (the lost-wakeup check, the two-IPIs-for-one-halt check, the
parker's lost-wake / double-enqueue / missed-data checks, matched by their
message; the stealable pool's: stranded work, a busy core chosen to
search, the search held by a busy core while another sleeps with work
queued, two search wakes in flight to one core, a private job blocked on
a shared one, a thundering herd). A build error, a timeout, a deadlock or
any other panic is not a kill: it is reported as such and fails the run. Before any mutant, the
unmutated copy runs every model used and must pass (the baseline), so a
broken toolchain or a failing model cannot pass as a row of kills.

Mutants marked `equivalent` (with the reason) are expected to survive;
any other survivor fails the run. The last line is `killed K of N`.

The tree is never modified. Usage, from the repository root:

    python3 kernel/wake/mutants.py [--quick] [NAME ...]

`--quick` runs the subset `cargo xtask test` runs (one mutant per
assertion and per file, in CI's budget); `cargo xtask mutants` runs them
all. Needs the crates already fetched (cargo runs with --offline).
MUTANT_TIMEOUT_S (default 600) bounds one mutant's build and model run.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

CRATE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(CRATE))
TARGET = os.path.join(ROOT, "target", "loom-mutants")

# The models' assertion messages (kernel/wake/tests/model/machine.rs and
# run.rs, tests/loom_parker.rs): a kill must show one of them.
LOST_WAKEUP = "lost wakeup"
RESCUED = "work rescued unreported"
TWO_IPIS = "two IPIs for one halt"
IPI_TO_RUNNING = "IPI sent to a running core"
LOST_WAKE = "lost wake"
DOUBLE_ENQUEUE = "two enqueues of one park"
MISSED_DATA = "missed the published data"
MISSED_TASK_WRITES = "missed the task's writes"
STRANDED = "stealable work stranded"
HERD = "thundering herd"
BUSY_CHOSEN = "a core busy with pinned work chosen to search"
HELD_BY_BUSY = "search held by a busy core while another sleeps with work queued"
TWO_TICKETS = "two search wakes in flight to one core"
BLOCKED = "a private job waiting on a shared job never completes"

# (name, file, original text, mutated text, expect_pass reason or None)
MUTATIONS = [
    (
        "recheck-rmw-to-load",
        "src/inbox.rs",
        "self.len.fetch_add(0, Ordering::Release)",
        "self.len.load(Ordering::Acquire)",
        None,
    ),
    (
        "recheck-release-to-relaxed",
        "src/inbox.rs",
        "self.len.fetch_add(0, Ordering::Release)",
        "self.len.fetch_add(0, Ordering::Relaxed)",
        None,
    ),
    (
        "push-rmw-to-load-store",
        "src/inbox.rs",
        "let before = self.len.fetch_add(1, Ordering::Acquire);",
        "let before = self.len.load(Ordering::Acquire); "
        "self.len.store(before + 1, Ordering::Relaxed);",
        None,
    ),
    (
        "push-acquire-to-relaxed",
        "src/inbox.rs",
        "let before = self.len.fetch_add(1, Ordering::Acquire);",
        "let before = self.len.fetch_add(1, Ordering::Relaxed);",
        None,
    ),
    (
        "commit-cas-to-load-store",
        "src/idle_state.rs",
        "match self.compare_exchange(State::Halting, State::Halted) {",
        "match self.load_then_store(State::Halting, State::Halted) {",
        None,
    ),
    (
        "dont-sleep-cas-to-load-store",
        "src/idle_state.rs",
        "match self.compare_exchange(State::Halting, State::DontSleep) {",
        "match self.load_then_store(State::Halting, State::DontSleep) {",
        None,
    ),
    (
        "claim-cas-to-load-store",
        "src/idle_state.rs",
        "match self.compare_exchange(State::Halted, State::Running) {",
        "match self.load_then_store(State::Halted, State::Running) {",
        None,
    ),
    (
        "abort-swap-to-store",
        "src/idle_state.rs",
        "let _halting_or_dont_sleep = self.swap(State::Running);",
        "let _halting_or_dont_sleep = self.store_then_old(State::Running);",
        None,
    ),
    (
        "drain-rmw-to-load-store",
        "src/inbox.rs",
        "self.len.fetch_sub(moved, Ordering::Relaxed);",
        "let now = self.len.load(Ordering::Relaxed); "
        "self.len.store(now - moved, Ordering::Relaxed);",
        "the model's core never drains between its re-check and its commit, "
        "the one window where a plain store would break the re-check's "
        "release sequence (see inbox.rs): defensive, not exercised",
    ),
]

PARKER_MUTATIONS = [
    (
        "park-cas-to-load-store",
        "src/parker.rs",
        ".compare_exchange(EMPTY, PARKED, Ordering::Release, Ordering::Relaxed)",
        ".mutant_cas(EMPTY, PARKED, Ordering::Relaxed, Ordering::Release)",
        None,
    ),
    (
        "unpark-cas-to-load-store",
        "src/parker.rs",
        "match self.state.compare_exchange_weak(\n"
        "                current,\n"
        "                next,\n"
        "                Ordering::AcqRel,\n"
        "                Ordering::Relaxed,\n"
        "            ) {",
        "match self.state.mutant_cas(current, next, Ordering::Acquire, Ordering::Release) {",
        None,
    ),
    (
        # Only the claim (`PARKED -> EMPTY`) split: two unparkers that both
        # read `PARKED` both get `MustEnqueue`.
        "unpark-claim-to-load-store",
        "src/parker.rs",
        "PARKED => (EMPTY, Unparked::MustEnqueue),",
        "PARKED => { "
        "if self.state.load(Ordering::Acquire) == PARKED { "
        "self.state.store(EMPTY, Ordering::Release); return Unparked::MustEnqueue; } "
        "current = self.state.load(Ordering::Relaxed); continue; }",
        None,
    ),
    (
        "consume-cas-to-load-store",
        "src/parker.rs",
        ".compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)",
        ".mutant_cas(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)",
        None,
    ),
    (
        # The parker as it was in the kernel: a wake that finds a token only
        # loads it.
        "join-token-rmw-to-load",
        "src/parker.rs",
        "NOTIFIED => (NOTIFIED, Unparked::TokenLeft),",
        "NOTIFIED => return Unparked::TokenLeft,",
        None,
    ),
    (
        # The parker as it was in the kernel: a token that arrived between
        # the two attempts is consumed by a store after an Acquire read.
        "late-consume-swap-to-store",
        "src/parker.rs",
        "let token = self.state.swap(EMPTY, Ordering::Acquire);",
        "let token = self.state.load(Ordering::Acquire); "
        "self.state.store(EMPTY, Ordering::Relaxed);",
        None,
    ),
    (
        "consume-acquire-to-relaxed",
        "src/parker.rs",
        ".compare_exchange(NOTIFIED, EMPTY, Ordering::Acquire, Ordering::Relaxed)",
        ".compare_exchange(NOTIFIED, EMPTY, Ordering::Relaxed, Ordering::Relaxed)",
        None,
    ),
    (
        "late-consume-acquire-to-relaxed",
        "src/parker.rs",
        "let token = self.state.swap(EMPTY, Ordering::Acquire);",
        "let token = self.state.swap(EMPTY, Ordering::Relaxed);",
        None,
    ),
    (
        "park-release-to-relaxed",
        "src/parker.rs",
        ".compare_exchange(EMPTY, PARKED, Ordering::Release, Ordering::Relaxed)",
        ".compare_exchange(EMPTY, PARKED, Ordering::Relaxed, Ordering::Relaxed)",
        None,
    ),
    (
        "unpark-acqrel-to-acquire",
        "src/parker.rs",
        "                Ordering::AcqRel,\n",
        "                Ordering::Acquire,\n",
        None,
    ),
    (
        "unpark-acqrel-to-release",
        "src/parker.rs",
        "                Ordering::AcqRel,\n",
        "                Ordering::Release,\n",
        None,
    ),
]

# Logic mutants: one protocol step broken, not just weakened.
LOGIC_MUTATIONS = [
    (
        "skip-recheck",
        "src/idle_state.rs",
        "Policy::StateMachine | Policy::AlwaysIpi => inbox.recheck_for_halt(),",
        "Policy::StateMachine => { let _ = inbox; 0 }\n"
        "            Policy::AlwaysIpi => inbox.recheck_for_halt(),",
        None,
    ),
    (
        "commit-by-plain-store",
        "src/idle_state.rs",
        "match self.compare_exchange(State::Halting, State::Halted) {",
        "match { self.store(State::Halted); Ok::<State, State>(State::Halting) } {",
        None,
    ),
    (
        "claim-by-plain-store",
        "src/idle_state.rs",
        "match self.compare_exchange(State::Halted, State::Running) {",
        "match { self.store(State::Running); Ok::<State, State>(State::Halted) } {",
        None,
    ),
    (
        "waker-ignores-halting",
        "src/idle_state.rs",
        "State::Running => Notify::Skip(Elided::TargetRunning),",
        "State::Running | State::Halting => Notify::Skip(Elided::TargetRunning),",
        None,
    ),
    (
        "dont-sleep-consumed-by-halting",
        "src/idle_state.rs",
        "self.store(State::Running);\n                        CommitStep::DontSleep",
        "self.store(State::Halted);\n                        CommitStep::Halt",
        None,
    ),
]

# The idle driver (idle_driver.rs), the waker side (waker.rs) and the
# always-ipi finding: each breaks one step the kernel runs.
DRIVER_MUTATIONS = [
    (
        # A tick taken in the same `hlt` return as the wake IPI is taken
        # for a tick: the core re-halts with the IPI spent. Only a model
        # with a timer can fail it.
        "wake-ipi-classified-after-tick",
        "src/idle_driver.rs",
        "if after.wake != before.wake {",
        "if after.wake != before.wake && after.timer == before.timer {",
        None,
    ),
    (
        # A probe, tick or spontaneous wake that finds nothing lost ends the
        # halt instead of halting again: announced work drained unreported.
        "quiet-wake-ends-halt",
        "src/idle_driver.rs",
        "                if record.check_self(&self.platform, strict) {\n"
        "                    break Slept::lost(at);\n"
        "                }",
        "                let _ = (at, strict);\n"
        "                break Slept { cause: IdleEvent::WokeOther, lost: None, stopped: false };",
        None,
    ),
    (
        # What `woke_up` drains is not counted: the detector then takes
        # drained work for announced work still waiting (a false report).
        "woke-up-drain-uncounted",
        "src/idle_driver.rs",
        "                let drained = halted.woke_up(out);\n"
        "                if drained > 0 {\n"
        "                    record.note_drained(drained);\n"
        "                }",
        "                let drained = halted.woke_up(out);",
        None,
    ),
    (
        # The waker counts its notify finished before its IPI is sent: the
        # halted core sees announced work, no IPI sent and none pending (a
        # false report).
        "notify-finished-before-ipi",
        "src/waker.rs",
        "    if outcome.must_wake() {\n"
        "        hooks.before_ipi();\n"
        "        platform.send_wake(target);\n"
        "    }\n"
        "    record.notify_finished();",
        "    record.notify_finished();\n"
        "    if outcome.must_wake() {\n"
        "        hooks.before_ipi();\n"
        "        platform.send_wake(target);\n"
        "    }",
        None,
    ),
    (
        # The finding: always-ipi's re-check as it was, a plain load. Correct
        # only if the IPI carried the waker's writes to the woken core.
        "always-ipi-recheck-plain-load",
        "src/idle_state.rs",
        "Policy::StateMachine | Policy::AlwaysIpi => inbox.recheck_for_halt(),",
        "Policy::StateMachine => inbox.recheck_for_halt(),\n"
        "            Policy::AlwaysIpi => inbox.len(),",
        None,
    ),
    (
        "notify-finished-release-to-relaxed",
        "src/lost_wakeup.rs",
        "self.notify_finished.fetch_add(1, Ordering::Release);",
        "self.notify_finished.fetch_add(1, Ordering::Relaxed);",
        None,
    ),
]

# The stealable pool's rule (`src/steal.rs`), checked by `loom_steal`.
STEAL_MUTATIONS = [
    (
        "steal-publish-wakes-nobody",
        "src/steal.rs",
        """            shared.searching.remove(me);
            self.choose_searcher(&mut shared, me)
""",
        """            shared.searching.remove(me);
            None // MUTANT: publish wakes nobody
""",
        None,
    ),
    (
        "steal-idle-core-unregistered",
        "src/steal.rs",
        "                shared.idle.insert(searcher.me);\n",
        "",
        None,
    ),
    (
        "steal-second-searcher",
        "src/steal.rs",
        """        if !shared.searching.is_empty() {
            return None;
        }
        // The chooser's half""",
        """        // The chooser's half""",
        None,
    ),
    (
        # The work-conserving rule broken: the choice ignores the busy mark,
        # so a core running pinned work can be chosen.
        "steal-choose-busy-core",
        "src/steal.rs",
        "            if flags.busy.load(Ordering::Relaxed) == 0 {",
        "            if true { // MUTANT: busy cores not passed over",
        None,
    ),
    (
        # The rule before the work-conserving one: a registered core with no
        # search wake drained runs pinned work unmarked, without a look at
        # whether it was chosen.
        "steal-before-pinned-work-skipped",
        "src/steal.rs",
        "        if searcher.registered_idle && self.covers(searcher.me) {",
        "        if false && searcher.registered_idle && self.covers(searcher.me) {",
        None,
    ),
    (
        # The searcher that starts pinned work keeps the slot.
        "steal-no-hand-on",
        "src/steal.rs",
        """        let next = if searcher.searching {
            searcher.searching = false;
            shared.searching.remove(searcher.me);
            if shared.queue.is_empty() {""",
        """        let next = if false {
            // MUTANT: the busy searcher keeps the slot
            searcher.searching = false;
            shared.searching.remove(searcher.me);
            if shared.queue.is_empty() {""",
        None,
    ),
    (
        # The searcher that starts pinned work gives the slot up and chooses
        # nobody: the search is dropped.
        "steal-hand-on-dropped",
        "src/steal.rs",
        """            if shared.queue.is_empty() {
                None
            } else {
                self.choose_searcher(&mut shared, searcher.me)
            }""",
        """            None // MUTANT: the search is dropped, not handed on""",
        None,
    ),
    (
        # `take` does not look under the lock as a resumed core: a chosen
        # core never learns it searches, never gives the slot up.
        "steal-resume-skipped",
        "src/steal.rs",
        """        let mut shared = self.shared.lock();
        self.resume(&mut shared, searcher);
        let item = shared.queue.pop_front();""",
        """        let mut shared = self.shared.lock();
        // MUTANT: no resume
        let item = shared.queue.pop_front();""",
        None,
    ),
    (
        # The fast path taken by a core that drained a search wake: the
        # chosen core goes back to its halt holding the slot.
        "steal-fast-path-ignores-wake-seen",
        "src/steal.rs",
        """        if searcher.registered_idle
            && !searcher.search_wake_seen
            && self.mirror.queued""",
        """        if searcher.registered_idle
            && self.mirror.queued""",
        None,
    ),
    (
        # The fast path taken by a core not registered idle: it halts
        # without registering, and no publisher can choose it.
        "steal-fast-path-ignores-registration",
        "src/steal.rs",
        """        if searcher.registered_idle
            && !searcher.search_wake_seen
            && self.mirror.queued""",
        """        if !searcher.search_wake_seen
            && self.mirror.queued""",
        None,
    ),
    (
        # The busy / chosen pair without the core's fence: its load of
        # `chosen` may miss a chooser that missed its busy mark.
        "steal-busy-fence-dropped",
        "src/steal.rs",
        """                // chooser's fence.
                fence(Ordering::SeqCst);""",
        """                // chooser's fence. MUTANT: no fence""",
        None,
    ),
    (
        # The choice ignores the tickets in flight: a core whose ticket is
        # still on its way is chosen again (the stale ticket).
        "steal-stale-ticket-accepted",
        "src/steal.rs",
        "                Some(&shared.ticket_pending),\n",
        "                None, // MUTANT: tickets in flight ignored\n",
        None,
    ),
    (
        # A look that drained no ticket clears the mark anyway: a core that
        # woke for pinned work before its ticket came is chosen again.
        "steal-pending-cleared-without-ticket",
        "src/steal.rs",
        """        if searcher.search_wake_seen {
            shared.ticket_pending.remove(searcher.me);
        }""",
        """        shared.ticket_pending.remove(searcher.me); // MUTANT: unconditionally""",
        None,
    ),
]

MUTATIONS += PARKER_MUTATIONS + LOGIC_MUTATIONS + DRIVER_MUTATIONS + STEAL_MUTATIONS

# The assertions each mutant may be killed by: one symptom, sometimes seen
# through two checks (a claim that is not exclusive sends a second IPI,
# which the model sees either as the second for the halt or as one to the
# core the first IPI woke; a second enqueue of one park shows as an
# enqueuer reading an older park's note).
DOUBLE_IPI = (TWO_IPIS, IPI_TO_RUNNING)
ENQUEUED_TWICE = (DOUBLE_ENQUEUE, MISSED_TASK_WRITES)
EXPECT = {
    "recheck-rmw-to-load": LOST_WAKEUP,
    "recheck-release-to-relaxed": LOST_WAKEUP,
    "push-rmw-to-load-store": LOST_WAKEUP,
    "push-acquire-to-relaxed": LOST_WAKEUP,
    "commit-cas-to-load-store": LOST_WAKEUP,
    "dont-sleep-cas-to-load-store": LOST_WAKEUP,
    "claim-cas-to-load-store": DOUBLE_IPI,
    "abort-swap-to-store": LOST_WAKEUP,
    "drain-rmw-to-load-store": LOST_WAKEUP,
    "park-cas-to-load-store": LOST_WAKE,
    # Two unparkers' read-then-write lose one's token: a lost wake.
    "unpark-cas-to-load-store": LOST_WAKE,
    "unpark-claim-to-load-store": ENQUEUED_TWICE,
    # The token is consumed without the Acquire pairing of a successful
    # RMW read: the task runs without the waker's data.
    "consume-cas-to-load-store": MISSED_DATA,
    "join-token-rmw-to-load": (MISSED_DATA, LOST_WAKE),
    "late-consume-swap-to-store": MISSED_DATA,
    "consume-acquire-to-relaxed": MISSED_DATA,
    "late-consume-acquire-to-relaxed": MISSED_DATA,
    "park-release-to-relaxed": MISSED_TASK_WRITES,
    "unpark-acqrel-to-acquire": MISSED_DATA,
    "unpark-acqrel-to-release": MISSED_TASK_WRITES,
    "skip-recheck": LOST_WAKEUP,
    "commit-by-plain-store": LOST_WAKEUP,
    "claim-by-plain-store": DOUBLE_IPI,
    "waker-ignores-halting": LOST_WAKEUP,
    "dont-sleep-consumed-by-halting": LOST_WAKEUP,
    "wake-ipi-classified-after-tick": LOST_WAKEUP,
    "quiet-wake-ends-halt": RESCUED,
    "woke-up-drain-uncounted": LOST_WAKEUP,
    "notify-finished-before-ipi": LOST_WAKEUP,
    "always-ipi-recheck-plain-load": LOST_WAKEUP,
    "notify-finished-release-to-relaxed": LOST_WAKEUP,
    "steal-publish-wakes-nobody": STRANDED,
    "steal-idle-core-unregistered": STRANDED,
    "steal-second-searcher": HERD,
    "steal-choose-busy-core": BUSY_CHOSEN,
    "steal-before-pinned-work-skipped": BUSY_CHOSEN,
    "steal-no-hand-on": HELD_BY_BUSY,
    "steal-hand-on-dropped": BLOCKED,
    "steal-resume-skipped": STRANDED,
    "steal-fast-path-ignores-wake-seen": STRANDED,
    "steal-fast-path-ignores-registration": STRANDED,
    "steal-stale-ticket-accepted": TWO_TICKETS,
    "steal-pending-cleared-without-ticket": TWO_TICKETS,
    "steal-busy-fence-dropped": BUSY_CHOSEN,
}

# What `cargo xtask test` runs: each assertion, each mutated file, and the
# logic mutants that are cheapest to kill.
QUICK = [
    "recheck-release-to-relaxed",
    "push-acquire-to-relaxed",
    "claim-cas-to-load-store",
    "skip-recheck",
    "commit-by-plain-store",
    "waker-ignores-halting",
    "dont-sleep-consumed-by-halting",
    "unpark-claim-to-load-store",
    "park-cas-to-load-store",
    "consume-acquire-to-relaxed",
    "wake-ipi-classified-after-tick",
    "quiet-wake-ends-halt",
    "notify-finished-before-ipi",
    "always-ipi-recheck-plain-load",
    "steal-publish-wakes-nobody",
    "steal-idle-core-unregistered",
    "steal-second-searcher",
    "steal-no-hand-on",
    "steal-stale-ticket-accepted",
    "steal-busy-fence-dropped",
]

TIMEOUT_S = int(os.environ.get("MUTANT_TIMEOUT_S", "600"))

# Which loom test checks each mutated file: (test binary, name filter).
MODELS = {
    "src/inbox.rs": ("loom_protocol", "state_machine"),
    "src/idle_state.rs": ("loom_protocol", "state_machine"),
    "src/parker.rs": ("loom_parker", None),
    "src/idle_driver.rs": ("loom_protocol", "state_machine"),
    "src/waker.rs": ("loom_protocol", "state_machine"),
    "src/lost_wakeup.rs": ("loom_protocol", "state_machine"),
    "src/steal.rs": ("loom_steal", None),
}

# Mutants checked by other models than their file's.
MODEL_OF_MUTANT = {
    "always-ipi-recheck-plain-load": ("loom_protocol", "always_ipi"),
    # The stealable pool's mutants, each run against the one model that
    # reaches its step (seconds, not the whole `loom_steal` binary).
    "steal-choose-busy-core": ("loom_steal", "busy_core_is_never_chosen"),
    "steal-before-pinned-work-skipped": ("loom_steal", "busy_core_is_never_chosen"),
    "steal-no-hand-on": ("loom_steal", "chosen_core_with_a_job_waiting"),
    "steal-hand-on-dropped": ("loom_steal", "chosen_core_with_a_job_waiting"),
    "steal-stale-ticket-accepted": ("loom_steal", "held_ticket"),
    "steal-pending-cleared-without-ticket": ("loom_steal", "held_ticket"),
    "steal-busy-fence-dropped": ("loom_steal", "busy_core_is_never_chosen"),
    "steal-resume-skipped": ("loom_steal", "producer_two_publications_two_cores"),
    "steal-fast-path-ignores-wake-seen": ("loom_steal", "producer_two_publications_two_cores"),
    "steal-fast-path-ignores-registration": (
        "loom_steal",
        "producer_two_publications_two_cores",
    ),
}


def model_of(name, path):
    return MODEL_OF_MUTANT.get(name, MODELS[path])

# Helpers the parker mutations call: a compare-exchange split into a load
# and a store (with the given orderings), on the parker's atomic.
PARKER_HELPERS = """
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
"""

# Helpers the mutations call, appended to `impl IdleState`.
HELPERS = """
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
"""


def standalone_manifest(text):
    """The crate's manifest with workspace inheritance replaced."""
    text = re.sub(r"^version\.workspace = true$", 'version = "0.0.0"', text, flags=re.M)
    text = re.sub(r"^edition\.workspace = true$", 'edition = "2024"', text, flags=re.M)
    text = re.sub(r"^(license|publish)\.workspace = true\n", "", text, flags=re.M)
    text = text.replace(
        "[lints]\nworkspace = true\n",
        '[lints.rust]\nunexpected_cfgs = { level = "warn", check-cfg = ["cfg(loom)"] }\n',
    )
    return text + "\n[workspace]\n\n[profile.release]\ndebug = false\n"


def scratch_copy(name):
    """A standalone copy of the crate in a scratch directory."""
    scratch = tempfile.mkdtemp(prefix=f"wake-mutant-{name}-")
    # `shutil.copy`, not `copy2`: fresh modification times, so cargo
    # rebuilds from this copy. With the originals' times preserved, a copy
    # whose files are all older than the last build in the shared target
    # directory reuses that build: the previous mutant's binary (seen: a
    # baseline run that failed with the last mutant's lost wakeup).
    shutil.copytree(
        CRATE,
        scratch,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("target"),
        copy_function=shutil.copy,
    )
    manifest = os.path.join(scratch, "Cargo.toml")
    with open(manifest) as f:
        text = f.read()
    with open(manifest, "w") as f:
        f.write(standalone_manifest(text))
    lock = os.path.join(ROOT, "Cargo.lock")
    if os.path.exists(lock):
        shutil.copy(lock, os.path.join(scratch, "Cargo.lock"))
    return scratch


def run_model(scratch, test, name_filter):
    """Runs one loom test binary in `scratch`: (status, seconds, output),
    status one of passed, failed, build-failed, timeout."""
    env = dict(os.environ)
    env["RUSTFLAGS"] = "--cfg loom"
    env["RUST_BACKTRACE"] = "0"
    filters = [name_filter] if name_filter else []
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [
                "cargo", "test", "--offline", "--release", "--quiet",
                "--target-dir", TARGET,
                "--test", test, "--", *filters, "--test-threads=1",
            ],
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode(errors="replace") if isinstance(err.stdout, bytes) else (err.stdout or "")
        return "timeout", time.monotonic() - started, out
    seconds = time.monotonic() - started
    output = proc.stdout + proc.stderr
    if proc.returncode == 0:
        return "passed", seconds, output
    if "error[E" in output or "could not compile" in output:
        return "build-failed", seconds, output
    return "failed", seconds, output


def failed_tests(output):
    """The names of the tests a cargo test run lists as failed."""
    # `--quiet` prints no per-test lines; the summary ends with a
    # `failures:` block listing each failed test, indented.
    blocks = re.findall(r"^failures:\n((?:    \S+\n)+)", output, flags=re.M)
    return sorted({name.strip() for block in blocks for name in block.splitlines()})


def panic_messages(output):
    return sorted(set(re.findall(r"panicked at [^\n]*\n([^\n]*)", output)))


def baseline(models):
    """Runs every model on the unmutated copy; returns the failures."""
    scratch = scratch_copy("baseline")
    failures = []
    try:
        for test, name_filter in sorted(models, key=str):
            status, seconds, output = run_model(scratch, test, name_filter)
            print(f"baseline {test} {name_filter or '(all)'}: {status} in {seconds:.0f}s", flush=True)
            if status != "passed":
                failures.append(f"{test}: {status}: {output[-1500:]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return failures


def run_mutant(name, path, old, new):
    """(verdict, detail): killed, wrong-failure, survived, not-applied,
    build-failed or timeout."""
    scratch = scratch_copy(name)
    try:
        source = os.path.join(scratch, path)
        with open(source) as f:
            text = f.read()
        if text.count(old) != 1:
            return "not-applied", f"{old!r} found {text.count(old)} times"
        text = text.replace(old, new)
        if path.endswith("idle_state.rs"):
            text += HELPERS
        if "mutant_cas" in new:
            text += PARKER_HELPERS
        with open(source, "w") as f:
            f.write(text)
        test, name_filter = model_of(name, path)
        status, seconds, output = run_model(scratch, test, name_filter)
        if status == "passed":
            return "survived", f"{seconds:.0f}s"
        if status in ("build-failed", "timeout"):
            return status, f"{seconds:.0f}s: {output[-1500:]}"
        panics = panic_messages(output)
        want = EXPECT[name]
        want = want if isinstance(want, tuple) else (want,)
        failed = failed_tests(output)
        detail = f"{seconds:.0f}s, failed {', '.join(failed) or '?'}: " + (
            "; ".join(panics) or output[-500:]
        )
        if any(w in message for message in panics for w in want):
            return "killed", detail
        return "wrong-failure", f"expected {want!r}; {detail}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    args = sys.argv[1:]
    quick = "--quick" in args
    wanted = {arg for arg in args if arg != "--quick"}
    if quick:
        wanted |= set(QUICK)
    chosen = [m for m in MUTATIONS if not wanted or m[0] in wanted]
    unknown = wanted - {m[0] for m in MUTATIONS}
    if unknown:
        print(f"unknown mutant(s): {sorted(unknown)}", file=sys.stderr)
        return 2
    models = {model_of(name, path) for name, path, _, _, _ in chosen}
    failures = baseline(models)
    if failures:
        for failure in failures:
            print(f"BASELINE FAILED: {failure}")
        print(f"killed 0 of {len(chosen)} (the unmutated models do not pass: nothing is measured)")
        return 1
    killed = 0
    bad = 0
    for name, path, old, new, equivalent in chosen:
        verdict, detail = run_mutant(name, path, old, new)
        if verdict == "killed":
            killed += 1
            mark = "killed  "
        elif verdict == "survived" and equivalent:
            mark = "equiv.  "
        else:
            bad += 1
            mark = verdict.upper() + " "
        print(f"{mark}{name}: {detail}", flush=True)
        if equivalent:
            print(f"      documented as equivalent: {equivalent}", flush=True)
    print(f"killed {killed} of {len(chosen)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
