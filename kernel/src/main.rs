//! Vigil: a bare-metal x86_64 SMP kernel built around its idle/wakeup
//! subsystem. This file only wires modules and names the entry point; the boot
//! sequence lives in `start.rs`.
#![no_std]
#![no_main]
#![feature(abi_x86_interrupt)]
// Unsafe lives in `arch/`; the few other modules that must touch memory or
// stacks directly say why, next to their `mod` line.
#![deny(unsafe_code)]

extern crate alloc;

#[allow(
    unsafe_code,
    reason = "the CPU, the APIC, ports, page tables, context switches: every unsafe block here has its SAFETY comment"
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
#[allow(
    unsafe_code,
    reason = "implements the `unsafe trait FrameAllocator`: frames handed out are unused and never handed out twice"
)]
mod memory;
mod panic;
mod params;
mod sched;
mod smp;
mod start;
mod workloads;

bootloader_api::entry_point!(start::kernel_main, config = &start::BOOTLOADER_CONFIG);
