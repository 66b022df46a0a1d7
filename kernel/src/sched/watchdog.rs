//! The in-guest lost-wakeup detector. It needs no timing slack: it never
//! asks how long a task waited, only whether work was *announced* to a
//! halted core (the waker finished its whole notify: push, state read,
//! decision, IPI if any) while no wake IPI ended or is pending to end that
//! core's halt. Such a core sleeps on its work until something unrelated
//! wakes it: a lost wakeup, whatever the policy, whatever the cause (a
//! racy policy, a dropped IPI, an IPI sent to the wrong core, a broken
//! `send_icr`).
//!
//! # The counts it decides on
//!
//! Per core `T`:
//! - `notify_started[T]` / `notify_finished[T]`: wakers that began (before
//!   the push) and finished (after the IPI they sent, if any; Release)
//!   notifying `T`;
//! - `drained[T]`: items `T` took from its inbox (written by `T` only);
//! - `wake_ipi::sent_to(T)`: wake IPIs written to an ICR for `T`;
//! - `T`'s interrupt counts (`COUNTS`, bumped by `T`'s handlers) and its
//!   `IRR` bit for the wake vector (only `T` can read it).
//!
//! Each waker pushes one item, so `notify_finished > drained` means at least
//! one item whose waker has finished is still in the inbox; with
//! `notify_started == notify_finished` no waker that might still announce it
//! (a push onto a non-empty inbox leaves that to the earlier waker) is in
//! flight. A core that sees both about itself while it is halted (or about
//! to halt), with no wake IPI taken or sent to it since its halt path began
//! and none pending, has lost a wakeup.
//!
//! # Who checks, and when
//!
//! - **Every core, at its halt** (after the commit, before `sti; hlt`): if
//!   work was announced, no wake IPI was sent to it since its halt path
//!   began (the per-destination ICR count), and none is pending, it reports
//!   instead of halting. This catches a waker that acted on a stale view of
//!   the core (the racy flag: the waker read "not halting" after the core's
//!   inbox check and before its flag) at the moment it matters,
//!   deterministically under the chaos holds.
//! - **The watchdog core** ([`WATCHDOG_CORE`]), on a scan tick every
//!   `watchdog=MS` (its LAPIC one-shot, re-armed once it has fired
//!   and only on that core): it reads every halted core's record and
//!   counts. A core that is halted with announced work and no wake IPI sent
//!   to it since its halt began (or the same picture two scans in a row) is
//!   sent a *probe* IPI (its own vector, below the wake vector's priority).
//!   The probe ends the halt; the core checks itself as above, with its own
//!   interrupt counts and `IRR`, and reports or (if a wake IPI is on its way)
//!   does not. The watchdog core checks itself on its own tick. This
//!   catches what happens after a core halted: a claim with no IPI, an IPI
//!   to the wrong core.
//! - **Any core woken by something other than a wake IPI** (a probe, the
//!   tick, a stray interrupt) checks itself and, unless it finds a lost
//!   wakeup, halts again without draining: only a wake IPI or a report
//!   ends a halt, so no other wake rescues announced work unreported.
//!
//! A waker that is between its push and its notify is never mistaken for a
//! lost wakeup, however long the host deschedules it: its item is not
//! counted until it finishes. Nothing is added to any halt path but a few
//! loads and stores of the core's own record (no timer is armed per halt;
//! only the watchdog core has a timer at all).
//!
//! What it does not see: announced work that another, later wake IPI ends
//! the halt for before any check runs (a lost wakeup rescued by an unrelated
//! wake). The core cannot tell, from counts, which of the two wakers its
//! IPI came from. Under `state-machine` that later IPI cannot exist (a
//! waker claims, and sends, only after a push that found the inbox empty),
//! so the case needs a policy whose wakers send regardless (`always-ipi`,
//! `racy-flag`); it shows as a latency outlier. A waker-side check before
//! each IPI could mark it; it was tried and left out because no workload
//! here produces the case, so nothing could show that check failing.
//!
//! `watchdog=off` leaves every core tickless and turns every check off: a
//! lost wakeup is then a real hang, for the host-side detector (`xtask`) to
//! examine.

use super::idle_history::HISTORIES;
use super::round_watch;
use super::task::TaskRef;
use super::wake_ipi;
use crate::arch::interrupt_vectors::{COUNTS, WAKE_VECTOR};
use crate::arch::{lapic, tsc};
use crate::println;
use crate::smp::cores::{self, MAX_CORES};
use alloc::collections::VecDeque;
use core::sync::atomic::{AtomicU64, Ordering};

/// Default scan period of the watchdog core.
pub const DEFAULT_WATCHDOG_MS: u32 = 20;

/// The core that scans the others.
pub const WATCHDOG_CORE: usize = 0;

static WATCHDOG_MS: AtomicU64 = AtomicU64::new(0);
static LOST_WAKEUPS: AtomicU64 = AtomicU64::new(0);
static PROBES_SENT: AtomicU64 = AtomicU64::new(0);

/// Sets the scan period (0: off).
pub fn configure(watchdog_ms: u32) {
    WATCHDOG_MS.store(u64::from(watchdog_ms), Ordering::Relaxed);
}

/// The scan period in µs, if the watchdog is on.
pub fn period_us() -> Option<u64> {
    match WATCHDOG_MS.load(Ordering::Relaxed) {
        0 => None,
        ms => Some(ms * 1000),
    }
}

/// Whether the in-guest checks run. With `watchdog=off` the wake path and
/// the halt path skip every count and record of this module too (fixed at
/// boot, before any AP runs), so `watchdog=off` measures a kernel without
/// any of the detector's cost.
pub fn enabled() -> bool {
    period_us().is_some()
}

/// Lost wakeups detected so far (all cores).
pub fn lost_wakeups() -> u64 {
    LOST_WAKEUPS.load(Ordering::Relaxed)
}

/// Prints what the watchdog did (`watchdog: period P ms, probes N, lost
/// wakeups L`), if it is on.
pub fn summary() {
    if let Some(period_us) = period_us() {
        println!(
            "watchdog: period {} ms, probes {}, lost wakeups {}",
            period_us / 1000,
            PROBES_SENT.load(Ordering::Relaxed),
            lost_wakeups()
        );
    }
}

/// One core's record. `repr(C)` with the wakers' two counts alone in the
/// first cache line and the core's own snapshot in the second, so the
/// wakers' increments do not bounce the line the core writes at every halt
/// (nor the neighbouring core's record).
#[derive(Debug)]
#[repr(C, align(128))]
struct CoreRecord {
    /// Wakers that began notifying this core (waker-written, before the
    /// push).
    notify_started: AtomicU64,
    /// Wakers that finished notifying this core (waker-written, Release).
    notify_finished: AtomicU64,
    /// The rest of the wakers' line.
    _waker_line: [u64; 6],
    /// Items this core took from its inbox (this core only).
    drained: AtomicU64,
    /// The halt episode in progress, 0 while the core is awake. Stored
    /// (Release) after the snapshot below, cleared when the core wakes.
    episode: AtomicU64,
    /// Episodes begun (this core only).
    episodes: AtomicU64,
    /// This core's wake-IPI interrupt count when the halt began.
    wake_irqs_at_halt: AtomicU64,
    /// Wake IPIs sent to this core (ICR writes) when the halt began.
    sent_at_halt: AtomicU64,
    /// The watchdog core's memory of the last scan: the episode and sent
    /// count at which it saw this core halted with announced work while an
    /// IPI had gone out (written and read by the watchdog core only).
    suspect_episode: AtomicU64,
    suspect_sent: AtomicU64,
    /// The episode the watchdog core probed because an IPI counted as sent
    /// to it had not ended it a whole scan period later (watchdog-written,
    /// Release before the probe).
    strict_probe_episode: AtomicU64,
}

impl CoreRecord {
    const fn new() -> Self {
        Self {
            notify_started: AtomicU64::new(0),
            notify_finished: AtomicU64::new(0),
            _waker_line: [0; 6],
            drained: AtomicU64::new(0),
            episode: AtomicU64::new(0),
            episodes: AtomicU64::new(0),
            wake_irqs_at_halt: AtomicU64::new(0),
            sent_at_halt: AtomicU64::new(0),
            suspect_episode: AtomicU64::new(0),
            suspect_sent: AtomicU64::new(0),
            strict_probe_episode: AtomicU64::new(0),
        }
    }
}

static RECORDS: [CoreRecord; MAX_CORES] = [const { CoreRecord::new() }; MAX_CORES];

/// Waker side: about to push into core `target`'s inbox and notify it.
pub fn notify_started(target: usize) {
    if !enabled() {
        return;
    }
    // Relaxed: a check that reads it has first acquired a later waker's
    // `notify_finished` (see `check_self`); a start it cannot see belongs to
    // a waker whose push follows every push it counts (and, finding the
    // inbox non-empty, elides its notify: it changes nothing).
    RECORDS[target]
        .notify_started
        .fetch_add(1, Ordering::Relaxed);
}

/// Waker side: the notify of core `target` is complete (after the push,
/// the decision and the IPI, if one was sent).
pub fn notify_finished(target: usize) {
    if !enabled() {
        return;
    }
    // Release: pairs with the Acquire loads in `check_self` (on `target`)
    // and `scan` (on the watchdog core). Whoever reads this increment also
    // sees this waker's push and its count in `wake_ipi::sent_to`, and, on
    // `target`, the IPI itself: QEMU (and an xAPIC whose delivery status the
    // sender polls) has set `target`'s IRR bit before the ICR write returns.
    RECORDS[target]
        .notify_finished
        .fetch_add(1, Ordering::Release);
}

/// Core `me` took `n` items from its inbox.
pub fn note_drained(me: usize, n: usize) {
    if !enabled() {
        return;
    }
    let drained = &RECORDS[me].drained;
    // Single writer: load + store. Published to the watchdog core by the
    // Release store of the next halt's episode.
    drained.store(
        drained.load(Ordering::Relaxed) + n as u64,
        Ordering::Relaxed,
    );
}

/// Core `me` starts its halt path (before `Running -> Halting`): snapshots
/// its wake-IRQ count and the wake IPIs sent to it so far. Every IPI sent
/// for the halt that follows is sent after a waker saw that halt's
/// `Halting`/`Halted` (or, under `always-ipi`, after a push this core's
/// re-check then sees), so after this snapshot: a halt whose count of
/// IPIs sent has not moved since has none on its way, however slowly the
/// platform delivers them (QEMU's TCG sets the target's IRR bit some
/// microseconds after the sender's ICR write returns, measured here).
pub fn halt_path_begins(me: usize) {
    if !enabled() {
        return;
    }
    let record = &RECORDS[me];
    record
        .wake_irqs_at_halt
        .store(COUNTS.wake[me].load(Ordering::Relaxed), Ordering::Relaxed);
    record
        .sent_at_halt
        .store(wake_ipi::sent_to(me), Ordering::Relaxed);
}

/// Core `me` is about to execute `sti; hlt` (state committed). Publishes
/// the halt's record for the watchdog core.
pub fn halt_begins(me: usize) {
    if !enabled() {
        return;
    }
    let record = &RECORDS[me];
    let episode = record.episodes.load(Ordering::Relaxed) + 1;
    record.episodes.store(episode, Ordering::Relaxed);
    // Release: the watchdog core's Acquire load of the episode then sees
    // the snapshot of `halt_path_begins` and every `drained` update before
    // it.
    record.episode.store(episode, Ordering::Release);
}

/// Core `me` is awake again.
pub fn halt_ends(me: usize) {
    if !enabled() {
        return;
    }
    // Relaxed: only a hint to the watchdog core, which re-validates
    // everything through the probe (the core's own check).
    RECORDS[me].episode.store(0, Ordering::Relaxed);
}

/// Where a core found its lost wakeup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundAt {
    /// At its own halt, before `sti; hlt`.
    Halt,
    /// Woken by the watchdog core's probe.
    Probe,
    /// On its own scan tick (the watchdog core).
    Tick,
    /// Woken by an interrupt that is neither a wake IPI nor the tick.
    OtherWake,
}

impl FoundAt {
    fn describe(self) -> &'static str {
        match self {
            FoundAt::Halt => "at its own halt, before sti; hlt",
            FoundAt::Probe => "when the watchdog core's probe woke it",
            FoundAt::Tick => "on its own watchdog scan tick",
            FoundAt::OtherWake => "when an unrelated interrupt woke it",
        }
    }
}

/// Core `me`, halted or committed to halting (interrupts disabled): is
/// work announced to it with no wake IPI taken since its halt path began,
/// none sent to it since, and none pending? Only `me` may call it.
///
/// `strict` (a probe sent because the same picture lasted a whole scan
/// period with an IPI counted as sent): an IPI sent a period before the
/// probe, which has arrived, and still not pending or taken, never
/// arrived; the sent count is then not taken as an IPI on its way.
pub fn check_self(me: usize, strict: bool) -> bool {
    if !enabled() {
        return false;
    }
    let record = &RECORDS[me];
    // Acquire: pairs with the wakers' Release in `notify_finished`; the
    // IPI counts of the wakers it counts are then visible too.
    let finished = record.notify_finished.load(Ordering::Acquire);
    if finished <= record.drained.load(Ordering::Relaxed) {
        return false;
    }
    // A waker still notifying may be the one that announces the work (a
    // push that found the inbox non-empty leaves the notify to the waker
    // that found it empty): decide once every waker counted has finished.
    // Each such waker's item was pushed after that of the waker it relies
    // on, whose start is therefore visible here (it happened before the
    // later push, through the inbox lock).
    if record.notify_started.load(Ordering::Acquire) != finished {
        return false;
    }
    if COUNTS.wake[me].load(Ordering::Relaxed) != record.wake_irqs_at_halt.load(Ordering::Relaxed) {
        // A wake IPI was taken during this halt: it ends it.
        return false;
    }
    if !strict && wake_ipi::sent_to(me) != record.sent_at_halt.load(Ordering::Relaxed) {
        // A wake IPI was sent to this core for this halt: on its way.
        return false;
    }
    // An LAPIC read (an exit under TCG), only when work is announced.
    !lapic::is_pending(WAKE_VECTOR)
}

/// The watchdog core `me` on its own tick: whether its check should be
/// strict, the rule it applies to the cores it probes: the same halt with
/// the same count of IPIs sent to it as one tick ago (an IPI counted as sent
/// a whole period ago that has neither arrived nor is pending never
/// arrived). Seen: core 0 asleep 20 s on work announced to it while its own
/// non-strict checks kept finding an IPI "on its way".
pub fn tick_is_strict(me: usize) -> bool {
    let record = &RECORDS[me];
    let episode = record.episode.load(Ordering::Relaxed);
    let sent = wake_ipi::sent_to(me);
    // Only this core reads and writes its own suspect memory.
    let same = record.suspect_episode.load(Ordering::Relaxed) == episode
        && record.suspect_sent.load(Ordering::Relaxed) == sent;
    record.suspect_episode.store(episode, Ordering::Relaxed);
    record.suspect_sent.store(sent, Ordering::Relaxed);
    same && sent != record.sent_at_halt.load(Ordering::Relaxed)
}

/// Whether the watchdog's probe of this halt was a strict one (see
/// [`check_self`]).
pub fn probe_is_strict(me: usize) -> bool {
    let record = &RECORDS[me];
    let episode = record.episode.load(Ordering::Relaxed);
    // Acquire: pairs with the watchdog core's Release before its probe.
    episode != 0 && record.strict_probe_episode.load(Ordering::Acquire) == episode
}

/// Core `me` found a lost wakeup `at` and has just drained `batch` (the work
/// it slept on, and whatever came with it): reports and counts it. The
/// tasks then run as usual (the report is the point; the run fails at its
/// end).
pub fn report(me: usize, at: FoundAt, batch: &VecDeque<TaskRef>) {
    LOST_WAKEUPS.fetch_add(1, Ordering::Relaxed);
    let now = tsc::now();
    println!(
        "LOST WAKEUP on core {me}: work was announced to it (its waker finished notifying) while it was halted, and no wake IPI was taken or pending; found {}. In its inbox:",
        at.describe()
    );
    for task in batch {
        let (from, observed, action) = task.notify_record();
        let waited_us = match task.pending_wake_tsc() {
            0 => alloc::string::String::from("?"),
            stamp => alloc::format!("{}", tsc::ticks_to_us(now.saturating_sub(stamp))),
        };
        println!(
            "  task {} (waited {waited_us} us): notified by core {from}, which saw {observed} and {action}",
            task.id()
        );
    }
    let record = &RECORDS[me];
    println!(
        "  counts: notifies finished {}, items drained {}, wake IRQs {} (at halt {}), wake IPIs sent to it {} (at halt {}), episode {}, wake IPI pending now {}",
        record.notify_finished.load(Ordering::Acquire),
        record.drained.load(Ordering::Relaxed),
        COUNTS.wake[me].load(Ordering::Relaxed),
        record.wake_irqs_at_halt.load(Ordering::Relaxed),
        wake_ipi::sent_to(me),
        record.sent_at_halt.load(Ordering::Relaxed),
        record.episodes.load(Ordering::Relaxed),
        lapic::is_pending(WAKE_VECTOR),
    );
    println!("  core {me}'s idle history:");
    HISTORIES[me].print(now);
}

/// The watchdog core's tick: scans every other core; sends a probe to each
/// that looks halted on announced work. `me` is the watchdog core.
pub fn scan(me: usize) {
    for (target, record) in RECORDS.iter().enumerate().take(cores::count()) {
        if target == me {
            continue;
        }
        // Acquire: pairs with the target's Release in `halt_begins`.
        let episode = record.episode.load(Ordering::Acquire);
        if episode == 0 {
            continue;
        }
        // Acquire: pairs with the wakers' Release in `notify_finished`;
        // their IPI counts are then visible.
        let finished = record.notify_finished.load(Ordering::Acquire);
        if finished <= record.drained.load(Ordering::Relaxed)
            || record.notify_started.load(Ordering::Acquire) != finished
        {
            continue;
        }
        let sent = wake_ipi::sent_to(target);
        let ipi_sent_since = sent != record.sent_at_halt.load(Ordering::Relaxed);
        if ipi_sent_since {
            // A wake IPI went out after the halt began: it will end it.
            // Probe only if the same picture is still there next scan (an
            // IPI that never arrives).
            let same = record.suspect_episode.load(Ordering::Relaxed) == episode
                && record.suspect_sent.load(Ordering::Relaxed) == sent;
            record.suspect_episode.store(episode, Ordering::Relaxed);
            record.suspect_sent.store(sent, Ordering::Relaxed);
            if !same {
                continue;
            }
        }
        // Still the same halt? (A stale read only costs a needless probe,
        // which the target's own check then dismisses.)
        if record.episode.load(Ordering::Acquire) != episode {
            continue;
        }
        if ipi_sent_since {
            record
                .strict_probe_episode
                .store(episode, Ordering::Release);
        }
        PROBES_SENT.fetch_add(1, Ordering::Relaxed);
        wake_ipi::send_probe(target);
    }
    round_watch::check(me);
}

/// The watchdog core `me`'s timer: arms the next scan tick unless the one
/// armed last has not fired yet (at most one or two LAPIC writes per
/// period, on that core only). `armed_at` is the caller's memory of the
/// core's timer-interrupt count when it last armed (`u64::MAX`: never).
///
/// Keyed on the interrupt count, not on time: a one-shot that has fired is
/// spent, whenever it fired. (Keyed on the TSC, a tick that the LAPIC timer
/// delivered a little before the TSC said a period was up, as calibration
/// error allows, left the core without a timer: seen once in 120 racy-flag
/// boots, core 0 asleep on its own lost wakeup with nothing left to wake it.)
pub fn arm_tick(me: usize, armed_at: &mut u64) {
    let Some(period_us) = period_us() else {
        return;
    };
    let fired = COUNTS.timer[me].load(Ordering::Relaxed);
    if fired != *armed_at {
        lapic::arm_oneshot_us(period_us);
        *armed_at = fired;
    }
}
