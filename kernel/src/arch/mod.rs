//! Everything that touches the CPU or platform devices directly. The rest of
//! the kernel calls these safe wrappers: the crate denies `unsafe_code`, and
//! allows it only here and in the few modules that must (each `mod` line
//! says why): the context switch's callers (`sched::core_sched`,
//! `sched::task`), the heap's and the frame allocator's setup, AP bring-up
//! (`smp::bringup`), the debug table's `no_mangle`, and the allocator test.
pub mod x86_64;

pub use self::x86_64::*;
