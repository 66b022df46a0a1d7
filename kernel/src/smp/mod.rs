//! Symmetric multiprocessing: which cores exist, starting them, and running
//! a function on another core.
#[allow(
    unsafe_code,
    reason = "broadcast INIT/SIPI and the per-core data install, `unsafe fn`s of `arch` whose preconditions only bring-up can meet"
)]
pub mod bringup;
pub mod cores;
pub mod remote_call;
