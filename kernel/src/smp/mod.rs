//! Symmetric multiprocessing: which cores exist, starting them, and running
//! a function on another core.
pub mod bringup;
pub mod cores;
pub mod remote_call;
