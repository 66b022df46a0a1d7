//! The per-core scheduler: pinned kernel tasks, a run queue and an inbox per
//! core, the idle loop that halts through the wake protocol, and the
//! blocking primitives built on task parking.
pub mod barrier;
pub mod core_sched;
pub mod debug_table;
pub mod fork_join;
pub mod idle_history;
pub mod idle_hooks;
pub mod inbound;
pub mod latch;
pub mod latency;
pub mod round_pool;
pub mod round_watch;
pub mod stats;
pub mod steal_join;
pub mod stealable;
pub mod task;
pub mod wait_queue;
pub mod wake_ipi;
pub mod wakeup;
pub mod watchdog;
