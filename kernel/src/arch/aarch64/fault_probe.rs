//! Recoverable memory probes: lets a test touch an address that should
//! fault (a guard page) and observe the data-abort handler's report instead
//! of dying. Only one probe may be armed at a time (tests run on core 0).

use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering};

/// Where the data-abort handler resumes an armed probe (0 = none armed).
static RECOVERY_PC: AtomicU64 = AtomicU64::new(0);
static FAULT_ADDR: AtomicU64 = AtomicU64::new(0);
static FAULT_SYNDROME: AtomicU64 = AtomicU64::new(0);

/// What the data-abort handler saw for a probe that faulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbedFault {
    /// FAR_EL1: the faulting virtual address.
    pub address: u64,
    /// ESR_EL1: the syndrome.
    pub error_code: u64,
}

impl ProbedFault {
    /// Whether the fault says the address was not mapped: a translation
    /// fault (data fault status code 0b0001xx), not a permission fault.
    pub fn is_not_present(&self) -> bool {
        self.error_code & 0b11_1100 == 0b00_0100
    }
}

/// Reads eight bytes at `addr`; returns the fault the handler recorded if
/// the read faulted. The read itself never dereferences memory Rust knows
/// about.
pub fn probe_read_u64(addr: u64) -> Result<u64, ProbedFault> {
    let value: u64;
    let completed: u64;
    // The asm publishes the address of its own recovery label, then reads
    // `addr`. If the read faults, the handler (which checks
    // `take_recovery`) resumes at label 2 with `completed` still 0. The
    // slot is written with a plain store: the fault that reads it is
    // synchronous, on this core.
    // SAFETY: no Rust reference is formed to `addr`, so a faulting address
    // is not UB, and the handler resumes inside this asm block.
    unsafe {
        asm!(
            "mov {done}, #0",
            "adr {tmp}, 2f",
            "str {tmp}, [{slot}]",
            "ldr {val}, [{addr}]",
            "mov {done}, #1",
            "2:",
            slot = in(reg) RECOVERY_PC.as_ptr(),
            addr = in(reg) addr,
            tmp = out(reg) _,
            val = out(reg) value,
            done = out(reg) completed,
            options(nostack),
        );
    }
    if completed == 1 {
        RECOVERY_PC.store(0, Ordering::Relaxed);
        Ok(value)
    } else {
        Err(ProbedFault {
            address: FAULT_ADDR.load(Ordering::Relaxed),
            error_code: FAULT_SYNDROME.load(Ordering::Relaxed),
        })
    }
}

/// Called by the data-abort handler: if a probe is armed, records the
/// fault and returns the address to resume at (disarming the probe).
pub fn take_recovery(address: u64, syndrome: u64) -> Option<u64> {
    // Relaxed suffices: probe and fault run on the same core, in program
    // order.
    let pc = RECOVERY_PC.swap(0, Ordering::Relaxed);
    if pc == 0 {
        return None;
    }
    FAULT_ADDR.store(address, Ordering::Relaxed);
    FAULT_SYNDROME.store(syndrome, Ordering::Relaxed);
    Some(pc)
}
