//! [`Stealable`]: work any core may run, and the rule that decides how many
//! cores to wake for it.
//!
//! Pinned work (a task that must run on one core) keeps its core's inbox and
//! the halt protocol of [`CoreWake`](crate::CoreWake): the waker wakes *that*
//! core. Stealable work goes into one shared queue instead, and the rule
//! below wakes **as many idle cores as there are items for them, doubling
//! the cores awake at each wake step**:
//!
//! * **Publishing** wakes up to [`FAN_OUT`] idle cores, and never more
//!   than there are queued items no searcher is on its way to already
//!   (the **herd bound**, below); a woken core is counted as a searcher
//!   from the moment it is chosen, so a second publication before it runs
//!   wakes only for the items the first did not cover.
//! * **A searcher that finds work** stops searching and, while queued items
//!   are left that no searcher covers, wakes up to [`FAN_OUT`] more. So a
//!   publication of k items gets k cores working after about log2(k) wake
//!   steps (each woken core that finds an item wakes two more), and the
//!   growth stops as soon as there is no item left for a new core.
//! * **A core with nothing to run** (no pinned work, the queue empty)
//!   registers as idle, stops searching if it was, and goes to the halt
//!   path.
//! * **A core about to run pinned work** ([`Stealable::before_pinned_work`])
//!   stays registered but is marked busy, and choosers pass over it; if it
//!   may have been chosen already it hands its search on (to one other
//!   idle core) before the pinned work runs. So does a publisher that
//!   holds a searcher slot (it is running). A core busy with pinned work
//!   never holds a search.
//! * **A core with a search wake in flight** (chosen, its ticket not yet
//!   drained) is never chosen again until it drained it and looked.
//!
//! ## The herd bound
//!
//! **No core is woken for an item another woken core will take.** At
//! every choice, under the lock: *searchers (chosen cores that have not
//! looked yet) ≤ queued items*. A choice is made only for an item no
//! searcher covers (`queued - searching ≥ 1` before it), and a searcher
//! that takes an item leaves the search in the same step as the item
//! leaves the queue. Items taken by a core that is not searching (a
//! publisher helping with its own publication, a core back from its last
//! item) can leave a searcher to find the queue empty when it looks: it
//! was woken for an item that was there at the choice, and it registers
//! idle again. The pool counts every choice that breaks the bound
//! ([`StealSnapshot::over_chosen`]; always 0 unless the rule is broken:
//! the loom models and the mutation run read it).
//!
//! ## The work-conserving rule
//!
//! **The search never rests on a core that is not in its idle path, and
//! no core has two search wakes on the way.** Invariant (I), at every
//! unlock of the pool's lock:
//!
//! > stealable work queued, and some core registered idle, **not busy and
//! > with no search wake in flight** ⇒ some core holds a searcher slot,
//! > and that core is in its idle path or taking stealable work: halted or
//! > about to halt with its search wake on the way, or between its drain
//! > and its next look.
//!
//! and its consequence (I'), the form the liveness argument uses:
//!
//! > stealable work queued, and some core registered idle ⇒ a searcher
//! > exists in its idle path, or an idle core has a search wake in flight,
//! > or every other idle core is busy with pinned work and will look at
//! > the pool before it halts.
//!
//! A search wake is *in flight* to a core from its choice (under the lock)
//! until the core looks at the pool under the lock after draining it: the
//! pool marks the core at the choice (`ticket_pending`) and clears the
//! mark in that look (`resume`, only when the core has drained a ticket
//! since its last look), and `choose_searchers` never chooses a marked
//! core. So **at most one search wake is in flight per core** (II): the
//! mark is set with the first and blocks a second until the first is
//! drained.
//!
//! Why (II) needs the mark: the ticket is pushed after the lock is
//! released (the kernel may even be delayed there, its chaos point
//! `BeforeSearchWake`), and the chosen core may look at the pool before
//! its ticket comes (it woke for pinned work, handed the search on, took
//! an item, found the queue empty and registered idle again). Without the
//! mark a new publication chose it again: two tickets on their way to one
//! core, the first of them stale (the loom model `held_ticket_three_cores`
//! found it).
//!
//! A **busy** core keeps its registration while it runs pinned work (so a
//! pinned-only wake, a barrier or a ping-pong, takes no lock), but it is
//! marked busy outside the lock, and choosers pass over it. A chooser and
//! a core turning busy race outside the lock; the busy / chosen pair
//! (`CoreFlags`) makes one of them see the other, so a core chosen as it
//! turns busy hands the search on before its pinned work runs. A busy
//! core that was passed over looks at the pool before it halts, and the
//! queued / busy pair makes that look see every item whose chooser passed
//! over it. Leaving the idle set under the lock before every pinned run
//! would also keep the rule, but costs two lock acquisitions per pinned
//! wake, and at 32 vCPUs on 2 host cores the in-kernel barrier test
//! stalled on that ticket-lock convoy (300 s timeout).
//!
//! Why (I) holds, transition by transition (all under the one lock, but
//! for the busy mark, which only removes a core from the premise):
//!
//! * A **publication** adds work: if no core holds a slot (the publisher
//!   gives its own up first: it is running), every queued item is
//!   uncovered, so it chooses an idle, unmarked, not busy core if there is
//!   one; if there is none, the premise is false.
//! * A **choice** moves a core out of the idle set and marks it in one
//!   step: it adds no idle unmarked core.
//! * **A searcher gives its slot up** only in a call that chooses for the
//!   items no other searcher covers: [`Stealable::take`] finding an item,
//!   [`Stealable::before_pinned_work`], `publish`. If it chooses nobody for
//!   lack of uncovered items, the other searchers are at least as many as
//!   the queued items, so while work is queued one of them holds a slot.
//!   A `take` that ends a search finding nothing found the queue empty:
//!   the premise is false.
//! * **Registering idle** happens only in a `take` that found the queue
//!   empty: the premise is false. **Clearing the busy mark** happens at the
//!   start of a `take`, whose look (fast path or lock) sees the queued
//!   items (the queued / busy pair) and takes one.
//! * **Clearing a ticket mark** happens in `resume`, which also takes the
//!   core out of the idle set: it adds no idle unmarked core.
//! * A searcher is always chosen from the idle set and not busy, so it
//!   is in its idle path on the choice; if it turns busy before it looks,
//!   the busy / chosen pair sends it to the lock, where it hands the
//!   search on; otherwise it gives the slot up in its look (`take` always
//!   ends a search).
//!
//! And why (I') is enough: a searcher in its idle path, or an idle core
//! with a ticket in flight, will look at the pool: its ticket arrives (the
//! pinned protocol loses no wakeup) and a drained ticket sends the core
//! past both fast paths to the lock; a busy core looks before it halts.
//! Passing over a marked or busy idle core loses nothing for the same
//! reasons.
//!
//! Without the work-conserving rule (the rule before it let a core keep
//! its registration while it ran pinned work, unmarked) a search could
//! land on a core running a long pinned task: the search wake waited in
//! that core's inbox, every later publication found the slot taken and
//! woke nobody, and the shared work waited for the task while other cores
//! slept.
//!
//! How a core is woken is the caller's: the pool only says *which* core
//! (the `wake` closures below run after the pool's lock is released). In the
//! kernel it is a search ticket pushed into that core's inbox through the
//! pinned protocol ([`wake_core`](crate::wake_core)), so a search wake is
//! never lost for the same reasons a pinned wake is not, and the lost-wakeup
//! detector covers it. The caller must deliver every search wake the pool
//! asks for and the woken core must report the drain
//! ([`Searcher::search_wake_drained`]): a ticket dropped, or drained
//! without the report, leaves its core marked as having one in flight, and
//! the pool never chooses that core again (work is still taken by the
//! other cores; the strand watch sees work left queued with every core
//! halted).
//!
//! ## Why no stealable work is stranded
//!
//! The queue, the idle set, the searchers and the set of cores that
//! published since they last looked live under **one lock**,
//! so every step above is one atomic transition and the argument is about
//! states, not interleavings. Invariant, at every unlock: *the queue is
//! empty, or some core is not registered idle* (it is running, and will
//! call [`Stealable::take`] before it halts, or it has been chosen and its
//! search wake is on its way). A publication keeps it: if no core is
//! searching it chooses an idle core (which leaves the idle set) unless
//! every core is already out of it; if one is searching, that core is out
//! of it. Taking a slot back from the publisher keeps it: the publisher
//! was chosen, so it is out of the idle set until it looks again, and it
//! will (its search wake is on its way). Preferring non-publishers changes
//! only *which* idle core is chosen, never *whether* one is.
//! [`Stealable::take`] keeps it: the caller is running. Registering
//! idle happens only in a `take` that found the queue empty. So "every core
//! halted with stealable work queued" needs a search wake that was chosen
//! and never delivered, which is a lost wakeup of the pinned protocol, or a
//! caller that drops it (`fault=stranded-steal` in the kernel, which
//! [`StrandWatch`] catches). The loom models (`tests/loom_steal.rs`, up
//! to three cores and a producer that sends pinned jobs and holds search
//! wakes back) check it on the model machine with the kernel's idle
//! driver, and with it that no busy core is chosen or holds the search
//! while another core sleeps with work queued, that no core has two search
//! wakes in flight, that a pinned job waiting for a stealable item
//! completes, the herd bound, and that a publication's last core is woken
//! within log2 of its items' wake steps; the mutation run (`cargo xtask
//! mutants`) breaks each step above in turn.
//!
//! One lock is also the design's cost: every publication, every item taken
//! and every idle registration takes it. Its critical sections are a few
//! instructions; only awake cores take it, and the rule keeps few awake.
//!
//! ## A queue per core (the hosted pool)
//!
//! Where that cost shows (a thread pool whose jobs spawn jobs: every spawn
//! and every take a trip to one lock, its line bouncing between the
//! workers), [`Stealable::with_local_queues`] gives each core a queue of
//! its own. A running core's [`Stealable::push_local`] pushes there under
//! that queue's lock alone and takes the pool's lock only if it then reads
//! some core registered idle; the core pops its own items oldest first in
//! [`Stealable::take`], again without the pool's lock; a core that finds
//! the shared queue empty registers idle and, under the pool's lock, steals
//! the older half of the first non-empty queue. (Oldest first, not newest
//! first as rayon's workers do: a job that respawns itself would otherwise
//! run ahead of an earlier spawn for as long as it respawns, and a job
//! waiting for an earlier spawn of a one-worker pool would wait for good;
//! `tests/pool_threads.rs` has both shapes.) The rule above is the same
//! with "queued" read as the shared queue's items plus every local queue's
//! length: a choice counts local items as queued (so a push that reads the
//! idle count non-zero chooses as a publication does, and a searcher that
//! steals chooses more for what is left), and every argument above goes
//! through with three changes:
//!
//! * **A push the pool's lock never sees.** The pusher reads the idle count
//!   after its queue's unlock; a core registering idle stores the count
//!   before it locks each queue to look. The queue's lock orders the two:
//!   either the look finds the item, or the pusher reads the core counted
//!   and chooses under the pool's lock (the push / registration pair,
//!   `LocalQueue`). So a core never halts registered idle past an item it
//!   neither saw nor was chosen for, and a task that pushes and then waits
//!   for its item without helping is not stranded (the loom models
//!   `local_push_*`, core 0 pushing and waiting; the mutation run drops
//!   each half of the pair, the look, and the choices' count of local
//!   items).
//! * **A push past a searcher still to look.** A pusher that reads some
//!   core registered idle skips the pool's lock too when it reads at least
//!   as many searchers still to look as items queued: each of them will
//!   look, and a look sees every item pushed before it and ends the search
//!   with a choice for the items it leaves uncovered, so those items are
//!   covered as a choice would cover them (the push / search pair,
//!   [`Stealable::push_local`]; the loom models
//!   `pushed_past_a_searcher_still_to_look_three_cores`, whose mutant
//!   leaves the search after the look, and
//!   `pushed_past_a_searcher_that_takes_a_waiting_item_three_cores`, whose
//!   mutant makes the pusher's read Relaxed). A chained spawn at 4 workers, the
//!   parked workers registered idle and one woken worker leaving the lone
//!   job to its owner, otherwise took the pool's lock at every spawn.
//! * **Local items are never stranded with every core halted**: their
//!   owner is running (it pushed while not registered idle) and takes from
//!   its own queue before it can register idle, so that state needs the
//!   owner halted, which it is not while its queue holds items. It runs
//!   them in order, behind the job it is running: a job that never ends
//!   holds its worker's queue up until an idle core steals it.
//!
//! * **A push from outside the cores** ([`Stealable::push_outside`], the
//!   hosted pool's `Producer::spawn`): onto one lock-free queue, first in
//!   first out, whose items count as queued like the local queues'. The
//!   pusher fences and reads the idle count, and takes the pool's lock only
//!   as a local push does; a core registering idle fences after its store
//!   of the count and looks at that queue first, one item, oldest first (the
//!   outside push / registration pair: fences, since no lock orders the
//!   two; the loom models `outside_push_*`, whose mutants drop each fence,
//!   the look and the count); a running core pops it without the pool's
//!   lock after its own queue. A producer's burst and the workers met on
//!   the pool's lock for every job before: 1.08-1.83x rayon on the bursts
//!   from outside at 1-8 workers (but two cells, 0.62 and 0.75), 0.44-1.07x
//!   with the queue (four alternations of the two binaries, `peer_bench
//!   --only spawn-outside,spawn-outside-busy --repeats 7`).
//!
//! The kernel's pool has no local queues ([`Stealable::new`]): its
//! fork-join caller publishes a round's chunks at once and helps with
//! them, and a look that registers idle at 256 cores would lock 256 queues.

use alloc::collections::VecDeque;
use core::sync::atomic::{
    AtomicBool as ObservedBool, AtomicU64 as ObservedU64, AtomicUsize as ObservedUsize,
};

use crate::core_set::CoreSet;
use crate::outside_queue::OutsideQueue;
use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::sync::{AtomicU8, AtomicUsize, Mutex, MutexGuard, Ordering, fence};

/// Relaxed: the observers' mirrors below are written inside the pool's lock
/// and read by diagnostics (the strand watch, the host's debug table) that
/// tolerate a stale value; no decision of the rule reads them. They are not
/// loom atomics for the same reason (`sync.rs` on the statistics).
const OBSERVED: core::sync::atomic::Ordering = core::sync::atomic::Ordering::Relaxed;

/// What the lock protects.
struct Shared<T> {
    queue: VecDeque<T>,
    /// Cores registered idle: they found nothing to run and are on the halt
    /// path or halted. A core leaves the set when it next looks for work, or
    /// when a publisher or a searcher chooses it.
    idle: CoreSet,
    /// Cores chosen to search (woken for stealable work) that have not yet
    /// looked: found an item, handed the search on or given up. At every
    /// choice at most as many as the queued items (the herd bound).
    searching: CoreSet,
    /// Cores that published and have not looked at the pool under its lock
    /// since (a `take` on the fast path does not clear the mark): running
    /// their task, so chosen to search last. Only *which* idle core is
    /// chosen depends on it, never *whether* one is.
    publishers: CoreSet,
    /// Cores with a search wake in flight: chosen (the mark set at the
    /// choice, under the lock) and the ticket not yet drained (cleared by
    /// the core's next look under the lock after it drained one,
    /// [`resume`]). Never chosen again while marked, so at most one search
    /// wake is on its way to a core. A marked core may be running (it woke
    /// for something else before its ticket came, e.g. while the
    /// publisher was delayed between its choice and its ticket) or
    /// registered idle again: either way its ticket still arrives and
    /// sends it to look.
    ///
    /// Ordering: none of its own. The mark is read and written only under
    /// the lock (whose acquire and release order it with the rest of the
    /// state), and what it stands for, the ticket's delivery, is ordered
    /// by the pinned protocol (the inbox's push and drain), which also
    /// orders the drain before the drained core's next look.
    ticket_pending: CoreSet,
}

/// Counts for observers, mirrored at every unlock, and the count of
/// searchers still to look.
///
/// Laid out so that the line every critical section writes at its unlock
/// (the counts up to `search_wakes`) also holds `to_look`, which choices
/// and looks change under the lock, so it adds no line that moves between
/// cores at every item. Measured (spawn-outside, 4 workers, ns a job): on
/// a line of its own 215-220, without the count 167-201, on this line
/// 199-227 in three series but for two outliers (560, 622): not told
/// apart from the spread.
#[derive(Debug)]
#[repr(C, align(64))]
struct Mirror {
    /// Searchers that have not begun their look yet: cores in the
    /// `searching` set, less those whose `take` has already left it. With
    /// local queues only (the kernel's pool keeps none, and pays for it
    /// only the line it takes). Changed only by read-modify-writes, so
    /// that its modification order carries **the push / search pair**: a
    /// pusher that reads a non-zero count here at least as large as the
    /// items queued skips the pool's lock, and every searcher it counted
    /// will see its item when it looks, or choose for it (see
    /// [`Stealable::push_local`]).
    to_look: AtomicUsize,
    /// Items queued (the shared queue's, plus the local queues' lengths as
    /// read at the last unlock). Unlike the others, a decision reads it: the fast path
    /// of [`Stealable::take`] (see there), so it is a loom atomic and the
    /// model explores its stale reads. Relaxed, with one exception: a stale
    /// 0 sends the core to its halt still registered idle, which the
    /// publisher of any newer item sees, unless that publisher passed over
    /// the core as busy; then only the queued / busy pair (`CoreFlags`: the
    /// chooser's store and fence in `choose_searchers`, the core's fence in
    /// `take`) makes the core's read see the item.
    queued: AtomicUsize,
    searching: ObservedUsize,
    /// The searcher's core (`usize::MAX`: none). Observed only (the
    /// model's checks, diagnostics): [`OBSERVED`], like the others.
    searcher: ObservedUsize,
    idle: ObservedUsize,
    published: ObservedU64,
    taken: ObservedU64,
    search_wakes: ObservedU64,
    tickets_pending: ObservedUsize,
    /// Choices that left more searchers than queued items (the herd bound
    /// broken: 0 unless the rule is).
    over_chosen: ObservedU64,
    /// The shared queue's length at the last unlock, kept only with local
    /// queues: [`Stealable::glance`]'s hint.
    shared_queued: ObservedUsize,
}

/// A snapshot of a pool's counts (for diagnostics; each value may be stale
/// by the time it is read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StealSnapshot {
    /// Items queued (the local queues' and the outside queue's included),
    /// as read at the last unlock of the pool's lock: a push onto a local
    /// or the outside queue that took no lock is not in it until the next
    /// unlock. The strand watch reads it in the kernel, whose pool has
    /// neither.
    pub queued: usize,
    /// Cores chosen to search and not yet done (at most the queued items
    /// no other searcher covers allowed at each choice: the herd bound).
    pub searching: usize,
    /// The lowest core searching, if any (the only one when `searching` is
    /// 1).
    pub searcher: Option<usize>,
    /// Cores registered idle.
    pub idle: usize,
    /// Items published, ever (pushes onto a core's own queue that took
    /// the publish path included, the others not, nor pushes onto the
    /// outside queue: they never add to the shared queue).
    pub published: u64,
    /// Items taken under the pool's lock, ever: the shared queue's, and
    /// the one a core registering idle takes from the outside queue or a
    /// local queue (its own or, stolen, another's); not those a running
    /// core pops from its own queue or the outside queue without the lock
    /// (a thief's loot included).
    pub taken: u64,
    /// Search wakes chosen, ever (each one wake of one core).
    pub search_wakes: u64,
    /// Cores with a search wake chosen and not yet drained.
    pub tickets_pending: usize,
    /// Choices, ever, that left more searchers than queued items: the herd
    /// bound broken (see the module docs). 0 unless the rule is broken.
    pub over_chosen: u64,
    /// Acquisitions of the pool's lock that found it held and waited, ever
    /// (kernel builds only: 0 hosted and under loom).
    pub lock_contended: u64,
}

/// One core's part in the rule: whether it is the chosen searcher and
/// whether it is registered idle. Owned by the core, passed to every call.
#[derive(Debug, Clone)]
pub struct Searcher {
    me: usize,
    searching: bool,
    registered_idle: bool,
    /// A search wake was drained since the core last looked at the pool
    /// under its lock: it may have been chosen.
    search_wake_seen: bool,
    /// The core set its busy flag (it runs pinned work, registration
    /// kept) and has not cleared it yet.
    busy: bool,
}

impl Searcher {
    /// Core `me`'s part, neither searching nor idle.
    pub fn new(me: usize) -> Self {
        Self {
            me,
            searching: false,
            registered_idle: false,
            search_wake_seen: false,
            busy: false,
        }
    }

    /// The core drained a search wake (its inbox's ticket).
    pub fn search_wake_drained(&mut self) {
        self.search_wake_seen = true;
    }

    /// The core.
    pub fn core(&self) -> usize {
        self.me
    }

    /// Whether this core is the chosen searcher (as of its last call).
    pub fn is_searching(&self) -> bool {
        self.searching
    }
}

/// The most search wakes one call into the pool chooses: a publication, or
/// a searcher that found an item, wakes up to this many more cores, so the
/// cores awake for k items double at each wake step (about log2(k) steps).
pub const FAN_OUT: usize = 2;

/// The cores one call chose to search (at most [`FAN_OUT`]), in the order
/// chosen (see `Stealable::choose_searchers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Woken {
    cores: [usize; FAN_OUT],
    len: usize,
}

impl Woken {
    /// Nobody.
    pub const NONE: Self = Self {
        cores: [0; FAN_OUT],
        len: 0,
    };

    fn push(&mut self, core: usize) {
        self.cores[self.len] = core;
        self.len += 1;
    }

    /// How many were chosen.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nobody was chosen.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first core chosen, if any.
    #[must_use]
    pub fn first(&self) -> Option<usize> {
        self.as_slice().first().copied()
    }

    /// The cores chosen, in the order they were.
    #[must_use]
    pub fn as_slice(&self) -> &[usize] {
        &self.cores[..self.len]
    }
}

/// What a publication did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    /// Items added.
    pub items: usize,
    /// The cores chosen to search (`wake` was called for each).
    pub woke: Woken,
    /// Cores other than the publisher registered idle when it published
    /// (before the choice).
    pub others_idle: usize,
}

/// What a core would find if it looked now ([`Stealable::glance`]): read
/// without the pool's lock, a hint stale as soon as it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Glance {
    /// Nothing queued anywhere the glance read.
    Nothing,
    /// One item and no other: alone on another core's own queue, and that
    /// core is running (a core registered idle has emptied its own queue),
    /// so it is most likely the item that core pops next. `added` (the
    /// items added to its queue, less those its owner took back) tells
    /// this item from a later lone one, as a hint: the two loads are
    /// Relaxed and unordered, so a glance may pair a length with an older
    /// count; and an item pushed, taken back and followed by another lone
    /// one gives the second the first's count. Either way a worker counting
    /// sightings of one item steals it a few glances early.
    Lone {
        /// The queue's owner.
        core: usize,
        /// Items added to the queue less those taken back (see
        /// `LocalQueue::added`), read just after its length.
        added: u64,
    },
    /// Look now: the shared queue holds items, or the core's own queue, or
    /// another core's holds two or more, or two queues hold one each; or
    /// the pool has no local queues; or the core is still registered idle
    /// and drained no search wake ([`Stealable::take`]'s fast path is its
    /// glance).
    Look,
}

/// Work any core may run: one shared queue, its idle cores and its searcher
/// (and, built with [`Stealable::with_local_queues`], one queue per core).
pub struct Stealable<T> {
    shared: Mutex<Shared<T>>,
    mirror: Mirror,
    flags: Box<[CoreFlags]>,
    /// One per core, or none ([`Stealable::new`]: the kernel's pool).
    locals: Box<[LocalQueue<T>]>,
    /// Items pushed from outside the pool's cores without its lock
    /// ([`Stealable::push_outside`]); used only with local queues.
    outside: OutsideQueue<T>,
    /// Cores registered idle, for [`Stealable::push_local`], which takes
    /// the lock only when it reads a non-zero count: a decision reads it,
    /// so it is a loom atomic (apart from the observers' count, so that a
    /// pool without local queues, the kernel's, pays no loom step for it).
    /// Written only under the lock (its modification order is the lock's
    /// order), and only with local queues. Relaxed: what it must show a
    /// pusher is ordered by the pushed queue's own lock (the push /
    /// registration pair, see [`LocalQueue`]).
    idle_for_pushers: AtomicUsize,
    /// Cores polling their inbox before the halt path, one bit each
    /// ([`Stealable::set_polling`]): a choice takes them first, since a
    /// search wake to a core that polls is a push it sees at once, with no
    /// wake IPI or unpark and no wait for it to run again. A hint only:
    /// *which* idle core is chosen depends on it, never *whether* one is,
    /// so a stale bit costs at most a wake that a fresher one would have
    /// saved. Relaxed, `core`'s atomics even in the loom build (no model
    /// sets it; the rule's arguments do not read it).
    polling: Box<[ObservedU64]>,
    /// Whether any core ever set a polling bit: a pool whose cores never
    /// do (the kernel's) skips the pass over them at every choice.
    polling_hinted: ObservedBool,
}

/// A core's own queue: items it pushed while running
/// ([`Stealable::push_local`]), popped by their owner oldest first without
/// the pool's lock, and stolen (the older half) by a core registering idle,
/// under the pool's lock (so at most one thief at a time). Lock order: the
/// pool's lock, then a local queue's; the owner never holds its queue's
/// lock while it takes the pool's.
///
/// **The push / registration pair.** A pusher: lock its queue, push, store
/// the length, unlock, then read the idle count, and take the pool's lock
/// to choose searchers only if it is not 0. A core registering idle, under
/// the pool's lock: store the idle count with itself counted, then lock
/// every local queue in turn and steal from it. Whichever of the two
/// sections of the pushed queue's lock comes first, the other side sees
/// the first's write: if the registration's section comes second it finds
/// the item; if the push's comes second, the registration's store happens
/// before the pusher's read (its unlock synchronizes with the pusher's
/// lock), so the pusher reads that count or a later one (later ones are
/// stores under the pool's lock; a core leaves the idle set only when a
/// chooser chooses it, and it then looks, scanning too, or when it looks
/// itself: in `take`, scanning, or in `before_pinned_work`, after whose
/// pinned work it calls `take`). So no item is pushed past a
/// core that goes on to halt unseen, with no fence: the queue's lock
/// carries the order, and loom checks it as it is (`loom_steal`'s
/// `local_*` models; the mutation run drops each half).
///
/// `len` mirrors the queue's length, stored under its lock: the owner
/// reads it to skip an empty queue (only it pushes, so a 0 it reads is
/// exact), and choosers read every queue's under the pool's lock to count
/// the items (Relaxed: a stale count only changes how many cores a chooser
/// wakes; a pusher whose item a chooser did not count reads the idle count
/// itself, as above).
///
/// Each queue has its cache lines to itself (128 bytes: x86's adjacent-line
/// prefetcher moves lines in pairs, and some AArch64 cores have 128-byte
/// lines): its owner writes the lock word, `len` and `added` at every push
/// and take-back, and with the queues 56 bytes apart two owners' pushes
/// moved one line between their cores. Measured (a join tree of 2^20
/// leaves, 2 workers on 2 host cores, each running half the leaves): 55-56
/// ns a node packed, and the lock's compare-exchange in `push_local` took
/// two thirds of that function's samples.
#[repr(align(128))]
struct LocalQueue<T> {
    items: Mutex<VecDeque<T>>,
    len: AtomicUsize,
    /// Items ever added to the queue, all by its owner (its pushes, and the
    /// loot it moved there as a thief), less those it took back
    /// ([`Stealable::take_back_newest`]), stored under the queue's lock:
    /// with `len`, what [`Stealable::glance`] reads to tell one lone item
    /// that stays from a run of items that come and go. A hint
    /// ([`OBSERVED`]): no decision of the rule reads it.
    added: ObservedU64,
}

// A build that lets two local queues share a line (or a prefetched pair)
// fails here; the unit test `each_local_queue_has_its_cache_lines_to_itself`
// checks the addresses too.
const _: () = assert!(core::mem::align_of::<LocalQueue<()>>() >= 128);

/// A core's two flags outside the lock: how a core busy with pinned work
/// keeps its registration (no lock on a pinned-only wake) and still never
/// holds the search.
///
/// Two store-buffering pairs, each closed by a SeqCst fence on both sides
/// between the store and the load (fences, not SeqCst accesses: the order
/// comes from the fences' single total order; loom treats a SeqCst access
/// as AcqRel, and with SeqCst accesses here the model reported a busy core
/// chosen; loom's SeqCst fence is, if anything, stronger than the C++
/// one, a join through one global clock):
///
/// * **busy / chosen.** The core, before pinned work: `busy = 1`, fence,
///   then reads `chosen`. A chooser, under the lock, for a candidate:
///   `chosen = 1`, fence, then reads `busy`. Whichever fence is first in
///   their total order, the read after the other fence sees the store
///   before the first: either the chooser sees
///   the core busy and passes over it (it clears `chosen`), or the core
///   sees itself chosen and takes the lock to hand the search on before
///   its pinned work runs (both may happen: the core then finds, under the
///   lock, that it is no searcher). So a core running pinned work never
///   holds the search past its `before_pinned_work`.
/// * **queued / busy.** A chooser stores the queued count, fence, then
///   reads `busy`. The core, back in its idle path: `busy = 0`, fence, then
///   reads the queued count (the fast path of [`Stealable::take`]). Either the
///   chooser saw the core not busy (it could choose it, or chose another
///   core, or a searcher existed), or the core sees the items queued and
///   takes the lock to take one. So an item whose chooser passed over a
///   busy core is never missed by that core's next look. (No loom model
///   checks this fence: a mutant without it survives. Loom never lets a
///   load return a value older than one its thread saw before its last
///   yield, and in every model the core yields, and reloads the queued
///   count through the checks' snapshot, between its own last store of 0
///   and its fast path's load; a litmus model of exactly `before_pinned_work`
///   then `take` against a `publish`, with no yield in between, is what
///   would. The fence stays: the C++ model needs it.)
#[derive(Debug)]
struct CoreFlags {
    busy: AtomicU8,
    chosen: AtomicU8,
}

impl<T> core::fmt::Debug for Stealable<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Stealable")
            .field("counts", &self.snapshot())
            .finish()
    }
}

impl<T> Stealable<T> {
    /// An empty pool for cores `0..cores`, none registered idle, with one
    /// shared queue only: [`push_local`](Self::push_local) publishes.
    pub fn new(cores: usize) -> Self {
        Self::build(cores, false)
    }

    /// An empty pool for cores `0..cores` with a queue of its own for each
    /// core: a running core's [`push_local`](Self::push_local) takes no
    /// shared lock while no core is registered idle. Every look that
    /// registers a core idle locks each core's queue in turn (the price of
    /// the cheap push: `cores` lock acquisitions before a core halts).
    pub fn with_local_queues(cores: usize) -> Self {
        Self::build(cores, true)
    }

    fn build(cores: usize, local_queues: bool) -> Self {
        let locals = if local_queues { cores } else { 0 };
        Self {
            shared: Mutex::new(Shared {
                queue: VecDeque::new(),
                idle: CoreSet::new(cores),
                searching: CoreSet::new(cores),
                publishers: CoreSet::new(cores),
                ticket_pending: CoreSet::new(cores),
            }),
            mirror: Mirror {
                to_look: AtomicUsize::new(0),
                queued: AtomicUsize::new(0),
                searching: ObservedUsize::new(0),
                searcher: ObservedUsize::new(usize::MAX),
                idle: ObservedUsize::new(0),
                published: ObservedU64::new(0),
                taken: ObservedU64::new(0),
                search_wakes: ObservedU64::new(0),
                tickets_pending: ObservedUsize::new(0),
                over_chosen: ObservedU64::new(0),
                shared_queued: ObservedUsize::new(0),
            },
            flags: (0..cores)
                .map(|_| CoreFlags {
                    busy: AtomicU8::new(0),
                    chosen: AtomicU8::new(0),
                })
                .collect::<Vec<_>>()
                .into_boxed_slice(),
            polling: (0..cores.div_ceil(64))
                .map(|_| ObservedU64::new(0))
                .collect::<Vec<_>>()
                .into_boxed_slice(),
            polling_hinted: ObservedBool::new(false),
            idle_for_pushers: AtomicUsize::new(0),
            locals: (0..locals)
                .map(|_| LocalQueue {
                    items: Mutex::new(VecDeque::new()),
                    len: AtomicUsize::new(0),
                    added: ObservedU64::new(0),
                })
                .collect::<Vec<_>>()
                .into_boxed_slice(),
            outside: OutsideQueue::new(),
        }
    }

    /// Core `me`, running its own task, queues `item` on its own queue
    /// (if the pool has them and the core is neither registered idle, nor
    /// searching, nor has drained a search wake since it last looked:
    /// otherwise it [`publish`](Self::publish)es it). It takes the pool's
    /// lock only if it then reads some core registered idle (the push /
    /// registration pair, see `LocalQueue`) and fewer searchers still to
    /// look than items queued (the push / search pair, below), and chooses
    /// searchers there as a publication does; `wake(core)` for each after
    /// the lock. The core pops its own items oldest first in
    /// [`take`](Self::take).
    ///
    /// **The push / search pair.** A searcher that has not begun its look
    /// covers an item pushed before the look: the look sees it, and either
    /// takes it or, having taken another, chooses for it (every search
    /// ends in its look, with a choice for the items left uncovered). The
    /// pusher, after its queue's unlock, reads the count of searchers still
    /// to look with a read-modify-write (AcqRel); a searcher leaves that
    /// count with one (AcqRel) before its look reads any queue (in
    /// [`take`](Self::take), and in the hand-ons of
    /// [`before_pinned_work`](Self::before_pinned_work) and
    /// [`publish`](Self::publish), which also look at every queue's
    /// length). The two are ordered in the count's modification order: if
    /// the pusher's comes first, the searcher's acquires the pusher's
    /// release, and its look sees the pushed item; if the searcher's comes
    /// first, the pusher reads the count without it. Pushers are ordered
    /// the same way among themselves, so the last of two pushes that both
    /// read the same searchers sees the other's item in its count of
    /// queued items and takes the lock for the one the searchers do not
    /// cover. (The queued count it compares with is read after that
    /// read-modify-write: the other queues' lengths, and the shared queue's
    /// as last mirrored; an item published to the shared queue since is
    /// one its publisher chose for, under the lock, or one a searcher
    /// covers.) Go's scheduler wakes no thread while one is spinning, and
    /// rayon none while a thread is awake and idle, for the same reason;
    /// without the pair, a chained spawn at 4 workers took the pool's lock
    /// at every spawn, the parked workers registered idle.
    pub fn push_local(&self, searcher: &mut Searcher, item: T, wake: impl FnMut(usize)) -> Woken {
        let me = searcher.me;
        if !self.own_queue_open(searcher) {
            return self.publish(me, [item], wake).woke;
        }
        let local = &self.locals[me];
        {
            let mut items = local.items.lock();
            items.push_back(item);
            local.len.store(items.len(), Ordering::Relaxed);
            local.added.store(local.added.load(OBSERVED) + 1, OBSERVED);
        }
        // The idle count is read after the queue's unlock above (the push /
        // registration pair, see `LocalQueue`).
        self.choose_after_push(me, wake)
    }

    /// The pusher's side of both pairs, after a push the pool's lock did
    /// not see (onto core `me`'s own queue, or onto the outside queue,
    /// `me` the index past the cores): it reads the idle count (its half of
    /// the push / registration pair, ordered after the push by the pushed
    /// queue's unlock or by the outside pusher's fence), then the count of
    /// searchers still to look (its half of the push / search pair, see
    /// [`Self::push_local`]), and takes the pool's lock to choose
    /// searchers only if some core is registered idle and those searchers
    /// cover fewer items than are queued.
    fn choose_after_push(&self, me: usize, wake: impl FnMut(usize)) -> Woken {
        if self.idle_for_pushers.load(Ordering::Relaxed) == 0 {
            return Woken::NONE;
        }
        // The pusher's half of the push / search pair: a
        // read-modify-write, so that it is ordered against every
        // searcher's leaving and every other pusher's read; the queued
        // count after it.
        let to_look = self.mirror.to_look.fetch_add(0, Ordering::AcqRel);
        if to_look > 0 && to_look >= self.queued_for_pushers() {
            return Woken::NONE;
        }
        let mut shared = self.shared.lock();
        if self.covers(me) {
            shared.publishers.insert(me);
        }
        let woke = self.choose_searchers(&mut shared, me, FAN_OUT);
        self.unlock(shared, woke, wake);
        woke
    }

    /// A thread outside the pool's cores (a producer that never runs the
    /// pool's items, index `cores`, never chosen) queues `item`. With
    /// local queues the item goes onto the outside queue, first in first
    /// out, without the pool's lock, and the pool's lock is taken only as
    /// [`push_local`](Self::push_local) takes it: when some core is
    /// registered idle and fewer searchers are still to look than items
    /// queued; then it chooses searchers as a publication does (`wake` for
    /// each after the lock). Without local queues (the kernel's pool) it
    /// [`publish`](Self::publish)es.
    ///
    /// Cores take the outside queue's items one at a time, oldest first
    /// ([`take`](Self::take)): a running core without the pool's lock, as
    /// it pops its own queue; a core about to register idle under it.
    ///
    /// **The outside push / registration pair.** The pusher: push, fence
    /// (SeqCst), then read the idle count. A core registering idle, under
    /// the pool's lock: store the idle count with itself counted, fence
    /// (SeqCst), then look at the outside queue (`register_and_steal`).
    /// The queue has no lock to order the two, as a local queue's does:
    /// the fences do. Whichever fence comes first in their total order, the
    /// read after the other sees the store before the first: the pusher
    /// reads the core counted and takes the lock to choose, or the look
    /// finds the item. (The queue's push is its tail's compare-exchange,
    /// the look's read of it a load of the tail: see `outside_queue`.) The
    /// push / search pair is `push_local`'s: the count of searchers still
    /// to look, read with a read-modify-write after the push.
    pub fn push_outside(&self, item: T, wake: impl FnMut(usize)) -> Woken {
        let outside = self.flags.len();
        if self.locals.is_empty() {
            return self.publish(outside, [item], wake).woke;
        }
        self.outside.push(item);
        // The pusher's half of the outside push / registration pair
        // (above): orders the push before the idle count's load in
        // `choose_after_push`; pairs with the fence in
        // `register_and_steal`.
        fence(Ordering::SeqCst);
        self.choose_after_push(outside, wake)
    }

    /// What `searcher`'s core would find at a look now, read without the
    /// pool's lock (Relaxed loads, see [`Glance`]). A hint for *when* a
    /// core looks, never for *whether*: the pool's worker uses it to leave
    /// another worker's lone item to its owner for a few glances before it
    /// takes the lock to steal it (Go's scheduler waits a few microseconds
    /// before it steals a running P's `runnext` for the same reason). The
    /// core is between two looks meanwhile, as a slow one is; its search,
    /// if it holds one, stands (see the module docs on the herd bound: a
    /// choice counts it as covering an item).
    pub fn glance(&self, searcher: &Searcher) -> Glance {
        if self.locals.is_empty() || (searcher.registered_idle && !searcher.search_wake_seen) {
            return Glance::Look;
        }
        // Its own queue first (popped without the lock); only it pushes
        // there, so an item the loop below finds is another core's.
        if self.locals[searcher.me].len.load(Ordering::Relaxed) > 0
            || self.mirror.shared_queued.load(OBSERVED) > 0
            || !self.outside.is_empty()
        {
            return Glance::Look;
        }
        let mut lone = None;
        for (core, local) in self.locals.iter().enumerate() {
            match local.len.load(Ordering::Relaxed) {
                0 => {}
                1 if lone.is_none() => {
                    lone = Some(Glance::Lone {
                        core,
                        added: local.added.load(OBSERVED),
                    });
                }
                _ => return Glance::Look,
            }
        }
        lone.unwrap_or(Glance::Nothing)
    }

    /// Whether `searcher`'s core may use its own queue without the pool's
    /// lock: the pool has one, and the core has no part in the rule to
    /// settle first (registered idle, searching, a search wake drained).
    fn own_queue_open(&self, searcher: &Searcher) -> bool {
        !self.locals.is_empty()
            && !searcher.registered_idle
            && !searcher.searching
            && !searcher.search_wake_seen
    }

    /// The owner pops its oldest item, without the pool's lock.
    fn pop_own(&self, me: usize) -> Option<T> {
        let local = &self.locals[me];
        // Only the owner pushes: a 0 read here is exact.
        if local.len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut items = local.items.lock();
        let item = items.pop_front();
        local.len.store(items.len(), Ordering::Relaxed);
        item
    }

    /// Whether core `me`'s own queue holds an item and no core is
    /// registered idle: every other core is running, or chosen to search.
    /// A hint for the owner, which may then run a nested fork-join's halves
    /// in place (no decision of the rule reads it). Relaxed loads, no lock:
    /// only the owner adds to its queue, so a stale length is one a thief
    /// has not yet lowered, and a stale idle count one a registration, a
    /// choice or a core's own look has not yet changed; either moves one
    /// join between in place and spawned, and a join promises no thief its
    /// half (`pool::join`).
    pub fn own_queue_feeds_thieves(&self, me: usize) -> bool {
        self.locals
            .get(me)
            .is_some_and(|local| local.len.load(Ordering::Relaxed) > 0)
            && self.idle_for_pushers.load(Ordering::Relaxed) == 0
    }

    /// Core `me`, running its own task, takes back the item it pushed last
    /// onto its own queue, if that item is still there, the newest, and
    /// `is_it` says it is the one (a fork-join's second half that the core
    /// runs itself). Only its owner pushes onto a queue, and removing an
    /// item is taking it: the rule's part is as for [`take`](Self::take)'s
    /// own pops (a searcher woken for it finds one item fewer, as when the
    /// owner pops it first).
    pub fn take_back_newest(&self, me: usize, is_it: impl FnOnce(&T) -> bool) -> Option<T> {
        let local = self.locals.get(me)?;
        // Only the owner pushes: a 0 read here is exact.
        if local.len.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut items = local.items.lock();
        if !items.back().is_some_and(is_it) {
            return None;
        }
        let item = items.pop_back();
        local.len.store(items.len(), Ordering::Relaxed);
        // Not added after all: a lone item that stays on the queue while its
        // owner pushes and takes back others keeps its `added` count, so a
        // glancing core sees the same item stay and steals it in time
        // (`Stealable::glance`), as it would had the owner never pushed.
        local.added.store(local.added.load(OBSERVED) - 1, OBSERVED);
        item
    }

    /// A core found the shared queue empty and registers idle: the idle
    /// count is stored (with it) before any local queue is looked at, then
    /// it looks at the outside queue (its oldest item, after a fence: see
    /// [`Self::push_outside`]) and at every core's queue in turn, its own
    /// first (oldest item first there). From another core's it steals the older half of the
    /// items, oldest first: it returns the oldest and moves the rest onto
    /// its own queue (empty: its own was looked at first, and only its
    /// owner pushes), so a thief of a long queue comes back to the pool's
    /// lock once per half, not once per item. On a find it leaves the idle
    /// set again. Under the pool's lock (one thief at a time).
    fn register_and_steal(&self, shared: &mut Shared<T>, me: usize) -> Option<T> {
        shared.idle.insert(me);
        // The registration's half of the push / registration pair (see
        // `LocalQueue`): stored before the first queue's lock below.
        self.idle_for_pushers
            .store(shared.idle.len(), Ordering::Relaxed);
        let cores = self.locals.len();
        // The registration's half of the outside push / registration pair
        // (see `push_outside`): orders the store above before the look at
        // the outside queue below; pairs with the pusher's fence. Oldest
        // first: one item, never a batch (see `outside_queue`).
        fence(Ordering::SeqCst);
        if let Some(item) = self.outside.pop() {
            shared.idle.remove(me);
            return Some(item);
        }
        let mut loot = VecDeque::new();
        for step in 0..cores {
            let victim = (me + step) % cores;
            let local = &self.locals[victim];
            let mut items = local.items.lock();
            let item = if victim == me {
                items.pop_front()
            } else {
                let half = items.len().div_ceil(2);
                loot.extend(items.drain(..half));
                loot.pop_front()
            };
            if item.is_some() {
                local.len.store(items.len(), Ordering::Relaxed);
                drop(items);
                shared.idle.remove(me);
                if !loot.is_empty() {
                    let own = &self.locals[me];
                    let mut own_items = own.items.lock();
                    let moved = loot.len() as u64;
                    own_items.append(&mut loot);
                    own.len.store(own_items.len(), Ordering::Relaxed);
                    own.added.store(own.added.load(OBSERVED) + moved, OBSERVED);
                }
                return item;
            }
        }
        None
    }

    /// Items queued as a pusher sees them without the pool's lock: the
    /// shared queue's as last mirrored, the local queues' and the outside
    /// queue's as their lengths read now (see the push / search pair in
    /// [`Self::push_local`]).
    fn queued_for_pushers(&self) -> usize {
        self.mirror.shared_queued.load(OBSERVED) + self.items_beside_the_shared_queue()
    }

    /// Items in the local queues and the outside queue: their lengths read
    /// now (Relaxed, see `LocalQueue`; the outside queue's, see
    /// `outside_queue`). 0 for a pool without local queues.
    fn items_beside_the_shared_queue(&self) -> usize {
        if self.locals.is_empty() {
            return 0;
        }
        self.locals
            .iter()
            .map(|local| local.len.load(Ordering::Relaxed))
            .sum::<usize>()
            + self.outside.len()
    }

    /// Core `core` joins the searchers (under the lock, by a choice).
    fn search_begins(&self, shared: &mut Shared<T>, core: usize) {
        shared.searching.insert(core);
        if !self.locals.is_empty() {
            // The push / search pair (see `push_local`): a chooser's
            // addition needs no acquire or release of its own (a pusher
            // that reads the count without it takes the lock), but it must
            // be a read-modify-write: a pusher's release heads a release
            // sequence that only read-modify-writes continue, and a plain
            // store between a push's read and a searcher's leaving would
            // cut it, so that the searcher, taking a shared item, could
            // read the pushed queue's length stale and choose nobody for
            // it (a review of the first version, which stored here, found
            // that interleaving; showing it takes a second chooser's add
            // between the two and two searchers that each take a shared
            // item waiting for the push, four cores: no model has them).
            self.mirror.to_look.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Core `core` leaves the searchers, if it is one (under the lock),
    /// before it looks at any queue.
    fn search_ends(&self, shared: &mut Shared<T>, core: usize) {
        if shared.searching.contains(core) {
            shared.searching.remove(core);
            if !self.locals.is_empty() {
                // The searcher's half of the push / search pair (see
                // `push_local`): before the look that follows reads any
                // queue.
                self.mirror.to_look.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    /// Items queued: the shared queue's exactly, the local queues' and the
    /// outside queue's as their lengths read now.
    fn queued(&self, shared: &Shared<T>) -> usize {
        shared.queue.len() + self.items_beside_the_shared_queue()
    }

    /// Core `me` queues `items` and chooses up to [`FAN_OUT`] other idle
    /// cores to search, one per queued item no searcher covers yet (ones
    /// that have not published since they last looked first), calling
    /// `wake(core)` for each after the lock is released. If `me` itself
    /// held a searcher slot (chosen while registered idle, now running), it
    /// gives the slot up first.
    ///
    /// A publisher that will run one of its items itself right away (a
    /// fork-join caller) should keep that item out of the publication:
    /// every published item may wake a core.
    pub fn publish(
        &self,
        me: usize,
        items: impl IntoIterator<Item = T>,
        wake: impl FnMut(usize),
    ) -> Published {
        let mut shared = self.shared.lock();
        let others_idle = others_idle(&shared, me);
        // A publisher outside the pool's cores (a producer that never runs
        // its items) is never chosen anyway.
        if shared.publishers.covers(me) {
            shared.publishers.insert(me);
        }
        let before = shared.queue.len();
        // One `push_back` per item, with no `reserve` first: the one-item
        // publication of a spawn is the common case, `extend`'s
        // reserve-then-write path is longer for it, and the queue keeps its
        // capacity from round to round anyway. (Counted with callgrind in
        // `peer_bench` fork-join only together with the other fast-path
        // changes of the same commit: 11.6% fewer instructions in all.)
        for item in items {
            shared.queue.push_back(item);
        }
        let added = shared.queue.len() - before;
        let woke = if added > 0 {
            // Chosen while registered idle, and now running its task: its
            // search wake would wait for that task. It hands the slot on;
            // its wake still arrives, and only sends it to look.
            self.search_ends(&mut shared, me);
            self.choose_searchers(&mut shared, me, FAN_OUT)
        } else {
            Woken::NONE
        };
        count_under_lock(&self.mirror.published, added as u64);
        self.unlock(shared, woke, wake);
        Published {
            items: added,
            woke,
            others_idle,
        }
    }

    /// Takes the next item for a core that is running and stays running (a
    /// task helping with its own publication): no part in the rule, so no
    /// searcher state and no wakes. Keeps the invariant: the caller is a
    /// core out of the idle set.
    pub fn try_take(&self) -> Option<T> {
        let mut shared = self.shared.lock();
        let item = shared.queue.pop_front();
        if item.is_some() {
            count_under_lock(&self.mirror.taken, 1);
        }
        self.unlock(shared, Woken::NONE, |_| {});
        item
    }

    /// Called by a core with no pinned work: the next stealable item (its
    /// own queue's oldest first, then the outside queue's oldest unless the
    /// shared queue holds items, both without the pool's lock, when the
    /// core is not registered idle and has no search to settle; then the
    /// shared queue's oldest; then the outside queue's; then another core's
    /// queue, older half stolen), or
    /// `None` when every queue is empty, and then the core is registered idle
    /// and must go to the halt path (its search, if it was searching, is
    /// over). A searcher that finds an item chooses up to [`FAN_OUT`] more
    /// searchers, one per queued item no searcher covers (`wake` for each).
    ///
    /// Fast path, no lock: a core still registered idle from its last call
    /// (it halted and woke with nothing pinned to run, a spurious or a
    /// coalesced wake), that has drained no search wake since, and reads no
    /// item queued, goes straight back to its halt path: its registration
    /// stands, so a publisher of any item it did not see chooses it or a
    /// searcher exists.
    pub fn take(&self, searcher: &mut Searcher, wake: impl FnMut(usize)) -> Option<T> {
        self.end_busy(searcher);
        if self.own_queue_open(searcher) {
            if let Some(item) = self.pop_own(searcher.me) {
                return Some(item);
            }
            // The outside queue's oldest, without the pool's lock, unless
            // the shared queue (as last mirrored) holds items: those go
            // first, under the lock, so that a stream of jobs from outside
            // does not hold them up.
            if self.mirror.shared_queued.load(OBSERVED) == 0
                && let Some(item) = self.outside.pop()
            {
                return Some(item);
            }
        }
        if searcher.registered_idle
            && !searcher.search_wake_seen
            && self.mirror.queued.load(Ordering::Relaxed) == 0
        {
            return None;
        }
        let mut shared = self.shared.lock();
        self.resume(&mut shared, searcher);
        // Every look ends a search, and leaves it before it reads a queue
        // (the push / search pair, see `push_local`).
        let ended_search = searcher.searching;
        if ended_search {
            searcher.searching = false;
            self.search_ends(&mut shared, searcher.me);
        }
        let mut item = shared.queue.pop_front();
        if item.is_none() && !self.locals.is_empty() {
            item = self.register_and_steal(&mut shared, searcher.me);
        }
        let next = match item {
            Some(_) => {
                count_under_lock(&self.mirror.taken, 1);
                if ended_search {
                    self.choose_searchers(&mut shared, searcher.me, FAN_OUT)
                } else {
                    Woken::NONE
                }
            }
            None => {
                shared.idle.insert(searcher.me);
                searcher.registered_idle = true;
                Woken::NONE
            }
        };
        self.unlock(shared, next, wake);
        item
    }

    /// The core's pinned work is over: it clears its busy mark before it
    /// reads the queued count (in [`Self::take`]).
    fn end_busy(&self, searcher: &mut Searcher) {
        if searcher.busy {
            searcher.busy = false;
            self.flags[searcher.me].busy.store(0, Ordering::Relaxed);
            // The queued / busy pair (see `CoreFlags`): this fence orders
            // the store above before the load of the queued count that
            // follows in `take`, and pairs with the chooser's fence, so
            // that load cannot miss an item whose chooser saw this core
            // busy.
            fence(Ordering::SeqCst);
        }
    }

    /// Fault fixture (the kernel's `fault=stranded-steal`): the core skips
    /// this look at the pool and goes on to its halt path without taking
    /// an item. Its busy mark is cleared as a look would clear it, so the
    /// fault leaves the state a lost look leaves (a halting core is never
    /// marked busy), not one no real core can be in.
    #[cfg(feature = "fault-fixtures")]
    pub fn skip_look(&self, searcher: &mut Searcher) {
        self.end_busy(searcher);
    }

    /// Called by a core about to run pinned work (a task, a private job).
    /// A core busy with pinned work never holds a search: if it may have
    /// been chosen (it drained a search wake, is a searcher, or a chooser
    /// marked it), it takes the lock and hands its search on to one other
    /// idle core when a queued item is left uncovered (`wake`) before the
    /// pinned work runs.
    /// Otherwise it takes no lock and **stays registered idle**, marked
    /// busy, so that choosers pass over it while it runs (see `CoreFlags`
    /// for the two pairs that make this safe): a core woken for pinned work
    /// and halting again (a barrier, a ping-pong) then never touches the
    /// pool's lock, which at 32 vCPUs on 2 host cores is a ticket-lock
    /// convoy (the 32-core barrier test stalled on it when every pinned
    /// wake took the lock).
    pub fn before_pinned_work(&self, searcher: &mut Searcher, wake: impl FnMut(usize)) {
        let mut marked = false;
        if searcher.registered_idle && self.covers(searcher.me) {
            if !searcher.busy {
                searcher.busy = true;
                self.flags[searcher.me].busy.store(1, Ordering::Relaxed);
                // The busy / chosen pair (see `CoreFlags`): orders the store
                // above before the load of `chosen` below; pairs with the
                // chooser's fence.
                fence(Ordering::SeqCst);
            }
            marked = self.flags[searcher.me].chosen.load(Ordering::Relaxed) != 0;
        }
        if !marked && !searcher.search_wake_seen && !searcher.searching {
            return;
        }
        let mut shared = self.shared.lock();
        self.resume(&mut shared, searcher);
        let next = if searcher.searching {
            searcher.searching = false;
            self.search_ends(&mut shared, searcher.me);
            if self.queued(&shared) == 0 {
                Woken::NONE
            } else {
                self.choose_searchers(&mut shared, searcher.me, 1)
            }
        } else {
            Woken::NONE
        };
        self.unlock(shared, next, wake);
    }

    /// Whether `core` is one of the pool's cores (a publisher outside them
    /// never runs the pool's work).
    fn covers(&self, core: usize) -> bool {
        core < self.flags.len()
    }

    /// A core looks for work again: it leaves the idle set (and the
    /// publishers), and if a publisher or a searcher chose it while it was
    /// idle and nobody took the slot back, it is the searcher now (its
    /// search wake may still be on its way; it carries no work, so arriving
    /// late it only ends a halt). Its chooser's mark is cleared (under the
    /// lock, as every chooser sets it).
    ///
    /// A core that drained a search wake since its last look drained *the*
    /// one chosen for it (at most one is on its way, `choose_searchers`): it
    /// may be chosen again. A core that looks without having drained one
    /// (woken for pinned work, a tick, a spurious wake, or never halted)
    /// keeps the ticket mark: its ticket is still on its way, and a choice
    /// now would put a second one behind it.
    fn resume(&self, shared: &mut Shared<T>, searcher: &mut Searcher) {
        if searcher.search_wake_seen {
            shared.ticket_pending.remove(searcher.me);
        }
        searcher.search_wake_seen = false;
        shared.publishers.remove(searcher.me);
        if searcher.registered_idle {
            searcher.registered_idle = false;
            shared.idle.remove(searcher.me);
        }
        searcher.searching = shared.searching.contains(searcher.me);
        if self.covers(searcher.me) {
            self.flags[searcher.me].chosen.store(0, Ordering::Relaxed);
        }
    }

    /// Chooses up to `want` idle cores other than `me`, with no search
    /// wake in flight and not busy, as searchers: one per queued item no
    /// searcher covers yet (the herd bound): the lowest polling its inbox
    /// first ([`Stealable::set_polling`]), then the lowest that have not
    /// published since they last looked, then the lowest. Each
    /// chosen core leaves the idle set and is marked as having a ticket in
    /// flight. Busy cores passed over stay registered (they look before
    /// they halt); an idle core with a ticket in flight loses nothing
    /// either (that ticket arrives and sends it to look). When there is a
    /// candidate, stores the queued count first: the chooser's half of the
    /// queued / busy pair.
    fn choose_searchers(&self, shared: &mut Shared<T>, me: usize, want: usize) -> Woken {
        let queued = self.queued(shared);
        let uncovered = queued.saturating_sub(shared.searching.len());
        let want = want.min(uncovered);
        let mut woken = Woken::NONE;
        // No core other than `me` in the idle set: no candidate, so nobody
        // to choose or to pass over as busy (only members of the set are
        // either, and the set grows only under this lock). The queued
        // count's store below matters only before the loop's fence, which
        // needs a candidate; `unlock` stores it for the fast path as
        // always. The common case of a loaded pool, where every
        // publication searched an empty set.
        if want == 0 || others_idle(shared, me) == 0 {
            return woken;
        }
        // The chooser's half of the queued / busy pair (see `CoreFlags`):
        // stored before the fence below, read by a busy core after its own.
        self.mirror.queued.store(queued, Ordering::Relaxed);
        let mut passed_over = Vec::new();
        let hinted = self.polling_hinted.load(OBSERVED);
        while woken.len() < want {
            let polling = |word: usize| self.polling[word].load(OBSERVED);
            let Some(core) = hinted
                .then(|| {
                    shared
                        .idle
                        .take_lowest_within_excluding(me, polling, &shared.ticket_pending)
                })
                .flatten()
                .or_else(|| {
                    shared.idle.take_lowest_preferring_excluding(
                        me,
                        &shared.publishers,
                        Some(&shared.ticket_pending),
                    )
                })
            else {
                break;
            };
            let flags = &self.flags[core];
            flags.chosen.store(1, Ordering::Relaxed);
            // Both pairs (see `CoreFlags`): orders the queued count and the
            // mark above before the load of `busy` below; pairs with the
            // core's fence in `before_pinned_work` (busy / chosen) and in
            // `take` (queued / busy).
            fence(Ordering::SeqCst);
            if flags.busy.load(Ordering::Relaxed) == 0 {
                self.search_begins(shared, core);
                shared.ticket_pending.insert(core);
                woken.push(core);
            } else {
                flags.chosen.store(0, Ordering::Relaxed);
                passed_over.push(core);
            }
        }
        for core in passed_over {
            shared.idle.insert(core);
        }
        // The herd bound, counted where it is decided (the models fail on
        // any count): no more searchers than queued items.
        if shared.searching.len() > queued {
            count_under_lock(&self.mirror.over_chosen, 1);
        }
        woken
    }

    /// How many cores other than `me` are registered idle now (under the
    /// lock: exact at the moment it is read).
    pub fn others_idle(&self, me: usize) -> usize {
        let shared = self.shared.lock();
        let others = others_idle(&shared, me);
        self.unlock(shared, Woken::NONE, |_| {});
        others
    }

    /// Core `core` starts (`true`) or ends (`false`) a poll of its inbox
    /// before its halt path: choices prefer it while it polls (see
    /// `polling`). A hint, taken by no decision's correctness; Relaxed.
    pub fn set_polling(&self, core: usize, polling: bool) {
        let (word, bit) = (core / 64, 1u64 << (core % 64));
        if polling {
            if !self.polling_hinted.load(OBSERVED) {
                self.polling_hinted.store(true, OBSERVED);
            }
            self.polling[word].fetch_or(bit, OBSERVED);
        } else {
            self.polling[word].fetch_and(!bit, OBSERVED);
        }
    }

    /// Whether `core` is registered idle now (under the lock: exact at the
    /// moment it is read).
    pub fn is_idle(&self, core: usize) -> bool {
        let shared = self.shared.lock();
        let idle = shared.idle.contains(core);
        self.unlock(shared, Woken::NONE, |_| {});
        idle
    }

    /// The pool's counts now.
    pub fn snapshot(&self) -> StealSnapshot {
        let m = &self.mirror;
        StealSnapshot {
            queued: m.queued.load(Ordering::Relaxed),
            searching: m.searching.load(OBSERVED),
            searcher: Some(m.searcher.load(OBSERVED)).filter(|&core| core != usize::MAX),
            idle: m.idle.load(OBSERVED),
            published: m.published.load(OBSERVED),
            taken: m.taken.load(OBSERVED),
            search_wakes: m.search_wakes.load(OBSERVED),
            tickets_pending: m.tickets_pending.load(OBSERVED),
            over_chosen: m.over_chosen.load(OBSERVED),
            lock_contended: self.shared.contended_acquisitions(),
        }
    }

    /// The address of the queued-items count (a `usize`), for a table the
    /// host reads from a stopped guest.
    #[cfg(feature = "test-hooks")]
    pub fn queued_address(&self) -> usize {
        core::ptr::from_ref(&self.mirror.queued) as usize
    }

    /// Mirrors the counts, releases the lock, then wakes the chosen cores.
    fn unlock(
        &self,
        shared: MutexGuard<'_, Shared<T>>,
        chosen: Woken,
        mut wake: impl FnMut(usize),
    ) {
        let m = &self.mirror;
        m.queued.store(self.queued(&shared), Ordering::Relaxed);
        m.searching.store(shared.searching.len(), OBSERVED);
        m.searcher
            .store(shared.searching.first().unwrap_or(usize::MAX), OBSERVED);
        m.idle.store(shared.idle.len(), OBSERVED);
        if !self.locals.is_empty() {
            self.idle_for_pushers
                .store(shared.idle.len(), Ordering::Relaxed);
            m.shared_queued.store(shared.queue.len(), OBSERVED);
        }
        m.tickets_pending
            .store(shared.ticket_pending.len(), OBSERVED);
        count_under_lock(&m.search_wakes, chosen.len() as u64);
        drop(shared);
        for &core in chosen.as_slice() {
            wake(core);
        }
    }
}

/// Adds `n` to an observers' count that is written only under the pool's
/// lock: a load and a store, which the lock keeps from racing, count
/// exactly without a locked read-modify-write on a line every publisher
/// and taker writes (readers see a stale value, as [`OBSERVED`] says).
fn count_under_lock(count: &ObservedU64, n: u64) {
    if n > 0 {
        count.store(count.load(OBSERVED) + n, OBSERVED);
    }
}

/// Cores other than `me` in the idle set.
fn others_idle<T>(shared: &Shared<T>, me: usize) -> usize {
    shared.idle.len() - usize::from(shared.idle.contains(me))
}

/// Stealable work stranded: queued, every core halted, nothing taken or
/// published since the last look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stranded {
    /// The counts at the second look.
    pub counts: StealSnapshot,
}

/// The watchdog core's view of a pool across its ticks: stealable work is
/// stranded when two looks in a row found items queued with every core
/// halted, and no item was published or taken between them.
///
/// Why two looks and no clock: a single look reads the cores' states and
/// the pool at different moments, and a core may have woken and gone back
/// to sleep in between. But a core that runs between two looks looks for
/// stealable work before it halts again, and the items of the first look
/// are still queued at the second (none was taken), so it would have taken
/// one. Every core halted at both looks with nothing taken means no core
/// ran in between: nothing will take the items but a wake that is not
/// coming.
#[derive(Debug, Default)]
pub struct StrandWatch {
    last: Option<(u64, u64)>,
}

impl StrandWatch {
    /// A watch that has looked at nothing yet.
    pub const fn new() -> Self {
        Self { last: None }
    }

    /// One look: `counts` of the pool, and whether every core was halted.
    pub fn look(&mut self, counts: StealSnapshot, all_halted: bool) -> Option<Stranded> {
        if !all_halted || counts.queued == 0 {
            self.last = None;
            return None;
        }
        let progress = (counts.published, counts.taken);
        let stranded = self.last == Some(progress);
        self.last = Some(progress);
        stranded.then_some(Stranded { counts })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{Glance, Searcher, Stealable};
    use alloc::vec;
    use alloc::vec::Vec;

    /// Registers each core idle (a `take` that finds nothing).
    fn idle_cores(pool: &Stealable<u32>, cores: &[usize]) -> Vec<Searcher> {
        cores
            .iter()
            .map(|&core| {
                let mut searcher = Searcher::new(core);
                assert_eq!(
                    pool.take(&mut searcher, |_| panic!("no work, no wake")),
                    None
                );
                searcher
            })
            .collect()
    }

    /// Publishes `items` from `me`; the cores chosen, checked against
    /// what `publish` says it chose.
    fn publish_all(pool: &Stealable<u32>, me: usize, items: &[u32]) -> Vec<usize> {
        let mut woke = Vec::new();
        let published = pool.publish(me, items.iter().copied(), |core| woke.push(core));
        assert_eq!(published.woke.as_slice(), woke.as_slice());
        woke
    }

    /// Publishes `items` from `me`; the one core chosen, if any.
    fn publish(pool: &Stealable<u32>, me: usize, items: &[u32]) -> Option<usize> {
        let woke = publish_all(pool, me, items);
        assert!(woke.len() <= 1, "chose {woke:?}");
        woke.first().copied()
    }

    /// Core `searcher` drains its search wake and takes; the item and the
    /// cores it chose.
    fn searcher_takes(pool: &Stealable<u32>, searcher: &mut Searcher) -> (Option<u32>, Vec<usize>) {
        let mut woke = Vec::new();
        searcher.search_wake_drained();
        let item = pool.take(searcher, |core| woke.push(core));
        (item, woke)
    }

    /// Core `searcher` pushes `item` onto its own queue; the cores chosen.
    fn push_local(pool: &Stealable<u32>, searcher: &mut Searcher, item: u32) -> Vec<usize> {
        let mut woke = Vec::new();
        let chose = pool.push_local(searcher, item, |core| woke.push(core));
        assert_eq!(chose.as_slice(), woke.as_slice());
        woke
    }

    /// What a glance reads: nothing; one lone item, told from a later one
    /// by the items added to its queue (a thief's loot included); and
    /// `Look` for plenty (two on one queue, one on each of two, the shared
    /// queue's, the core's own), for a core still registered idle with no
    /// search wake, and for a pool without local queues.
    #[test]
    fn a_glance_tells_a_lone_item_from_plenty_and_from_a_later_one() {
        let pool = Stealable::with_local_queues(3);
        let (mut core_0, core_1) = (Searcher::new(0), Searcher::new(1));
        assert_eq!(pool.glance(&core_1), Glance::Nothing);
        assert_eq!(push_local(&pool, &mut core_0, 10), []);
        let first = Glance::Lone { core: 0, added: 1 };
        assert_eq!(pool.glance(&core_1), first);
        assert_eq!(push_local(&pool, &mut core_0, 11), []);
        assert_eq!(pool.glance(&core_1), Glance::Look, "two on one queue");
        assert_eq!(pool.take(&mut core_0, |_| panic!("no wake")), Some(10));
        // One lone item again, but a later one.
        assert_eq!(pool.glance(&core_1), Glance::Lone { core: 0, added: 2 });
        assert_eq!(pool.glance(&Searcher::new(0)), Glance::Look, "its own");
        assert_eq!(pool.take(&mut core_0, |_| panic!("no wake")), Some(11));
        assert_eq!(pool.glance(&core_1), Glance::Nothing);
        // Three on core 0's queue; core 2 registers idle and steals the
        // older half: one to run, one moved onto its own queue.
        for item in 20..23 {
            assert_eq!(push_local(&pool, &mut core_0, item), []);
        }
        let mut core_2 = Searcher::new(2);
        assert_eq!(pool.take(&mut core_2, |_| panic!("no wake")), Some(20));
        assert_eq!(pool.glance(&core_1), Glance::Look, "one on each of two");
        assert_eq!(pool.take(&mut core_0, |_| panic!("no wake")), Some(22));
        // The loot counts as added to core 2's queue.
        assert_eq!(pool.glance(&core_1), Glance::Lone { core: 2, added: 1 });
        assert_eq!(pool.take(&mut core_2, |_| panic!("no wake")), Some(21));
        // Registered idle, no search wake: its `take` has a fast path.
        let idle = idle_cores(&pool, &[1]);
        assert_eq!(pool.glance(&idle[0]), Glance::Look);
        // The shared queue's items: look (core 0 publishes from its task;
        // core 1 is chosen to search).
        assert_eq!(publish(&pool, 0, &[30]), Some(1));
        assert_eq!(pool.glance(&core_2), Glance::Look, "the shared queue's");
        let kernels = Stealable::<u32>::new(2);
        assert_eq!(kernels.glance(&core_1), Glance::Look, "no local queues");
    }

    #[test]
    fn a_polling_idle_core_is_chosen_before_a_lower_halted_one() {
        let pool = Stealable::new(4);
        let _idle = idle_cores(&pool, &[1, 2, 3]);
        // Cores 1 and 2 halted, core 3 polls: core 3 first, not core 1.
        pool.set_polling(3, true);
        // Core 2 polled too, and its poll ended (it halted): not preferred.
        pool.set_polling(2, true);
        pool.set_polling(2, false);
        assert_eq!(publish(&pool, 0, &[7]), Some(3));
        // No idle core polls now: the lowest.
        assert_eq!(publish(&pool, 0, &[8]), Some(1));
    }

    #[test]
    fn an_own_queue_is_popped_oldest_first_and_stolen_older_half_first() {
        let pool = Stealable::with_local_queues(2);
        // Core 0 runs a task (not registered idle); nobody is idle.
        let mut core_0 = Searcher::new(0);
        for item in 0..5 {
            assert_eq!(push_local(&pool, &mut core_0, item), []);
        }
        assert_eq!(pool.snapshot().search_wakes, 0);
        assert_eq!(pool.take(&mut core_0, |_| panic!("no wake")), Some(0));
        // Core 1 looks: it steals the older half of the four left (1 and
        // 2), runs the oldest and pops the other from its own queue.
        let mut core_1 = Searcher::new(1);
        assert_eq!(pool.take(&mut core_1, |_| panic!("no wake")), Some(1));
        assert_eq!(pool.take(&mut core_1, |_| panic!("no wake")), Some(2));
        assert_eq!(pool.take(&mut core_1, |_| panic!("no wake")), Some(3));
        assert_eq!(pool.take(&mut core_0, |_| panic!("no wake")), Some(4));
        assert_eq!(pool.take(&mut core_0, |_| panic!("no wake")), None);
        assert_eq!(pool.take(&mut core_1, |_| panic!("no wake")), None);
        let counts = pool.snapshot();
        assert_eq!((counts.queued, counts.idle, counts.over_chosen), (0, 2, 0));
    }

    #[test]
    fn a_take_back_takes_only_the_newest_item_it_names_and_un_counts_it() {
        let pool = Stealable::with_local_queues(2);
        let mut core_0 = Searcher::new(0);
        let core_1 = Searcher::new(1);
        assert_eq!(push_local(&pool, &mut core_0, 7), []);
        let lone = pool.glance(&core_1);
        assert_eq!(lone, Glance::Lone { core: 0, added: 1 });
        assert_eq!(push_local(&pool, &mut core_0, 8), []);
        // Not the newest: nothing taken.
        assert_eq!(pool.take_back_newest(0, |item| *item == 7), None);
        // The newest, named: taken, and the lone item left looks as it did
        // before the push (same count), not as a new one.
        assert_eq!(pool.take_back_newest(0, |item| *item == 8), Some(8));
        assert_eq!(pool.glance(&core_1), lone);
        // Another core's queue, or an empty one: nothing.
        assert_eq!(pool.take_back_newest(1, |_| true), None);
        assert_eq!(pool.take(&mut core_0, |_| panic!("no wake")), Some(7));
        assert_eq!(pool.take_back_newest(0, |_| true), None);
        assert_eq!(pool.snapshot().queued, 0);
    }

    /// Two owners' pushes write their own queues' lock words and counts:
    /// no two queues may share a cache line (or the pair x86's
    /// adjacent-line prefetcher moves together), or every push moves a
    /// line between the owners' cores (`LocalQueue`'s doc has the
    /// measurement).
    #[test]
    fn each_local_queue_has_its_cache_lines_to_itself() {
        const LINES_BYTES: usize = 128;
        let pool = Stealable::<u32>::with_local_queues(3);
        let starts: Vec<usize> = pool
            .locals
            .iter()
            .map(|local| core::ptr::from_ref(local) as usize)
            .collect();
        for (core, window) in starts.windows(2).enumerate() {
            assert_eq!(window[0] % LINES_BYTES, 0, "queue {core} starts mid-line");
            assert!(
                window[1] - window[0] >= LINES_BYTES,
                "queues {core} and {} are {} bytes apart",
                core + 1,
                window[1] - window[0]
            );
        }
    }

    #[test]
    fn a_push_onto_an_own_queue_wakes_one_idle_core_per_uncovered_item() {
        let pool = Stealable::with_local_queues(4);
        let mut searchers = idle_cores(&pool, &[1, 2, 3]);
        let mut core_0 = Searcher::new(0);
        assert_eq!(push_local(&pool, &mut core_0, 10), [1]);
        // Two items, one searcher on its way: one more core.
        assert_eq!(push_local(&pool, &mut core_0, 11), [2]);
        assert_eq!(pool.snapshot().searching, 2);
        // Core 1 steals the older item (half of two); core 2 the other.
        assert_eq!(searcher_takes(&pool, &mut searchers[0]), (Some(10), vec![]));
        assert_eq!(searcher_takes(&pool, &mut searchers[1]), (Some(11), vec![]));
        // Core 3 was never woken: nothing was left for it.
        let counts = pool.snapshot();
        assert_eq!(
            (counts.searching, counts.search_wakes, counts.over_chosen),
            (0, 2, 0)
        );
    }

    #[test]
    fn a_thief_with_loot_and_a_ticket_takes_its_loot_before_it_registers_idle() {
        let pool = Stealable::with_local_queues(2);
        let mut core_1 = idle_cores(&pool, &[1]).remove(0);
        let mut core_0 = Searcher::new(0);
        assert_eq!(push_local(&pool, &mut core_0, 10), [1]);
        assert_eq!(push_local(&pool, &mut core_0, 11), []);
        assert_eq!(push_local(&pool, &mut core_0, 12), []);
        // Core 1 looks before its ticket arrives: it steals 10 and 11,
        // runs 10, and 11 waits in its own queue.
        assert_eq!(pool.take(&mut core_1, |_| panic!("no wake")), Some(10));
        assert_eq!(pool.take(&mut core_0, |_| panic!("no wake")), Some(12));
        // Its ticket comes: the look under the lock must find the loot
        // (its own queue first), not register idle past it.
        core_1.search_wake_drained();
        assert_eq!(pool.take(&mut core_1, |_| panic!("no wake")), Some(11));
        assert_eq!(pool.take(&mut core_1, |_| panic!("no wake")), None);
        assert_eq!(pool.snapshot().queued, 0);
    }

    #[test]
    fn a_push_from_outside_wakes_one_idle_core_per_uncovered_item_and_starts_oldest_first() {
        let pool = Stealable::with_local_queues(4);
        let mut searchers = idle_cores(&pool, &[1, 2, 3]);
        let push = |item| {
            let mut woke = Vec::new();
            pool.push_outside(item, |core| woke.push(core));
            woke
        };
        assert_eq!(push(10), [1]);
        // Two items, one searcher on its way: one more core.
        assert_eq!(push(11), [2]);
        // Three items, two searchers: the third idle core.
        assert_eq!(push(12), [3]);
        // No core left registered idle: no lock, no wake.
        assert_eq!(push(13), []);
        // Each searcher takes one, oldest first, and wakes nobody: every
        // item left is covered or its taker is running.
        assert_eq!(searcher_takes(&pool, &mut searchers[0]), (Some(10), vec![]));
        assert_eq!(searcher_takes(&pool, &mut searchers[1]), (Some(11), vec![]));
        // Core 0, running and never registered, pops the next without the
        // pool's lock, the oldest left.
        let mut core_0 = Searcher::new(0);
        assert_eq!(
            pool.take(&mut core_0, |_| panic!("not a searcher")),
            Some(12)
        );
        assert_eq!(searcher_takes(&pool, &mut searchers[2]), (Some(13), vec![]));
        let counts = pool.snapshot();
        assert_eq!(
            (counts.searching, counts.search_wakes, counts.over_chosen),
            (0, 3, 0)
        );
    }

    #[test]
    fn a_core_registered_idle_publishes_instead_of_pushing_onto_its_queue() {
        let pool = Stealable::with_local_queues(2);
        let mut searchers = idle_cores(&pool, &[0, 1]);
        // Core 0 runs a pinned task (registered idle, busy) and spawns.
        pool.before_pinned_work(&mut searchers[0], |_| panic!("not a searcher"));
        assert_eq!(push_local(&pool, &mut searchers[0], 10), [1]);
        // The item is in the shared queue: the published count says so.
        assert_eq!(pool.snapshot().published, 1);
        assert_eq!(searcher_takes(&pool, &mut searchers[1]), (Some(10), vec![]));
    }

    #[test]
    fn the_cores_awake_double_at_each_wake_step_and_never_outnumber_the_items() {
        // Cores 1 to 7 idle, an outside producer (core 8 of 8) publishes 7
        // items.
        let pool = Stealable::new(8);
        let mut searchers = idle_cores(&pool, &[0, 1, 2, 3, 4, 5, 6, 7]);
        let items = [10, 11, 12, 13, 14, 15, 16];
        // Step 1: the publication wakes two.
        assert_eq!(publish_all(&pool, 8, &items), [0, 1]);
        // Step 2: each of them finds an item and wakes two more.
        assert_eq!(
            searcher_takes(&pool, &mut searchers[0]),
            (Some(10), vec![2, 3])
        );
        assert_eq!(
            searcher_takes(&pool, &mut searchers[1]),
            (Some(11), vec![4, 5])
        );
        // Step 3: 5 items left, 4 searchers on their way: one more core.
        assert_eq!(
            searcher_takes(&pool, &mut searchers[2]),
            (Some(12), vec![6])
        );
        // Every item is covered: the rest wake nobody.
        for (core, item) in [(3, 13), (4, 14), (5, 15), (6, 16)] {
            assert_eq!(
                searcher_takes(&pool, &mut searchers[core]),
                (Some(item), vec![])
            );
        }
        let counts = pool.snapshot();
        assert_eq!(
            (counts.queued, counts.searching, counts.search_wakes),
            (0, 0, 7)
        );
        assert_eq!(counts.over_chosen, 0);
        // Core 7 stayed idle: nothing was left for it.
        assert_eq!(counts.idle, 1);
    }

    #[test]
    fn a_publication_wakes_one_core_per_uncovered_item() {
        let pool = Stealable::new(4);
        let mut searchers = idle_cores(&pool, &[1, 2, 3]);
        assert_eq!(publish_all(&pool, 0, &[10]), [1]);
        // A second item while core 1 is on its way: one more core.
        assert_eq!(publish_all(&pool, 0, &[11]), [2]);
        assert_eq!(pool.snapshot().searching, 2);
        // Core 0 (the publisher, running) takes both before they look.
        assert_eq!(pool.try_take(), Some(10));
        assert_eq!(pool.try_take(), Some(11));
        // Each searcher looks, finds nothing, registers idle again: it was
        // woken for an item that was there at its choice.
        assert_eq!(searcher_takes(&pool, &mut searchers[0]), (None, vec![]));
        assert_eq!(searcher_takes(&pool, &mut searchers[1]), (None, vec![]));
        let counts = pool.snapshot();
        assert_eq!(
            (counts.searching, counts.idle, counts.over_chosen),
            (0, 3, 0)
        );
    }

    #[test]
    fn a_searcher_that_finds_work_wakes_nobody_when_every_item_is_covered() {
        let pool = Stealable::new(4);
        let mut searchers = idle_cores(&pool, &[1, 2, 3]);
        assert_eq!(publish_all(&pool, 0, &[10, 11]), [1, 2]);
        assert_eq!(searcher_takes(&pool, &mut searchers[0]), (Some(10), vec![]));
        assert_eq!(searcher_takes(&pool, &mut searchers[1]), (Some(11), vec![]));
        assert_eq!(pool.snapshot().search_wakes, 2);
    }

    #[test]
    fn the_ramp_passes_over_a_core_running_its_own_publication() {
        let pool = Stealable::new(4);
        // Core 0 is registered idle and then runs a task that publishes.
        let mut searchers = idle_cores(&pool, &[0, 1, 2, 3]);
        pool.before_pinned_work(&mut searchers[0], |_| panic!("not a searcher"));
        assert_eq!(publish_all(&pool, 0, &[10, 11, 12]), [1, 2]);
        // Core 0 is the lowest core, but it is busy with its task: core 3
        // is chosen for the item left uncovered.
        assert_eq!(
            searcher_takes(&pool, &mut searchers[1]),
            (Some(10), vec![3])
        );
    }

    #[test]
    fn a_core_busy_with_pinned_work_is_never_chosen_and_hands_a_search_on() {
        let pool = Stealable::new(4);
        let mut searchers = idle_cores(&pool, &[0, 1, 2, 3]);
        // Core 0 starts a long pinned task: it leaves the idle set.
        pool.before_pinned_work(&mut searchers[0], |_| panic!("not a searcher"));
        // An outside publisher (core 4 of a 4-core pool) chooses an idle
        // core, never the busy one.
        assert_eq!(publish(&pool, 4, &[10]), Some(1));
        // Core 1 was chosen while halted; before it looks, pinned work
        // arrives for it: it hands the search on before running it.
        let mut handed = None;
        pool.before_pinned_work(&mut searchers[1], |core| handed = Some(core));
        assert_eq!(handed, Some(2), "the search is handed on, not held");
        assert_eq!(pool.snapshot().searching, 1);
        searchers[2].search_wake_drained();
        assert_eq!(
            pool.take(&mut searchers[2], |_| panic!("nothing left")),
            Some(10)
        );
        assert_eq!(pool.snapshot().searching, 0);
    }

    #[test]
    fn a_publisher_holding_a_searcher_slot_hands_it_on() {
        let pool = Stealable::new(3);
        let mut searchers = idle_cores(&pool, &[0, 1, 2]);
        // Core 2 publishes while every other core is idle; core 0, the
        // lowest, is chosen, then (still running its task, before it looks)
        // publishes itself.
        assert_eq!(publish(&pool, 2, &[10]), Some(0));
        assert_eq!(
            publish_all(&pool, 0, &[11]),
            [1, 2],
            "the publisher's own slot is taken back: both items are uncovered"
        );
        assert_eq!(pool.snapshot().searching, 2);
        // Core 0's search wake arrives: it looks, and is no searcher.
        searchers[0].search_wake_drained();
        assert_eq!(
            pool.take(&mut searchers[0], |_| panic!("not a searcher")),
            Some(10)
        );
        assert!(!searchers[0].is_searching());
        assert_eq!(searcher_takes(&pool, &mut searchers[1]), (Some(11), vec![]));
        assert_eq!(searcher_takes(&pool, &mut searchers[2]), (None, vec![]));
        let counts = pool.snapshot();
        assert_eq!((counts.searching, counts.over_chosen), (0, 0));
    }

    #[test]
    fn a_core_with_a_search_wake_in_flight_is_not_chosen_again() {
        let pool = Stealable::new(3);
        let mut searchers = idle_cores(&pool, &[0, 1, 2]);
        // An outside publisher chooses core 0 and is delayed before its
        // ticket (the kernel's `BeforeSearchWake` window).
        assert_eq!(publish(&pool, 3, &[10]), Some(0));
        assert_eq!(pool.snapshot().tickets_pending, 1);
        // Core 0 wakes for pinned work first: it hands the search on (core
        // 1 is chosen), runs the work, takes the item and goes idle again.
        let mut handed = None;
        pool.before_pinned_work(&mut searchers[0], |core| handed = Some(core));
        assert_eq!(handed, Some(1));
        assert_eq!(
            pool.take(&mut searchers[0], |_| panic!("no searcher")),
            Some(10)
        );
        assert_eq!(
            pool.take(&mut searchers[0], |_| panic!("nothing left")),
            None
        );
        // Core 1 looks, finds nothing, gives the slot up.
        searchers[1].search_wake_drained();
        assert_eq!(
            pool.take(&mut searchers[1], |_| panic!("nothing left")),
            None
        );
        // A new item: core 0 is the lowest idle core, but its first ticket
        // is still on the way; a second would be stale. Core 1 is chosen.
        assert_eq!(publish(&pool, 3, &[11]), Some(1));
        assert_eq!(pool.snapshot().tickets_pending, 2);
        // Core 0's ticket arrives: it looks, takes the item (not as the
        // searcher), and may be chosen again.
        searchers[0].search_wake_drained();
        assert_eq!(
            pool.take(&mut searchers[0], |_| panic!("no searcher")),
            Some(11)
        );
        assert_eq!(pool.snapshot().tickets_pending, 1);
        assert_eq!(
            pool.take(&mut searchers[0], |_| panic!("nothing left")),
            None
        );
        searchers[1].search_wake_drained();
        assert_eq!(
            pool.take(&mut searchers[1], |_| panic!("nothing left")),
            None
        );
        assert_eq!(pool.snapshot().tickets_pending, 0);
        assert_eq!(publish(&pool, 3, &[12]), Some(0));
    }
}
