//! A user-space thread pool on the wake protocol (feature `std`): each
//! worker thread runs the same [`IdleDriver`](crate::IdleDriver) the kernel
//! runs, on a [`Platform`](crate::Platform) whose sleep is
//! [`std::thread::park`] and whose wake is an unpark.
//!
//! * **Private work** ([`ThreadPool::submit`], [`Worker::submit`]) goes into
//!   one worker's inbox, and the protocol decides whether that worker needs
//!   an unpark: only a worker that committed to sleep is unparked, once.
//!   A worker's private job for itself goes straight to its own run queue.
//! * **Shared work** ([`ThreadPool::spawn`], [`Worker::spawn`]) goes into a
//!   [`Stealable`](crate::Stealable) pool (a worker's spawns onto that
//!   worker's own queue, oldest first, stolen by idle workers; the others
//!   onto one shared queue), and the work-conserving rule
//!   wakes as many sleeping workers as the work keeps busy, one searcher at
//!   a time (its search wake is a private item of the woken worker, so it
//!   cannot be lost for any reason a private wake cannot).
//!
//! * **A fork-join** ([`Worker::join`]) spawns its second half and runs the
//!   first; the joiner then runs the second itself if nobody started it,
//!   else waits parked for the worker that did (`join.rs`, on the
//!   model-checked [`JoinState`](crate::JoinState)).
//!
//! * **A job that panics** is caught and counted, and its worker goes on
//!   (see [`ThreadPool`]); **shutdown** cannot hang on a worker that had
//!   not parked yet (the fences in `ThreadPool::stop`).
//!
//! * **An idle worker polls before it parks** only while its parks end
//!   soon (the adaptive backoff the kernel's cores use), and yields its
//!   host core between two looks (`sched_yield`: a thread waiting for that
//!   core runs first), so an idle pool polls not at all and a busy host
//!   loses little to the pollers. Shared work chooses a polling worker
//!   before a parked one: its search wake is a push it sees, no unpark.
//!
//! * **A worker chosen for a lone job leaves it to its owner** for a few
//!   glances without the lock (`lone_item_grace.rs`): the owner of a chain
//!   of spawns pops it within nanoseconds, and a job that stays is stolen.
//!
//! The same pool built with [`Policy::AlwaysIpi`](crate::Policy) unparks on
//! every notification, with [`BackoffMode::Off`](crate::BackoffMode) its
//! workers park at once, and with a fixed budget they spin before they park
//! whatever the host: the baselines of the pool benchmarks
//! (`examples/pool_bench.rs`, `examples/peer_bench.rs`).

mod join;
mod lone_item_grace;
mod poll_slots;
mod thread_pool;
mod worker_platform;

pub use thread_pool::{Job, PoolConfig, PoolStats, Producer, ThreadPool, Worker};
