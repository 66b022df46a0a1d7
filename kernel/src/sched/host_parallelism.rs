//! How many of its cores the host runs at once, measured at boot (and
//! looked at again by workloads, `look_again`, in a window of this
//! module's on fewer cores: [`run_window`]).
//!
//! Under an emulator or a hypervisor each vCPU is a host thread. When more
//! vCPUs want to run than the host has cores for, the host deschedules some
//! of them for whole time slices (milliseconds): a round split over more
//! cores than run at once waits for the descheduled ones, and a core that
//! spins waiting for work takes host time from the cores that have it. The
//! kernel cannot ask the host how many cores it has, but it can see the
//! slices it does not get: a core that reads its clock in a tight loop sees
//! a gap between two reads whenever its vCPU was descheduled.
//!
//! The measurement counts work, not clock gaps. First this core alone
//! (every other core idle) times short runs of a fixed piece of
//! register-only work, a [`CHUNK_STEPS`]-step chunk, and keeps the median
//! run's rate: what one core does per tick when the host runs it (timed
//! again after the window, and the faster of the two kept:
//! [`estimate_milli`]). Then
//! every core runs chunks in one window of [`WINDOW_US`], counting them;
//! one core (the last to arrive) reads the clock and ends the window for
//! all through a flag, and the window's real length is what that core
//! timed (with more cores than the host runs, it sees the time is up only
//! when the host runs it again, a time slice or many later). The chunks
//! every core did, over what one core running that whole window would do,
//! is how many cores the host ran at once while all of them wanted to run:
//! 2 for 32 vCPUs on 2 host cores (each vCPU running about a sixteenth of
//! the window), 32 on a host with 32 idle cores. A core the host has not
//! run yet when the window opens, or descheduled part of it, simply counts
//! fewer chunks.
//!
//! Why not read the clock on every core and count the gaps between reads
//! (the first version did): under QEMU's TCG every guest `rdtsc` takes one
//! global spinlock of QEMU's (`vm_clock_lock` in `cpu_get_ticks`), so with
//! more vCPU threads than host cores a vCPU descheduled while holding it
//! stalls every vCPU that reads the clock for a whole host time slice.
//! That measured 0.36-1.23 cores at 8 vCPUs and 0.00-0.61 at 32 on 2 host
//! cores. Here one core reads the clock during the window, so nobody waits
//! for that lock; the other cores read only the flag, a plain load.
//!
//! The same window also sees which cores run at once, directly: after each
//! chunk a core publishes its count and reads every other core's
//! ([`counted_chunk`]). A core the host runs beside it has finished one
//! chunk since its last look, or two ([`BESIDE_MAX_CHUNKS`]); a core that
//! ran while it was descheduled has finished a time slice's worth, and one
//! not run none. The mean over every look within the window of the cores so
//! seen (its own included) is [`HostParallelism::seen_milli`]: 1.000 in
//! every boot on one host core, 1.815-1.996 on two from 4 vCPUs (a bench at
//! 5484812, where the count read 0.934-0.990 and 1.596-1.968; the count loses
//! what switching vCPUs costs; the look does not, and needs no price of a
//! chunk). The count prices the rounds' split (it is what the host gives,
//! at the rate it gives it); the cores seen say which cores a round trial
//! may try (`round_trial::reach`). A neighbour that takes part of a host
//! core's time lowers the count; the look still sees the cores that run at
//! once while it lets them (with a loop pinned to one of two host cores
//! during the measurement, one boot of three counted 1.382 and saw 1.633;
//! in the other two the count read under 1.0 and the look saw 1.000: the
//! host ran the two vCPUs one at a time). A window that saw no second core, or
//! counted fewer than it saw, is run again, and the higher readings kept
//! ([`wants_second_window`]): a host's neighbour can take a core for the
//! 40 ms of one window.
//!
//! The reading is revised as the kernel runs, upwards only, by the
//! workloads' own rounds: a round trial (`round_trial`) that kept one
//! chunk more than the parallelism in force, where the window (or a look
//! a workload took again, `look_again`, in a window of its own on fewer
//! cores: [`run_window`]) saw that
//! many cores at once, ran its rounds faster on that many cores, and from
//! then on that many are in force ([`show_by_rounds`]): as many idle cores may
//! poll between the workload's rounds (the running plan already splits
//! over the count kept; a boot runs one workload, so no later plan reads
//! it today). Not downwards: a host that takes cores away is seen in
//! the rounds' times only by trying fewer chunks, which costs a compute-
//! heavy round half its cores for every round tried, while a split over
//! more cores than run at once is what the plan's cap prevents.
//!
//! Under Bochs the clock is emulated time, which advances with the
//! instructions of every CPU alike, so every core runs the whole window
//! and the estimate is the core count (Bochs emulates all CPUs in one host
//! thread, but in emulated time they do run at once).

use crate::arch::tsc;
use crate::smp::{cores, remote_call};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use spin::Once;

/// How long every core runs chunks for the measurement, µs. Long against
/// a host time slice (Linux's CFS/EEVDF slices are 0.75 to a few ms), so
/// that a core that is descheduled part of the time shows as such.
pub const WINDOW_US: u64 = 40_000;

/// Steps of one chunk of the measurement's work (a few register
/// instructions each): short against the window (the window ends at most
/// one chunk late on each core) and long against the one clock read per
/// chunk of the core that keeps time (1024 steps measured the same within
/// the boot-to-boot spread, 0.95 instead of 0.96 on one vCPU).
pub const CHUNK_STEPS: u64 = 4096;

/// Timed runs of the solo rate; the median counts.
const SOLO_RUNS: usize = 16;

/// Chunks in one timed solo run.
pub const SOLO_RUN_CHUNKS: u64 = 32;

/// What the measurement found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostParallelism {
    /// Cores the host ran at once, in thousandths (the sum of the cores'
    /// running fractions).
    pub measured_milli: u64,
    /// The cores seen running at once, in thousandths: the mean, over
    /// every look a core took within the window, of that core and the
    /// cores that finished one or two chunks since its previous look
    /// ([`count_chunks`]); the higher of two windows' where two ran.
    pub seen_milli: u64,
    /// What the first window read, in thousandths, when a second window
    /// ran ([`wants_second_window`]); `None`: one window.
    pub first_window_milli: Option<u64>,
    /// The estimate the kernel uses: `measured_milli` rounded to the
    /// nearest whole core, at least 1 and at most the core count.
    pub cores_at_once: usize,
    /// The cores measured.
    pub cores: usize,
}

static MEASURED: Once<HostParallelism> = Once::new();
/// `parallelism=`, if given (set once at boot).
static FIXED: Once<Option<usize>> = Once::new();

/// The boot measurement, or `None` before [`measure`] ran.
pub fn measured() -> Option<HostParallelism> {
    MEASURED.get().copied()
}

/// Fixes the parallelism the kernel uses (`parallelism=`), or leaves it
/// to the measurement (`None`); once, at boot.
pub fn configure(fixed: Option<usize>) {
    FIXED.call_once(|| fixed);
}

/// The most cores a workload's rounds have shown the host runs at once,
/// beyond the boot's reading ([`show_by_rounds`]); 0: none has. Relaxed:
/// written and read by the workload's task on one core ([`in_force`], the
/// statistics), a count that orders nothing.
static SHOWN_BY_ROUNDS: AtomicUsize = AtomicUsize::new(0);

/// The parallelism in force: `parallelism=` if given; else the
/// measurement, or more where a workload's rounds showed more
/// ([`shown_by_rounds`]); else (before the measurement) every core
/// ([`in_force_of`]).
pub fn in_force() -> usize {
    in_force_of(
        FIXED.get().copied().flatten(),
        measured().map(|m| m.cores_at_once),
        SHOWN_BY_ROUNDS.load(Ordering::Relaxed),
        cores::count(),
    )
}

/// The parallelism in force from `parallelism=` (`fixed`), the boot's
/// rounded reading (`measured`, `None` before it), the cores the rounds
/// showed (`shown_by_rounds`, 0: none) and the core count: `fixed` as
/// given; else the reading, or the rounds' count where more (at most the
/// core count); else every core.
pub fn in_force_of(
    fixed: Option<usize>,
    measured: Option<usize>,
    shown_by_rounds: usize,
    count: usize,
) -> usize {
    match (fixed, measured) {
        (Some(fixed), _) => fixed,
        (None, Some(measured)) => measured.max(shown_by_rounds.min(count)),
        (None, None) => count,
    }
}

/// A workload's rounds ran faster on `cores` cores than on the
/// parallelism in force (`round_trial::parallelism_shown`): from now on
/// the parallelism in force is at least `cores` (for the poll slots,
/// where `pollers=` did not fix them, which the caller sets, and for any
/// plan made after it).
/// Not the watches' waits ([`cores_per_host_core`]): those go by the boot
/// reading, the longer wait, as a round on one more core shows that core
/// ran, not that it always will. Returns the parallelism now in force.
pub fn show_by_rounds(cores: usize) -> usize {
    SHOWN_BY_ROUNDS.fetch_max(cores.min(cores::count()), Ordering::Relaxed);
    in_force()
}

/// The most cores a workload's rounds have shown, where more than the
/// boot's reading ([`show_by_rounds`]).
pub fn shown_by_rounds() -> Option<usize> {
    Some(SHOWN_BY_ROUNDS.load(Ordering::Relaxed)).filter(|&cores| cores > 0)
}

/// Puts back what rounds had shown (`None`: none) before an in-kernel
/// test showed some ([`show_by_rounds`]), so that the tests after it plan
/// from the figures the boot had.
pub fn restore_shown_by_rounds(shown: Option<usize>) {
    SHOWN_BY_ROUNDS.store(shown.unwrap_or(0), Ordering::Relaxed);
}

/// Whether `parallelism=` fixed the parallelism (the measurement is then
/// not what the kernel goes by).
pub fn is_fixed() -> bool {
    FIXED.get().copied().flatten().is_some()
}

/// `parallelism=` if given, else the measurement, else (before it) `None`.
fn known() -> Option<usize> {
    FIXED
        .get()
        .copied()
        .flatten()
        .or_else(|| measured().map(|m| m.cores_at_once))
}

/// vCPUs per core the host runs at once (at least 1): how many time
/// slices a descheduled core may wait before the host runs it again. The
/// watches that wait a number of scans for a core to act (a waker to
/// finish its notify, a searcher to look) wait this many times longer, so
/// that 256 vCPUs on 2 host cores (128 per host core) are not reported for
/// a vCPU the host has simply not run yet.
///
/// Before the measurement has ended (and without `parallelism=`) nothing
/// is known, and a watch must assume the worst: one core at a time, every
/// core a sharer. Not [`in_force`]'s "every core at once", which is the
/// right guess for how to split work (too many chunks cost little) but
/// the wrong one for how long to wait: the measurement's job is pushed to
/// every other core's inbox, and CI saw the stalled-waker watch report a
/// waker descheduled mid-notify during it after 5 scans at 256 vCPUs on 2
/// host cores.
pub fn cores_per_host_core() -> usize {
    cores::count().div_ceil(known().unwrap_or(1).max(1))
}

/// Runs the measurement on every core at once (from a task on the
/// bootstrap core, after every AP is online and idle) and keeps its
/// result: one window, and a second where the first saw no second core
/// at once or counted fewer than it saw ([`wants_second_window`]), the
/// higher reading kept ([`kept_milli`]) and the higher cores seen.
pub fn measure() -> HostParallelism {
    let count = cores::count();
    let first_window = count_window(count);
    let first = first_window.milli(first_window.solo_run_ticks);
    let first_seen = first_window.seen_milli();
    let (first, second, seen) = if wants_second_window(first, first_seen, count) {
        let second_window = count_window(count);
        // Both windows priced at the fastest of the four solo timings:
        // each window's own fastest would let a second window whose solo
        // timings were both slowed read high and be kept.
        let solo = first_window
            .solo_run_ticks
            .min(second_window.solo_run_ticks);
        (
            first_window.milli(solo),
            Some(second_window.milli(solo)),
            first_seen.max(second_window.seen_milli()),
        )
    } else {
        (first, None, first_seen)
    };
    let measured_milli = kept_milli(first, second);
    let cores_at_once = whole_cores(measured_milli, count);
    let result = HostParallelism {
        measured_milli,
        seen_milli: seen,
        first_window_milli: second.map(|_| first),
        cores_at_once,
        cores: count,
    };
    *MEASURED.call_once(|| result)
}

/// `milli` thousandths of a core as whole cores: rounded to the nearest,
/// at least 1 and at most `cores`. The count's cores at once
/// ([`HostParallelism::cores_at_once`]) and the cores seen at once (from
/// [`HostParallelism::seen_milli`]: one host core's windows saw 1.000 at
/// 1 to 256 vCPUs, two host cores' 1.815-1.996, results.md).
pub fn whole_cores(milli: u64, cores: usize) -> usize {
    usize::try_from(milli.saturating_add(500) / 1000)
        .unwrap_or(usize::MAX)
        .clamp(1, cores.max(1))
}

/// Whether a first window that read `count_milli` thousandths of a core
/// ([`estimate_milli`]) and saw `seen_milli` at once
/// ([`HostParallelism::seen_milli`]) on `cores` cores is measured again:
/// where it saw no second core ([`whole_cores`]), so that no round trial
/// could reach one (`round_trial::reach`), or where the count rounds to
/// fewer cores than were seen (a host's neighbour took part of a host
/// core's time, or switching vCPUs cost the count more than half a core:
/// one boot of 100 from 4 vCPUs on two host cores in the bench at
/// 5484812; the count is what splits the rounds, and a trial runs only
/// for the stealing pool with its chunks left to the plan and enough
/// rounds left). A neighbour can take a core for the 40 ms of one
/// window: at 64 vCPUs on 2 host cores one boot of 20 read 0.938 (the
/// others 1.929-1.985) and ran sync-heavy Laplace on one core, 95 ms
/// against 59-79. On a host that really runs one core at a time every
/// boot with more than one core measures twice (one more window at boot:
/// 40 ms, and longer with many vCPUs, as the window ends when every vCPU
/// has seen it end).
pub fn wants_second_window(count_milli: u64, seen_milli: u64, cores: usize) -> bool {
    let seen = whole_cores(seen_milli, cores);
    cores > 1 && (seen <= 1 || whole_cores(count_milli, cores) < seen)
}

/// The reading kept of the first window's and the second's (if one ran):
/// the higher. A window reads low whenever the host gives its cores'
/// time to another program (they count fewer chunks), and high only when
/// the solo timings it is priced at were all slowed: every chunk counted
/// was run, and both windows are priced at the fastest of their four
/// solo timings ([`measure`]).
pub fn kept_milli(first_milli: u64, second_milli: Option<u64>) -> u64 {
    second_milli.map_or(first_milli, |second| first_milli.max(second))
}

/// What one window counted.
#[derive(Debug, Clone, Copy)]
struct WindowCount {
    /// What the window's cores counted ([`run_window`]).
    window: WindowLooks,
    /// The faster of the solo runs timed before and after it, ticks (each
    /// chunk of a run with its look, as in the window).
    solo_run_ticks: u64,
}

impl WindowCount {
    /// The cores the host ran at once, in thousandths, with a solo run
    /// taking `solo_run_ticks` ([`estimate_milli`]).
    fn milli(self, solo_run_ticks: u64) -> u64 {
        estimate_milli(
            self.window.chunks,
            [solo_run_ticks; 2],
            self.window.window_ticks,
        )
    }

    /// The cores its looks saw at once, in thousandths ([`seen_milli`]).
    fn seen_milli(self) -> u64 {
        self.window.seen_milli()
    }
}

/// One measurement: the solo rate, a window of [`WINDOW_US`] on every
/// core, the solo rate again.
fn count_window(count: usize) -> WindowCount {
    // Ticks SOLO_RUN_CHUNKS chunks take a core the host runs (at least 1),
    // before the window and again after it (see `estimate_milli`).
    let run_ticks_before = solo_run_ticks(count);
    let window = run_window(count, WINDOW_US);
    let run_ticks_after = solo_run_ticks(count);
    WindowCount {
        window,
        solo_run_ticks: run_ticks_before.min(run_ticks_after),
    }
}

/// What a window's cores counted together ([`run_window`]).
#[derive(Debug, Clone, Copy)]
pub struct WindowLooks {
    /// Chunks every core did in the window.
    pub chunks: u64,
    /// The looks every core took within the window ([`count_chunks`]).
    pub looks: u64,
    /// The cores those looks saw beside them, in all.
    pub cores_beside: u64,
    /// The window's real length, ticks (the timekeeper's).
    pub window_ticks: u64,
}

impl WindowLooks {
    /// The cores its looks saw at once, in thousandths ([`seen_milli`]).
    pub fn seen_milli(self) -> u64 {
        seen_milli(self.looks, self.cores_beside)
    }
}

/// One window of `window_us` on cores `0..participants` at once (this
/// core among them, from a task): every core counts chunks and looks at
/// the others' after each ([`count_chunks`]), from when the last of them
/// arrives until it sees the time is up.
pub fn run_window(participants: usize, window_us: u64) -> WindowLooks {
    // More participants than cores would never see the last one arrive:
    // every core would wait for it with interrupts off.
    assert!(
        (1..=cores::count()).contains(&participants),
        "a window on {participants} of {} cores",
        cores::count()
    );
    let count = participants;
    let arrived = Arc::new(AtomicUsize::new(0));
    let phase = Arc::new(AtomicU8::new(WAITING));
    // Each core's chunks so far, published after each chunk and read by
    // every other core's looks (`counted_chunk`).
    let progress: Arc<Vec<ChunkCount>> = Arc::new(chunk_counts(count));
    // What each core counted (`count_chunks`), written once at its end.
    let tally: Arc<Vec<spin::Mutex<ChunksCounted>>> =
        Arc::new((0..count).map(|_| spin::Mutex::default()).collect());
    let window = tsc::us_to_ticks(window_us);
    // The window's real length, ticks (the timekeeper's).
    let elapsed = Arc::new(AtomicU64::new(0));
    let job = {
        let (arrived, phase, progress, tally, elapsed) = (
            arrived.clone(),
            phase.clone(),
            progress.clone(),
            tally.clone(),
            elapsed.clone(),
        );
        Arc::new(move |core: usize| {
            // Relaxed throughout: the counts are joined by `run_on_first`
            // (each job's end happens before the join returns), and the
            // phase carries no data, only when to count. A look's loads
            // of the other cores' counts need no order either: each
            // count only grows (one writer), and a load sees one of its
            // values, no older than the last this core loaded (coherence
            // of one location), which is all a look compares.
            let mut last: Vec<u64> = alloc::vec![0; count];
            let timekeeper = arrived.fetch_add(1, Ordering::Relaxed) + 1 == count;
            let counted = if timekeeper {
                // The window is what the others counted in: from before
                // the flag opens it to after the flag closes it (a
                // timekeeper descheduled in between makes it longer,
                // never shorter than the counting). It ends when the
                // timekeeper sees the time is up, which with more cores
                // than the host runs can be a host time slice or many
                // after `end`, so its real length is what counts.
                let begin = tsc::now();
                phase.store(COUNTING, Ordering::Relaxed);
                note_progress(&progress, &mut last);
                let end = begin + window;
                let counted = count_chunks(core, &progress, &mut last, || tsc::now() < end);
                phase.store(STOPPED, Ordering::Relaxed);
                elapsed.store(tsc::now() - begin, Ordering::Relaxed);
                counted
            } else {
                while phase.load(Ordering::Relaxed) == WAITING {
                    core::hint::spin_loop();
                }
                note_progress(&progress, &mut last);
                // A core first run after the close counts nothing.
                let open = || phase.load(Ordering::Relaxed) == COUNTING;
                if open() {
                    count_chunks(core, &progress, &mut last, open)
                } else {
                    ChunksCounted::default()
                }
            };
            *tally[core].lock() = counted;
            Ok(())
        })
    };
    if let Err(why) = remote_call::run_on_first(count, job) {
        panic!("host parallelism: the measurement failed on a core: {why}");
    }
    let total = |field: fn(&ChunksCounted) -> u64| -> u64 {
        tally.iter().map(|counted| field(&counted.lock())).sum()
    };
    WindowLooks {
        chunks: total(|c| c.chunks),
        looks: total(|c| c.looks),
        cores_beside: total(|c| c.beside),
        window_ticks: elapsed.load(Ordering::Relaxed),
    }
}

/// What one core counted in a window ([`count_chunks`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunksCounted {
    /// Chunks run.
    pub chunks: u64,
    /// Looks that count: those taken while the window was open.
    pub looks: u64,
    /// The cores those looks saw beside this one, in all.
    pub beside: u64,
}

/// Runs counted chunks ([`counted_chunk`]) on core `core`, the window
/// open when called, until `open()`, asked after each chunk and its look,
/// says the window has closed; a look counts only where the window was
/// still open after it. The look after a chunk a core was descheduled
/// in and finished after the close would see as beside it every core
/// that had finished its own such last chunk since this one's previous
/// look: with more vCPUs than host cores they resume one after another
/// after the close, a chunk each (counted, one host core saw up to 1.017
/// cores at once at 32 vCPUs, two host cores 2.136 at 256). `open()` runs
/// after the look's loads: `counted_chunk` is never inlined, and x86
/// (and TCG on an x86 host) keeps loads in order; no ordering could
/// make "after the close" mean more than that.
pub fn count_chunks(
    core: usize,
    progress: &[ChunkCount],
    last: &mut [u64],
    mut open: impl FnMut() -> bool,
) -> ChunksCounted {
    let mut counted = ChunksCounted::default();
    loop {
        counted.chunks += 1;
        let beside = counted_chunk(core, counted.chunks, progress, last);
        if !open() {
            return counted;
        }
        counted.looks += 1;
        counted.beside += beside;
    }
}

/// Chunks another core may finish between two of a core's looks and still
/// have run beside it. A core the host runs beside this one runs the same
/// chunks at the same rate: one in this core's one, two or none where
/// their chunks' ends fall apart (none only errs low). A core that ran
/// while this one was descheduled ran for a host time slice (0.75 ms and
/// up under Linux), tens of chunks, and a core not run at all none.
pub const BESIDE_MAX_CHUNKS: u64 = 2;

/// The cores seen at once, in thousandths ([`HostParallelism::seen_milli`]),
/// from the looks every core took within the window (`looks`)
/// and the cores they saw beside them in all (`cores_beside`): each look
/// counts its own core and those beside it; the mean over the looks.
pub fn seen_milli(looks: u64, cores_beside: u64) -> u64 {
    1000 + cores_beside.saturating_mul(1000) / looks.max(1)
}

/// One core's count of chunks, alone on its 128 bytes (a host cache line
/// and the one an x86 host prefetches with it): every core stores to its
/// own after each chunk, and counts packed eight to a line would bounce
/// that line between the host cores running vCPUs in the window, which
/// the solo runs (one core) never pay; the count of chunks would then
/// read low.
#[repr(align(128))]
#[derive(Debug, Default)]
pub struct ChunkCount(pub AtomicU64);

const _: () = assert!(core::mem::align_of::<ChunkCount>() == 128);

/// `count` chunk counts at 0.
pub fn chunk_counts(count: usize) -> Vec<ChunkCount> {
    (0..count).map(|_| ChunkCount::default()).collect()
}

/// Loads every core's count into `last`, the looks' starting point.
fn note_progress(progress: &[ChunkCount], last: &mut [u64]) {
    for (count, seen) in progress.iter().zip(last.iter_mut()) {
        *seen = count.0.load(Ordering::Relaxed);
    }
}

/// One counted chunk of core `core`, its `done`th: the chunk, its count
/// published in `progress`, and a look at the other cores' counts against
/// what this core's previous look saw (`last`, updated); returns how many
/// finished between 1 and [`BESIDE_MAX_CHUNKS`] chunks since, that is ran
/// beside this core's chunk.
///
/// The solo runs run it too (against counts nobody moves), so that the
/// chunk rate they time is the window's, look included. Never inlined,
/// and aligned to 256 bytes, the power of two above its size, for the
/// reason [`chunk`] is (the suite checks the release build's page,
/// `qemu-tests/tests/hot_loop_pages.rs`).
#[rustc_align(256)]
#[inline(never)]
pub fn counted_chunk(core: usize, done: u64, progress: &[ChunkCount], last: &mut [u64]) -> u64 {
    chunk();
    progress[core].0.store(done, Ordering::Relaxed);
    let mut beside = 0;
    for (other, (count, seen)) in progress.iter().zip(last.iter_mut()).enumerate() {
        let now = count.0.load(Ordering::Relaxed);
        let finished = now.saturating_sub(*seen);
        *seen = now;
        if other != core && (1..=BESIDE_MAX_CHUNKS).contains(&finished) {
            beside += 1;
        }
    }
    beside
}

/// Cores the host ran at once, in thousandths: the chunks every core did
/// in the window, times the ticks a chunk takes a running core, over the
/// window's real length (`window_ticks`); a chunk's ticks are a solo run's
/// over its [`SOLO_RUN_CHUNKS`], divided last.
///
/// The solo rate is timed twice, before and after the window, and the
/// faster of the two counts. A solo phase the host slowed (another
/// program's burst on the sibling host core, QEMU translating code) makes
/// every chunk look dear and the estimate too high, and too high costs
/// far more than too low: a round split over more cores than run at once
/// waits for the descheduled ones (one boot of 32 vCPUs on 2 host cores
/// read 5.6 cores and took 325 ms against 38-65 for the others). A solo
/// phase cannot run faster than the host runs a core, so the faster
/// timing is the nearer one.
pub fn estimate_milli(total_chunks: u64, solo_runs_ticks: [u64; 2], window_ticks: u64) -> u64 {
    let run_ticks = solo_runs_ticks[0].min(solo_runs_ticks[1]).max(1);
    total_chunks.saturating_mul(run_ticks).saturating_mul(1000)
        / SOLO_RUN_CHUNKS.saturating_mul(window_ticks.max(1))
}

/// The window has not opened (cores spin on the flag, not counting).
const WAITING: u8 = 0;
/// The window is open: every core counts chunks.
const COUNTING: u8 = 1;
/// The window is over.
const STOPPED: u8 = 2;

/// Ticks [`SOLO_RUN_CHUNKS`] chunks take this core when the host runs it:
/// the median of [`SOLO_RUNS`] timed runs, each run read
/// against the clock only at its ends (every other core is idle, so
/// nothing else waits for the clock either). The median, not the fastest:
/// the fastest of 16 is a lucky run, and against it one vCPU alone read
/// 0.83-0.96 cores; a run the host interrupted is slower, and the median
/// ignores up to half of them. Each chunk is a window's counted chunk,
/// with its look at `count` cores' counts ([`counted_chunk`]).
fn solo_run_ticks(count: usize) -> u64 {
    let me = crate::arch::percpu::current_index();
    let progress = chunk_counts(count);
    let mut last: Vec<u64> = alloc::vec![0; count];
    let mut done = 0;
    let mut runs = [0u64; SOLO_RUNS];
    for run in runs.iter_mut() {
        let begin = tsc::now();
        for _ in 0..SOLO_RUN_CHUNKS {
            done += 1;
            core::hint::black_box(counted_chunk(me, done, &progress, &mut last));
        }
        *run = tsc::now() - begin;
    }
    runs.sort_unstable();
    runs[SOLO_RUNS / 2].max(1)
}

/// One chunk of the measurement's work: [`CHUNK_STEPS`] steps of a
/// xorshift in registers, its result kept from the optimiser.
///
/// Never inlined: the solo runs and the window must run the very same
/// instructions, because under TCG where a loop lies decides its speed.
/// A direct jump is chained only within a guest page, so a loop whose
/// back edge crosses a page boundary goes through QEMU's
/// `helper_lookup_tb_ptr` every iteration: one build had the window's
/// inlined copy across a boundary and its solo copy not, ran the window
/// 7x slower (38% of the vCPU thread in that helper, `perf`) and read one
/// vCPU as 0.14 cores; the same source with a print added read 0.99.
/// Aligned to 128 bytes, the power of two above its size (117 bytes on
/// x86_64 at 604fde8), so that no layout puts it across a page (the
/// suite checks the release build's, `qemu-tests/tests/hot_loop_pages.rs`).
#[rustc_align(128)]
#[inline(never)]
pub(super) fn chunk() {
    // The seed through `black_box`, so that the loop cannot be folded to
    // a constant.
    let mut x: u64 = core::hint::black_box(0x9e37_79b9_7f4a_7c15);
    for _ in 0..CHUNK_STEPS {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    core::hint::black_box(x);
}
