//! Shared helpers of the QEMU tests (`tests/*.rs`): one kernel build per
//! test binary, and boots with assertion-friendly failure messages.

mod harness;

pub use harness::{boot, boot_with, describe, kernel};
