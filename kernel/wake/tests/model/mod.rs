//! The loom model of the kernel's idle loop, shared by the loom tests: the
//! crate's own idle driver and waker side on a model machine that behaves
//! like the hardware (latched, coalescing, non-synchronising IPIs, a
//! one-shot timer, spontaneous wakes), and the stealable pool's rule on
//! several such cores.

#![allow(dead_code, reason = "each test binary uses part of the model")]

mod machine;
mod run;
mod steal_run;
mod trace;

#[allow(unused_imports, reason = "each test binary uses part of the model")]
pub use machine::{BLOCKED, LOST_WAKEUP, STRANDED};
#[allow(unused_imports, reason = "each test binary uses part of the model")]
pub use run::{Explored, IPI_TO_RUNNING, RESCUED, Scenario, TWO_IPIS, check};
#[allow(unused_imports, reason = "each test binary uses part of the model")]
pub use steal_run::{
    Act, BUSY_CHOSEN, HELD_BY_BUSY, HERD, Job, Publisher, RAMP, StealScenario, TWO_TICKETS,
    check_steal,
};
