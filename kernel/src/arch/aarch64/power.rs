//! How a run ends on AArch64: the exit code through semihosting (QEMU's
//! `-semihosting`: `SYS_EXIT` with `ADP_Stopped_ApplicationExit` and a
//! subcode makes QEMU exit with exactly that status), then PSCI
//! `SYSTEM_OFF` (QEMU exits with status 0, which the harness never counts
//! as success: the verdict line on the console says what the run was).
//!
//! The status is x86_64's: `(code << 1) | 1`, what QEMU's `isa-debug-exit`
//! makes of a code there, so one reading of QEMU's status serves both
//! architectures and status 0 (a reset, a power-off) is never a code the
//! kernel chose.

use super::psci;
use core::sync::atomic::{AtomicBool, Ordering};

/// `SYS_EXIT`: on AArch64 its parameter is a block of two words, the
/// reason and a subcode (the exit status).
const SYS_EXIT: u64 = 0x18;
const ADP_STOPPED_APPLICATION_EXIT: u64 = 0x2_0026;

/// Set once an exit is under way: a semihosting call that traps (QEMU
/// started without `-semihosting`: an undefined instruction) must not
/// report and exit again.
static EXITING: AtomicBool = AtomicBool::new(false);

/// Whether the run is already ending (the exception handler then powers
/// off instead of reporting).
pub fn exiting() -> bool {
    EXITING.load(Ordering::Relaxed)
}

/// Asks the emulator to exit with status `(code << 1) | 1` (semihosting);
/// returns if it did not.
pub fn exit_emulator(code: u8) {
    if EXITING.swap(true, Ordering::Relaxed) {
        return;
    }
    let status = (u64::from(code) << 1) | 1;
    let block: [u64; 2] = [ADP_STOPPED_APPLICATION_EXIT, status];
    // SAFETY: the semihosting trap (`hlt #0xf000`): the emulator reads the
    // two-word block at x1 and ends the machine; without semihosting it is
    // an undefined instruction, which the exception handler turns into a
    // power-off (`exiting`).
    unsafe {
        core::arch::asm!("hlt #0xf000", in("w0") SYS_EXIT as u32, in("x1") block.as_ptr(),
            options(nostack, readonly));
    }
}

/// Powers the machine off (PSCI `SYSTEM_OFF`); returns if it could not.
pub fn power_off() {
    psci::system_off();
}
