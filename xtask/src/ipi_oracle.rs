//! The hypervisor as an oracle for the guest's IPI counts: QEMU traces
//! every write to the xAPIC's MMIO page (`-trace enable=apic_mem_writel`,
//! the `log` trace backend of Debian's build, to a file with `-D`); the
//! wake IPIs are the writes of the ICR's low half (offset 0x300) with the
//! wake vector, fixed delivery and no destination shorthand. Their number
//! must equal the guest's own count of wake IPIs sent (the sum over cores
//! of `wake_ipis_to` in `VIGIL-STATS`, counted by the senders at the ICR
//! write), in every boot.
//!
//! Per destination the trace cannot say: the xAPIC takes the destination
//! in a separate register (ICR high, offset 0x310), the trace line carries
//! no vCPU, and the kernel rewrites ICR high only when a core's destination
//! changes. So the comparison is of totals. Under QEMU 7.2 TCG there is no
//! x2APIC; an x2APIC ICR write (one MSR, destination included) is not an
//! MMIO write and is not counted here (the oracle says so instead of
//! comparing).

use serde::{Deserialize, Serialize};

use crate::vigil_stats::VigilStats;

/// The QEMU trace event the oracle enables.
pub const TRACE_EVENT: &str = "apic_mem_writel";
/// The kernel's wake vector (`arch/x86_64/interrupt_vectors.rs`).
pub const WAKE_VECTOR: u32 = 0x40;
/// xAPIC register offset of the ICR's low half.
const ICR_LOW_OFFSET: u64 = 0x300;

/// Whether `icr_low` sends the wake vector, fixed delivery, to one
/// destination (no shorthand).
fn is_wake_ipi(icr_low: u32) -> bool {
    let vector = icr_low & 0xff;
    let delivery_mode = (icr_low >> 8) & 0x7;
    let shorthand = (icr_low >> 18) & 0x3;
    vector == WAKE_VECTOR && delivery_mode == 0 && shorthand == 0
}

/// Counts the wake IPIs in a QEMU trace log (lines
/// `apic_mem_writel 0x300 = 0x00004040`; other lines are ignored).
pub fn count_wake_ipis(trace: &str) -> u64 {
    trace
        .lines()
        .filter_map(|line| {
            let rest = line.split(TRACE_EVENT).nth(1)?;
            let (addr, value) = rest.split_once('=')?;
            let addr = u64::from_str_radix(addr.trim().trim_start_matches("0x"), 16).ok()?;
            let value = u32::from_str_radix(value.trim().trim_start_matches("0x"), 16).ok()?;
            (addr & 0xfff == ICR_LOW_OFFSET && is_wake_ipi(value)).then_some(())
        })
        .count() as u64
}

/// One boot's comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IpiOracleCheck {
    /// Wake IPIs QEMU saw written to an ICR.
    pub qemu_wake_ipis: u64,
    /// Wake IPIs the guest counted (sum of `wake_ipis_to`).
    pub guest_wake_ipis: u64,
}

impl IpiOracleCheck {
    /// Compares a trace with the guest's statistics.
    pub fn new(trace: &str, stats: &VigilStats) -> Self {
        Self {
            qemu_wake_ipis: count_wake_ipis(trace),
            guest_wake_ipis: stats.cores.iter().map(|core| core.wake_ipis_to).sum(),
        }
    }

    /// Whether both sides agree.
    pub fn matches(&self) -> bool {
        self.qemu_wake_ipis == self.guest_wake_ipis
    }

    /// `QEMU saw N wake IPIs, the guest counted M`.
    pub fn describe(&self) -> String {
        format!(
            "QEMU saw {} wake IPIs written to an ICR, the guest counted {}",
            self.qemu_wake_ipis, self.guest_wake_ipis
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_wake_vector_icr_writes_count() {
        // A real excerpt (4 cores, QEMU 7.2): SVR, LVTs, the broadcast INIT
        // and SIPIs, an ICR high write, wake IPIs, the probe vector, EOIs.
        let trace = "apic_mem_writel 0xf0 = 0x000001ff\n\
                     apic_mem_writel 0x350 = 0x00008700\n\
                     apic_mem_writel 0x300 = 0x000c4500\n\
                     apic_mem_writel 0x300 = 0x000c4608\n\
                     apic_mem_writel 0x310 = 0x03000000\n\
                     apic_mem_writel 0x300 = 0x00004040\n\
                     apic_mem_writel 0x300 = 0x00004031\n\
                     apic_mem_writel 0xb0 = 0x00000000\n\
                     apic_mem_writel 0x300 = 0x00004040\n\
                     some other line\n";
        assert_eq!(count_wake_ipis(trace), 2);
    }

    #[test]
    fn a_broadcast_of_the_wake_vector_is_not_a_wake_ipi() {
        assert!(!is_wake_ipi(0x000c4040));
        assert!(is_wake_ipi(0x00004040));
        assert!(!is_wake_ipi(0x00004041));
    }
}
