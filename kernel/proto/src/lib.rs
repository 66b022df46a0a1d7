//! What the Vigil kernel says to its host harness, defined once: the kernel
//! formats with it, `xtask` parses with it.
//!
//! * [`boot_params`]: the parameter line: where the kernel finds it, its
//!   keys, values, ranges and defaults, the kernel's parser and the host's
//!   formatter;
//! * [`debug_table`]: the layout of the table a host reads from a hung guest;
//! * [`exit_code`]: the codes written to QEMU's `isa-debug-exit` port, and
//!   the QEMU exit status each one becomes;
//! * [`test_line`]: the in-kernel test suite's result lines;
//! * [`serial_line`]: the core prefix, the grid workloads' result line, the
//!   watchdog's and the idle workload's markers;
//! * [`laplace_grid`]: the Laplace workload's arithmetic (boundary values,
//!   update, blocks and chunks, checksum), shared by the kernel and the
//!   Linux peer;
//! * [`linux_peer`]: the Linux peer's keys, idle choice and cost line;
//! * [`stats_line`]: the `VIGIL-STATS` record (its field list once; the
//!   kernel prints it, the host deserialises it with feature `serde`);
//! * [`wake_kind`]: the keys of the record's wake-latency histograms;
//! * the wake crate's [`Policy`] and [`State`], so their names exist once.
//!
//! `no_std` (with `alloc`) and free of `unsafe`. Every line kind has a
//! round-trip test: format, parse, compare.

#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod boot_params;
pub mod debug_table;
pub mod exit_code;
pub mod laplace_grid;
pub mod linux_peer;
pub mod serial_line;
pub mod stats_line;
pub mod test_line;
pub mod wake_kind;

pub use vigil_wake::{Policy, State};
