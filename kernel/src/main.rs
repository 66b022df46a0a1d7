//! Vigil: a bare-metal SMP kernel (x86_64, AArch64) built around its
//! idle/wakeup subsystem. This file only wires modules; the entry point is
//! the arch layer's (`arch::boot`), the boot sequence above it `start.rs`.
#![no_std]
#![no_main]
#![cfg_attr(target_arch = "x86_64", feature(abi_x86_interrupt))]
// `#[rustc_align]` on the Laplace row-block function: its loop must not
// straddle a page (`workloads::laplace::compute_block_untimed` says why).
#![feature(fn_align)]
// Unsafe lives in `arch/`; the few other modules that must touch memory or
// stacks directly say why, next to their `mod` line.
#![deny(unsafe_code)]

extern crate alloc;

#[allow(
    unsafe_code,
    reason = "the CPU, the interrupt controller, device registers, page tables, context switches: every unsafe block here has its SAFETY comment"
)]
mod arch;
mod chaos;
mod console;
mod exit;
#[allow(
    unsafe_code,
    reason = "hands the heap's mapped region to the allocator, once at boot"
)]
mod heap;
mod ktest;
mod memory;
mod panic;
mod params;
mod sched;
mod smp;
mod start;
mod workloads;
