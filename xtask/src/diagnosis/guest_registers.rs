//! Parsing QEMU's `info registers -a`: one `CPU#n` block per vCPU, of which
//! we keep `RIP=` and `HLT=`. (QEMU numbers the blocks by vCPU index; with
//! `-smp N` on the `pc`/`q35` machines vCPU n has APIC id n.)

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
            if let Some(rip) = word.strip_prefix("RIP=") {
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

    #[test]
    fn garbage_gives_nothing() {
        assert!(parse_info_registers("Cannot access memory\n").is_empty());
        let partial = parse_info_registers("CPU#3\nRAX=0\n");
        assert_eq!(partial[0].vcpu, 3);
        assert_eq!(partial[0].rip, None);
        assert_eq!(partial[0].halted, None);
    }
}
