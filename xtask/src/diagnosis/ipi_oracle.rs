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
//!
//! On AArch64 the event is the GICv3 CPU interface's
//! `gicv3_icc_generate_sgi`, one line per write of `ICC_SGI1R_EL1`
//! (`... generating SGI 0 IRM 0 target affinity 0x0xx targetlist 0x2`):
//! the wake IPIs are SGI 0 to a target list (IRM 0), one IPI per bit of
//! the list. Compared as totals too, like x86_64's.

use serde::{Deserialize, Serialize};

use crate::guest::vigil_stats::VigilStats;
use crate::runner::platform::Arch;

/// QEMU's trace event of every SGI a GICv3 CPU interface generates.
pub const TRACE_EVENT_SGI: &str = "gicv3_icc_generate_sgi";
/// The kernel's wake SGI (`arch/aarch64/interrupt_vectors.rs`).
pub const WAKE_SGI: u32 = 0;

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

/// The event to enable for `arch`: [`pick_trace_event`] for the installed
/// x86 QEMU (asked once per process), [`TRACE_EVENT_SGI`] on AArch64.
pub fn trace_event(arch: Arch) -> &'static str {
    if arch == Arch::Aarch64 {
        return TRACE_EVENT_SGI;
    }
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

/// Counts the wake SGIs in a QEMU trace of [`TRACE_EVENT_SGI`]: SGI
/// [`WAKE_SGI`], IRM 0, one per bit of the target list.
pub fn count_wake_sgis(trace: &str) -> u64 {
    trace
        .lines()
        .filter_map(|line| {
            let rest = line.split(TRACE_EVENT_SGI).nth(1)?;
            let sgi: u32 = rest
                .split("generating SGI ")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?;
            let irm = rest.split(" IRM ").nth(1)?.split_whitespace().next()?;
            let list = rest.split("targetlist ").nth(1)?.trim();
            let list = u32::from_str_radix(list.trim_start_matches("0x"), 16).ok()?;
            (sgi == WAKE_SGI && irm == "0").then_some(u64::from(list.count_ones()))
        })
        .sum()
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
    /// Compares a trace of `arch`'s event with the guest's statistics.
    pub fn new(arch: Arch, trace: &str, stats: &VigilStats) -> Self {
        Self {
            qemu_wake_ipis: match arch {
                Arch::X86_64 => count_wake_ipis(trace),
                Arch::Aarch64 => count_wake_sgis(trace),
            },
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
            "QEMU saw {} wake IPIs written to an ICR (SGI register on AArch64), the guest counted {}",
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
    fn gicv3_sgi_traces_count_wake_sgis_by_target() {
        // A real excerpt (3 cores, QEMU 10.0.2, virt with a GICv3): wake
        // SGIs to cores 1, 2 and 0, then a probe (SGI 1), a test SGI (2),
        // a wake to two targets at once, and one with IRM 1 (to all).
        let trace = "gicv3_icc_generate_sgi GICv3 CPU i/f 0x0 generating SGI 0 IRM 0 target affinity 0x0xx targetlist 0x2\n\
                     gicv3_icc_generate_sgi GICv3 CPU i/f 0x1 generating SGI 0 IRM 0 target affinity 0x0xx targetlist 0x4\n\
                     gicv3_icc_generate_sgi GICv3 CPU i/f 0x1 generating SGI 0 IRM 0 target affinity 0x0xx targetlist 0x1\n\
                     gicv3_icc_generate_sgi GICv3 CPU i/f 0x0 generating SGI 1 IRM 0 target affinity 0x0xx targetlist 0x2\n\
                     gicv3_icc_generate_sgi GICv3 CPU i/f 0x0 generating SGI 2 IRM 0 target affinity 0x1xx targetlist 0x8\n\
                     gicv3_icc_generate_sgi GICv3 CPU i/f 0x0 generating SGI 0 IRM 0 target affinity 0x1xx targetlist 0x6\n\
                     gicv3_icc_generate_sgi GICv3 CPU i/f 0x0 generating SGI 0 IRM 1 target affinity 0x0xx targetlist 0x0\n";
        assert_eq!(count_wake_sgis(trace), 5);
        assert_eq!(count_wake_ipis(trace), 0);
        assert_eq!(trace_event(Arch::Aarch64), TRACE_EVENT_SGI);
    }

    #[test]
    fn a_broadcast_of_the_wake_vector_is_not_a_wake_ipi() {
        assert!(!is_wake_ipi(0x000c4040));
        assert!(is_wake_ipi(0x00004040));
        assert!(!is_wake_ipi(0x00004041));
    }
}
