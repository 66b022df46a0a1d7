//! PSCI, the firmware interface that starts cores and turns the machine
//! off: QEMU implements it itself for a `virt` guest at EL1 (no firmware
//! loaded), reached through `hvc` (or `smc`, as the device tree's `/psci`
//! node says).

use super::devicetree::PsciConduit;
use core::sync::atomic::{AtomicBool, Ordering};

const CPU_ON_64: u64 = 0xc400_0003;
const SYSTEM_OFF: u64 = 0x8400_0008;
const SYSTEM_RESET: u64 = 0x8400_0009;

/// Whether the conduit is `smc` (else `hvc`).
static SMC: AtomicBool = AtomicBool::new(false);

/// Records the conduit (bootstrap core, from the device tree).
pub fn init(conduit: PsciConduit) {
    SMC.store(conduit == PsciConduit::Smc, Ordering::Relaxed);
}

fn call(function: u64, a1: u64, a2: u64, a3: u64) -> i64 {
    let result: u64;
    // SAFETY: a PSCI call: the firmware (QEMU) reads x0-x3 and writes x0;
    // the SMC Calling Convention lets it clobber x1-x17, declared here.
    unsafe {
        if SMC.load(Ordering::Relaxed) {
            core::arch::asm!("smc #0", inout("x0") function => result,
                inout("x1") a1 => _, inout("x2") a2 => _, inout("x3") a3 => _,
                out("x4") _, out("x5") _, out("x6") _, out("x7") _, out("x8") _,
                out("x9") _, out("x10") _, out("x11") _, out("x12") _, out("x13") _,
                out("x14") _, out("x15") _, out("x16") _, out("x17") _,
                options(nostack));
        } else {
            core::arch::asm!("hvc #0", inout("x0") function => result,
                inout("x1") a1 => _, inout("x2") a2 => _, inout("x3") a3 => _,
                out("x4") _, out("x5") _, out("x6") _, out("x7") _, out("x8") _,
                out("x9") _, out("x10") _, out("x11") _, out("x12") _, out("x13") _,
                out("x14") _, out("x15") _, out("x16") _, out("x17") _,
                options(nostack));
        }
    }
    result as i64
}

/// Starts the core whose MPIDR affinity is `mpidr` at physical address
/// `entry`, with `context` in its `x0`, MMU off, at EL1. Returns PSCI's
/// status (0: success; negative: an error code, e.g. -4 "already on").
///
/// # Safety
///
/// `entry` must be code that can run with the MMU off and set up its own
/// state from `context` (`entry.rs`'s `vigil_secondary_entry`, with an
/// `ApBoot` that outlives the start).
pub unsafe fn cpu_on(mpidr: u64, entry: u64, context: u64) -> i64 {
    call(CPU_ON_64, mpidr, entry, context)
}

/// Turns the machine off (QEMU exits with status 0); returns if it could
/// not.
pub fn system_off() {
    call(SYSTEM_OFF, 0, 0, 0);
}

/// Resets the machine (QEMU with `-no-reboot` exits with status 0);
/// returns if it could not.
pub fn system_reset() {
    call(SYSTEM_RESET, 0, 0, 0);
}
