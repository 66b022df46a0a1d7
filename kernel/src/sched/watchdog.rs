//! The in-guest lost-wakeup detector, kernel side. The detector itself
//! (the per-core record, the checks, the watchdog core's scan) is the wake
//! crate's (`vigil_wake::LostWakeupRecord` and `IdleDriver`), its check at
//! the halt and on the tick model-checked with the idle loop it runs in
//! (the probe path is not: one idle core per model); see that crate's `lost_wakeup` module for
//! what it decides on and when. This module holds its configuration
//! (`watchdog=MS|off`), its totals and the report a core prints when it
//! finds a lost wakeup.
//!
//! `watchdog=off` builds every core's record disabled and gives no core a
//! tick: a lost wakeup is then a real hang, for the host-side detector
//! (`xtask`) to examine.

use super::core_sched;
use super::idle_history::HISTORIES;
use super::inbound::Inbound;
use super::wake_ipi;
use crate::arch::idle_platform::CorePlatform;
use crate::arch::interrupt_vectors::{COUNTS, WAKE_VECTOR};
use crate::arch::{ipi, tsc};
use crate::println;
use alloc::collections::VecDeque;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use vigil_proto::serial_line::{LOST_WAKEUP_PREFIX, STALLED_WAKER_PREFIX};
use vigil_wake::FoundAt;

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
        let (scans, off_tick) = scans();
        println!(
            "watchdog: period {} ms, probes {}, lost wakeups {}, scans {scans} ({off_tick} off the watchdog core's tick)",
            period_us / 1000,
            PROBES_SENT.load(Ordering::Relaxed),
            lost_wakeups()
        );
    }
}

/// The watchdog core's scan sent `probes` probes.
pub fn count_probes(probes: usize) {
    PROBES_SENT.fetch_add(probes as u64, Ordering::Relaxed);
}

/// The TSC value from which the next scan is due (0: the first one is).
static NEXT_SCAN_DUE: AtomicU64 = AtomicU64::new(0);
/// Set while a core runs a scan.
static SCANNING: AtomicBool = AtomicBool::new(false);
/// Scans run, and how many of them by a core other than the watchdog core
/// or by the watchdog core while it was not halted (a busy path or its
/// idle loop).
static SCANS: AtomicU64 = AtomicU64::new(0);
static SCANS_OFF_TICK: AtomicU64 = AtomicU64::new(0);

/// Scans run so far (all cores), and how many of them off the watchdog
/// core's tick.
pub fn scans() -> (u64, u64) {
    (
        SCANS.load(Ordering::Relaxed),
        SCANS_OFF_TICK.load(Ordering::Relaxed),
    )
}

/// Claims the scan that is due, if one is: `true` once per scan period,
/// for exactly one caller, which must call [`release_scan`] when done.
///
/// The scan used to run only on the watchdog core's tick, which fires only
/// while that core is halted: a fork-join caller that never halts (it ran
/// every chunk itself once a search wake was lost) meant no scan at all in
/// a whole run. Now every core calls this at each pass of its idle loop
/// (and the fork-join caller at each round), and whoever finds the due
/// time passed and wins the compare-exchange scans. No clock threshold
/// decides anything: the due time only spaces the scans a period apart,
/// as the tick did.
pub fn claim_scan() -> bool {
    let Some(period_us) = period_us() else {
        return false;
    };
    let now = tsc::now();
    let due = NEXT_SCAN_DUE.load(Ordering::Relaxed);
    if now < due {
        return false;
    }
    // Relaxed: the compare-exchange only elects this period's scanner (one
    // winner per due value); the scan's memory is ordered by SCANNING.
    if NEXT_SCAN_DUE
        .compare_exchange(
            due,
            now + tsc::us_to_ticks(period_us),
            Ordering::Relaxed,
            Ordering::Relaxed,
        )
        .is_err()
    {
        return false;
    }
    // Acquire: pairs with the Release in `release_scan` of the scan before
    // this one, so its (Relaxed) memory of each core's last look is
    // visible to this one. A scan still running a whole period later (it
    // never has) keeps the flag: this period's scan is skipped.
    !SCANNING.swap(true, Ordering::Acquire)
}

/// Ends a scan claimed by [`claim_scan`]: `me` ran it, `on_tick` if on
/// the watchdog core's tick.
pub fn release_scan(me: usize, on_tick: bool) {
    SCANS.fetch_add(1, Ordering::Relaxed);
    if !on_tick || me != WATCHDOG_CORE {
        SCANS_OFF_TICK.fetch_add(1, Ordering::Relaxed);
    }
    // Release: pairs with the next scanner's Acquire in `claim_scan`.
    SCANNING.store(false, Ordering::Release);
}

/// Scans in a row, per vCPU sharing a host core, that must find a core
/// halted, the same halt, with a waker that began notifying it and has not
/// finished, before the scan reports a stalled waker. Scans, not time, as
/// in the held-search watch: a waker's vCPU descheduled by the host for
/// milliseconds finishes within a scan or two when it shares its host core
/// with few others; these are at least 4 scan periods (80 ms by default).
pub const STALLED_WAKER_SCANS_PER_SHARER: u64 = 5;

/// The scans the stalled-waker look waits: [`STALLED_WAKER_SCANS_PER_SHARER`]
/// times the vCPUs per host core ([`scans_for_descheduled`]). A waker is a
/// vCPU the host runs for one slice in that many: at 256 vCPUs on 2 host
/// cores a waker descheduled between its push and its notify waits behind
/// 127 others, longer than five scans (CI saw such a report, a waker that
/// was only slow); 500 scans (the cap, at 20 ms) wait for it, and a waker
/// stopped for good is still reported, later, and before the round watch.
pub fn stalled_waker_scans() -> u64 {
    scans_for_descheduled(STALLED_WAKER_SCANS_PER_SHARER)
}

/// `per_sharer` scans times the vCPUs per host core
/// ([`super::host_parallelism::cores_per_host_core`]: all cores before the
/// boot's measurement or `parallelism=`), for a watch on a core the host
/// may have descheduled; capped at half the stuck-round watch's time in
/// scans ([`super::round_watch::STUCK_ROUND_MS`]), so that a real stall
/// in a fork-join round is named by its own watch, not reported as a
/// stuck round, and never below `per_sharer`.
pub fn scans_for_descheduled(per_sharer: u64) -> u64 {
    let sharers = super::host_parallelism::cores_per_host_core() as u64;
    let period_ms = WATCHDOG_MS.load(Ordering::Relaxed).max(1);
    let cap = (super::round_watch::STUCK_ROUND_MS / 2 / period_ms).max(per_sharer);
    per_sharer.saturating_mul(sharers).min(cap)
}

/// `fault=stalled-waker`: armed.
static STALL_ARMED: AtomicBool = AtomicBool::new(false);

/// Arms `fault=stalled-waker`.
pub fn arm_stalled_waker() {
    STALL_ARMED.store(true, Ordering::Relaxed);
}

/// Whether `fault=stalled-waker` was armed and never fired.
pub fn stalled_waker_unfired() -> bool {
    STALL_ARMED.load(Ordering::Relaxed)
}

/// The waker hook between a push and its notify: under
/// `fault=stalled-waker`, the first waker on a core other than core 0
/// from round [`STALLED_ROUND`] on stops here for good.
pub fn maybe_stall_waker(me: usize, target: usize) {
    use vigil_proto::boot_params::{Fault, Key, STALLED_ROUND};
    if !STALL_ARMED.load(Ordering::Relaxed)
        || me == 0
        || super::round_watch::rounds_begun() < STALLED_ROUND
        || !STALL_ARMED.swap(false, Ordering::Relaxed)
    {
        return;
    }
    println!(
        "{}={} fired: core {me} pushed into core {target}'s inbox (round {}) and stops before its notify finishes",
        Key::Fault.name(),
        Fault::StalledWaker.name(),
        super::round_watch::rounds_begun()
    );
    loop {
        core::hint::spin_loop();
    }
}

/// A scan's stalled-waker look: reports a core halted through
/// [`stalled_waker_scans`] scans with a waker mid-notify, dumps the cores
/// and ends the run failed (the stalled waker never returns, so the run
/// would not end).
fn check_stalled_wakers(me: usize) {
    let scans = stalled_waker_scans();
    let Some(target) = vigil_wake::stalled_wakers(core_sched::wakes(), scans) else {
        return;
    };
    LOST_WAKEUPS.fetch_add(1, Ordering::Relaxed);
    let record = core_sched::wakes()[target].lost_wakeup_record();
    let (started, finished) = record.wakers_in_flight();
    let counts = record.counts();
    println!(
        "{LOST_WAKEUP_PREFIX}{target}: {STALLED_WAKER_PREFIX}core {target} has been halted through {scans} scans in a row (the same halt) while {} waker(s) that began notifying it have not finished (begun {started}, finished {finished}, items drained {}, inbox {}): a waker stopped between its push and the end of its notify, which hides the work from every lost-wakeup check; found by core {me}. State dump:",
        started - finished,
        counts.drained,
        core_sched::wakes()[target].inbox_len()
    );
    core_sched::dump_cores();
    println!("vigil: FAILED: a stalled waker (counted as a lost wakeup)");
    crate::exit::exit(crate::exit::ExitCode::CheckFailed)
}

/// The checks of one scan besides the probes: the stalled-waker look, the
/// strand watch, the held-search watch and the round watch (each may end
/// the run).
pub fn periodic_checks(me: usize, probes: usize) {
    count_probes(probes);
    check_stalled_wakers(me);
    super::stealable::check_stranded(me);
    super::stealable::check_held_search(me);
    super::round_watch::check(me);
}

/// Runs the scan if one is due, from core `me`'s idle loop or a busy path
/// (the fork-join caller): the same look at every core's record as the
/// watchdog core's tick, but the watchdog core's own (it checks itself on
/// its tick, and its record keeps that tick's memory), then the periodic
/// checks. Interrupts are disabled, as everywhere outside the halt.
pub fn scan_if_due(me: usize) {
    if !claim_scan() {
        return;
    }
    let probes = vigil_wake::scan_from(
        core_sched::wakes(),
        &CorePlatform::of_core(me),
        Some(WATCHDOG_CORE),
    );
    periodic_checks(me, probes);
    release_scan(me, false);
}

/// Core `me` found a lost wakeup `at` and has just drained `batch` (the work
/// it slept on, and whatever came with it): reports and counts it. The
/// tasks then run as usual (the report is the point; the run fails at its
/// end).
pub fn report(me: usize, at: FoundAt, batch: &VecDeque<Inbound>) {
    LOST_WAKEUPS.fetch_add(1, Ordering::Relaxed);
    let now = tsc::now();
    println!(
        "{LOST_WAKEUP_PREFIX}{me}: work was announced to it (its waker finished notifying) while it was halted, and no wake IPI was taken or pending; found {}. In its inbox:",
        at.describe()
    );
    for item in batch {
        let Inbound::Task(task) = item else {
            println!("  a search wake (look for stealable work)");
            continue;
        };
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
    let counts = core_sched::wakes()[me].lost_wakeup_record().counts();
    println!(
        "  counts: notifies finished {}, items drained {}, wake IRQs {} (at halt {}), wake IPIs sent to it {} (at halt {}), episode {}, wake IPI pending now {}",
        counts.notify_finished,
        counts.drained,
        COUNTS[me].wake.load(Ordering::Relaxed),
        counts.wake_irqs_at_halt,
        wake_ipi::sent_to(me),
        counts.sent_at_halt,
        counts.episodes,
        ipi::is_pending(WAKE_VECTOR),
    );
    println!("  core {me}'s idle history:");
    HISTORIES[me].print(now);
}
