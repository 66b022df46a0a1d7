//! Recoverable memory probes: lets a test touch an address that should fault
//! (a guard page) and observe the page-fault handler's report instead of
//! dying. Only one probe may be armed at a time (tests run on core 0).

use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering};

/// Where the page-fault handler resumes an armed probe (0 = none armed).
static RECOVERY_RIP: AtomicU64 = AtomicU64::new(0);
static FAULT_ADDR: AtomicU64 = AtomicU64::new(0);
static FAULT_ERROR_CODE: AtomicU64 = AtomicU64::new(0);

/// What the page-fault handler saw for a probe that faulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbedFault {
    /// CR2: the faulting linear address.
    pub address: u64,
    /// The page-fault error code pushed by the CPU.
    pub error_code: u64,
}

impl ProbedFault {
    /// Whether the fault says the page was not mapped (error code bit 0,
    /// P, clear), rather than a protection violation.
    pub fn is_not_present(&self) -> bool {
        const PRESENT_BIT: u64 = 1;
        self.error_code & PRESENT_BIT == 0
    }
}

/// Reads eight bytes at `addr`; returns the fault the handler recorded if the
/// read faulted. The read itself never dereferences memory Rust knows about.
pub fn probe_read_u64(addr: u64) -> Result<u64, ProbedFault> {
    let value: u64;
    let completed: u64;
    // The asm publishes the address of its own recovery label, then reads
    // `addr`. If the read faults, the page-fault handler (which checks
    // `take_recovery`) resumes at label 2 with `completed` still 0. The slot
    // is written with a plain store: the fault that reads it is synchronous.
    // SAFETY: no Rust reference is formed to `addr`, so a faulting address is
    // not UB, and the handler resumes inside this asm block.
    unsafe {
        asm!(
            "xor {done:e}, {done:e}",
            "lea {tmp}, [rip + 2f]",
            "mov qword ptr [{slot}], {tmp}",
            "mov {val}, qword ptr [{addr}]",
            "mov {done:e}, 1",
            "2:",
            slot = in(reg) RECOVERY_RIP.as_ptr(),
            addr = in(reg) addr,
            tmp = out(reg) _,
            val = lateout(reg) value,
            done = out(reg) completed,
            options(nostack),
        );
    }
    if completed == 1 {
        RECOVERY_RIP.store(0, Ordering::Relaxed);
        Ok(value)
    } else {
        Err(ProbedFault {
            address: FAULT_ADDR.load(Ordering::Relaxed),
            error_code: FAULT_ERROR_CODE.load(Ordering::Relaxed),
        })
    }
}

/// Called by the page-fault handler: if a probe is armed, records the fault
/// and returns the RIP to resume at (disarming the probe).
pub fn take_recovery(address: u64, error_code: u64) -> Option<u64> {
    // Relaxed suffices: probe and fault run on the same core, in program order.
    let rip = RECOVERY_RIP.swap(0, Ordering::Relaxed);
    if rip == 0 {
        return None;
    }
    FAULT_ADDR.store(address, Ordering::Relaxed);
    FAULT_ERROR_CODE.store(error_code, Ordering::Relaxed);
    Some(rip)
}
