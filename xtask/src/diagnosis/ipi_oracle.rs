//! The hypervisor as an oracle for the guest's IPI counts: QEMU traces
//! every write to a local APIC register (the `log` trace backend of
//! Debian's build, to a file with `-D`); the wake IPIs are the writes of the
//! ICR's low half with the wake vector, fixed delivery and no destination
//! shorthand. Their number must equal the guest's own count of wake IPIs
//! sent (the sum over cores of `wake_ipis_to` in `VIGIL-STATS`, counted by
//! the senders at the ICR write), in every boot.
//!
//! The trace event is QEMU's: 7.2 has `apic_mem_writel` (xAPIC MMIO writes
//! only, `apic_mem_writel 0x300 = 0x00004040`, a byte offset); 10 has
//! `apic_register_write` for MMIO and x2APIC MSR writes alike
//! (`apic_register_write register 0x30 = 0x4040`, a register index, and in
//! x2APIC mode a 64-bit ICR with the destination in its high half), so
//! under QEMU 10 the oracle also checks x2APIC boots.
//!
//! Per destination the trace cannot say: the xAPIC takes the destination
//! in a separate register (ICR high, offset 0x310), the trace line carries
//! no vCPU, and the kernel rewrites ICR high only when a core's destination
//! changes. So the comparison is of totals.

use serde::{Deserialize, Serialize};

use crate::guest::vigil_stats::VigilStats;

/// QEMU 7.2's trace event of xAPIC MMIO writes.
pub const TRACE_EVENT_MMIO: &str = "apic_mem_writel";
/// QEMU 10's trace event of every APIC register write (MMIO and MSR).
pub const TRACE_EVENT_REGISTER: &str = "apic_register_write";

/// The event to enable, from the list `qemu-system-x86_64 -trace help`
/// prints: the register-write event where QEMU has it, else the MMIO one
/// (which QEMU version renamed it is QEMU's business, not ours).
pub fn pick_trace_event(trace_help: &str) -> &'static str {
    if trace_help
        .lines()
        .any(|line| line.trim() == TRACE_EVENT_REGISTER)
    {
        TRACE_EVENT_REGISTER
    } else {
        TRACE_EVENT_MMIO
    }
}

/// [`pick_trace_event`] for the installed QEMU (asked once per process).
pub fn trace_event() -> &'static str {
    static EVENT: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    EVENT.get_or_init(|| {
        let help = std::process::Command::new(crate::runner::install::QEMU_BINARY)
            .args(["-trace", "help"])
            .output()
            .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
            .unwrap_or_default();
        pick_trace_event(&help)
    })
}
/// The kernel's wake vector (`arch/x86_64/interrupt_vectors.rs`).
pub const WAKE_VECTOR: u32 = 0x40;
/// xAPIC register offset of the ICR's low half (in `apic_mem_writel`).
const ICR_LOW_OFFSET: u64 = 0x300;
/// Its register index (offset / 16, and the x2APIC MSR's low byte: 0x830),
/// in `apic_register_write`.
const ICR_REGISTER: u64 = 0x30;

/// Whether `icr_low` sends the wake vector, fixed delivery, to one
/// destination (no shorthand).
fn is_wake_ipi(icr_low: u32) -> bool {
    let vector = icr_low & 0xff;
    let delivery_mode = (icr_low >> 8) & 0x7;
    let shorthand = (icr_low >> 18) & 0x3;
    vector == WAKE_VECTOR && delivery_mode == 0 && shorthand == 0
}

/// Counts the wake IPIs in a QEMU trace log (lines of either event, see
/// the module; other lines are ignored).
pub fn count_wake_ipis(trace: &str) -> u64 {
    trace
        .lines()
        .filter_map(|line| {
            let (is_icr, rest): (fn(u64) -> bool, &str) =
                if let Some(rest) = line.split(TRACE_EVENT_REGISTER).nth(1) {
                    (
                        |register| register == ICR_REGISTER,
                        rest.trim().strip_prefix("register")?,
                    )
                } else {
                    let rest = line.split(TRACE_EVENT_MMIO).nth(1)?;
                    (|offset| offset & 0xfff == ICR_LOW_OFFSET, rest)
                };
            let (where_, value) = rest.split_once('=')?;
            let where_ = u64::from_str_radix(where_.trim().trim_start_matches("0x"), 16).ok()?;
            let value = u64::from_str_radix(value.trim().trim_start_matches("0x"), 16).ok()?;
            // The ICR's low half (x2APIC: the low 32 bits of the MSR).
            (is_icr(where_) && is_wake_ipi(value as u32)).then_some(())
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
    fn register_write_traces_count_in_both_apic_modes() {
        // A real excerpt (2 cores, QEMU 10.0.2, x2APIC): SVR, EOI, the
        // INIT and SIPIs, wake IPIs to APIC id 0 and to APIC id 1 (64-bit
        // ICR, destination in the high half), the timer's initial count.
        let trace = "apic_register_write register 0x0f = 0x1ff\n\
                     apic_register_write register 0x0b = 0x0\n\
                     apic_register_write register 0x30 = 0xc4500\n\
                     apic_register_write register 0x30 = 0xc4608\n\
                     apic_register_write register 0x30 = 0x4040\n\
                     apic_register_write register 0x30 = 0x100004040\n\
                     apic_register_write register 0x30 = 0x4031\n\
                     apic_register_write register 0x38 = 0x13379c\n\
                     apic_register_write register 0x31 = 0x0\n";
        assert_eq!(count_wake_ipis(trace), 2);
        // xAPIC mode under QEMU 10 (MMIO writes, the same event): the ICR
        // high write (register 0x31) is not an IPI, the low one is.
        let xapic = "apic_register_write register 0x31 = 0x1000000\n\
                     apic_register_write register 0x30 = 0x4040\n\
                     apic_register_write register 0x30 = 0x4031\n";
        assert_eq!(count_wake_ipis(xapic), 1);
    }

    #[test]
    fn the_trace_event_is_the_one_this_qemu_lists() {
        assert_eq!(
            pick_trace_event("apic_local_deliver\napic_register_read\napic_register_write\n"),
            TRACE_EVENT_REGISTER
        );
        assert_eq!(
            pick_trace_event("apic_local_deliver\napic_mem_readl\napic_mem_writel\n"),
            TRACE_EVENT_MMIO
        );
    }

    #[test]
    fn a_broadcast_of_the_wake_vector_is_not_a_wake_ipi() {
        assert!(!is_wake_ipi(0x000c4040));
        assert!(is_wake_ipi(0x00004040));
        assert!(!is_wake_ipi(0x00004041));
    }
}
