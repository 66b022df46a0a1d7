//! Runs the workload the boot parameters name.

use super::{floor, idle, laplace, ping_pong};
use crate::exit::ExitCode;
use crate::params::{BootParams, Workload};
use crate::println;

/// Runs `params.workload`; returns the exit code for the run.
pub fn run(params: &BootParams) -> ExitCode {
    match params.workload {
        Workload::None => {
            println!("vigil: no workload selected; done");
            ExitCode::Success
        }
        Workload::Laplace => {
            let report = laplace::run(params.size as usize, params.iterations as usize);
            println!("laplace: {report}");
            ExitCode::Success
        }
        Workload::Floor => {
            let report = floor::run(params.size as usize, params.iterations as usize);
            println!("floor: {report}");
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
                ExitCode::Failed
            }
        },
    }
}
