//! The per-core scheduler: pinned kernel tasks, a run queue and an inbox per
//! core, the idle loop that halts through the wake protocol, and the
//! blocking primitives built on task parking.
pub mod barrier;
#[allow(
    unsafe_code,
    reason = "switches between the idle stack and task stacks (`arch::context::switch`)"
)]
pub mod core_sched;
#[allow(
    unsafe_code,
    reason = "`#[unsafe(no_mangle)]`: the host finds the table by its symbol"
)]
pub mod debug_table;
pub mod fork_join;
pub mod host_parallelism;
pub mod idle_history;
pub mod idle_hooks;
pub mod inbound;
pub mod latch;
pub mod latency;
pub mod look_again;
pub mod poll_slots;
pub mod round_plan;
pub mod round_pool;
pub mod round_trial;
pub mod round_watch;
pub mod stats;
pub mod steal_join;
pub mod stealable;
#[allow(
    unsafe_code,
    reason = "prepares a new task's stack for its first switch (`arch::context::prepare_stack`)"
)]
pub mod task;
pub mod wait_queue;
pub mod wake_ipi;
pub mod wakeup;
pub mod watchdog;
