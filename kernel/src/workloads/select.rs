//! Runs the workload the boot parameters name.

use super::{floor, idle, laplace, ping_pong};
use crate::exit::ExitCode;
use crate::params::{BootParams, Workload};
use crate::println;
use vigil_proto::serial_line::GridWorkload;

/// Runs `params.workload`; returns the exit code for the run.
pub fn run(params: &BootParams) -> ExitCode {
    match params.workload {
        Workload::None => {
            println!("vigil: no workload selected; done");
            ExitCode::Success
        }
        Workload::Laplace => {
            if let Err(why) = laplace::check_grid_fits(params.size as usize, Workload::Laplace) {
                println!("bad boot parameter: {why}");
                return ExitCode::BadParameter;
            }
            let (report, plan) = laplace::run(params.size as usize, params.iterations as usize);
            laplace::record_blocks_run(&report);
            println!("{}", report.result_line(GridWorkload::Laplace));
            print_pool_line(plan, report.round_split);
            ExitCode::Success
        }
        Workload::Floor => {
            if let Err(why) = laplace::check_grid_fits(params.size as usize, Workload::Floor) {
                println!("bad boot parameter: {why}");
                return ExitCode::BadParameter;
            }
            let report = floor::run(params.size as usize, params.iterations as usize);
            laplace::record_blocks_run(&report);
            println!("{}", report.result_line(GridWorkload::Floor));
            ExitCode::Success
        }
        Workload::Idle => {
            idle::run(u64::from(params.idle_ms));
            ExitCode::Success
        }
        Workload::PingPong => match ping_pong::run(params.iterations as usize) {
            Ok(report) => {
                println!("ping-pong: {report}");
                ExitCode::Success
            }
            Err(why) => {
                println!("ping-pong FAILED: {why}");
                ExitCode::CheckFailed
            }
        },
    }
}

/// `pool: kind=steal chunks=2 work_us=41 rounds=1000
/// cores_per_round_median=2 min=1 max=3 search_wakes=N lock_contended=N
/// pool_call_us=N round_longest_block_ns=N round_rest_ns=N`: the round
/// plan, how many distinct cores ran each fork-join round's work, what the
/// stealable pool's lock cost the workload (acquisitions that found it
/// held; microseconds in the pool's calls, summed over cores) and the
/// pooled rounds' medians of their longest row block and of the rest of
/// their time (`workloads::round_split`; left out when no round was
/// pooled) (the host's bench reads it).
fn print_pool_line(
    plan: crate::sched::round_plan::RoundPlan,
    split: Option<crate::workloads::round_split::RoundSplitMedians>,
) {
    let Some((rounds, median, min, max)) = crate::sched::fork_join::cores_per_round() else {
        return;
    };
    let (search_wakes, (lock_contended, pool_call_us)) = if crate::sched::stealable::enabled() {
        (
            crate::sched::stealable::pool().snapshot().search_wakes
                - crate::sched::stealable::search_wakes_before_workload(),
            crate::sched::stealable::lock_cost_of_workload(),
        )
    } else {
        (0, (0, 0))
    };
    let split = split.map_or(alloc::string::String::new(), |split| {
        alloc::format!(
            " round_longest_block_ns={} round_rest_ns={}",
            split.longest_block_ns,
            split.rest_ns
        )
    });
    println!(
        "pool: kind={} chunks={} work_us={} rounds={rounds} cores_per_round_median={median} min={min} max={max} search_wakes={search_wakes} lock_contended={lock_contended} pool_call_us={pool_call_us}{split}",
        plan.pool.name(),
        plan.chunks,
        plan.work_ns / 1000,
    );
}
