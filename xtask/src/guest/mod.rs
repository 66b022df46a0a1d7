//! The guest: the settings the host gives it (`settings`; their
//! parameter line is vigil-proto's `ParamLine`), what it says (its serial
//! lines, parsed with `vigil-proto`), the verdict, the checks against the
//! host.

pub mod laplace_check;
pub mod laplace_reference;
pub mod linux_costs;
pub mod pool_line;
pub mod run_output;
pub mod serial_diff;
pub mod settings;
pub mod test_output;
pub mod verdict;
pub mod vigil_stats;
