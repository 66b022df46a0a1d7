#!/usr/bin/env python3
"""Mutation check for the wake protocol's `state-machine` path and the task
parker.

The idle core's other writes to the state (prepare's `Halting`, `Running`
after a `DontSleep` or a wakeup) are plain stores: as swaps, turning them
back into stores left loom passing, so they were made stores.

For each mutation below (one read-modify-write or ordering in the
state-machine path or in the parker made weaker), copy the crate to a
scratch directory, apply the mutation, run the loom model that covers the
mutated file (`loom_protocol`'s `state_machine` tests, or `loom_parker`),
and report whether loom failed and with what. Every mutation is expected to make the
model fail except those marked `expect_pass` (with the reason).

The tree is never modified. Usage, from the repository root:

    python3 kernel/wake/mutants.py [NAME ...]

Takes a few minutes on two cores (one release build per mutant). Needs the
crates already fetched (it runs cargo with --offline).
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

MUTATIONS += PARKER_MUTATIONS

# Which loom test checks each mutated file: (test binary, name filter).
MODELS = {
    "src/inbox.rs": ("loom_protocol", "state_machine"),
    "src/idle_state.rs": ("loom_protocol", "state_machine"),
    "src/parker.rs": ("loom_parker", None),
}

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


def run_mutant(name, path, old, new):
    scratch = tempfile.mkdtemp(prefix=f"wake-mutant-{name}-")
    try:
        shutil.copytree(
            CRATE, scratch, dirs_exist_ok=True, ignore=shutil.ignore_patterns("target")
        )
        manifest = os.path.join(scratch, "Cargo.toml")
        with open(manifest) as f:
            text = f.read()
        with open(manifest, "w") as f:
            f.write(standalone_manifest(text))
        lock = os.path.join(ROOT, "Cargo.lock")
        if os.path.exists(lock):
            shutil.copy(lock, os.path.join(scratch, "Cargo.lock"))
        source = os.path.join(scratch, path)
        with open(source) as f:
            text = f.read()
        if text.count(old) != 1:
            return "MUTATION NOT APPLIED", f"{old!r} found {text.count(old)} times"
        text = text.replace(old, new)
        if path.endswith("idle_state.rs"):
            text += HELPERS
        if "mutant_cas" in new:
            text += PARKER_HELPERS
        with open(source, "w") as f:
            f.write(text)
        env = dict(os.environ)
        env["RUSTFLAGS"] = "--cfg loom"
        env["RUST_BACKTRACE"] = "0"
        started = time.monotonic()
        test, name_filter = MODELS[path]
        filters = [name_filter] if name_filter else []
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
        )
        seconds = time.monotonic() - started
        output = proc.stdout + proc.stderr
        if proc.returncode == 0:
            return "loom PASSED", f"{seconds:.0f}s"
        if "error[E" in output or "could not compile" in output:
            return "BUILD FAILED", output[-2000:]
        failing = re.findall(r"^    (\w+)$", output, flags=re.M)
        panics = re.findall(r"panicked at [^\n]*\n([^\n]*)", output)
        detail = "; ".join(sorted(set(panics))) or output[-500:]
        return "loom FAILED", f"{seconds:.0f}s, tests {failing}: {detail}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    wanted = set(sys.argv[1:])
    unexpected = 0
    for name, path, old, new, expect_pass in MUTATIONS:
        if wanted and name not in wanted:
            continue
        verdict, detail = run_mutant(name, path, old, new)
        expected = "loom PASSED" if expect_pass else "loom FAILED"
        mark = "ok  " if verdict == expected else "BAD "
        unexpected += verdict != expected
        print(f"{mark}{name}: {verdict} ({detail})", flush=True)
        if expect_pass:
            print(f"      expected to pass: {expect_pass}", flush=True)
    print(f"{unexpected} unexpected result(s)")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
