//! Vigil: a bare-metal x86_64 SMP kernel built around its idle/wakeup
//! subsystem. This file only wires modules and names the entry point; the boot
//! sequence lives in `start.rs`.
#![no_std]
#![no_main]
#![feature(abi_x86_interrupt)]

extern crate alloc;

mod arch;
mod chaos;
mod console;
mod exit;
mod heap;
mod ktest;
mod memory;
mod panic;
mod params;
mod sched;
mod smp;
mod start;
mod workloads;

bootloader_api::entry_point!(start::kernel_main, config = &start::BOOTLOADER_CONFIG);
