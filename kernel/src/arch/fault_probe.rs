//! Recoverable memory probes, shared by every architecture: a test touches
//! an address that should fault (a guard page) and observes the fault
//! handler's report instead of dying. Only one probe may be armed at a time
//! (tests run on core 0). Each arch provides the read itself
//! (`probe_read::read_or_resume`: an asm block that publishes its own
//! resume label, then reads) and what its fault code says
//! (`probe_read::is_not_present`); its fault handler calls
//! [`take_recovery`].

use core::sync::atomic::{AtomicU64, Ordering};

use super::probe_read;

/// Where the fault handler resumes an armed probe (0 = none armed): a
/// label inside the probe's asm block.
static RESUME_AT: AtomicU64 = AtomicU64::new(0);
static FAULT_ADDR: AtomicU64 = AtomicU64::new(0);
static FAULT_CODE: AtomicU64 = AtomicU64::new(0);

/// What the fault handler saw for a probe that faulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbedFault {
    /// The faulting address (x86_64: CR2; AArch64: FAR_EL1).
    pub address: u64,
    /// The fault's code (x86_64: the page-fault error code the CPU
    /// pushed; AArch64: ESR_EL1, the syndrome).
    pub error_code: u64,
}

impl ProbedFault {
    /// Whether the fault says the address was not mapped, rather than a
    /// protection violation.
    pub fn is_not_present(&self) -> bool {
        probe_read::is_not_present(self.error_code)
    }
}

/// Reads eight bytes at `addr`; returns the fault the handler recorded if
/// the read faulted. The read itself never dereferences memory Rust knows
/// about.
pub fn probe_read_u64(addr: u64) -> Result<u64, ProbedFault> {
    match probe_read::read_or_resume(&RESUME_AT, addr) {
        Some(value) => {
            // Relaxed: the slot is only read by a fault on this core.
            RESUME_AT.store(0, Ordering::Relaxed);
            Ok(value)
        }
        None => Err(ProbedFault {
            address: FAULT_ADDR.load(Ordering::Relaxed),
            error_code: FAULT_CODE.load(Ordering::Relaxed),
        }),
    }
}

/// Called by the fault handler: if a probe is armed, records the fault and
/// returns the address to resume at (disarming the probe).
pub fn take_recovery(address: u64, code: u64) -> Option<u64> {
    // Relaxed suffices: probe and fault run on the same core, in program
    // order (the fault is synchronous).
    let resume = RESUME_AT.swap(0, Ordering::Relaxed);
    if resume == 0 {
        return None;
    }
    FAULT_ADDR.store(address, Ordering::Relaxed);
    FAULT_CODE.store(code, Ordering::Relaxed);
    Some(resume)
}
