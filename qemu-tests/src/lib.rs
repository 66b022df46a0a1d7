//! Shared helpers of the QEMU tests (`tests/*.rs`): one kernel build per
//! test binary, boots with assertion-friendly failure messages, and what
//! the fault campaigns read of a boot (the claimed core, the accused one).

mod harness;

pub use harness::{
    assert_the_examination_accuses, boot, boot_with, claimed_core, describe, examination_report,
    kernel,
};
