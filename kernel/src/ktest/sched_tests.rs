//! The scheduler and the wake protocol on real cores: ping-pong, a burst of
//! wakes to halted cores, wake-before-block, wait-queue replacement,
//! barrier and fork-join rounds, and a seeded random storm.

use super::runner::{TestCase, TestResult};
use crate::arch::interrupt_vectors::COUNTS;
use crate::sched::barrier::Barrier;
use crate::sched::core_sched;
use crate::sched::fork_join::{ForkJoin, Job};
use crate::sched::task::TaskRef;
use crate::sched::wait_queue::{Registered, WaitQueue};
use crate::sched::wakeup::{self, park};
use crate::smp::cores;
use crate::workloads::ping_pong;
use crate::{ensure, require};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Once;
use vigil_wake::{Policy, State};

pub const PING_PONG: TestCase = TestCase {
    name: "sched::ping_pong_10000",
    run: ping_pong_10000,
};
pub const BURST: TestCase = TestCase {
    name: "sched::burst_wakes_each_halted_core_once",
    run: burst,
};
pub const WAKE_BEFORE_BLOCK: TestCase = TestCase {
    name: "sched::wake_before_block",
    run: wake_before_block,
};
pub const WAIT_QUEUE_REPLACES: TestCase = TestCase {
    name: "sched::wait_queue_reregister_replaces",
    run: wait_queue_replaces,
};
pub const BARRIER_ROUNDS: TestCase = TestCase {
    name: "sched::barrier_rounds",
    run: barrier_rounds,
};
pub const FORK_JOIN_ROUNDS: TestCase = TestCase {
    name: "sched::fork_join_rounds",
    run: fork_join_rounds,
};
pub const STEAL_JOIN_ROUNDS: TestCase = TestCase {
    name: "sched::steal_join_rounds",
    run: steal_join_rounds,
};
pub const STEAL_BESIDE_BUSY_CORE: TestCase = TestCase {
    name: "sched::stealable_work_runs_beside_a_busy_core",
    run: steal_beside_busy_core,
};
pub const STORM: TestCase = TestCase {
    name: "sched::random_storm_100000",
    run: storm,
};
pub const COUNTERS_MATCH_POLICY: TestCase = TestCase {
    name: "sched::counters_match_policy",
    run: counters_match_policy,
};

fn totals() -> (u64, u64) {
    core_sched::cores().iter().fold((0, 0), |(ipis, halts), c| {
        let s = c.wake.counters().snapshot();
        (ipis + s.wakes_sent, halts + s.halts)
    })
}

fn ping_pong_10000() -> TestResult {
    let report = ping_pong::run(10_000)?;
    crate::println!("ping-pong ({}): {report}", core_sched::policy().name());
    Ok(())
}

/// Waits (yielding) until every core but this one is `Halted`.
fn wait_all_others_halted() -> TestResult {
    let me = crate::arch::percpu::current_index();
    let mut spins = 0u64;
    while (0..cores::count())
        .any(|c| c != me && core_sched::cores()[c].wake.state() != State::Halted)
    {
        spins += 1;
        ensure!(spins < 50_000_000, "other cores never all halted");
        core::hint::spin_loop();
    }
    Ok(())
}

/// One task on every other core blocks; once those cores halted, one task
/// wakes them all at once. Each is woken exactly once; under the halting
/// policies each halted core takes exactly one wake IPI (seed 000's burst
/// bug would send several to one core and none to others).
fn burst() -> TestResult {
    let n = cores::count();
    require!(n >= 2, "needs at least 2 cores, have {n}");
    require!(
        core_sched::policy().halts(),
        "policy {} never halts",
        core_sched::policy().name()
    );
    struct Sleeper {
        task: Once<TaskRef>,
        go: AtomicBool,
        wakes_seen: AtomicU64,
    }
    let sleepers: Arc<Vec<Sleeper>> = Arc::new(
        (0..n)
            .map(|_| Sleeper {
                task: Once::new(),
                go: AtomicBool::new(false),
                wakes_seen: AtomicU64::new(0),
            })
            .collect(),
    );
    let handles: Vec<_> = (1..n)
        .map(|c| {
            let sleepers = sleepers.clone();
            wakeup::spawn_on(c, move || {
                let me = &sleepers[c];
                me.task.call_once(wakeup::current);
                while !me.go.load(Ordering::Acquire) {
                    park();
                }
                me.wakes_seen.fetch_add(1, Ordering::Relaxed);
            })
        })
        .collect();
    while (1..n).any(|c| sleepers[c].task.get().is_none()) {
        wakeup::yield_now();
    }
    wait_all_others_halted()?;
    let irqs_before: Vec<u64> = (0..n)
        .map(|c| COUNTS[c].wake.load(Ordering::Relaxed))
        .collect();
    // Sender-side count of this core (the only waker of the sleepers): the
    // sleepers' exits wake this task back, and this core may halt in the
    // join, so IPIs *to* core 0 are not part of the burst.
    let my_ipis = || {
        core_sched::this_core()
            .wake
            .counters()
            .snapshot()
            .wakes_sent
    };
    let ipis_before = my_ipis();
    for sleeper in &sleepers[1..] {
        sleeper.go.store(true, Ordering::Release);
        wakeup::wake(sleeper.task.get().expect("registered"));
    }
    let ipis_after = my_ipis();
    for handle in handles {
        handle.join();
    }
    for c in 1..n {
        let seen = sleepers[c].wakes_seen.load(Ordering::Relaxed);
        ensure!(seen == 1, "sleeper on core {c} ran its wake {seen} times");
        let irqs = COUNTS[c].wake.load(Ordering::Relaxed) - irqs_before[c];
        ensure!(
            irqs == 1,
            "halted core {c} took {irqs} wake IPIs, expected 1"
        );
    }
    ensure!(
        ipis_after - ipis_before == (n - 1) as u64,
        "{} IPIs for {} halted cores",
        ipis_after - ipis_before,
        n - 1
    );
    Ok(())
}

/// The wake lands after the task decided to block and before it parks: the
/// park returns at once (the token), and the task runs on.
fn wake_before_block() -> TestResult {
    let n = cores::count();
    let waker_core = if n > 1 { 1 } else { 0 };
    let decided = Arc::new(AtomicBool::new(false));
    let woken = Arc::new(AtomicBool::new(false));
    let me = wakeup::current();
    let (d, w) = (decided.clone(), woken.clone());
    let waker = wakeup::spawn_on(waker_core, move || {
        while !d.load(Ordering::Acquire) {
            wakeup::yield_now();
        }
        wakeup::wake(&me);
        w.store(true, Ordering::Release);
    });
    // "Decide to block": the condition we would wait for is false...
    decided.store(true, Ordering::Release);
    // ...and the wake arrives before we park.
    while !woken.load(Ordering::Acquire) {
        wakeup::yield_now();
    }
    park(); // must return: the wake left a token
    waker.join();
    Ok(())
}

/// Registering again under the same key replaces the task (seed 002): only
/// the newest registration is woken, and the queue holds one entry.
fn wait_queue_replaces() -> TestResult {
    let queue = Arc::new(WaitQueue::new());
    let flags: Arc<[AtomicBool; 2]> = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
    let tasks: Arc<[Once<TaskRef>; 2]> = Arc::new([Once::new(), Once::new()]);
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let (flags, tasks, stop) = (flags.clone(), tasks.clone(), stop.clone());
            wakeup::spawn_on(0, move || {
                tasks[i].call_once(wakeup::current);
                park();
                if !stop.load(Ordering::Acquire) {
                    flags[i].store(true, Ordering::Release);
                }
            })
        })
        .collect();
    while tasks.iter().any(|t| t.get().is_none()) {
        wakeup::yield_now();
    }
    let first = tasks[0].get().unwrap().clone();
    let second = tasks[1].get().unwrap().clone();
    ensure!(
        queue.register(42, first.clone()) == Registered::Added,
        "first registration"
    );
    ensure!(
        queue.register(42, second.clone()) == Registered::Replaced,
        "re-registration did not replace"
    );
    ensure!(queue.len() == 1, "{} entries for one key", queue.len());
    ensure!(
        queue.wake_all() == 1,
        "wake_all woke more than the one entry"
    );
    while !flags[1].load(Ordering::Acquire) {
        wakeup::yield_now();
    }
    ensure!(
        !flags[0].load(Ordering::Acquire),
        "the replaced registration was woken"
    );
    stop.store(true, Ordering::Release);
    wakeup::wake(&first);
    for handle in handles {
        handle.join();
    }
    Ok(())
}

/// One task per core meets at a barrier for 200 rounds; in each round every
/// task sees all the others' contributions of the previous round.
fn barrier_rounds() -> TestResult {
    const ROUNDS: u64 = 200;
    let n = cores::count();
    let barrier = Arc::new(Barrier::new(n));
    let counter = Arc::new(AtomicU64::new(0));
    let failures = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (1..n)
        .map(|c| {
            let (b, cnt, f) = (barrier.clone(), counter.clone(), failures.clone());
            wakeup::spawn_on(c, move || barrier_party(&b, &cnt, &f, n as u64, ROUNDS))
        })
        .collect();
    barrier_party(&barrier, &counter, &failures, n as u64, ROUNDS);
    for handle in handles {
        handle.join();
    }
    ensure!(
        failures.load(Ordering::Relaxed) == 0,
        "{} rounds saw a partial count",
        failures.load(Ordering::Relaxed)
    );
    ensure!(
        counter.load(Ordering::Relaxed) == ROUNDS * n as u64,
        "counter {}",
        counter.load(Ordering::Relaxed)
    );
    Ok(())
}

fn barrier_party(
    barrier: &Barrier,
    counter: &AtomicU64,
    failures: &AtomicU64,
    n: u64,
    rounds: u64,
) {
    for round in 1..=rounds {
        counter.fetch_add(1, Ordering::Relaxed);
        barrier.wait();
        if counter.load(Ordering::Relaxed) < round * n {
            failures.fetch_add(1, Ordering::Relaxed);
        }
        barrier.wait();
    }
}

/// 300 fork-join rounds over every core: each worker adds its index + 1 to
/// its own slot each round; the totals are exact.
fn fork_join_rounds() -> TestResult {
    const ROUNDS: u64 = 300;
    let n = cores::count();
    let pool = ForkJoin::new(n);
    let slots: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let s = slots.clone();
    let job: Job = Arc::new(move |i| {
        s[i].fetch_add(i as u64 + 1, Ordering::Relaxed);
    });
    for _ in 0..ROUNDS {
        pool.run(&job);
    }
    pool.shutdown();
    for (i, slot) in slots.iter().enumerate() {
        let got = slot.load(Ordering::Relaxed);
        ensure!(got == ROUNDS * (i as u64 + 1), "worker {i}: {got}");
    }
    Ok(())
}

/// 300 work-stealing rounds of `2 * cores` chunks: each chunk adds its
/// index + 1 to its own slot; the totals are exact whichever cores ran
/// them, the pool is empty afterwards, and every chunk but the caller's
/// own (chunk 0, run unpublished) went through the pool once.
fn steal_join_rounds() -> TestResult {
    const ROUNDS: u64 = 300;
    require!(
        crate::sched::stealable::enabled(),
        "needs pool=steal (the default)"
    );
    let chunks = 2 * cores::count();
    let pool = crate::sched::steal_join::StealJoin::new();
    let slots: Arc<Vec<AtomicU64>> = Arc::new((0..chunks).map(|_| AtomicU64::new(0)).collect());
    let s = slots.clone();
    let job: Job = Arc::new(move |i| {
        s[i].fetch_add(i as u64 + 1, Ordering::Relaxed);
    });
    let before = crate::sched::stealable::pool().snapshot();
    for _ in 0..ROUNDS {
        pool.run(&job, chunks);
    }
    for (i, slot) in slots.iter().enumerate() {
        let got = slot.load(Ordering::Relaxed);
        ensure!(got == ROUNDS * (i as u64 + 1), "chunk {i}: {got}");
    }
    let after = crate::sched::stealable::pool().snapshot();
    ensure!(after.queued == 0, "{} chunk(s) left queued", after.queued);
    let taken = after.taken - before.taken;
    let published = ROUNDS * (chunks as u64 - 1);
    ensure!(
        after.published - before.published == published,
        "{} chunks published, {published} expected",
        after.published - before.published
    );
    ensure!(
        taken == published,
        "{taken} chunks taken for {published} published"
    );
    Ok(())
}

/// The work-conserving rule on real cores: core 1 runs a long pinned task
/// while this core (0) publishes stealable chunks and stays busy itself
/// (it yields rather than blocks, so its idle loop never looks at the
/// pool); the chunks must run on the halted cores (2 and up) while the
/// long task is still running. The long task ends only when every chunk
/// has run, so there is no clock: the test counts the chunks that ran
/// before the long task ended and on which cores. The first publication
/// is one chunk, so that it chooses exactly one searcher (the herd bound);
/// once it ran, the other seven follow (and fan out over the halted
/// cores). Under the rule before the work-conserving one
/// (`fault=busy-searcher`: core 1 stays registered idle while it runs its
/// task and is chosen to search) the first chunk's one searcher is core 1,
/// and the chunk waits for core 1, which waits for it: a hang, for the
/// held-search watch (in the guest) or the host's examination
/// (`watchdog=off`) to name. (With more chunks in one publication the
/// fan-out would also choose a halted core beside core 1, which runs
/// them: a busy searcher strands work only when it is the only one.)
fn steal_beside_busy_core() -> TestResult {
    use crate::sched::stealable::{self, Chunk, ChunkBatch};
    const CHUNKS: u64 = 8;
    let n = cores::count();
    require!(
        n >= 3,
        "needs at least 3 cores (a busy core, a publisher and a halted core), have {n}"
    );
    super::steal_report_tests::steal_pool_that_halts()?;
    struct Shared {
        long_running: AtomicBool,
        /// Chunks run (Release by each chunk; Acquire by the long task and
        /// the publisher, which then see the counts below).
        ran: AtomicU64,
        ran_while_long_task_ran: AtomicU64,
        ran_on_a_busy_core: AtomicU64,
    }
    struct Batch(Arc<Shared>);
    impl ChunkBatch for Batch {
        fn run_chunk(&self, _index: usize, core: usize) {
            let shared = &self.0;
            if core <= 1 {
                shared.ran_on_a_busy_core.fetch_add(1, Ordering::Relaxed);
            }
            if shared.long_running.load(Ordering::Acquire) {
                shared
                    .ran_while_long_task_ran
                    .fetch_add(1, Ordering::Relaxed);
            }
            shared.ran.fetch_add(1, Ordering::Release);
        }
    }
    let shared = Arc::new(Shared {
        long_running: AtomicBool::new(false),
        ran: AtomicU64::new(0),
        ran_while_long_task_ran: AtomicU64::new(0),
        ran_on_a_busy_core: AtomicU64::new(0),
    });
    // No search going and no search wake on its way, core 1 included,
    // before core 1 gets its long task (nothing is published from here
    // until the test publishes). The boot's calibration rounds publish one
    // chunk each and choose core 1, the lowest idle core
    // (`round_plan::measure_costs`); at 32 vCPUs on 2 host cores core 1 may
    // not have run since, and its search wake then drains in one batch with
    // the long task. The work-conserving rule hands that search back
    // before the task runs; the rule before it (`fault=busy-searcher`)
    // would run the task still holding it, with nothing queued: the wait
    // below would never end, with nothing for the held-search watch (it
    // needs queued work) to report.
    let quiet = |from: usize| {
        (from..n).all(|c| core_sched::cores()[c].wake.state() == State::Halted) && {
            let pool = stealable::pool().snapshot();
            pool.searching == 0 && pool.tickets_pending == 0
        }
    };
    let mut spins = 0u64;
    while !quiet(1) {
        spins += 1;
        ensure!(
            spins < 50_000_000,
            "cores 1.. never all halted with no search going and no search wake on its way"
        );
        wakeup::yield_now();
    }
    let long_shared = shared.clone();
    let long_task = wakeup::spawn_on(1, move || {
        // Release: a chunk that reads `true` ran before the store of
        // `false` below, i.e. while this task ran.
        long_shared.long_running.store(true, Ordering::Release);
        // The long pinned task: it computes (spins) until the stealable
        // work is done, without yielding to its idle loop.
        while long_shared.ran.load(Ordering::Acquire) < CHUNKS {
            core::hint::spin_loop();
        }
        long_shared.long_running.store(false, Ordering::Release);
    });
    while !shared.long_running.load(Ordering::Acquire) {
        wakeup::yield_now();
    }
    // Wait until the cores that are to run the chunks have halted again (the
    // long task's spawn may have passed through them) and still no search
    // is going nor a search wake on its way (a core with a ticket in flight
    // is passed over), so that the publication itself chooses the
    // searcher: a halted core (or core 1, under the fault), never nobody.
    let me = crate::arch::percpu::current_index();
    let mut spins = 0u64;
    while !quiet(2) {
        // Core 1 looked at the pool when it was quiet and nothing has been
        // published since: core 1 holding a search now is a busy core
        // chosen to search, which no publication of this test can show to
        // the held-search watch (no wait here ends while it lasts).
        let pool = stealable::pool().snapshot();
        ensure!(
            pool.searcher != Some(1),
            "core 1 holds the stealable pool's search while it runs its long pinned task, with {} chunk(s) queued: a busy core chosen to search",
            pool.queued
        );
        spins += 1;
        ensure!(
            spins < 50_000_000,
            "cores 2.. never all halted with no search going and no search wake on its way"
        );
        wakeup::yield_now();
    }
    let batch: Arc<dyn ChunkBatch> = Arc::new(Batch(shared.clone()));
    let publish = |indices: core::ops::Range<usize>| {
        let chunks = indices.map(|index| Chunk {
            batch: batch.clone(),
            index,
        });
        stealable::pool().publish(me, chunks, stealable::search_wake)
    };
    // Busy, and not looking at the pool: yield (the idle loop runs this
    // task again before it would look).
    let wait_for = |ran: u64| {
        while shared.ran.load(Ordering::Acquire) < ran {
            wakeup::yield_now();
        }
    };
    let first = publish(0..1);
    wait_for(1);
    let rest = publish(1..CHUNKS as usize);
    wait_for(CHUNKS);
    long_task.join();
    let ran_while = shared.ran_while_long_task_ran.load(Ordering::Relaxed);
    let on_busy = shared.ran_on_a_busy_core.load(Ordering::Relaxed);
    crate::println!(
        "stealable beside a busy core: {ran_while} of {CHUNKS} chunks ran while core 1's long task ran, {on_busy} on core 0 or 1, search woke core(s) {:?} then {:?}",
        first.woke.as_slice(),
        rest.woke.as_slice()
    );
    // No search was going (the wait above), so the first publication
    // chose one core: none would be the search lost, a busy core a broken
    // rule, two the herd bound broken. The second may choose none (a
    // searcher still going covers its chunks), never a busy core.
    ensure!(
        first.woke.as_slice().len() == 1 && first.woke.as_slice().iter().all(|&core| core >= 2),
        "the first publication (1 chunk) chose core(s) {:?} to search: a busy core, none with no search going, or more than its one chunk",
        first.woke.as_slice()
    );
    ensure!(
        rest.woke.as_slice().iter().all(|&core| core >= 2),
        "the second publication chose core(s) {:?} to search: a busy core",
        rest.woke.as_slice()
    );
    ensure!(on_busy == 0, "{on_busy} chunk(s) ran on a busy core");
    ensure!(
        ran_while == CHUNKS,
        "only {ran_while} of {CHUNKS} chunks ran before the long task ended"
    );
    Ok(())
}

/// The storm: `TASKS_PER_CORE` tasks per core pass credits to random tasks
/// (seeded xorshift) for 100,000 operations. A task with no credit blocks
/// until one arrives; credits are conserved, so a lost wakeup strands a
/// credit and the run hangs (the harness's timeout, or the watchdog, says
/// where). At the end every task finished and sent == received.
fn storm() -> TestResult {
    const TASKS_PER_CORE: usize = 4;
    const OPERATIONS: u64 = 100_000;
    struct Member {
        task: Once<TaskRef>,
        credits: AtomicU64,
        received: AtomicU64,
        sent: AtomicU64,
    }
    struct Storm {
        members: Vec<Member>,
        operations: AtomicU64,
        stop: AtomicBool,
        ready: AtomicU64,
    }
    let n = cores::count();
    let total = n * TASKS_PER_CORE;
    let storm = Arc::new(Storm {
        members: (0..total)
            .map(|_| Member {
                task: Once::new(),
                credits: AtomicU64::new(1),
                received: AtomicU64::new(0),
                sent: AtomicU64::new(0),
            })
            .collect(),
        operations: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        ready: AtomicU64::new(0),
    });
    let seed = 0x5eed_0000_u64 ^ total as u64;
    let handles: Vec<_> = (0..total)
        .map(|i| {
            let storm = storm.clone();
            wakeup::spawn_on(i % n, move || {
                let me = &storm.members[i];
                me.task.call_once(wakeup::current);
                storm.ready.fetch_add(1, Ordering::AcqRel);
                while storm.ready.load(Ordering::Acquire) < total as u64 {
                    wakeup::yield_now();
                }
                let mut rng = seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                loop {
                    if storm.stop.load(Ordering::Acquire) {
                        return;
                    }
                    // Take one of our credits, or block until one arrives.
                    let credits = me.credits.load(Ordering::Acquire);
                    if credits == 0 {
                        park();
                        continue;
                    }
                    if me
                        .credits
                        .compare_exchange(credits, credits - 1, Ordering::AcqRel, Ordering::Acquire)
                        .is_err()
                    {
                        continue;
                    }
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let target = (rng % total as u64) as usize;
                    let other = &storm.members[target];
                    other.credits.fetch_add(1, Ordering::AcqRel);
                    other.received.fetch_add(1, Ordering::Relaxed);
                    me.sent.fetch_add(1, Ordering::Relaxed);
                    wakeup::wake(other.task.get().expect("member registered"));
                    if storm.operations.fetch_add(1, Ordering::AcqRel) + 1 >= OPERATIONS {
                        storm.stop.store(true, Ordering::Release);
                        for m in &storm.members {
                            wakeup::wake(m.task.get().expect("member registered"));
                        }
                        return;
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join();
    }
    let sent: u64 = storm
        .members
        .iter()
        .map(|m| m.sent.load(Ordering::Relaxed))
        .sum();
    let received: u64 = storm
        .members
        .iter()
        .map(|m| m.received.load(Ordering::Relaxed))
        .sum();
    let credits: u64 = storm
        .members
        .iter()
        .map(|m| m.credits.load(Ordering::Relaxed))
        .sum();
    ensure!(sent == received, "sent {sent} != received {received}");
    ensure!(sent >= OPERATIONS, "only {sent} of {OPERATIONS} operations");
    ensure!(
        credits == total as u64,
        "{credits} credits at the end, {total} at the start"
    );
    Ok(())
}

/// The counters say what the policy promises: `poll` never halts and never
/// sends an IPI; `always-ipi` sends one for every push to another core;
/// `state-machine` sends no more IPIs than halts.
fn counters_match_policy() -> TestResult {
    let (ipis, halts) = totals();
    let pushes: u64 = core_sched::cores()
        .iter()
        .map(|c| c.wake.counters().snapshot().inbox_pushes)
        .sum();
    crate::println!(
        "{}: {pushes} pushes, {ipis} IPIs, {halts} halts",
        core_sched::policy().name()
    );
    match core_sched::policy() {
        Policy::Poll => {
            ensure!(ipis == 0 && halts == 0, "poll: {ipis} IPIs, {halts} halts");
        }
        Policy::AlwaysIpi => ensure!(
            ipis == pushes,
            "always-ipi: {ipis} IPIs for {pushes} pushes"
        ),
        Policy::StateMachine => ensure!(
            ipis <= halts,
            "state-machine: {ipis} IPIs but only {halts} halts"
        ),
        // `racy-flag` (a fault fixture, nothing to hold it to) and any
        // policy the wake crate adds later.
        _ => {}
    }
    Ok(())
}
