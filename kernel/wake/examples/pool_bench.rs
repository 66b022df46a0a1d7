//! The user-space pool on the wake protocol against the same pool with
//! always-unpark and with spin-then-park, on this machine's threads.
//!
//! ```text
//! cargo run -p vigil-wake --release --example pool_bench -- [--repeats N] [--dispatches D]
//! ```
//!
//! Two workloads, each configuration run in turn within each repeat (so a
//! noisy moment hits all three alike), medians over the repeats:
//!
//! * **ping-pong**: a job bounces between two workers, each hop a private
//!   dispatch to the other one; latency per hop.
//! * **fan-out private**: one producer thread dispatches private jobs
//!   round-robin to W workers (W = 1, 2, 4, 8), each job a few hundred
//!   nanoseconds of arithmetic; time per dispatch until the last job ran,
//!   and unparks per dispatch counted on both sides (the senders' wakes,
//!   each one `unpark`, and the sleepers' wakes taken).
//! * **fan-out shared**: the same jobs as shared work (`spawn`), so the
//!   work-conserving rule decides how many workers to wake.
//!
//! Ratios are against always-unpark in the same repeat. No thresholds: the
//! numbers are for the README.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use vigil_wake::pool::{PoolConfig, PoolStats, ThreadPool, Worker};
use vigil_wake::{BackoffMode, Policy};

#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    policy: Policy,
    spin: BackoffMode,
}

const VARIANTS: [Variant; 3] = [
    Variant {
        name: "protocol",
        policy: Policy::StateMachine,
        spin: BackoffMode::Off,
    },
    Variant {
        name: "always-unpark",
        policy: Policy::AlwaysIpi,
        spin: BackoffMode::Off,
    },
    Variant {
        name: "spin-then-park",
        policy: Policy::StateMachine,
        spin: BackoffMode::FixedUs(SPIN_US),
    },
];

/// The spin-then-park budget: polls the inbox this long before parking.
const SPIN_US: u64 = 50;

/// What one run measured.
#[derive(Clone, Copy, Default)]
struct Sample {
    ns_per_dispatch: f64,
    unparks_per_dispatch: f64,
    taken_per_dispatch: f64,
}

fn pool(variant: Variant, workers: usize) -> ThreadPool {
    ThreadPool::new(PoolConfig {
        workers,
        policy: variant.policy,
        spin: variant.spin,
        pollers: None,
    })
}

fn sample(stats: PoolStats, dispatches: usize, elapsed_ns: f64) -> Sample {
    let d = dispatches as f64;
    Sample {
        ns_per_dispatch: elapsed_ns / d,
        unparks_per_dispatch: stats.wakes_sent as f64 / d,
        taken_per_dispatch: stats.wakes_taken as f64 / d,
    }
}

fn hop(worker: &Worker<'_>, left: usize, done: mpsc::Sender<()>) {
    if left == 0 {
        done.send(()).unwrap();
        return;
    }
    let other = 1 - worker.index();
    worker.submit(other, move |w| hop(w, left - 1, done));
}

fn ping_pong(variant: Variant, hops: usize) -> Sample {
    let pool = pool(variant, 2);
    let (done, finished) = mpsc::channel();
    let start = Instant::now();
    pool.submit(0, move |w| hop(w, hops, done));
    finished.recv().unwrap();
    let elapsed = start.elapsed().as_nanos() as f64;
    sample(pool.shutdown(), hops, elapsed)
}

fn work() -> u64 {
    // A few hundred nanoseconds of arithmetic the optimiser cannot drop.
    let mut x = black_box(0x9e37_79b9_7f4a_7c15u64);
    for _ in 0..64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// How the producer hands out the fan-out's jobs.
#[derive(Clone, Copy)]
enum FanOut {
    /// Private jobs, round-robin over the workers.
    Private,
    /// Shared jobs: any worker may take one; the work-conserving rule
    /// decides how many workers to wake.
    Shared,
}

fn fan_out(variant: Variant, workers: usize, dispatches: usize, how: FanOut) -> Sample {
    let pool = pool(variant, workers);
    let producer = pool.producer();
    let ran = Arc::new(AtomicUsize::new(0));
    let (done, finished) = mpsc::channel();
    let start = Instant::now();
    for i in 0..dispatches {
        let ran = Arc::clone(&ran);
        let done = done.clone();
        let job = move |_: &Worker<'_>| {
            black_box(work());
            // Relaxed: a count; the last job reports on the channel.
            if ran.fetch_add(1, Relaxed) + 1 == dispatches {
                done.send(()).unwrap();
            }
        };
        match how {
            FanOut::Private => producer.submit(i % workers, job),
            FanOut::Shared => producer.spawn(job),
        }
    }
    finished.recv().unwrap();
    let elapsed = start.elapsed().as_nanos() as f64;
    let mut stats = pool.shutdown();
    // The producer's own wakes are in its counters; the lines count every
    // wake sent to a worker, whoever sent it, so `stats` already has them.
    stats.protocol += producer.counters();
    sample(stats, dispatches, elapsed)
}

/// A workload: its label, and one run of it under a variant.
type Shape = (String, Box<dyn Fn(Variant) -> Sample>);

fn median(mut values: Vec<f64>) -> f64 {
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
    dispatches: usize,
}

fn parse_args() -> Args {
    let mut args = Args {
        repeats: 9,
        dispatches: 20_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> usize {
            let text = it
                .next()
                .unwrap_or_else(|| usage(&format!("{name} needs a value")));
            match text.parse() {
                Ok(n) if n > 0 => n,
                _ => usage(&format!(
                    "{name}: expected a positive integer, got `{text}`"
                )),
            }
        };
        match flag.as_str() {
            "--repeats" => args.repeats = value("--repeats"),
            "--dispatches" => args.dispatches = value("--dispatches"),
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    args
}

fn usage(message: &str) -> ! {
    eprintln!("pool_bench: {message}\nusage: pool_bench [--repeats N] [--dispatches D]");
    std::process::exit(2);
}

fn main() {
    let args = parse_args();
    let host_cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!(
        "pool_bench: {} repeats, {} dispatches per run, {host_cores} host cores, spin-then-park polls {SPIN_US} us",
        args.repeats, args.dispatches
    );

    let shapes: Vec<Shape> = {
        let d = args.dispatches;
        let mut shapes: Vec<Shape> = vec![(
            "ping-pong, 2 workers".into(),
            Box::new(move |v| ping_pong(v, d)),
        )];
        for (how, label) in [(FanOut::Private, "private"), (FanOut::Shared, "shared")] {
            for workers in [1, 2, 4, 8] {
                shapes.push((
                    format!(
                        "fan-out {label}, {workers} worker{}",
                        if workers == 1 { "" } else { "s" }
                    ),
                    Box::new(move |v| fan_out(v, workers, d, how)),
                ));
            }
        }
        shapes
    };

    println!();
    println!(
        "| workload | pool | ns/dispatch | vs always-unpark | unparks/dispatch (sent) | wakes taken/dispatch (sleepers) | unparks vs always-unpark |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (shape, run) in &shapes {
        // samples[variant][repeat], the variants interleaved per repeat.
        let mut samples = vec![Vec::new(); VARIANTS.len()];
        for _ in 0..args.repeats {
            for (i, variant) in VARIANTS.iter().enumerate() {
                samples[i].push(run(*variant));
            }
        }
        let med = |i: usize, f: fn(&Sample) -> f64| median(samples[i].iter().map(f).collect());
        let base_ns = med(1, |s| s.ns_per_dispatch);
        let base_unparks = med(1, |s| s.unparks_per_dispatch);
        for (i, variant) in VARIANTS.iter().enumerate() {
            let ns = med(i, |s| s.ns_per_dispatch);
            let unparks = med(i, |s| s.unparks_per_dispatch);
            let taken = med(i, |s| s.taken_per_dispatch);
            let cut = if unparks > 0.0 {
                format!("{:.1}x fewer", base_unparks / unparks)
            } else {
                "none sent".into()
            };
            println!(
                "| {shape} | {} | {ns:.0} | {:.2} | {unparks:.4} | {taken:.4} | {} |",
                variant.name,
                ns / base_ns,
                if i == 1 { "1".into() } else { cut }
            );
        }
    }
}
