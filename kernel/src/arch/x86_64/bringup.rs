//! Bringing every core online: discover CPUs in the MADT, enable the local
//! APIC and calibrate timers on the bootstrap core, give each AP a stack with
//! a guard page, then start all APs at once with one broadcast INIT-SIPI-SIPI
//! (not a serial 10 ms per core) and wait for them to check in. The
//! bootstrap core waits halted on its LAPIC one-shot timer, not spinning:
//! under TCG a spinning vCPU takes a host core (and QEMU's global lock on
//! every `pause` or port read) from the APs it is waiting for, which with
//! 256 vCPUs on 2 host cores stretched the bring-up from ~0.1 s to seconds.

use super::boot::BootEnv;
use super::paging::{self, GuardOwner};
use super::trampoline::{self, TrampolineParams};
use super::{acpi_madt, ap_entry, exceptions, gdt, halt, lapic, percpu, tsc};
use crate::exit::{ExitCode, exit};
use crate::println;
use crate::smp::cores;
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use spin::Once;
use x86_64::registers::control::Cr3;

/// Stack size of each AP's boot (idle) context.
const AP_STACK_BYTES: u64 = 64 * 1024;
/// INIT to first SIPI: the architectural 10 ms.
const INIT_TO_SIPI_US: u64 = 10_000;
/// Between the two SIPIs: the architectural 200 µs.
const SIPI_TO_SIPI_US: u64 = 200;
/// How long the bootstrap core waits for every AP before giving up.
const CHECKIN_TIMEOUT_MS: u64 = 5_000;
/// The xAPIC physical-destination broadcast id (also the first id xAPIC
/// cannot address).
const XAPIC_BROADCAST_ID: u32 = 0xff;
/// How long the bootstrap core halts between two looks at the check-ins.
const CHECKIN_POLL_US: u64 = 1_000;

/// What each AP loads on its way in, prepared by the bootstrap core.
static AP_SETUP: [Once<(&'static percpu::PerCore, &'static gdt::CoreTables)>; cores::MAX_CORES] =
    [const { Once::new() }; cores::MAX_CORES];

static DISCOVERED: AtomicUsize = AtomicUsize::new(1);
static BRINGUP_US: AtomicU64 = AtomicU64::new(0);

/// Number of enabled CPUs the MADT listed.
pub fn discovered() -> usize {
    DISCOVERED.load(Ordering::Relaxed)
}

/// Guest time from the first SIPI to the last AP check-in, in µs.
pub fn bringup_us() -> u64 {
    BRINGUP_US.load(Ordering::Relaxed)
}

/// Discovers the CPUs, enables and calibrates the bootstrap core's LAPIC
/// and registers every core (bootstrap core only). Returns the core count.
/// A missing or malformed MADT ends the run with a clear error.
pub fn prepare(boot: &BootEnv) -> usize {
    let topology = match acpi_madt::discover(boot.rsdp_phys) {
        Ok(t) => t,
        Err(err) => {
            println!("boot error: CPU discovery failed: {err}");
            exit(ExitCode::CheckFailed)
        }
    };
    DISCOVERED.store(topology.apic_ids.len(), Ordering::Relaxed);
    lapic::init_bootstrap(topology.lapic_phys);
    let bsp_apic = lapic::id();
    let mut apic_ids: Vec<u32> = Vec::with_capacity(topology.apic_ids.len());
    apic_ids.push(bsp_apic);
    apic_ids.extend(
        topology
            .apic_ids
            .iter()
            .copied()
            .filter(|&id| id != bsp_apic),
    );
    if !lapic::is_x2apic() {
        // An xAPIC ICR destination is 8 bits and 0xff is the broadcast id:
        // a CPU with a larger id cannot be sent a wake IPI of its own.
        let addressable = apic_ids.len();
        apic_ids.retain(|&id| id < XAPIC_BROADCAST_ID);
        if apic_ids.len() < addressable {
            log::warn!(
                "{} CPU(s) have APIC ids of 255 or more, which xAPIC mode cannot address: left out (x2APIC would start them)",
                addressable - apic_ids.len()
            );
        }
    }
    if apic_ids.len() > cores::MAX_CORES {
        log::warn!(
            "{} CPUs in the MADT; booting the compiled maximum of {}",
            apic_ids.len(),
            cores::MAX_CORES
        );
        apic_ids.truncate(cores::MAX_CORES);
    }
    cores::register(&apic_ids);
    // SAFETY: the bootstrap core, once, before the APs start; index 0 is
    // the bootstrap core's and no AP is given it (`cores::register`).
    unsafe {
        percpu::install(Box::leak(Box::new(percpu::PerCore {
            index: 0,
            apic_id: bsp_apic,
        })));
    }
    cores::mark_online(0);
    println!(
        "smp: {} CPU(s) in the MADT, starting {}; {} mode, LAPIC timer {} ticks/ms, TSC {} ticks/ms{}",
        topology.apic_ids.len(),
        apic_ids.len(),
        if lapic::is_x2apic() {
            "x2APIC"
        } else {
            "xAPIC"
        },
        lapic::timer_ticks_per_ms(),
        tsc::ticks_per_ms(),
        if lapic::uses_tsc_deadline() {
            ", TSC-deadline"
        } else {
            ""
        }
    );
    apic_ids.len()
}

/// Starts every registered AP (after [`prepare`] and the scheduler's init:
/// APs go straight into their idle loop) and waits for them to check in.
pub fn start_all_aps() {
    let apic_ids: Vec<u32> = (0..cores::count()).map(cores::apic_id).collect();
    if apic_ids.len() > 1 {
        start_aps(&apic_ids);
    }
    println!(
        "smp: {} of {} cores online, bring-up {} us (first SIPI to last check-in)",
        cores::online_count(),
        apic_ids.len(),
        bringup_us()
    );
}

fn start_aps(apic_ids: &[u32]) {
    if !crate::memory::frames::low_page_usable(trampoline::TRAMPOLINE_PHYS) {
        println!(
            "boot error: the AP trampoline page {:#x} is not usable memory in this boot's memory map",
            trampoline::TRAMPOLINE_PHYS
        );
        exit(ExitCode::CheckFailed)
    }
    let stacks: Vec<(u32, u64)> = apic_ids
        .iter()
        .enumerate()
        .skip(1)
        .map(|(index, &apic)| {
            let block: &'static percpu::PerCore = Box::leak(Box::new(percpu::PerCore {
                index,
                apic_id: apic,
            }));
            AP_SETUP[index].call_once(|| (block, gdt::build()));
            let stack = paging::map_stack(
                AP_STACK_BYTES,
                GuardOwner {
                    what: "core stack",
                    index,
                },
            );
            (apic, stack.top.as_u64())
        })
        .collect();
    let (pml4, _) = Cr3::read();
    let vector = trampoline::install(&TrampolineParams {
        pml4_phys: pml4.start_address().as_u64(),
        entry: ap_entry::ap_entry,
        stacks: &stacks,
    });
    // SAFETY: no AP has been started yet (this is the only bring-up), so
    // INIT resets CPUs that run nothing of the kernel's.
    unsafe { lapic::send_init_to_all_others() };
    halt_until(tsc::now() + tsc::us_to_ticks(INIT_TO_SIPI_US), || false);
    let first_sipi = tsc::now();
    // SAFETY: `trampoline::install` has just written the trampoline and its
    // parameters to page `vector`, identity-mapped; it stays until every AP
    // has checked in (memory below 1 MiB is never handed out,
    // `memory/frames.rs`).
    unsafe { lapic::send_startup_to_all_others(vector) };
    halt_until(tsc::now() + tsc::us_to_ticks(SIPI_TO_SIPI_US), || {
        cores::online_count() == apic_ids.len()
    });
    // The second SIPI is for a CPU that missed the first. If every AP has
    // already checked in, skip it: under QEMU it would end the first `hlt`
    // of every AP (one spurious wakeup each) and start nothing.
    if cores::online_count() < apic_ids.len() {
        // SAFETY: as for the first SIPI: the trampoline is still in place.
        unsafe { lapic::send_startup_to_all_others(vector) };
    }
    let deadline = tsc::now() + tsc::us_to_ticks(CHECKIN_TIMEOUT_MS * 1000);
    halt_until(deadline, || cores::online_count() == apic_ids.len());
    let last = (0..apic_ids.len())
        .map(cores::checkin_tsc)
        .max()
        .unwrap_or(first_sipi);
    BRINGUP_US.store(
        tsc::ticks_to_us(last.saturating_sub(first_sipi)),
        Ordering::Relaxed,
    );
    let missing: Vec<u32> = (0..apic_ids.len())
        .filter(|&i| !cores::is_online(i))
        .map(|i| apic_ids[i])
        .collect();
    if !missing.is_empty() {
        println!(
            "boot error: APs with APIC ids {missing:?} did not check in within {CHECKIN_TIMEOUT_MS} ms"
        );
        exit(ExitCode::CheckFailed)
    }
    trampoline::remove();
}

/// Halts the bootstrap core (before its scheduler runs: interrupts are off
/// and nothing but its own timer is aimed at it) until `done()` or the TSC
/// passes `deadline_tsc`, waking every [`CHECKIN_POLL_US`] at most on its
/// LAPIC one-shot timer to look. Returns with interrupts off and the timer
/// disarmed.
fn halt_until(deadline_tsc: u64, done: impl Fn() -> bool) {
    loop {
        let now = tsc::now();
        if done() || now >= deadline_tsc {
            break;
        }
        let left_us = tsc::ticks_to_us(deadline_tsc - now).clamp(1, CHECKIN_POLL_US);
        lapic::arm_oneshot_us(left_us);
        halt::enable_interrupts_and_halt();
        super::interrupts::disable();
    }
    lapic::cancel_timer();
}

/// The first Rust code an AP runs (on its own stack, interrupts off).
pub fn ap_main(apic_id: u32) -> ! {
    // Neither lookup can fail (the trampoline only starts CPUs that have a
    // stack, and every stack comes with a setup); if one does, say so and
    // park instead of corrupting another core's slot.
    let Some(index) = cores::index_of_apic(apic_id) else {
        crate::emergency_println!("boot error: AP with APIC id {apic_id} is not in the core table");
        halt::halt_forever()
    };
    let Some(&(block, tables)) = AP_SETUP[index].get() else {
        crate::emergency_println!("boot error: core {index} (APIC id {apic_id}) has no setup");
        halt::halt_forever()
    };
    // SAFETY: this AP, once, on entry; `block` was built for core `index`
    // (the index of this AP's APIC id in the core table) and for no other.
    unsafe { percpu::install(block) };
    gdt::load(tables);
    exceptions::load_idt();
    lapic::init_this_core();
    cores::mark_online(index);
    crate::sched::core_sched::run_core(index)
}
