//! Shared helpers of the QEMU tests (`tests/*.rs`): one kernel build per
//! test binary, boots with assertion-friendly failure messages, and what
//! the fault campaigns read of a boot (the claimed core, the accused one).

mod harness;

pub use harness::{boot, boot_with, claimed_core, describe, kernel, the_core_halted_with_work};
