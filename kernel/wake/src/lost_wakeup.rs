//! The lost-wakeup detector's per-core record and checks. It needs no
//! timing slack: it never asks how long a task waited, only whether work
//! was *announced* to a halted core (the waker finished its whole notify:
//! push, state read, decision, IPI if any) while no wake IPI ended or is on
//! its way to end that core's halt. Such a core sleeps on its work until
//! something unrelated wakes it: a lost wakeup, whatever the policy,
//! whatever the cause (a racy policy, a dropped IPI, an IPI sent to the
//! wrong core, a broken ICR write).
//!
//! # The counts it decides on
//!
//! Per core `T` ([`LostWakeupRecord`], inside `T`'s [`CoreWake`]):
//! - `notify_started` / `notify_finished`: wakers that began (before the
//!   push) and finished (after the IPI they sent, if any; Release)
//!   notifying `T`;
//! - `drained`: items `T` took from its inbox (written by `T` only);
//! - [`Platform::wakes_sent_to`]`(T)`: wake IPIs written to an ICR for
//!   `T`;
//! - `T`'s interrupt counts ([`Platform::interrupt_counts`]) and its pending
//!   wake bit (only `T` can read them).
//!
//! Each waker pushes one item, so `notify_finished > drained` means at
//! least one item whose waker has finished is still in the inbox; with
//! `notify_started == notify_finished` no waker that might still announce
//! it (a push onto a non-empty inbox leaves that to the earlier waker) is
//! in flight. A core that sees both about itself while it is halted (or
//! about to halt), with no wake IPI taken or sent to it since its halt path
//! began and none pending, has lost a wakeup.
//!
//! # Who checks, and when (see [`IdleDriver`](crate::IdleDriver))
//!
//! - **Every core, at its halt** (after the commit, before `sti; hlt`).
//! - **The watchdog core**, on its scan tick: [`scan`] reads every halted
//!   core's record; a core halted with announced work and no wake IPI sent
//!   to it since its halt began (or the same picture two scans in a row) is
//!   sent a probe, and checks itself when the probe ends its halt. The
//!   watchdog core checks itself on its own tick.
//! - **Any core woken by something other than a wake IPI** checks itself
//!   and, unless it finds a lost wakeup, halts again without draining: only
//!   a wake IPI or a report ends a halt, so no other wake rescues announced
//!   work unreported.
//!
//! What it does not see: announced work that another, later wake IPI ends
//! the halt for before any check runs (a lost wakeup rescued by an
//! unrelated wake). Under `state-machine` that later IPI cannot exist (a
//! waker claims, and sends, only after a push that found the inbox empty);
//! under `always-ipi` and `racy-flag` it is a latency outlier.

use crate::platform::Platform;
use crate::sync::{AtomicU64, Ordering};

/// One core's detector record. `repr(C)` with the wakers' two counts alone
/// in the first cache line and the core's own snapshot in the second, so
/// the wakers' increments do not bounce the line the core writes at every
/// halt.
#[derive(Debug)]
#[repr(C, align(128))]
pub struct LostWakeupRecord {
    /// Wakers that began notifying this core (waker-written, before the
    /// push).
    notify_started: AtomicU64,
    /// Wakers that finished notifying this core (waker-written, Release).
    notify_finished: AtomicU64,
    /// Whether the detector runs at all (fixed at construction): off, every
    /// method is one predictable branch. Read by wakers and the core; in
    /// the wakers' line, which they touch anyway.
    enabled: bool,
    /// The scans' memory for the stalled-waker look ([`stalled_wakers`]):
    /// the episode and count of wakers begun at the last scan that saw this
    /// core halted with a waker mid-notify, and how many scans in a row saw
    /// that same picture (written and read by the scanning core only; the
    /// scans are one sequence, see [`scan_from`]). In the wakers' line: a
    /// scan writes them once a period, which costs the wakers nothing
    /// measurable, and the core's own line stays the core's.
    stall_episode: AtomicU64,
    stall_started: AtomicU64,
    stall_scans: AtomicU64,
    /// The rest of the wakers' line.
    _waker_line: [u64; 2],
    /// Items this core took from its inbox (this core only).
    drained: AtomicU64,
    /// The halt episode in progress, 0 while the core is awake. Stored
    /// (Release) after the snapshot below, cleared when the core wakes.
    episode: AtomicU64,
    /// Episodes begun (this core only).
    episodes: AtomicU64,
    /// This core's wake-IPI interrupt count when the halt path began.
    wake_irqs_at_halt: AtomicU64,
    /// Wake IPIs sent to this core (ICR writes) when the halt path began.
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

/// A report's view of a record ([`LostWakeupRecord::counts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostWakeupCounts {
    /// Wakers that finished notifying the core.
    pub notify_finished: u64,
    /// Items the core drained.
    pub drained: u64,
    /// The core's wake-IPI interrupt count when its halt path began.
    pub wake_irqs_at_halt: u64,
    /// Wake IPIs sent to the core when its halt path began.
    pub sent_at_halt: u64,
    /// Halt episodes begun.
    pub episodes: u64,
}

impl LostWakeupRecord {
    /// A record; `enabled: false` turns every count and check off.
    #[must_use]
    pub fn new(enabled: bool) -> Self {
        Self {
            notify_started: AtomicU64::new(0),
            notify_finished: AtomicU64::new(0),
            enabled,
            stall_episode: AtomicU64::new(0),
            stall_started: AtomicU64::new(0),
            stall_scans: AtomicU64::new(0),
            _waker_line: [0; 2],
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

    /// The counts, for a report (Acquire on the wakers' count, so the
    /// report is at least as new as the check that found the loss).
    #[must_use]
    pub fn counts(&self) -> LostWakeupCounts {
        LostWakeupCounts {
            notify_finished: self.notify_finished.load(Ordering::Acquire),
            drained: self.drained.load(Ordering::Relaxed),
            wake_irqs_at_halt: self.wake_irqs_at_halt.load(Ordering::Relaxed),
            sent_at_halt: self.sent_at_halt.load(Ordering::Relaxed),
            episodes: self.episodes.load(Ordering::Relaxed),
        }
    }

    /// Waker side: about to push into this core's inbox and notify it.
    pub(crate) fn notify_started(&self) {
        if !self.enabled {
            return;
        }
        // Relaxed: a check that reads it has first acquired a later waker's
        // `notify_finished` (see `check_self`); a start it cannot see
        // belongs to a waker whose push follows every push it counts (and,
        // finding the inbox non-empty, elides its notify: it changes
        // nothing).
        self.notify_started.fetch_add(1, Ordering::Relaxed);
    }

    /// Waker side: the notify of this core is complete (after the push,
    /// the decision and the IPI, if one was sent).
    pub(crate) fn notify_finished(&self) {
        if !self.enabled {
            return;
        }
        // Release: pairs with the Acquire loads in `check_self` (on this
        // core) and `scan` (on the watchdog core). Whoever reads this
        // increment also sees this waker's push and its count in
        // `wakes_sent_to`.
        self.notify_finished.fetch_add(1, Ordering::Release);
    }

    /// This core took `n` items from its inbox.
    pub(crate) fn note_drained(&self, n: usize) {
        if !self.enabled {
            return;
        }
        // Single writer: load + store. Published to the watchdog core by
        // the Release store of the next halt's episode.
        self.drained.store(
            self.drained.load(Ordering::Relaxed) + n as u64,
            Ordering::Relaxed,
        );
    }

    /// This core starts its halt path (before `Running -> Halting`):
    /// snapshots its wake-IRQ count and the wake IPIs sent to it so far.
    /// Every IPI sent for the halt that follows is sent after a waker saw
    /// that halt's `Halting`/`Halted` (or, under `always-ipi`, after a push
    /// this core's re-check then sees), so after this snapshot a halt whose
    /// count of IPIs sent has not moved has none on its way, however slowly
    /// the platform delivers them.
    pub(crate) fn halt_path_begins(&self, platform: &impl Platform) {
        if !self.enabled {
            return;
        }
        self.wake_irqs_at_halt
            .store(platform.interrupt_counts().wake, Ordering::Relaxed);
        self.sent_at_halt
            .store(platform.wakes_sent_to(platform.core()), Ordering::Relaxed);
    }

    /// This core is about to execute `sti; hlt` (state committed):
    /// publishes the halt's record for the watchdog core.
    pub(crate) fn halt_begins(&self) {
        if !self.enabled {
            return;
        }
        let episode = self.episodes.load(Ordering::Relaxed) + 1;
        self.episodes.store(episode, Ordering::Relaxed);
        // Release: the watchdog core's Acquire load of the episode then sees
        // the snapshot of `halt_path_begins` and every `drained` update
        // before it.
        self.episode.store(episode, Ordering::Release);
    }

    /// This core is awake again.
    pub(crate) fn halt_ends(&self) {
        if !self.enabled {
            return;
        }
        // Relaxed: only a hint to the watchdog core, which re-validates
        // everything through the probe (the core's own check).
        self.episode.store(0, Ordering::Relaxed);
    }

    /// This core, halted or committed to halting (interrupts disabled): is
    /// work announced to it with no wake IPI taken since its halt path
    /// began, none sent to it since, and none pending? Only the record's own
    /// core may call it, with its own `platform`.
    ///
    /// `strict` (a probe or tick that found the same picture a whole scan
    /// period later with an IPI counted as sent): an IPI sent a period ago
    /// that is neither pending nor taken never arrived; the sent count is
    /// then not taken as an IPI on its way.
    pub(crate) fn check_self(&self, platform: &impl Platform, strict: bool) -> bool {
        if !self.enabled || !self.work_announced() {
            return false;
        }
        if platform.interrupt_counts().wake != self.wake_irqs_at_halt.load(Ordering::Relaxed) {
            // A wake IPI was taken during this halt: it ends it.
            return false;
        }
        if !strict
            && platform.wakes_sent_to(platform.core()) != self.sent_at_halt.load(Ordering::Relaxed)
        {
            // A wake IPI was sent to this core for this halt: on its way.
            return false;
        }
        // An LAPIC read (an exit under TCG), only when work is announced.
        !platform.wake_pending()
    }

    /// Whether work whose waker has finished notifying is still in the
    /// inbox, with no waker still notifying (who might be the one that
    /// announces it). The IPI counts of the wakers counted are visible
    /// after it.
    fn work_announced(&self) -> bool {
        // Acquire: pairs with the wakers' Release in `notify_finished`; the
        // IPI counts of the wakers it counts are then visible too.
        let finished = self.notify_finished.load(Ordering::Acquire);
        if finished <= self.drained.load(Ordering::Relaxed) {
            return false;
        }
        // A waker still notifying may be the one that announces the work (a
        // push that found the inbox non-empty leaves the notify to the
        // waker that found it empty): decide once every waker counted has
        // finished. Each such waker's item was pushed after that of the
        // waker it relies on, whose start is therefore visible here (it
        // happened before the later push, through the inbox lock).
        // Relaxed would do (every increment is Relaxed; the starts this
        // needs are ordered by the Acquire of `finished` above, see
        // `notify_started`); kept Acquire from the version the kernel
        // campaigns ran with.
        self.notify_started.load(Ordering::Acquire) == finished
    }

    /// One scan's look for a stalled waker: this core halted, and wakers
    /// that began notifying it have not all finished. Returns how many
    /// scans in a row (this one included) saw the same halt episode with
    /// the same count of wakers begun, 0 if this one does not.
    ///
    /// `notify_started == notify_finished` is the gate of every lost-wakeup
    /// check (a waker still notifying may be the one that announces the
    /// work), so a waker that stops for good between its push and the end
    /// of its notify hides the loss from every check for ever: the core
    /// sleeps on its work and nothing reports it. A waker that is merely
    /// slow (its vCPU descheduled by the host for milliseconds) finishes
    /// within a scan or two; the caller asks for several.
    fn stalled_scans(&self) -> u64 {
        // Acquire: pairs with the core's Release in `halt_begins`.
        let episode = self.episode.load(Ordering::Acquire);
        // Acquire, then the starts (Relaxed): a start read is at least as
        // new as every finish read (each waker starts before it finishes;
        // see `work_announced`), so `started > finished` means a waker
        // that had begun and not finished when `finished` was read, or
        // whose finish this read did not see yet; the streak over several
        // scans a period apart is what rules the latter out.
        let finished = self.notify_finished.load(Ordering::Acquire);
        let started = self.notify_started.load(Ordering::Relaxed);
        if episode == 0 || started <= finished {
            // Written only when it changes: no store to the wakers' line
            // on the scans of a healthy core.
            if self.stall_scans.load(Ordering::Relaxed) != 0 {
                self.stall_scans.store(0, Ordering::Relaxed);
            }
            return 0;
        }
        let same = self.stall_episode.load(Ordering::Relaxed) == episode
            && self.stall_started.load(Ordering::Relaxed) == started;
        let scans = if same {
            self.stall_scans.load(Ordering::Relaxed) + 1
        } else {
            1
        };
        self.stall_episode.store(episode, Ordering::Relaxed);
        self.stall_started.store(started, Ordering::Relaxed);
        self.stall_scans.store(scans, Ordering::Relaxed);
        scans
    }

    /// Wakers that began notifying this core and have not finished (for a
    /// report; Acquire as in `work_announced`).
    #[must_use]
    pub fn wakers_in_flight(&self) -> (u64, u64) {
        let finished = self.notify_finished.load(Ordering::Acquire);
        let started = self.notify_started.load(Ordering::Relaxed);
        (started, finished)
    }

    /// The watchdog core's memory of its last look at this core: whether it
    /// saw the same halt `episode` with the same count of IPIs `sent` then,
    /// and remembers this look. Only the watchdog core reads and writes it.
    fn same_as_last_look(&self, episode: u64, sent: u64) -> bool {
        let same = self.suspect_episode.load(Ordering::Relaxed) == episode
            && self.suspect_sent.load(Ordering::Relaxed) == sent;
        self.suspect_episode.store(episode, Ordering::Relaxed);
        self.suspect_sent.store(sent, Ordering::Relaxed);
        same
    }

    /// The watchdog core on its own tick: whether its check should be
    /// strict, the rule it applies to the cores it probes: the same halt
    /// with the same count of IPIs sent to it as one tick ago.
    pub(crate) fn tick_is_strict(&self, platform: &impl Platform) -> bool {
        let episode = self.episode.load(Ordering::Relaxed);
        let sent = platform.wakes_sent_to(platform.core());
        self.same_as_last_look(episode, sent) && sent != self.sent_at_halt.load(Ordering::Relaxed)
    }

    /// Whether the watchdog's probe of this halt was a strict one.
    pub(crate) fn probe_is_strict(&self) -> bool {
        let episode = self.episode.load(Ordering::Relaxed);
        // Acquire: pairs with the watchdog core's Release before its probe.
        // That pairing only holds if the load reads the Release store, and
        // the probe IPI itself carries no memory (see the platform
        // contract): a stale read makes this one check non-strict. Nothing
        // is lost by it: the core halts again, same episode, and the next
        // scan finds the same picture and probes it again (strict), until
        // the store is visible. (On x86 the probe's ICR write orders the
        // store before it in practice.) Not in the loom model, which has one
        // idle core and so no probes.
        episode != 0 && self.strict_probe_episode.load(Ordering::Acquire) == episode
    }

    /// The watchdog core's look at this (another) core: `true` if it should
    /// be probed.
    fn wants_probe(&self, target: usize, platform: &impl Platform) -> bool {
        // Acquire: pairs with the target's Release in `halt_begins`.
        let episode = self.episode.load(Ordering::Acquire);
        if episode == 0 {
            return false;
        }
        if !self.work_announced() {
            return false;
        }
        let sent = platform.wakes_sent_to(target);
        let ipi_sent_since = sent != self.sent_at_halt.load(Ordering::Relaxed);
        if ipi_sent_since {
            // A wake IPI went out after the halt began: it will end it.
            // Probe only if the same picture is still there next scan (an
            // IPI that never arrives).
            if !self.same_as_last_look(episode, sent) {
                return false;
            }
        }
        // Still the same halt? (A stale read only costs a needless probe,
        // which the target's own check then dismisses.)
        if self.episode.load(Ordering::Acquire) != episode {
            return false;
        }
        if ipi_sent_since {
            self.strict_probe_episode.store(episode, Ordering::Release);
        }
        true
    }
}

/// The watchdog core's scan: reads every other core's record (`records`
/// yields each core's, by index) but `skip`'s and sends a probe to each
/// that looks halted on announced work. Returns how many probes it sent.
pub(crate) fn scan<'a>(
    records: impl Iterator<Item = &'a LostWakeupRecord>,
    platform: &impl Platform,
    skip: Option<usize>,
) -> usize {
    let me = platform.core();
    let mut probes = 0;
    for (target, record) in records.enumerate() {
        if target != me
            && Some(target) != skip
            && record.enabled
            && record.wants_probe(target, platform)
        {
            probes += 1;
            platform.send_probe(target);
        }
    }
    probes
}

/// A scan run by any core, awake or in its idle path, rather than on the
/// watchdog core's tick: the same look at every core but `me` and `skip`
/// (the watchdog core, which checks itself on its own tick and whose record
/// keeps the memory of that tick), probing the suspects. Returns how many
/// probes it sent.
///
/// The caller must make the scans of all cores one sequence, each a whole
/// scan period after the last and ordered after it (the kernel claims each
/// due scan with a compare-exchange on its due time and holds a flag while
/// it scans: the flag's Release after one scan, Acquire before the next,
/// orders the watchdog memory a scan writes, Relaxed, before the next scan
/// reads it): the probe rule compares a core with what the last scan saw.
pub fn scan_from<T>(
    cores: &[crate::CoreWake<T>],
    platform: &impl Platform,
    skip: Option<usize>,
) -> usize {
    scan(
        cores.iter().map(crate::CoreWake::lost_wakeup_record),
        platform,
        skip,
    )
}

/// A scan's look for stalled wakers (any core may run it, as part of the
/// one sequence of scans [`scan_from`] describes): the first core that has
/// been halted through `min_scans` scans in a row, the same halt, with a
/// waker that began notifying it and never finished. Such a waker hides
/// any work it pushed from every lost-wakeup check (they wait for every
/// waker counted to finish): a stalled waker is a hang, and is reported as
/// one. Counting scans, not time, keeps a waker whose vCPU the host
/// deschedules for a few milliseconds (TCG on 2 host cores) from being
/// taken for a stalled one.
pub fn stalled_wakers<T>(cores: &[crate::CoreWake<T>], min_scans: u64) -> Option<usize> {
    let mut found = None;
    for (target, core) in cores.iter().enumerate() {
        let record = core.lost_wakeup_record();
        // Every record is looked at (the streaks of the others must move
        // on this scan too), the first found is returned.
        if record.enabled && record.stalled_scans() >= min_scans && found.is_none() {
            found = Some(target);
        }
    }
    found
}
