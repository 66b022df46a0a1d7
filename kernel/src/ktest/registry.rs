//! Every in-kernel test, in the order they run.

use super::runner::TestCase;
use super::{
    fault_tests, heap_tests, laplace_tests, look_again_tests, params_tests, platform_tests,
    round_plan_tests, round_split_tests, sched_tests, smp_tests, steal_report_tests,
};

/// The whole suite.
pub static ALL: &[TestCase] = &[
    heap_tests::MANY_SIZES,
    heap_tests::ALIGNMENTS,
    heap_tests::INTERLEAVED_FREES,
    heap_tests::LARGE_BLOCK,
    params_tests::DEFAULTS,
    params_tests::FULL_LINE,
    params_tests::REJECTS_BAD_LINES,
    fault_tests::GUARD_PAGE_FAULT_REPORTED,
    fault_tests::BREAKPOINT_RESUMES,
    #[cfg(target_arch = "x86_64")]
    fault_tests::FRESH_STACK_SCRUBBED,
    #[cfg(target_arch = "x86_64")]
    fault_tests::BOOTSTRAP_CORE_OWN_STACK,
    #[cfg(target_arch = "x86_64")]
    platform_tests::PIC_MASKED,
    platform_tests::FW_CFG_CARRIES_PARAMS,
    #[cfg(target_arch = "x86_64")]
    platform_tests::DOUBLE_FAULT_IST,
    #[cfg(target_arch = "aarch64")]
    platform_tests::RAM_IS_NORMAL_SHAREABLE,
    #[cfg(target_arch = "aarch64")]
    platform_tests::NULL_PAGE_FAULTS,
    platform_tests::CONSOLE_PREFIX,
    #[cfg(target_arch = "x86_64")]
    platform_tests::S5_SLEEP_TYPES,
    smp_tests::CORES_ONLINE,
    smp_tests::ALL_PAIRS_IPI,
    smp_tests::HALT_WOKEN_AFTER_HALT,
    smp_tests::HALT_WOKEN_PENDING_BEFORE_STI,
    smp_tests::ONESHOT_TIMER,
    sched_tests::PING_PONG,
    sched_tests::BURST,
    sched_tests::WAKE_BEFORE_BLOCK,
    sched_tests::WAIT_QUEUE_REPLACES,
    sched_tests::BARRIER_ROUNDS,
    sched_tests::FORK_JOIN_ROUNDS,
    sched_tests::STEAL_JOIN_ROUNDS,
    sched_tests::STEAL_BESIDE_BUSY_CORE,
    steal_report_tests::REPORTED_WHEN_IDLE,
    steal_report_tests::CALLER_WOKEN_BY_ITS_OWN_CORE,
    sched_tests::STORM,
    sched_tests::COUNTERS_MATCH_POLICY,
    round_plan_tests::CHOICES,
    round_plan_tests::TRIAL,
    round_plan_tests::RAISED_BY_ROUNDS,
    round_plan_tests::ESTIMATE_FASTER_SOLO,
    round_plan_tests::SEEN_BESIDE,
    round_plan_tests::LOOKS_WITHIN_THE_WINDOW,
    round_plan_tests::SECOND_WINDOW,
    look_again_tests::SPACED_BY_COST,
    look_again_tests::WHERE_THE_REACH_BLOCKS,
    look_again_tests::WIDENS_THE_REACH,
    look_again_tests::STARTS_A_TRIAL,
    look_again_tests::WIDENED_REACH_RUNS_A_TRIAL,
    look_again_tests::BETWEEN_ROUNDS,
    look_again_tests::LOOKS_FOR_REAL,
    round_plan_tests::CALIBRATION_PRICES_BEYOND_THE_WORK,
    round_plan_tests::CALIBRATION_WORK_FROM_THE_HANDOFF,
    round_plan_tests::HANDOFF_SEEN,
    round_split_tests::MEDIANS,
    round_split_tests::LONG_RUN_KEEPS_EVERY_KTH_ROUND,
    laplace_tests::ROW_BLOCK_FN_PAGE_ALIGNED,
    laplace_tests::LONGEST_BLOCK_TAKEN_PER_ROUND,
];
