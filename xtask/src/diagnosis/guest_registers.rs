//! Parsing QEMU's `info registers -a`: one `CPU#n` block per vCPU, of which
//! we keep `RIP=` and `HLT=` (x86_64), or `PC=` (AArch64, which prints no
//! halted flag: see [`WFI`]). (QEMU numbers the blocks by vCPU index; with
//! `-smp N` on the `pc`/`q35` machines vCPU n has APIC id n; on AArch64's
//! `virt` see [`vcpu_of_mpidr_affinity`].)

use serde::Serialize;

/// What one vCPU was doing when the registers were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VcpuState {
    /// QEMU's CPU index (the `n` of `CPU#n`).
    pub vcpu: u32,
    /// Instruction pointer (virtual).
    pub rip: Option<u64>,
    /// Whether the vCPU sat in `hlt`.
    pub halted: Option<bool>,
}

/// The AArch64 `wfi` instruction. QEMU's TCG leaves a vCPU that sleeps in
/// `wfi` with its PC on the next instruction (and resumes it there), and
/// prints no halted flag for AArch64: a vCPU whose PC follows a `wfi` is
/// halted (or has just been woken, which a stalled guest's examination
/// cannot tell apart, as x86's `HLT=` cannot either for a vCPU woken a
/// moment before the `stop`).
pub const WFI: u32 = 0xd503_207f;

/// The vCPU index of the core whose MPIDR affinity (Aff3.Aff2.Aff1.Aff0,
/// the kernel's hardware id) is `affinity`, on QEMU's `virt` with a GICv3:
/// QEMU gives vCPU n the affinity Aff1 = n / 16, Aff0 = n % 16 (16 CPUs
/// per cluster, the GICv3's target-list width).
pub fn vcpu_of_mpidr_affinity(affinity: u32) -> u32 {
    ((affinity >> 8) & 0xff) * 16 + (affinity & 0xff)
}

/// Every `CPU#n` block, in the order QEMU printed them.
pub fn parse_info_registers(text: &str) -> Vec<VcpuState> {
    let mut vcpus: Vec<VcpuState> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(index) = line.strip_prefix("CPU#") {
            // QEMU 7.2 prints `CPU#0`; later versions may add text after it.
            let digits: String = index.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(vcpu) = digits.parse() {
                vcpus.push(VcpuState {
                    vcpu,
                    rip: None,
                    halted: None,
                });
            }
            continue;
        }
        let Some(current) = vcpus.last_mut() else {
            continue;
        };
        for word in line.split_whitespace() {
            if let Some(rip) = word
                .strip_prefix("RIP=")
                .or_else(|| word.strip_prefix("PC="))
            {
                current.rip = u64::from_str_radix(rip, 16).ok();
            } else if let Some(hlt) = word.strip_prefix("HLT=") {
                current.halted = match hlt {
                    "1" => Some(true),
                    "0" => Some(false),
                    _ => None,
                };
            }
        }
    }
    vcpus
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trimmed from QEMU 7.2's answer for a 2-vCPU Vigil guest.
    const SAMPLE: &str = "\nCPU#0\n\
        RAX=00007f80000229f0 RBX=0000000000000000 RCX=0000000000000001 RDX=0000028001c27b40\n\
        RIP=00000100000613ba RFL=00000006 [-----P-] CPL=0 II=0 A20=1 SMM=0 HLT=0\n\
        ES =0010 0000000000000000 ffffffff 00cf9300 DPL=0 DS   [-WA]\n\
        XMM14=0000000000000000 0000000000000000 XMM15=0000000000000000 0000000000000000\n\
        \n\
        CPU#1\n\
        RAX=00007f8000000380 RBX=0000000000000001 RCX=0000000000c0ff08 RDX=3333333333333333\n\
        RIP=000001000002d282 RFL=00000202 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=1\n";

    #[test]
    fn rip_and_hlt_of_each_vcpu() {
        assert_eq!(
            parse_info_registers(SAMPLE),
            vec![
                VcpuState {
                    vcpu: 0,
                    rip: Some(0x100_0006_13ba),
                    halted: Some(false)
                },
                VcpuState {
                    vcpu: 1,
                    rip: Some(0x100_0002_d282),
                    halted: Some(true)
                },
            ]
        );
    }

    /// Trimmed from QEMU 10.0.2's answer for a 2-vCPU AArch64 guest.
    const AARCH64_SAMPLE: &str = "\nCPU#0\n PC=000000004023a738 X00=0000000000000001 X01=0000000000000000\n\
        X29=0000000000000000 X30=0000000040276900  SP=0000008000021e00\n\
        PSTATE=600003c4 -ZC- EL1t    FPU disabled\n\
        \n\
        CPU#1\n PC=000000004023a744 X00=000000004032d939 X01=0000000000000001\n\
        PSTATE=800003c4 N--- EL1t    FPU disabled\n";

    #[test]
    fn pc_of_each_aarch64_vcpu_and_no_halted_flag() {
        let vcpus = parse_info_registers(AARCH64_SAMPLE);
        assert_eq!(vcpus.len(), 2);
        assert_eq!(vcpus[1].vcpu, 1);
        assert_eq!(vcpus[1].rip, Some(0x4023_a744));
        assert_eq!(vcpus[0].halted, None);
        assert_eq!(vcpu_of_mpidr_affinity(0x0000_0203), 35);
        assert_eq!(vcpu_of_mpidr_affinity(7), 7);
    }

    #[test]
    fn garbage_gives_nothing() {
        assert!(parse_info_registers("Cannot access memory\n").is_empty());
        let partial = parse_info_registers("CPU#3\nRAX=0\n");
        assert_eq!(partial[0].vcpu, 3);
        assert_eq!(partial[0].rip, None);
        assert_eq!(partial[0].halted, None);
    }
}
