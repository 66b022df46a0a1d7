//! The in-kernel test suite (`mode=test`): a runner and the test cases,
//! grouped by what they check.
pub mod registry;
pub mod runner;

mod fault_tests;
#[allow(unsafe_code, reason = "calls the global allocator directly to test it")]
mod heap_tests;
mod laplace_tests;
mod look_again_tests;
mod params_tests;
mod platform_tests;
mod round_plan_tests;
mod round_split_tests;
mod sched_tests;
mod smp_tests;
mod steal_report_tests;
