//! Sending wake IPIs, counted per destination at the ICR write, and the
//! two IPI faults the lost-wakeup detectors must catch.
//!
//! Every wake-vector IPI the kernel sends goes through [`send`] (the
//! protocol's and the floor workload's bare ones; the watchdog's probes
//! have their own vector), so [`sent_to`] is the count of ICR writes with
//! that core as destination: what the watchdog compares with what a halted
//! core recorded when it halted, and what the host compares with QEMU's own
//! trace of ICR writes (`cargo xtask stress --oracle`).
//!
//! Faults (`fault=dropped-ipi`, `fault=misdirected-ipi`): armed at boot with
//! a seeded fork-join round; the first protocol wake IPI a waker asks for
//! from that round on is dropped (the waker claimed a halted core and sends
//! nothing) or sent to another core than the one claimed. Once per boot.

use super::round_watch;
use crate::arch::interrupt_vectors::{PROBE_VECTOR, WAKE_VECTOR};
use crate::arch::ipi;
use crate::println;
use crate::smp::cores::{self, MAX_CORES};
use core::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use vigil_proto::boot_params::{Fault, Key};

/// A count alone in its cache line: the senders of one core's IPIs do not
/// bounce the line of another's.
#[repr(align(64))]
struct LineCount(AtomicU64);

/// ICR writes of the wake vector, by destination core.
static SENT_TO: [LineCount; MAX_CORES] = [const { LineCount(AtomicU64::new(0)) }; MAX_CORES];

/// Sends the wake IPI to core `target` and counts it.
pub fn send(target: usize) {
    ipi::send(cores::apic_id(target), WAKE_VECTOR);
    // Relaxed, after the ICR write: the count is published to the watchdog
    // by the waker's later Release on its notify-finished counter (see
    // `vigil_wake::LostWakeupRecord`), so a watchdog that has seen a waker
    // finish also sees the IPIs it sent.
    SENT_TO[target].0.fetch_add(1, Ordering::Relaxed);
}

/// Sends the watchdog's lost-wakeup probe to core `target` (not a wake IPI:
/// not counted in [`sent_to`], and a different vector).
pub fn send_probe(target: usize) {
    ipi::send(cores::apic_id(target), PROBE_VECTOR);
}

/// Wake IPIs sent to core `target` so far (ICR writes).
pub fn sent_to(target: usize) -> u64 {
    // Relaxed: ordered, where it matters, by the caller's Acquire of a
    // waker's notify-finished count (see `send`).
    SENT_TO[target].0.load(Ordering::Relaxed)
}

/// Which IPI fault is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpiFault {
    /// None.
    None,
    /// The waker claims a halted core and sends nothing.
    Dropped,
    /// The waker sends the IPI to another core than the one it claimed.
    Misdirected,
    /// One wake IPI is sent but not counted in [`sent_to`].
    Miscounted,
}

const OFF: u8 = 0;
const ARMED: u8 = 1;
const FIRED: u8 = 2;

static FAULT: AtomicU8 = AtomicU8::new(OFF);
static KIND: AtomicU8 = AtomicU8::new(0);
static ARM_AT_ROUND: AtomicU64 = AtomicU64::new(0);

/// Arms `fault` (at boot, before any AP runs a task): it fires at the first
/// wake IPI asked for in or after fork-join round `1 + seed % (iterations /
/// 2)`, so the point moves with the seed and stays inside the run.
pub fn configure(fault: IpiFault, seed: u64, iterations: u32) {
    if fault == IpiFault::None {
        return;
    }
    let span = u64::from(iterations / 2).max(1);
    let round = 1 + seed % span;
    ARM_AT_ROUND.store(round, Ordering::Relaxed);
    KIND.store(fault as u8, Ordering::Relaxed);
    // Relaxed: configured on the bootstrap core before the APs start; the
    // INIT/SIPI sequence orders it for them.
    FAULT.store(ARMED, Ordering::Relaxed);
    println!(
        "injecting fault {fault:?} IPI: at the first wake IPI of fork-join round {round} or later"
    );
}

fn kind() -> IpiFault {
    match KIND.load(Ordering::Relaxed) {
        1 => IpiFault::Dropped,
        2 => IpiFault::Misdirected,
        3 => IpiFault::Miscounted,
        _ => IpiFault::None,
    }
}

/// Takes the armed fault if it is due now: exactly one caller ever gets it
/// (compare-exchange; Relaxed, it orders nothing). One relaxed load when
/// no fault is armed.
fn take() -> Option<IpiFault> {
    let due = FAULT.load(Ordering::Relaxed) == ARMED
        && round_watch::rounds_begun() >= ARM_AT_ROUND.load(Ordering::Relaxed)
        && FAULT
            .compare_exchange(ARMED, FIRED, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
    due.then(kind)
}

/// The protocol asked core `from` to send the wake IPI to `target`: sends
/// it, unless an IPI fault fires here.
pub fn send_for_protocol(from: usize, target: usize) {
    let round = round_watch::rounds_begun;
    match take() {
        None | Some(IpiFault::None) => send(target),
        Some(IpiFault::Dropped) => println!(
            "{}={} fired: core {from} claimed core {target} (round {}) and sends no wake IPI",
            Key::Fault.name(),
            Fault::DroppedIpi.name(),
            round()
        ),
        Some(IpiFault::Misdirected) => {
            let count = cores::count();
            let mut other = (target + 1) % count;
            if other == from && count > 2 {
                other = (other + 1) % count;
            }
            println!(
                "{}={} fired: core {from} claimed core {target} (round {}) and sends its wake IPI to core {other}",
                Key::Fault.name(),
                Fault::MisdirectedIpi.name(),
                round()
            );
            send(other);
        }
        Some(IpiFault::Miscounted) => {
            // A deliberately wrong counter, for the host's oracle to catch:
            // the IPI goes out, its count does not.
            println!(
                "{}={} fired: one wake IPI goes uncounted",
                Key::Fault.name(),
                Fault::MiscountedIpi.name()
            );
            ipi::send(cores::apic_id(target), WAKE_VECTOR);
        }
    }
}

/// If the configured fault never fired (the run sent no wake IPI after
/// its round), says so: the run then proves nothing about detection.
pub fn unfired_fault() -> Option<IpiFault> {
    (FAULT.load(Ordering::Relaxed) == ARMED).then(kind)
}
