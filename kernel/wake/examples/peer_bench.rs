//! The wake crate's pool against the pools users already have: rayon's
//! `ThreadPool` and tokio's multi-thread runtime, on the shapes their own
//! benchmarks and issues use.
//!
//! ```text
//! cargo run -p vigil-wake --release --example peer_bench -- \
//!     [--repeats N] [--jobs J] [--workers 1,2,4,8] [--idle-ms MS] [--only SHAPE,...] \
//!     [--json PATH]
//! ```
//!
//! `--json PATH` also writes every sample of the run there (each repeat's
//! value per pool and cell, and vigil's unparks per job), for `cargo xtask
//! peer-bench`, which runs this example several times and writes the
//! README's tables and plot from those files.
//!
//! Every cell (a shape at a worker count) runs each pool once per repeat,
//! the pools in a rotating order, a fresh pool each time (built and stopped
//! outside the timed part), so a noisy moment of the host hits all three
//! alike. Each cell reports the median over the repeats and the spread
//! (min-max). No thresholds: the numbers are for the README.
//!
//! The shapes (J jobs unless said; each job bumps a counter, the last one
//! wakes the waiting thread):
//!
//! * `spawn-outside`: J shared jobs spawned from a thread outside the pool,
//!   which then parks until they have all run (tokio's
//!   `spawn_many_remote_idle`).
//! * `spawn-outside-busy`: the same, but the spawning thread spins on the
//!   count instead of parking: one more runnable thread than there are
//!   host cores, as any busy application has.
//! * `spawn-worker`: one job spawns the J jobs from inside the pool
//!   (tokio's `spawn_many_local`).
//! * `chained-spawn`: a chain of J jobs, each spawning the next (tokio's
//!   `chained_spawn`).
//! * `yield-many`: 64 jobs each handing itself back to the pool J/64
//!   times: seed 001's worker resubmitting to itself (vigil: a private
//!   submit to its own worker; rayon: `spawn` from the job; tokio:
//!   `yield_now().await`, as in tokio's `yield_many`).
//! * `ping-pong`: J/2 pings in flight at once, each a job that spawns a
//!   pong job, which spawns a reply (tokio's `ping_pong`, with jobs for its
//!   oneshot channels); the ping and the pong do the jobs' work, the reply
//!   counts. Every pool spawns.
//! * `ping-pong-addressed`: the same messages, but vigil's pong is private
//!   work for the next worker and the reply private work for the ping's
//!   worker, so every message crosses workers (seed 001's dispatch);
//!   rayon and tokio as in `ping-pong` (they cannot address a worker).
//! * `fork-join`: a binary tree of spawns about J jobs big, each node
//!   spawning its two children and returning (rayon's tree benchmarks
//!   with `spawn`; nobody waits for a child).
//! * `fork-join-fifo`: the same tree with rayon's `spawn_fifo`, which runs
//!   a worker's own spawns oldest first as vigil's pool always does (the
//!   order that lets a job wait for an earlier spawn of its worker); vigil
//!   and tokio as in `fork-join`.
//! * `join-tree`: the same tree with each node joining its two children,
//!   the counter shared through an `Arc` (vigil: `Worker::join_sharing`,
//!   which clones the `Arc` for a second half only where the join spawns
//!   it; rayon: `rayon::join`, rayon's own fork-join, whose halves borrow
//!   it; tokio: the second child spawned with a clone, the first awaited in
//!   place, then the second's handle awaited): a node waits for its
//!   children, and a worker runs its own tree depth first.
//! * `join-tree-static`: the same join tree, the counter reached through a
//!   `&'static` for every pool, so that no pool touches a reference count
//!   (in `join-tree` the workers share the `Arc`'s, on tokio's every node
//!   and vigil's spawning joins): what the pools cost when the shared data
//!   is `'static` already (rayon's code is the same in both shapes).
//! * `round-robin`: J jobs dispatched from outside, one per worker in
//!   turn: seed 001's dispatch. vigil: private submits; rayon and tokio:
//!   `spawn` (the same as `spawn-outside` for them).
//! * `idle-1ms`, `idle-10ms`: one tiny job every 1 ms (10 ms) for
//!   `--idle-ms`, from a thread that sleeps in between. Reported as CPU
//!   time of the whole process (the pacing thread included) per wall
//!   second: what rayon-rs/rayon#642's users measured. `no pool` is the
//!   pacing thread alone, sleeping as often without spawning anything: the
//!   floor.
//!
//! "unparks/job" is vigil's count of `Thread::unpark` calls (wakes,
//! probes, a joiner's unpark by the worker that ran its half;
//! `PoolStats::unparks`) per job; rayon and tokio do not count
//! theirs. What every pool has is its threads' sleeps: the `--json` file
//! also holds, per pool, the voluntary context switches of the pool's
//! threads (every thread but the one that spawns and waits) over the
//! measured part, per job: sleeps that blocked, each ended by a wake.

use std::fmt::Write as _;
use std::hint::black_box;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use vigil_wake::BackoffMode;
use vigil_wake::pool::{PoolConfig, ThreadPool, Worker};

/// The pools compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pool {
    Vigil,
    /// vigil-wake with no polling: every idle worker parks at once (the
    /// pool's default before it polled), to show what polling buys.
    VigilParkAtOnce,
    Rayon,
    Tokio,
    /// Only for the idle shapes: the pacing thread alone.
    Floor,
    /// Only for the idle shapes: one thread that parks between jobs and
    /// is unparked once per job, whatever the worker count: the least a
    /// pool that sleeps between sparse jobs can cost.
    OneParkedThread,
}

impl Pool {
    fn name(self) -> &'static str {
        match self {
            Self::Vigil => "vigil-wake",
            Self::VigilParkAtOnce => "vigil, park at once",
            Self::Rayon => "rayon",
            Self::Tokio => "tokio",
            Self::Floor => "no pool",
            Self::OneParkedThread => "one parked thread",
        }
    }
}

const PEERS: [Pool; 4] = [Pool::Vigil, Pool::VigilParkAtOnce, Pool::Rayon, Pool::Tokio];

/// The shapes, in the order they are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    SpawnOutside,
    SpawnOutsideBusy,
    SpawnWorker,
    ChainedSpawn,
    YieldMany,
    PingPong,
    PingPongAddressed,
    ForkJoin,
    ForkJoinFifo,
    JoinTree,
    JoinTreeStatic,
    RoundRobin,
    Idle1Ms,
    Idle10Ms,
}

const SHAPES: [Shape; 14] = [
    Shape::SpawnOutside,
    Shape::SpawnOutsideBusy,
    Shape::SpawnWorker,
    Shape::ChainedSpawn,
    Shape::YieldMany,
    Shape::PingPong,
    Shape::PingPongAddressed,
    Shape::ForkJoin,
    Shape::ForkJoinFifo,
    Shape::JoinTree,
    Shape::JoinTreeStatic,
    Shape::RoundRobin,
    Shape::Idle1Ms,
    Shape::Idle10Ms,
];

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Self::SpawnOutside => "spawn-outside",
            Self::SpawnOutsideBusy => "spawn-outside-busy",
            Self::SpawnWorker => "spawn-worker",
            Self::ChainedSpawn => "chained-spawn",
            Self::YieldMany => "yield-many",
            Self::PingPong => "ping-pong",
            Self::PingPongAddressed => "ping-pong-addressed",
            Self::ForkJoin => "fork-join",
            Self::ForkJoinFifo => "fork-join-fifo",
            Self::JoinTree => "join-tree",
            Self::JoinTreeStatic => "join-tree-static",
            Self::RoundRobin => "round-robin",
            Self::Idle1Ms => "idle-1ms",
            Self::Idle10Ms => "idle-10ms",
        }
    }

    fn idle_period(self) -> Option<Duration> {
        match self {
            Self::Idle1Ms => Some(Duration::from_millis(1)),
            Self::Idle10Ms => Some(Duration::from_millis(10)),
            _ => None,
        }
    }
}

/// The jobs' shared state: how many have run, and whom to tell when the
/// last one has.
struct Done {
    ran: AtomicUsize,
    target: usize,
    finished: AtomicBool,
    waiter: Thread,
}

impl Done {
    fn new(target: usize) -> Arc<Self> {
        Arc::new(Self {
            ran: AtomicUsize::new(0),
            target,
            finished: AtomicBool::new(false),
            waiter: thread::current(),
        })
    }

    /// One job ran. AcqRel on the count: the last job's increment reads
    /// every earlier one; its Release store of `finished` pairs with the
    /// waiter's Acquire load.
    fn job_ran(&self) {
        black_box(work());
        if self.ran.fetch_add(1, Ordering::AcqRel) + 1 == self.target {
            self.finished.store(true, Ordering::Release);
            self.waiter.unpark();
        }
    }

    /// Parks until the last job ran (an `unpark` before the `park` is
    /// latched, and a spurious return re-checks the flag).
    fn wait_parked(&self) {
        while !self.finished.load(Ordering::Acquire) {
            thread::park();
        }
    }

    /// Spins until the last job ran: the waiting thread stays runnable.
    fn wait_spinning(&self) {
        while !self.finished.load(Ordering::Acquire) {
            std::hint::spin_loop();
        }
    }
}

/// A little arithmetic the optimiser cannot drop: the job's own work.
fn work() -> u64 {
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64);
    for _ in 0..16 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// A built pool.
enum Running {
    Vigil(ThreadPool),
    Rayon(rayon::ThreadPool),
    Tokio(tokio::runtime::Runtime),
    Floor,
    OneParkedThread(ParkedThread),
}

/// A boxed job for [`ParkedThread`].
type ThreadJob = Box<dyn FnOnce() + Send>;

/// One thread that parks while it has no job: [`Pool::OneParkedThread`].
struct ParkedThread {
    jobs: Arc<std::sync::Mutex<std::collections::VecDeque<ThreadJob>>>,
    stop: Arc<AtomicBool>,
    handle: thread::JoinHandle<()>,
}

impl ParkedThread {
    fn start() -> Self {
        let jobs = Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handle = {
            let (jobs, stop) = (Arc::clone(&jobs), Arc::clone(&stop));
            thread::spawn(move || {
                loop {
                    let job: Option<ThreadJob> = jobs.lock().unwrap().pop_front();
                    match job {
                        Some(job) => job(),
                        // Acquire pairs with `stop`'s Release store; an
                        // unpark before this park is latched (the token),
                        // so a job pushed after the pop above is not missed.
                        None if stop.load(Ordering::Acquire) => return,
                        None => thread::park(),
                    }
                }
            })
        };
        Self { jobs, stop, handle }
    }

    /// Queues `job` and unparks the thread: one unpark per job.
    fn spawn(&self, job: ThreadJob) {
        self.jobs.lock().unwrap().push_back(job);
        self.handle.thread().unpark();
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Release);
        self.handle.thread().unpark();
        self.handle.join().expect("the parked thread panicked");
    }
}

fn build(pool: Pool, workers: usize) -> Running {
    match pool {
        Pool::Vigil => Running::Vigil(ThreadPool::new(PoolConfig::new(workers))),
        Pool::VigilParkAtOnce => Running::Vigil(ThreadPool::new(PoolConfig {
            spin: BackoffMode::Off,
            ..PoolConfig::new(workers)
        })),
        Pool::Rayon => Running::Rayon(
            rayon::ThreadPoolBuilder::new()
                .num_threads(workers)
                .build()
                .expect("build a rayon pool"),
        ),
        Pool::Tokio => Running::Tokio(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .build()
                .expect("build a tokio runtime"),
        ),
        Pool::Floor => Running::Floor,
        Pool::OneParkedThread => Running::OneParkedThread(ParkedThread::start()),
    }
}

/// What one run of a shape measured.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    /// Time per job (ns), or, for the idle shapes, process CPU time per wall
    /// second (cores).
    value: f64,
    /// vigil only: unparks per job.
    unparks_per_job: Option<f64>,
    /// Sleeps per job: the voluntary context switches of the pool's
    /// threads (every thread but this one) over the measured part, per job
    /// ([`pool_sleeps`]): a count every pool has, where the pools' own
    /// counts of their unparks are vigil's alone.
    sleeps_per_job: f64,
}

/// Runs `shape` once on `pool` and measures it (the pool is built and
/// stopped outside the timed part).
fn run(shape: Shape, pool: Pool, workers: usize, jobs: usize, idle: Duration) -> Sample {
    let running = build(pool, workers);
    // Let the workers start and settle before the clock runs: until their
    // first parks are behind them (a sleep is counted when it begins).
    thread::sleep(Duration::from_millis(2));
    let sleeps_before = settled_sleeps();
    let (value, counted_jobs) = match shape.idle_period() {
        Some(period) => sparse(&running, period, idle),
        None => {
            let (ns, counted) = timed(shape, &running, workers, jobs);
            (ns / counted as f64, counted as u128)
        }
    };
    let sleeps = grown_since(&sleeps_before, &pool_sleeps());
    let sleeps_per_job = sleeps as f64 / counted_jobs as f64;
    let unparks_per_job = match running {
        Running::Vigil(pool) => Some(pool.shutdown().unparks as f64 / counted_jobs as f64),
        Running::OneParkedThread(t) => {
            t.stop();
            None
        }
        other => {
            drop(other);
            None
        }
    };
    // rayon's pool does not join its threads when dropped: wait until they
    // have gone, so none of them runs (or exits) inside the next run's
    // measurement.
    wait_for_threads(1);
    Sample {
        value,
        unparks_per_job,
        sleeps_per_job,
    }
}

/// Runs a throughput shape: (elapsed ns, jobs run).
fn timed(shape: Shape, running: &Running, workers: usize, jobs: usize) -> (f64, usize) {
    let start = Instant::now();
    let counted = match shape {
        Shape::SpawnOutside | Shape::SpawnOutsideBusy | Shape::RoundRobin => {
            let done = Done::new(jobs);
            for i in 0..jobs {
                let d = Arc::clone(&done);
                match running {
                    Running::Vigil(p) if shape == Shape::RoundRobin => {
                        p.submit(i % workers, move |_| d.job_ran());
                    }
                    Running::Vigil(p) => p.spawn(move |_| d.job_ran()),
                    Running::Rayon(p) => p.spawn(move || d.job_ran()),
                    Running::Tokio(rt) => drop(rt.spawn(async move { d.job_ran() })),
                    Running::Floor | Running::OneParkedThread(_) => {
                        unreachable!("no pool runs a throughput shape")
                    }
                }
            }
            if shape == Shape::SpawnOutsideBusy {
                done.wait_spinning();
            } else {
                done.wait_parked();
            }
            jobs
        }
        Shape::SpawnWorker => {
            let done = Done::new(jobs);
            let d = Arc::clone(&done);
            match running {
                Running::Vigil(p) => p.spawn(move |w| {
                    for _ in 0..jobs {
                        let d = Arc::clone(&d);
                        w.spawn(move |_| d.job_ran());
                    }
                }),
                Running::Rayon(p) => p.spawn(move || {
                    for _ in 0..jobs {
                        let d = Arc::clone(&d);
                        rayon::spawn(move || d.job_ran());
                    }
                }),
                Running::Tokio(rt) => drop(rt.spawn(async move {
                    for _ in 0..jobs {
                        let d = Arc::clone(&d);
                        drop(tokio::spawn(async move { d.job_ran() }));
                    }
                })),
                Running::Floor | Running::OneParkedThread(_) => {
                    unreachable!("no pool runs a throughput shape")
                }
            }
            done.wait_parked();
            jobs
        }
        Shape::ChainedSpawn => {
            let done = Done::new(1);
            let d = Arc::clone(&done);
            match running {
                Running::Vigil(p) => p.spawn(move |w| vigil_chain(w, jobs, d)),
                Running::Rayon(p) => p.spawn(move || rayon_chain(jobs, d)),
                Running::Tokio(rt) => drop(rt.spawn(async move { tokio_chain(jobs, d) })),
                Running::Floor | Running::OneParkedThread(_) => {
                    unreachable!("no pool runs a throughput shape")
                }
            }
            done.wait_parked();
            jobs
        }
        Shape::YieldMany => {
            const TASKS: usize = 64;
            let hops = (jobs / TASKS).max(1);
            let done = Done::new(TASKS);
            for _ in 0..TASKS {
                let d = Arc::clone(&done);
                match running {
                    Running::Vigil(p) => p.spawn(move |w| vigil_yield(w, hops, d)),
                    Running::Rayon(p) => p.spawn(move || rayon_yield(hops, d)),
                    Running::Tokio(rt) => drop(rt.spawn(async move {
                        for _ in 0..hops {
                            tokio::task::yield_now().await;
                        }
                        d.job_ran();
                    })),
                    Running::Floor | Running::OneParkedThread(_) => {
                        unreachable!("no pool runs a throughput shape")
                    }
                }
            }
            done.wait_parked();
            TASKS * (hops + 1)
        }
        Shape::PingPong | Shape::PingPongAddressed => {
            let pings = (jobs / 2).max(1);
            let done = Done::new(pings);
            let d = Arc::clone(&done);
            let addressed = shape == Shape::PingPongAddressed;
            match running {
                Running::Vigil(p) => p.spawn(move |w| {
                    for i in 0..pings {
                        let d = Arc::clone(&d);
                        if addressed {
                            w.submit(i % workers, move |w| vigil_ping_addressed(w, workers, d));
                        } else {
                            w.spawn(move |w| vigil_ping(w, d));
                        }
                    }
                }),
                Running::Rayon(p) => p.spawn(move || {
                    for _ in 0..pings {
                        let d = Arc::clone(&d);
                        rayon::spawn(move || {
                            black_box(work());
                            rayon::spawn(move || {
                                black_box(work());
                                rayon::spawn(move || d.job_ran());
                            });
                        });
                    }
                }),
                Running::Tokio(rt) => drop(rt.spawn(async move {
                    for _ in 0..pings {
                        let d = Arc::clone(&d);
                        drop(tokio::spawn(async move {
                            black_box(work());
                            drop(tokio::spawn(async move {
                                black_box(work());
                                drop(tokio::spawn(async move { d.job_ran() }));
                            }));
                        }));
                    }
                })),
                Running::Floor | Running::OneParkedThread(_) => {
                    unreachable!("no pool runs a throughput shape")
                }
            }
            done.wait_parked();
            1 + pings * 3
        }
        Shape::ForkJoin | Shape::ForkJoinFifo => {
            // 2^(depth+1) - 1 nodes, at most `jobs`.
            let depth = (usize::BITS - (jobs + 1).leading_zeros()).saturating_sub(2);
            let leaves = 1usize << depth;
            let done = Done::new(leaves);
            let d = Arc::clone(&done);
            match running {
                Running::Vigil(p) => p.spawn(move |w| vigil_tree(w, depth, d)),
                Running::Rayon(p) if shape == Shape::ForkJoinFifo => {
                    p.spawn_fifo(move || rayon_tree(depth, d, true));
                }
                Running::Rayon(p) => p.spawn(move || rayon_tree(depth, d, false)),
                Running::Tokio(rt) => drop(rt.spawn(async move { tokio_tree(depth, d) })),
                Running::Floor | Running::OneParkedThread(_) => {
                    unreachable!("no pool runs a throughput shape")
                }
            }
            done.wait_parked();
            2 * leaves - 1
        }
        Shape::JoinTree | Shape::JoinTreeStatic => {
            let depth = (usize::BITS - (jobs + 1).leading_zeros()).saturating_sub(2);
            let leaves = 1usize << depth;
            let done = Done::new(leaves);
            if shape == Shape::JoinTree {
                spawn_join_tree(running, depth, Arc::clone(&done));
            } else {
                // Leaked on purpose, so that the tree's halves hold a
                // `&'static` and clone no count: one boxed `Arc` and its
                // `Done` (about 80 bytes) per repeat, a few dozen per
                // process.
                let d: &'static Arc<Done> = Box::leak(Box::new(Arc::clone(&done)));
                spawn_join_tree::<&'static Done>(running, depth, d);
            }
            done.wait_parked();
            2 * leaves - 1
        }
        Shape::Idle1Ms | Shape::Idle10Ms => unreachable!("idle shapes are not timed"),
    };
    (start.elapsed().as_nanos() as f64, counted)
}

fn vigil_chain(w: &Worker<'_>, left: usize, done: Arc<Done>) {
    if left <= 1 {
        done.job_ran();
    } else {
        black_box(work());
        w.spawn(move |w| vigil_chain(w, left - 1, done));
    }
}

fn rayon_chain(left: usize, done: Arc<Done>) {
    if left <= 1 {
        done.job_ran();
    } else {
        black_box(work());
        rayon::spawn(move || rayon_chain(left - 1, done));
    }
}

fn tokio_chain(left: usize, done: Arc<Done>) {
    if left <= 1 {
        done.job_ran();
    } else {
        black_box(work());
        drop(tokio::spawn(async move { tokio_chain(left - 1, done) }));
    }
}

fn vigil_yield(w: &Worker<'_>, left: usize, done: Arc<Done>) {
    if left == 0 {
        done.job_ran();
    } else {
        black_box(work());
        w.submit(w.index(), move |w| vigil_yield(w, left - 1, done));
    }
}

fn rayon_yield(left: usize, done: Arc<Done>) {
    if left == 0 {
        done.job_ran();
    } else {
        black_box(work());
        rayon::spawn(move || rayon_yield(left - 1, done));
    }
}

/// A ping: it spawns the pong, which spawns the reply.
fn vigil_ping(w: &Worker<'_>, done: Arc<Done>) {
    black_box(work());
    w.spawn(move |w| {
        black_box(work());
        w.spawn(move |_| done.job_ran());
    });
}

/// A ping on worker `w`: the pong is private work for the next worker, and
/// its reply private work for this one.
fn vigil_ping_addressed(w: &Worker<'_>, workers: usize, done: Arc<Done>) {
    let home = w.index();
    black_box(work());
    w.submit((home + 1) % workers, move |w| {
        black_box(work());
        w.submit(home, move |_| done.job_ran());
    });
}

fn vigil_tree(w: &Worker<'_>, depth: u32, done: Arc<Done>) {
    if depth == 0 {
        done.job_ran();
        return;
    }
    black_box(work());
    let other = Arc::clone(&done);
    w.spawn(move |w| vigil_tree(w, depth - 1, other));
    w.spawn(move |w| vigil_tree(w, depth - 1, done));
}

/// rayon's tree: `spawn` (newest first on a worker), or `spawn_fifo`.
fn rayon_tree(depth: u32, done: Arc<Done>, fifo: bool) {
    if depth == 0 {
        done.job_ran();
        return;
    }
    black_box(work());
    let other = Arc::clone(&done);
    if fifo {
        rayon::spawn_fifo(move || rayon_tree(depth - 1, other, true));
        rayon::spawn_fifo(move || rayon_tree(depth - 1, done, true));
    } else {
        rayon::spawn(move || rayon_tree(depth - 1, other, false));
        rayon::spawn(move || rayon_tree(depth - 1, done, false));
    }
}

fn tokio_tree(depth: u32, done: Arc<Done>) {
    if depth == 0 {
        done.job_ran();
        return;
    }
    black_box(work());
    let other = Arc::clone(&done);
    drop(tokio::spawn(async move { tokio_tree(depth - 1, other) }));
    drop(tokio::spawn(async move { tokio_tree(depth - 1, done) }));
}

/// Starts a join tree of `depth` on `running`, every node reaching the
/// counter through `done` (an `Arc`, or a `&'static`: the two join shapes).
fn spawn_join_tree<D>(running: &Running, depth: u32, done: D)
where
    D: Deref<Target = Done> + Clone + Send + Sync + 'static,
{
    match running {
        Running::Vigil(p) => p.spawn(move |w| vigil_join_tree(w, depth, &done)),
        Running::Rayon(p) => p.spawn(move || rayon_join_tree(depth, &done)),
        Running::Tokio(rt) => drop(rt.spawn(tokio_join_tree(depth, done))),
        Running::Floor | Running::OneParkedThread(_) => {
            unreachable!("no pool runs a throughput shape")
        }
    }
}

/// A join tree: each node joins its two children, sharing the counter
/// through `Worker::join_sharing` (the second half needs its own handle on
/// it only where the join spawns it, to run on another worker past this
/// frame: an `Arc`, cloned then, or a `&'static`, copied).
fn vigil_join_tree<D>(w: &Worker<'_>, depth: u32, done: &D)
where
    D: Deref<Target = Done> + Clone + Send + 'static,
{
    if depth == 0 {
        done.job_ran();
        return;
    }
    black_box(work());
    w.join_sharing(
        done,
        |w, done| vigil_join_tree(w, depth - 1, done),
        move |w, done| vigil_join_tree(w, depth - 1, done),
    );
}

fn rayon_join_tree(depth: u32, done: &Done) {
    if depth == 0 {
        done.job_ran();
        return;
    }
    black_box(work());
    rayon::join(
        || rayon_join_tree(depth - 1, done),
        || rayon_join_tree(depth - 1, done),
    );
}

/// tokio's fork-join: the second child spawned, the first awaited here,
/// then the second's handle.
fn tokio_join_tree<D>(
    depth: u32,
    done: D,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
where
    D: Deref<Target = Done> + Clone + Send + Sync + 'static,
{
    Box::pin(async move {
        if depth == 0 {
            done.job_ran();
            return;
        }
        black_box(work());
        let second = tokio::spawn(tokio_join_tree(depth - 1, done.clone()));
        tokio_join_tree(depth - 1, done).await;
        // The last leaf ends the timing, and the runtime's shutdown then
        // cancels the tasks still awaiting their second child: not an
        // error; a panicking child is.
        if let Err(error) = second.await {
            assert!(error.is_cancelled(), "a join-tree task panicked: {error}");
        }
    })
}

/// The idle shapes: one job every `period` for `length`; the process's CPU
/// time per wall second, and the jobs spawned (at least one).
fn sparse(running: &Running, period: Duration, length: Duration) -> (f64, u128) {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut spawned = 0;
    let cpu_before = thread_cpu_ns();
    let start = Instant::now();
    let mut next = start;
    while next < start + length {
        next += period;
        thread::sleep(next.saturating_duration_since(Instant::now()));
        let r = Arc::clone(&ran);
        let job = move || {
            r.fetch_add(1, Ordering::Relaxed);
        };
        match running {
            Running::Vigil(p) => p.spawn(move |_| job()),
            Running::Rayon(p) => p.spawn(job),
            Running::Tokio(rt) => drop(rt.spawn(async move { job() })),
            Running::Floor => {}
            Running::OneParkedThread(t) => t.spawn(Box::new(job)),
        }
        spawned += 1;
    }
    let wall_ns = start.elapsed().as_nanos() as f64;
    let used_ns = grown_since(&cpu_before, &thread_cpu_ns());
    (used_ns as f64 / wall_ns, spawned)
}

/// How much a per-thread count (`before`, `after`: (thread id, count))
/// grew in all, per thread, so that the sum cannot go down: a thread seen
/// only at the end started inside the window and counts from 0. A thread
/// that exited inside the window would take its count with it: none does,
/// since the previous run's threads are gone before a pool is built
/// (`run`) and a pool keeps its threads until it is stopped.
fn grown_since(before: &[(u64, u64)], after: &[(u64, u64)]) -> u64 {
    after
        .iter()
        .map(|(tid, now)| {
            let then = before.iter().find(|(t, _)| t == tid).map_or(0, |b| b.1);
            now.saturating_sub(then)
        })
        .sum()
}

/// A count of each thread of this process, as (thread id, count), read by
/// `count` from the thread's `/proc/self/task/TID/FILE`. A thread that has
/// exited is left out; a file that cannot be read or parsed otherwise ends
/// the bench (a count silently read as missing would read as 0).
fn per_thread(file: &str, count: impl Fn(&str) -> Option<u64>) -> Vec<(u64, u64)> {
    let tasks = std::fs::read_dir("/proc/self/task")
        .unwrap_or_else(|e| fail(&format!("cannot read /proc/self/task ({e}): Linux only")));
    tasks
        .filter_map(Result::ok)
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse::<u64>().ok()?;
            let path = task.path().join(file);
            match std::fs::read_to_string(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => fail(&format!("cannot read {}: {e}", path.display())),
                Ok(text) => Some((
                    tid,
                    count(&text)
                        .unwrap_or_else(|| fail(&format!("no count in {}", path.display()))),
                )),
            }
        })
        .collect()
}

/// The voluntary context switches so far of each thread but this one (the
/// waiting and pacing thread, whose own sleeps are no pool's):
/// `status`'s `voluntary_ctxt_switches`, each one a sleep that blocked
/// (a futex wait, a `nanosleep`), counted when it begins, and ended by a
/// wake (vigil's pool parks with no timeout). A `sched_yield` that lets
/// another thread run is an involuntary switch, not counted: a polling
/// worker's yields are not sleeps.
fn pool_sleeps() -> Vec<(u64, u64)> {
    let me = u64::from(std::process::id());
    let mut counts = per_thread("status", |text| {
        text.lines()
            .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))?
            .trim()
            .parse()
            .ok()
    });
    counts.retain(|(tid, _)| *tid != me);
    counts
}

/// [`pool_sleeps`] once no count moved over a millisecond (at most 200
/// tries): the pool's threads have gone to sleep after their start, so
/// their first park is not counted as the measured part's.
fn settled_sleeps() -> Vec<(u64, u64)> {
    let mut last = pool_sleeps();
    for _ in 0..200 {
        thread::sleep(Duration::from_millis(1));
        let now = pool_sleeps();
        if now == last {
            break;
        }
        last = now;
    }
    last
}

/// CPU time of each thread of this process so far, as (thread id, ns): the
/// first field of `/proc/self/task/*/schedstat` (time on a CPU), which,
/// unlike `/proc/self/stat`'s clock ticks, resolves the few milliseconds an
/// idle pool costs.
fn thread_cpu_ns() -> Vec<(u64, u64)> {
    per_thread("schedstat", |line| {
        line.split_whitespace().next()?.parse().ok()
    })
}

/// Waits until this process has `threads` threads (the pools' threads
/// exit after they are stopped, rayon's without being joined). A pool whose
/// threads never go is a bug worth stopping for: after 30 s this fails.
fn wait_for_threads(threads: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = std::fs::read_dir("/proc/self/task")
            .unwrap_or_else(|e| fail(&format!("cannot read /proc/self/task ({e}): Linux only")))
            .count();
        if now <= threads {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{now} threads still running 30 s after their pool stopped (expected {threads})"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

/// One cell's samples as a JSON object (written by hand: the names are
/// this file's own, plain ASCII, and the values finite numbers, so nothing
/// needs escaping, and the wake crate's dev-dependencies stay the peers it
/// measures).
fn cell_json(shape: Shape, workers: usize, pools: &[Pool], samples: &[Vec<Sample>]) -> String {
    let list = |values: &mut dyn Iterator<Item = f64>| -> String {
        values
            .map(|v| format!("{v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // `"pool": [each repeat's value]`, for every pool.
    let by_pool = |value: fn(&Sample) -> f64| -> String {
        pools
            .iter()
            .zip(samples)
            .map(|(pool, samples)| {
                format!(
                    "\"{}\": [{}]",
                    pool.name(),
                    list(&mut samples.iter().map(value))
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let unparks = list(&mut samples[0].iter().filter_map(|s| s.unparks_per_job));
    format!(
        "  {{\"shape\": \"{}\", \"workers\": {workers}, \"unit\": \"{}\", \"samples\": {{{}}}, \"sleeps_per_job\": {{{}}}, \"vigil_unparks_per_job\": [{unparks}]}}",
        shape.name(),
        if shape.idle_period().is_some() {
            "cpu_s_per_wall_s"
        } else {
            "ns_per_job"
        },
        by_pool(|s| s.value),
        by_pool(|s| s.sleeps_per_job)
    )
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

struct Args {
    repeats: usize,
    jobs: usize,
    workers: Vec<usize>,
    idle: Duration,
    shapes: Vec<Shape>,
    json: Option<std::path::PathBuf>,
}

fn fail(message: &str) -> ! {
    eprintln!(
        "peer_bench: {message}\nusage: peer_bench [--repeats N] [--jobs J] [--workers 1,2,4,8] [--idle-ms MS] [--only SHAPE,...] [--json PATH]"
    );
    std::process::exit(2);
}

fn positive(name: &str, text: &str) -> usize {
    match text.parse() {
        Ok(n) if n > 0 => n,
        _ => fail(&format!(
            "{name}: expected a positive integer, got `{text}`"
        )),
    }
}

fn parse_args() -> Args {
    let mut args = Args {
        repeats: 5,
        jobs: 10_000,
        workers: vec![1, 2, 4, 8],
        idle: Duration::from_millis(1000),
        shapes: SHAPES.to_vec(),
        json: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> String {
            it.next()
                .unwrap_or_else(|| fail(&format!("{name} needs a value")))
        };
        match flag.as_str() {
            "--repeats" => args.repeats = positive("--repeats", &value("--repeats")),
            "--jobs" => args.jobs = positive("--jobs", &value("--jobs")),
            "--idle-ms" => {
                args.idle =
                    Duration::from_millis(positive("--idle-ms", &value("--idle-ms")) as u64);
            }
            "--workers" => {
                args.workers = value("--workers")
                    .split(',')
                    .map(|w| positive("--workers", w))
                    .collect();
            }
            "--only" => {
                args.shapes = value("--only")
                    .split(',')
                    .map(|name| {
                        SHAPES
                            .into_iter()
                            .find(|s| s.name() == name)
                            .unwrap_or_else(|| {
                                let known: Vec<_> = SHAPES.iter().map(|s| s.name()).collect();
                                fail(&format!(
                                    "--only: unknown shape `{name}` (known: {})",
                                    known.join(", ")
                                ))
                            })
                    })
                    .collect();
            }
            "--json" => args.json = Some(value("--json").into()),
            other => fail(&format!("unknown argument `{other}`")),
        }
    }
    args
}

fn main() {
    let args = parse_args();
    let host_cores = thread::available_parallelism().map_or(0, usize::from);
    println!(
        "peer_bench: {} repeats, {} jobs per run, workers {:?}, idle shapes {} ms, {host_cores} host cores",
        args.repeats,
        args.jobs,
        args.workers,
        args.idle.as_millis()
    );
    println!();
    let names: Vec<&str> = PEERS.iter().map(|p| p.name()).collect();
    println!(
        "| shape | workers | {} | vigil vs best peer | vigil unparks/job |",
        names.join(" | ")
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut rotation = 0;
    let mut cells_json = Vec::new();
    for &shape in &args.shapes {
        let idle = shape.idle_period().is_some();
        for &workers in &args.workers {
            let pools: Vec<Pool> = if idle {
                vec![
                    Pool::Vigil,
                    Pool::VigilParkAtOnce,
                    Pool::Rayon,
                    Pool::Tokio,
                    Pool::Floor,
                    Pool::OneParkedThread,
                ]
            } else {
                PEERS.to_vec()
            };
            let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); pools.len()];
            for _ in 0..args.repeats {
                rotation += 1;
                for k in 0..pools.len() {
                    let i = (k + rotation) % pools.len();
                    samples[i].push(run(shape, pools[i], workers, args.jobs, args.idle));
                }
            }
            cells_json.push(cell_json(shape, workers, &pools, &samples));
            let cell = |i: usize| -> (f64, String) {
                let mut values: Vec<f64> = samples[i].iter().map(|s| s.value).collect();
                let med = median(&mut values);
                let (lo, hi) = (values[0], values[values.len() - 1]);
                let text = if idle {
                    format!("{med:.4} [{lo:.4}-{hi:.4}]")
                } else {
                    format!("{med:.0} [{lo:.0}-{hi:.0}]")
                };
                (med, text)
            };
            let (vigil, vigil_text) = cell(0);
            let (_, park_at_once_text) = cell(1);
            let (rayon, rayon_text) = cell(2);
            let (tokio, tokio_text) = cell(3);
            // Idle shapes: each pool's own cost, above the pacing thread's.
            let floor = if idle { cell(4).0 } else { 0.0 };
            let best = rayon.min(tokio) - floor;
            let mut unparks: Vec<f64> = samples[0]
                .iter()
                .filter_map(|s| s.unparks_per_job)
                .collect();
            let unparks = median(&mut unparks);
            let mut row = format!(
                "| {} | {workers} | {vigil_text} | {park_at_once_text} | {rayon_text} | {tokio_text} | {:.2} | {unparks:.3} |",
                shape.name(),
                (vigil - floor) / best
            );
            if idle {
                let (_, floor_text) = cell(4);
                let (parked, parked_text) = cell(5);
                let _ = write!(
                    row,
                    " {}: {floor_text} | {}: {parked_text} | vigil's own over its own: {:.2} |",
                    Pool::Floor.name(),
                    Pool::OneParkedThread.name(),
                    (vigil - floor) / (parked - floor)
                );
            }
            println!("{row}");
        }
    }
    if let Some(path) = &args.json {
        let json = format!(
            "{{\"repeats\": {}, \"jobs\": {}, \"idle_ms\": {}, \"host_cores\": {host_cores}, \"cells\": [\n{}\n]}}\n",
            args.repeats,
            args.jobs,
            args.idle.as_millis(),
            cells_json.join(",\n")
        );
        if let Err(error) = std::fs::write(path, json) {
            eprintln!("peer_bench: cannot write {}: {error}", path.display());
            std::process::exit(1);
        }
    }
    println!();
    println!(
        "(time per job in ns, median [min-max] over the repeats; idle shapes: process CPU seconds per wall second; \"vs best peer\" is vigil-wake's median over the faster peer's, for the idle shapes each less the no-pool floor, below 1 is better)"
    );
}
