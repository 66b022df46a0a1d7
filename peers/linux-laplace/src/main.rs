//! The Linux peer's `/init`: Vigil's Laplace on Debian's kernel. It mounts
//! `/proc` and `/sys`, reads its `key=value` arguments (the words after
//! `--` on Linux's command line), runs the grid with the pinned shape (one
//! pinned thread per CPU, a barrier per iteration) or the work-stealing one
//! (rayon), times its own loop (boot excluded, as Vigil's kernel does),
//! prints Vigil's result line and what Linux paid (context switches and
//! rescheduling IPIs over the loop, its idle choice and cpuidle driver),
//! and ends the machine through QEMU's exit port with Vigil's exit codes.
//!
//! Built static (`-C target-feature=+crt-static`) by xtask, which packs it
//! into the initramfs it boots Linux with.

mod costs;
mod grid;
mod machine;
mod params;
mod pinned_pool;
mod steal_pool;
mod timed_loop;

use std::sync::Arc;

use vigil_proto::boot_params::{Key, Pool};
use vigil_proto::exit_code::ExitCode;
use vigil_proto::laplace_grid;
use vigil_proto::linux_peer::{LOOP_START, LinuxCosts, LinuxIdle};
use vigil_proto::serial_line::{GridResult, GridWorkload};

use crate::machine::{power_off, say};

fn main() {
    std::panic::set_hook(Box::new(|info| {
        say(&format!("linux-laplace: panic: {info}"));
        power_off(ExitCode::Panic);
    }));
    if let Err(err) = machine::mount_pseudo_filesystems() {
        say(&format!("linux-laplace: {err}"));
        power_off(ExitCode::CheckFailed);
    }
    let words: Vec<String> = std::env::args().skip(1).collect();
    let params = match params::parse(&words) {
        Ok(params) => params,
        Err(why) => {
            say(&format!("linux-laplace: bad boot parameter: {why}"));
            power_off(ExitCode::BadParameter);
        }
    };
    match run(params) {
        Ok(()) => power_off(ExitCode::Success),
        Err(err) => {
            say(&format!("linux-laplace: {err}"));
            power_off(ExitCode::CheckFailed);
        }
    }
}

fn run(params: params::PeerParams) -> std::io::Result<()> {
    let cpus = std::thread::available_parallelism()?.get();
    let cmdline = std::fs::read_to_string("/proc/cmdline")?;
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")?;
    let idle = LinuxIdle::of_cmdline(&cmdline);
    let idle_driver = costs::idle_driver();
    let size = params.size;
    // Without pool=, the shape a Linux program would be written in: one
    // pinned thread per CPU with a barrier, or rayon where the grid has
    // fewer interior rows than CPUs.
    let pool = params.pool.unwrap_or(if size - 2 >= cpus {
        Pool::Pinned
    } else {
        Pool::Steal
    });
    if pool == Pool::Pinned && size - 2 < cpus {
        say(&format!(
            "linux-laplace: bad boot parameter: {}={size} has {} interior rows for {cpus} CPUs, and {}={} gives every CPU at least one row: use {}={} or more",
            Key::Size.name(),
            size - 2,
            Key::Pool.name(),
            Pool::Pinned.name(),
            Key::Size.name(),
            cpus + 2
        ));
        power_off(ExitCode::BadParameter);
    }
    let workers = laplace_grid::worker_count(size, cpus);
    let blocks = match pool {
        Pool::Pinned => workers,
        Pool::Steal => steal_pool::stealable_chunks(size, workers),
    };
    say(&format!(
        "linux-laplace: Linux {} on {cpus} CPUs, idle={} (cpuidle driver {idle_driver}), pool={} with {blocks} blocks, {size}x{size}, {} iterations",
        release.trim(),
        idle.name(),
        pool.name(),
        params.iterations
    ));
    let grids = Arc::new(grid::Grids::new(size, params.iterations, blocks));
    say(LOOP_START);
    let timed = match pool {
        Pool::Pinned => pinned_pool::run(&grids, params.iterations)?,
        Pool::Steal => steal_pool::run(&grids, params.iterations, cpus)?,
    };
    let result = GridResult {
        workload: GridWorkload::Laplace,
        size: size as u64,
        iterations: params.iterations as u64,
        workers: blocks as u64,
        elapsed_us: u64::try_from(timed.elapsed.as_micros()).unwrap_or(u64::MAX),
        residual: grids.residual(),
        checksum: grids.checksum(),
    };
    say(&result.to_string());
    let (before, after) = (timed.before, timed.after);
    let grown = |what: &str, before: u64, after: u64| {
        after.checked_sub(before).ok_or_else(|| {
            std::io::Error::other(format!(
                "{what} went down over the loop: {before} -> {after}"
            ))
        })
    };
    let costs = LinuxCosts {
        idle,
        idle_driver,
        cpus: after.cpus,
        iterations: params.iterations as u64,
        voluntary_switches: grown(
            "voluntary switches",
            before.voluntary_switches,
            after.voluntary_switches,
        )?,
        involuntary_switches: grown(
            "involuntary switches",
            before.involuntary_switches,
            after.involuntary_switches,
        )?,
        rescheduling_ipis: grown(
            "rescheduling IPIs",
            before.rescheduling_ipis,
            after.rescheduling_ipis,
        )?,
        function_call_ipis: grown(
            "function-call IPIs",
            before.function_call_ipis,
            after.function_call_ipis,
        )?,
    };
    say(&costs.to_string());
    Ok(())
}
