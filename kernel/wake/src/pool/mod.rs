//! A user-space thread pool on the wake protocol (feature `std`): each
//! worker thread runs the same [`IdleDriver`](crate::IdleDriver) the kernel
//! runs, on a [`Platform`](crate::Platform) whose sleep is
//! [`std::thread::park`] and whose wake is an unpark.
//!
//! * **Private work** ([`ThreadPool::submit`], [`Worker::submit`]) goes into
//!   one worker's inbox, and the protocol decides whether that worker needs
//!   an unpark: only a worker that committed to sleep is unparked, once.
//! * **Shared work** ([`ThreadPool::spawn`], [`Worker::spawn`]) goes into a
//!   [`Stealable`](crate::Stealable) pool (a worker's spawns onto that
//!   worker's own queue, oldest first, stolen by idle workers; the others
//!   onto one shared queue), and the work-conserving rule
//!   wakes as many sleeping workers as the work keeps busy, one searcher at
//!   a time (its search wake is a private item of the woken worker, so it
//!   cannot be lost for any reason a private wake cannot).
//!
//! * **A job that panics** is caught and counted, and its worker goes on
//!   (see [`ThreadPool`]); **shutdown** cannot hang on a worker that had
//!   not parked yet (the fences in `ThreadPool::stop`).
//!
//! The same pool built with [`Policy::AlwaysIpi`](crate::Policy) unparks on
//! every notification, and with a [`BackoffMode::FixedUs`](crate::BackoffMode)
//! budget its workers spin before they park: the baselines of the pool
//! benchmark (`examples/pool_bench.rs`).

mod thread_pool;
mod worker_platform;

pub use thread_pool::{Job, PoolConfig, PoolStats, Producer, ThreadPool, Worker};
