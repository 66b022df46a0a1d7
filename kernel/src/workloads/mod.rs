//! Workloads run in `mode=run`.
pub mod floor;
pub mod idle;
pub mod laplace;
pub mod ping_pong;
pub mod round_split;
pub mod select;

pub use select::run;
