//! Bringing every core online on AArch64: the CPUs are the device tree's,
//! the bootstrap core's GIC redistributor and CPU interface are set up,
//! and every other core is started with PSCI `CPU_ON` (one call each,
//! answered at once by QEMU, which powers the core on in the background)
//! at `entry.rs`'s secondary entry, with an [`ApBoot`] record telling it
//! its MMU registers, stacks and index. The bootstrap core then waits
//! halted on its one-shot for the check-ins, as on x86_64.

use super::boot::BootEnv;
use super::entry::{self, EXCEPTION_STACK_BYTES};
use super::interrupt_vectors::PRIORITIES;
use super::paging::{self, GuardOwner};
use super::{gic, halt, interrupts, ipi, percpu, psci, timer, tsc};
use crate::exit::{ExitCode, exit};
use crate::println;
use crate::smp::cores;
use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Stack size of each secondary core's boot (idle) context.
const AP_STACK_BYTES: u64 = 64 * 1024;
/// How long the bootstrap core waits for every core before giving up.
const CHECKIN_TIMEOUT_MS: u64 = 5_000;
/// How long the bootstrap core halts between two looks at the check-ins.
const CHECKIN_POLL_US: u64 = 1_000;

/// What a secondary core's entry code reads (MMU off, so by physical
/// address: the heap is identity-mapped) before it runs any Rust.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct ApBoot {
    mair: u64,
    tcr: u64,
    ttbr0: u64,
    sctlr: u64,
    exception_stack_top: u64,
    stack_top: u64,
    block: &'static percpu::PerCore,
}

// The entry code's offsets (`entry.rs`).
const _: () = {
    assert!(core::mem::offset_of!(ApBoot, mair) == 0);
    assert!(core::mem::offset_of!(ApBoot, tcr) == 8);
    assert!(core::mem::offset_of!(ApBoot, ttbr0) == 16);
    assert!(core::mem::offset_of!(ApBoot, sctlr) == 24);
    assert!(core::mem::offset_of!(ApBoot, exception_stack_top) == 32);
    assert!(core::mem::offset_of!(ApBoot, stack_top) == 40);
};

static DISCOVERED: AtomicUsize = AtomicUsize::new(1);
static BRINGUP_US: AtomicU64 = AtomicU64::new(0);

/// Number of CPUs the device tree lists.
pub fn discovered() -> usize {
    DISCOVERED.load(Ordering::Relaxed)
}

/// Guest time from the first `CPU_ON` to the last check-in, in µs.
pub fn bringup_us() -> u64 {
    BRINGUP_US.load(Ordering::Relaxed)
}

fn redistributor_of(hw_id: u32) -> u64 {
    gic::find_redistributor(hw_id).unwrap_or_else(|| {
        println!("boot error: no GIC redistributor has the affinity {hw_id:#x}");
        exit(ExitCode::CheckFailed)
    })
}

/// Registers every core the device tree lists (the bootstrap core first),
/// sets up the bootstrap core's redistributor and CPU interface and its
/// per-core block. Returns the core count.
pub fn prepare(boot: &BootEnv) -> usize {
    let machine = boot.machine;
    DISCOVERED.store(machine.cpus_listed, Ordering::Relaxed);
    let bsp = ipi::this_core_id();
    let mut hw_ids: Vec<u32> = Vec::with_capacity(machine.cpu_count);
    hw_ids.push(bsp);
    hw_ids.extend(
        machine.cpus[..machine.cpu_count]
            .iter()
            .map(|&mpidr| ipi::hw_id_of_mpidr(mpidr))
            .filter(|&id| id != bsp),
    );
    if machine.cpus_listed > cores::MAX_CORES {
        log::warn!(
            "{} CPUs in the device tree; booting the compiled maximum of {}",
            machine.cpus_listed,
            cores::MAX_CORES
        );
        hw_ids.truncate(cores::MAX_CORES);
    }
    cores::register(&hw_ids);
    let sgi_frame = gic::init_this_core(redistributor_of(bsp), &PRIORITIES);
    // SAFETY: the bootstrap core, once, before any other core starts;
    // index 0 is the bootstrap core's and no other core is given it.
    unsafe {
        percpu::install(Box::leak(Box::new(percpu::PerCore {
            index: 0,
            hw_id: bsp,
            sgi_frame: AtomicU64::new(sgi_frame),
        })));
    }
    cores::mark_online(0);
    println!(
        "smp: {} CPU(s) in the device tree, starting {}; GICv3 ({} redistributor region(s)), PSCI over {:?}, generic timer {} ticks/ms",
        machine.cpus_listed,
        hw_ids.len(),
        machine.gic_redistributor_count,
        machine.psci,
        tsc::ticks_per_ms()
    );
    hw_ids.len()
}

/// Starts every registered core (after [`prepare`] and the scheduler's
/// init: each goes straight into its idle loop) and waits for them to
/// check in.
pub fn start_all_aps() {
    let count = cores::count();
    if count > 1 {
        start_aps(count);
    }
    println!(
        "smp: {} of {} cores online, bring-up {} us (first CPU_ON to last check-in)",
        cores::online_count(),
        count,
        bringup_us()
    );
}

fn start_aps(count: usize) {
    let registers = paging::registers();
    let records: Vec<&'static ApBoot> = (1..count)
        .map(|index| {
            let hw_id = cores::apic_id(index);
            let stack = paging::map_stack(
                AP_STACK_BYTES,
                GuardOwner {
                    what: "core stack",
                    index,
                },
            );
            let exception_stack: &'static mut [u8] =
                Box::leak(vec![0u8; EXCEPTION_STACK_BYTES].into_boxed_slice());
            let block: &'static percpu::PerCore = Box::leak(Box::new(percpu::PerCore {
                index,
                hw_id,
                sgi_frame: AtomicU64::new(0),
            }));
            let record: &'static ApBoot = Box::leak(Box::new(ApBoot {
                mair: registers.mair,
                tcr: registers.tcr,
                ttbr0: registers.ttbr0,
                sctlr: registers.sctlr,
                exception_stack_top: (exception_stack.as_ptr_range().end as u64) & !15,
                stack_top: stack.top.as_u64(),
                block,
            }));
            record
        })
        .collect();
    let first_call = tsc::now();
    for (index, record) in (1..count).zip(&records) {
        let record_address = core::ptr::from_ref(*record) as u64;
        // The record is read with the MMU (and so the data cache) off:
        // clean its line to the point of coherency first, so the core
        // reads what was written (QEMU has no caches to clean; hardware
        // does), and `dsb sy` so the clean, and every store before it
        // (the core table, the schedulers, this core's per-core blocks),
        // completes before the call that starts the core.
        // SAFETY: cache maintenance of memory this core owns; no effect
        // on its contents.
        unsafe {
            core::arch::asm!("dc cvac, {0}", "dsb sy", in(reg) record_address, options(nostack))
        };
        let mpidr = u64::from(cores::apic_id(index) & 0x00ff_ffff)
            | (u64::from(cores::apic_id(index) >> 24) << 32);
        // SAFETY: the secondary entry runs with the MMU off and sets itself
        // up from `record`, which is leaked (outlives the start).
        let status =
            unsafe { psci::cpu_on(mpidr, entry::secondary_entry_address(), record_address) };
        if status != 0 {
            println!(
                "boot error: PSCI CPU_ON of core {index} (MPIDR {mpidr:#x}) failed with status {status}"
            );
            exit(ExitCode::CheckFailed)
        }
    }
    let deadline = tsc::now() + tsc::us_to_ticks(CHECKIN_TIMEOUT_MS * 1000);
    halt_until(deadline, || cores::online_count() == count);
    let last = (0..count)
        .map(cores::checkin_tsc)
        .max()
        .unwrap_or(first_call);
    BRINGUP_US.store(
        tsc::ticks_to_us(last.saturating_sub(first_call)),
        Ordering::Relaxed,
    );
    let missing: Vec<usize> = (0..count).filter(|&i| !cores::is_online(i)).collect();
    if !missing.is_empty() {
        println!("boot error: cores {missing:?} did not check in within {CHECKIN_TIMEOUT_MS} ms");
        exit(ExitCode::CheckFailed)
    }
}

/// Halts the bootstrap core (before its scheduler runs: interrupts off, and
/// nothing but its own timer aimed at it) until `done()` or the counter
/// passes `deadline`, waking every [`CHECKIN_POLL_US`] at most to look.
/// Returns with interrupts off and the timer disarmed.
fn halt_until(deadline: u64, done: impl Fn() -> bool) {
    loop {
        let now = tsc::now();
        if done() || now >= deadline {
            break;
        }
        let left_us = tsc::ticks_to_us(deadline - now).clamp(1, CHECKIN_POLL_US);
        timer::arm_oneshot_us(left_us);
        halt::enable_interrupts_and_halt();
        interrupts::disable();
    }
    timer::cancel();
}

/// A secondary core's first Rust code (from its entry code: MMU on, IRQs
/// masked, on its own stack).
#[unsafe(no_mangle)]
extern "C" fn vigil_ap_entry(record: &'static ApBoot) -> ! {
    let block = record.block;
    let index = block.index;
    // SAFETY: this core, once, on entry; the block was built for core
    // `index` (its place in the core table) and for no other.
    unsafe { percpu::install(block) };
    let sgi_frame = gic::init_this_core(redistributor_of(block.hw_id), &PRIORITIES);
    block.sgi_frame.store(sgi_frame, Ordering::Relaxed);
    cores::mark_online(index);
    crate::sched::core_sched::run_core(index)
}
