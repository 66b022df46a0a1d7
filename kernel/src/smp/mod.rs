//! Symmetric multiprocessing: which cores exist, starting them, and running
//! a function on another core.
/// Discovering the cores and starting them is the platform's own
/// (`arch::bringup`); each started core enters its scheduler.
pub use crate::arch::bringup;
pub mod cores;
pub mod remote_call;
