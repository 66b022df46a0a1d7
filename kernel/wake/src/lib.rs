//! Vigil's wake protocol: how an idle core (or worker thread) goes to
//! sleep, and how whoever gives it work decides whether to wake it, without
//! ever losing a wakeup and without sending a wake nobody needs.
//!
//! Portable and `no_std` (it needs `alloc`), free of `unsafe`, and tested on
//! the host. Built with `RUSTFLAGS="--cfg loom"` the same code runs on loom's
//! model-checked atomics and mutex (the switch is the private `sync` module).
//! In the kernel a "wake" is an IPI and "sleep" is `sti; hlt`; in the
//! `pool` (feature `std`) they are `Thread::unpark` and `park`.
//!
//! Features: `std` (the locks are std's mutex, which a descheduled waiter
//! cannot hold up, and the `pool` module), `fault-fixtures` (the `racy-flag`
//! policy, a lost-wakeup bug kept for detectors to catch), `test-hooks`
//! (`CoreWake::send_with` and the debug addresses a host-side detector
//! reads).
//!
//! # What the scheduler calls
//!
//! One [`CoreWake<T>`] per core (`T` is a task handle): its idle state, its
//! [`Inbox`] of work only it may run, and its [`Counters`].
//!
//! A **waker** giving core `t` a task, from core `me`, sends the wake signal
//! when the protocol says so (after `send` returns); a producer that is not
//! a core uses [`CoreWake::submit`] with counters of its own:
//!
//! ```
//! use vigil_wake::{CoreWake, Policy};
//!
//! let cores: Vec<CoreWake<&str>> = (0..2).map(|_| CoreWake::new(Policy::StateMachine)).collect();
//! let mut wakes_sent = Vec::new();
//! let (me, t) = (0, 1);
//! let outcome = cores[t].send("task", &cores[me]);
//! if outcome.must_wake() {
//!     wakes_sent.push(t); // the kernel: the wake IPI to `t`
//! }
//! // Core 1 is running (it never prepared to halt): no wake needed.
//! assert!(wakes_sent.is_empty());
//! ```
//!
//! The **idle loop** of core `me` is [`IdleDriver`], generic over the
//! machine ([`Platform`]: sleep, the interrupt counts, the wake signal, the
//! one-shot timer, the clock) and over the caller's hooks ([`IdleHooks`]:
//! history, chaos, statistics, the lost-wakeup report), so the loom models
//! run the very loop the kernel and the `pool` run. A waker uses
//! [`wake_core`], which pushes, decides, sends the wake through the platform
//! and keeps the lost-wakeup detector's counts. A toy one-core platform
//! whose sleep always ends on a wake:
//!
//! ```
//! use std::cell::Cell;
//! use std::collections::VecDeque;
//! use vigil_wake::{
//!     BackoffMode, CoreWake, DriverConfig, Idle, IdleDriver, InterruptCounts, NoHooks,
//!     Platform, Policy, Resume,
//! };
//!
//! struct OneCore {
//!     wakes: Cell<u64>,
//! }
//! impl Platform for OneCore {
//!     fn core(&self) -> usize { 0 }
//!     fn sleep(&self) -> Resume {
//!         self.wakes.set(self.wakes.get() + 1); // pretend a wake arrived
//!         Resume::Interrupted
//!     }
//!     fn interrupt_counts(&self) -> InterruptCounts {
//!         InterruptCounts { wake: self.wakes.get(), probe: 0, timer: 0 }
//!     }
//!     fn wake_pending(&self) -> bool { false }
//!     fn send_wake(&self, _target: usize) {}
//!     fn send_probe(&self, _target: usize) {}
//!     fn wakes_sent_to(&self, _target: usize) -> u64 { self.wakes.get() }
//!     fn arm_oneshot_us(&self, _us: u64) {}
//!     fn now_ticks(&self) -> u64 { 0 }
//!     fn us_to_ticks(&self, us: u64) -> u64 { us }
//!     fn ticks_to_us(&self, ticks: u64) -> u64 { ticks }
//! }
//!
//! let cores = [CoreWake::<u32>::new(Policy::StateMachine)];
//! let config = DriverConfig { backoff: BackoffMode::Off, watchdog_tick_us: None };
//! let mut driver = IdleDriver::new(&cores, OneCore { wakes: Cell::new(0) }, NoHooks, config);
//! let mut batch = VecDeque::new();
//! // Nothing to run: poll (no budget), prepare, re-check, commit, sleep,
//! // woken, back to running.
//! assert_eq!(driver.idle(&mut batch), Idle::Ready);
//! assert_eq!(cores[0].counters().snapshot().halts, 1);
//! ```
//!
//! Under the driver are the protocol's steps, usable on their own (here on
//! one thread, the wake played by hand):
//!
//! ```
//! use std::collections::VecDeque;
//! use vigil_wake::{Commit, CoreWake, Policy};
//!
//! let cores: Vec<CoreWake<u32>> = (0..2).map(|_| CoreWake::new(Policy::StateMachine)).collect();
//! let mut batch = VecDeque::new();
//! let me = &cores[1];
//! assert_eq!(me.drain_into(&mut batch), 0); // nothing to run
//! match me.prepare_to_halt().try_halt() {
//!     Commit::Halt(halted) => {
//!         // A waker on core 0 gives core 1 work and is told to wake it.
//!         assert!(cores[1].send(42, &cores[0]).must_wake());
//!         // The kernel: `sti; hlt` here, ended by that wake.
//!         assert_eq!(halted.woke_up(&mut batch), 1);
//!     }
//!     Commit::WorkArrived | Commit::DontSleep | Commit::Poll => unreachable!(),
//! }
//! assert_eq!(batch.pop_front(), Some(42));
//! ```
//!
//! # The platform contract
//!
//! What the driver assumes of the machine is in [`Platform`]'s module (the
//! loom model machine gives it all of that and no more, with one
//! exception: its wake IPI is pending the moment it is sent, so the late
//! pending bit below is not modelled): `sti; hlt` atomic with
//! respect to interrupts (a latched interrupt ends the `hlt` at once);
//! interrupts latched per vector and coalescing; **an IPI carries no
//! memory** (nothing the woken core reads is ordered by the IPI; the
//! protocol's atomics order it, and the model gives loom no edge from
//! sender to receiver); an IPI's pending bit may appear after the send
//! returned (the detector trusts the sent count); the one-shot timer is
//! spent once it fired and may fire at any point while armed; halts may
//! end for unrelated interrupts.
//!
//! The idle side's steps are single-use tokens ([`HaltAttempt`], [`Armed`],
//! [`Halted`]) so they can only be taken in order; [`HaltAttempt::recheck`]
//! and [`Armed::commit`] split [`HaltAttempt::try_halt`] for a caller that
//! wants to look at other work between the two. A core does not `send` to
//! itself to wake its own tasks (it may: that is counted and never asks for
//! an IPI); it simply drains before it can halt.
//!
//! # The protocol (policy `state-machine`)
//!
//! Per core, one atomic [`State`]: `Running`, `Halting`, `Halted`,
//! `DontSleep`.
//!
//! Idle core, interrupts disabled from the re-check to the `hlt`:
//! 1. drain the inbox, run what is there;
//! 2. `Running -> Halting` ([`CoreWake::prepare_to_halt`]), then re-check
//!    the inbox ([`HaltAttempt::recheck`]); work: back to `Running`, loop;
//! 3. `Halting -> Halted` by compare-exchange ([`Armed::commit`]); if a
//!    waker wrote `DontSleep` meanwhile the exchange fails: back to
//!    `Running`, loop, no halt and no IPI;
//! 4. `sti; hlt`; when it returns, back to `Running` ([`Halted::woke_up`]).
//!
//! Waker, after pushing into the target's inbox ([`CoreWake::send`] does
//! both): read the target's state once, then
//! - `Running`: nothing (it re-checks before it can halt);
//! - `Halting`: compare-exchange to `DontSleep`, no IPI (if the exchange
//!   finds `Halted`, claim instead);
//! - `Halted`: claim it, `Halted -> Running` by compare-exchange; the waker
//!   whose exchange succeeds sends the one IPI, any other sends nothing;
//! - `DontSleep`: nothing (another waker already told it).
//!
//! And if the push found the inbox non-empty, the waker does not even read
//! the state: whoever made the inbox non-empty notifies, and the drain that
//! takes that item takes this one.
//!
//! ## The invariant
//!
//! **If work is in a core's inbox, that core is not `Halted` without an IPI
//! in flight** — once every waker that pushed has returned from its
//! [`CoreWake::send`] and sent the IPI it was told to. Equivalently: no
//! execution ends with a core asleep on work. Also: no halt gets two IPIs
//! (the claim is a compare-exchange), and no IPI goes to a core that is
//! running (the only IPI is sent after claiming a `Halted` core, and a
//! `Halted` core is in its halt window until it wakes).
//!
//! ## Memory ordering
//!
//! The bug class is the **store-buffering** pattern. The idle core *writes*
//! "I am halting" and then *reads* the inbox; the waker *writes* the inbox
//! and then *reads* the core's state. With plain stores and loads, each read
//! may miss the other side's write (a store may sit in a store buffer while
//! the later load executes; in the language model, neither write
//! happens-before the other side's read), so the core sees an empty inbox
//! and halts while the waker sees a running core and sends nothing. The
//! `racy-flag` fixture is worse: its flag is not even written before the
//! check. Closing
//! the pattern needs, on *both* sides, either a full fence between the write
//! and the read or a read-modify-write that orders them.
//!
//! This crate closes it with two read-modify-writes on the **same** atomic,
//! the inbox's item count:
//!
//! * idle core: store `Halting` (Relaxed), then **re-check = `fetch_add(0)`,
//!   Release** on the count;
//! * waker: push under the lock, **`fetch_add(1)`, Acquire** on the count,
//!   then load the state (Relaxed).
//!
//! Two RMWs on one atomic are totally ordered, and each reads the newest
//! value. If the re-check comes first, the push's RMW reads from it (or from
//! a later RMW in its release sequence: every change to the count is an RMW,
//! see [`Inbox`]), so Release/Acquire make the core's `Halting` store
//! happen-before the waker's state load, which therefore reads `Halting` or
//! something later, and acts on it. If the push comes first, the re-check
//! reads its increment and the core does not halt. No interleaving lets both
//! miss. On x86 both are `lock`ed instructions (or, for the idempotent
//! re-check, possibly a fence and a load), which drain the store buffer: no
//! extra fence on the waker's path, so `send` to a running core costs
//! exactly one read of its state and no write to it.
//!
//! The state atomic itself needs no ordering, only atomicity:
//!
//! | operation | side | ordering | why |
//! |---|---|---|---|
//! | re-check `count.fetch_add(0)` | idle | Release, RMW | heads the release sequence the push acquires: publishes `Halting` |
//! | push `count.fetch_add(1)` | waker | Acquire, RMW | pairs with the re-check's Release; RMW so it reads the newest count |
//! | drain `count.fetch_sub(n)` | idle | Relaxed, RMW | exact count; keeps release sequences unbroken |
//! | `state.store(Halting)` (prepare) | idle | Relaxed | published by the re-check's Release |
//! | `state.load()` (notify) | waker | Relaxed | ordered after the push by its Acquire |
//! | `Halting -> Halted` compare-exchange (commit) | idle | Relaxed | must be an RMW: a store would overwrite a waker's `DontSleep` |
//! | `Halting -> DontSleep` compare-exchange | waker | Relaxed | must be an RMW: a store could overwrite `Halted`, and nobody would IPI |
//! | `Halted -> Running` compare-exchange (claim) | waker | Relaxed | must be an RMW: with a store every waker would IPI |
//! | `state.swap(Running)` (abort: re-check found work) | idle | Relaxed | consumes a `DontSleep` the core has not read; a swap for loom's sake (below) |
//! | `state.swap(Running)` (woke up) | idle | Relaxed | writes over a claim the core has not read (the IPI carries no memory); a swap for loom's sake (below) |
//! | `state.store(Running)` (`DontSleep` consumed) | idle | Relaxed | no waker writes from `Running`; a stale read is safe (below) |
//!
//! The abort is a swap although a store would be correct under the C++
//! model: a waker's compare-exchange write immediately follows the write it
//! read, so the core's later store is after it in modification order. Loom's
//! modification order does not derive that for a store over a write the
//! storing thread never read, and reports a waker reading that stale
//! `DontSleep` after the core's next `Halting`; the swap makes the core read
//! it, for one locked exchange on a path that is about to run work anyway.
//! The wake-up is a swap for the same reason: the claim that ended the
//! halt is a waker's write the woken core never read, since the model's
//! IPI carries no memory (with a store, loom let the next commit read the
//! stale claim).
//!
//! The detector's own atomics ([`LostWakeupRecord`]) are argued next to
//! each in `lost_wakeup.rs`: the wakers' `notify_finished` is Release and
//! every check's load of it Acquire, so a core or the watchdog that counts
//! a waker finished also sees its push and its IPI count; the halt's
//! episode is a Release store the watchdog's scan acquires.
//!
//! Why a waker may act on a stale state: its read is never older than the
//! core's `Halting` of the episode whose re-check missed the push (above). A
//! `Running` written *after* that is either a claim by another waker (whose
//! IPI makes the core wake, drain, and re-check again, after this push) or
//! the core's own abort or wakeup, after which the core re-checks again
//! before any halt, and that re-check is after this push (otherwise this
//! push would have acquired the later `Halting`). The work itself is handed
//! over by the inbox lock and the count's RMWs, not by the IPI (which
//! carries no memory, see the platform contract): a woken core whose drain
//! still reads the old count halts only after a re-check, whose RMW reads
//! the newest one. The sender must still not let the IPI overtake the push
//! (see [`CoreWake::send`]), or the halt it ends could come before the push.
//!
//! The loom model checks all of this (`tests/loom_*.rs`, the machine in
//! `tests/model/machine.rs`): [`IdleDriver`] and [`wake_core`] themselves,
//! with one to three wakers and one to three items, halts that end on
//! timer ticks and spontaneous wakes racing late claims, the detector on
//! and off, a poll budget; it passes for `state-machine` and `always-ipi`
//! and fails, as asserted, for `racy-flag`. With the IPI no longer
//! synchronising, it found `always-ipi`'s plain re-check losing a wakeup
//! (now the same RMW as `state-machine`'s; see `idle_state.rs`).
//! The mutation run (`cargo xtask mutants`; its mutants are a table in
//! `xtask/src/mutants/catalogue.rs`) weakens each RMW and ordering of the
//! table in turn, breaks steps of the driver and the waker side, and
//! expects loom to fail with the assertion named for each; the documented
//! survivors are the drain's
//! `fetch_sub`, which the model cannot reach in the one window where it
//! matters (a drain between re-check and commit; see [`Inbox`]'s source).
//!
//! # The task parker
//!
//! [`Parker`] is the other lock-free protocol on the wake path: one wake
//! token per task, as in `std::thread::park`. The task calls
//! [`Parker::try_consume_or_park`] (a token: run on; otherwise it is now
//! parked and switches away); a waker calls [`Parker::unpark`], which leaves
//! a token or returns [`Unparked::MustEnqueue`] to exactly one unparker per
//! park. Its ordering argument is in its module (`parker.rs`, next to each
//! atomic); `tests/loom_parker.rs` model-checks it (no lost wake, one
//! enqueue per park, a consumed token carries the waker's data), and
//! the mutation run weakens each of its RMWs and orderings in turn and
//! expects loom to fail.
//!
//! # Policies
//!
//! See [`Policy`]: `state-machine` (above, the default), `always-ipi`,
//! `racy-flag` (the lost-wakeup bug, a fault-injection fixture only, feature
//! `fault-fixtures`) and `poll`.

#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;
// Tests use `std`; so does loom, whose mutex reports `std::sync` errors,
// and so do the hosted lock and the thread pool (feature `std`).
#[cfg(any(test, loom, feature = "std"))]
extern crate std;

mod backoff;
mod core_set;
mod core_wake;
mod counters;
mod idle_driver;
mod idle_hooks;
mod idle_state;
mod inbox;
#[cfg(feature = "std")]
mod join_state;
mod lost_wakeup;
mod notify;
mod outside_queue;
mod parker;
mod platform;
mod policy;
#[cfg(all(feature = "std", not(loom)))]
pub mod pool;
mod state;
mod steal;
mod sync;
mod waker;

#[cfg(all(test, not(loom)))]
mod tests;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use backoff::{
    Backoff, BackoffMode, MAX_SPIN_US, PollOutcome, STEAL_COOLDOWN_FIRST_HALTS,
    STEAL_COOLDOWN_MAX_HALTS, STEAL_GAP_US,
};
pub use core_set::CoreSet;
pub use core_wake::{Armed, Commit, CoreWake, HaltAttempt, Halted, Recheck};
pub use counters::{CounterSnapshot, Counters};
pub use idle_driver::{DriverConfig, Idle, IdleDriver};
pub use idle_hooks::{FoundAt, IdleEvent, IdleHooks, NoHooks, WakerHooks};
pub use inbox::{Inbox, Pushed};
#[cfg(feature = "std")]
pub use join_state::{JoinState, JoinerClaim};
pub use lost_wakeup::{LostWakeupCounts, LostWakeupRecord, scan_from, stalled_wakers};
pub use notify::{Elided, Notify, NotifyOutcome};
pub use parker::{Parker, Unparked};
pub use platform::{InterruptCounts, Platform, Resume};
pub use policy::{Policy, UnknownPolicy};
pub use state::State;
pub use steal::{
    FAN_OUT, Glance, Published, Searcher, StealSnapshot, Stealable, StrandWatch, Stranded, Woken,
};
pub use waker::wake_core;
