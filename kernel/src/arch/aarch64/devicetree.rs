//! What the machine is, from the device tree QEMU's `virt` puts at the
//! start of RAM for a bare-metal kernel: RAM, the CPUs (their MPIDR
//! affinities), the GICv3's distributor and redistributor regions, the PSCI
//! conduit, the PL011 UART and the fw_cfg device. Read once on the
//! bootstrap core, with the `fdt` crate, before the heap exists (nothing
//! here allocates).

use crate::arch::irq_counts::MAX_CORES;
use fdt::Fdt;

/// Where QEMU's `virt` puts the device tree for a bare-metal ELF: the
/// start of RAM.
pub const DTB_ADDRESS: u64 = 0x4000_0000;
/// The PL011 of QEMU's `virt` (used before the device tree is read, to say
/// what is wrong with it).
pub const DEFAULT_UART: u64 = 0x0900_0000;

/// How PSCI calls reach the firmware (QEMU's built-in PSCI at EL1: `hvc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PsciConduit {
    /// `hvc #0`.
    Hvc,
    /// `smc #0`.
    Smc,
}

/// A physical region `[base, base + bytes)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// First byte.
    pub base: u64,
    /// Length.
    pub bytes: u64,
}

/// The machine, as the device tree describes it.
#[derive(Debug)]
pub struct Machine {
    /// The first RAM region.
    pub ram: Region,
    /// The UART's registers.
    pub uart: u64,
    /// The GIC distributor's registers.
    pub gic_distributor: u64,
    /// The GIC redistributor regions (one below 4 GiB for up to 123 CPUs,
    /// a second one high up for the rest): the first
    /// `gic_redistributor_count` entries.
    pub gic_redistributors: [Region; MAX_REDISTRIBUTOR_REGIONS],
    /// How many of `gic_redistributors` are used.
    pub gic_redistributor_count: usize,
    /// The fw_cfg device's registers, if any.
    pub fw_cfg: Option<u64>,
    /// The PSCI conduit.
    pub psci: PsciConduit,
    /// Each CPU's MPIDR affinity (`reg`), in device-tree order: the first
    /// `cpu_count` entries (at most [`MAX_CORES`]).
    pub cpus: [u64; MAX_CORES],
    /// How many of `cpus` are used.
    pub cpu_count: usize,
    /// How many CPUs the device tree lists (more than `cpu_count` when it
    /// lists more than [`MAX_CORES`]).
    pub cpus_listed: usize,
}

/// Redistributor regions kept (QEMU's `virt` has at most 2).
pub const MAX_REDISTRIBUTOR_REGIONS: usize = 4;

/// Why the device tree could not be used.
#[derive(Debug)]
pub enum DeviceTreeError {
    /// No valid blob at [`DTB_ADDRESS`].
    NoBlob(fdt::FdtError),
    /// A node the kernel needs is missing: which.
    Missing(&'static str),
}

impl core::fmt::Display for DeviceTreeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NoBlob(err) => write!(
                f,
                "no device tree at {DTB_ADDRESS:#x} ({err:?}): is this QEMU's `virt` machine booting a bare-metal ELF?"
            ),
            Self::Missing(what) => write!(f, "the device tree has no {what}"),
        }
    }
}

fn first_reg(fdt: &Fdt<'_>, compatible: &[&str]) -> Option<u64> {
    let node = fdt.find_compatible(compatible)?;
    let region = node.reg()?.next()?;
    Some(region.starting_address as u64)
}

/// Reads the device tree at [`DTB_ADDRESS`].
///
/// # Safety
///
/// [`DTB_ADDRESS`] must be readable memory (it is RAM on `virt`), not
/// written while the returned data is used.
pub unsafe fn read() -> Result<Machine, DeviceTreeError> {
    // SAFETY: the caller guarantees the address is readable RAM; `from_ptr`
    // checks the magic and reads only within the blob's stated size.
    let fdt =
        unsafe { Fdt::from_ptr(DTB_ADDRESS as *const u8) }.map_err(DeviceTreeError::NoBlob)?;
    let memory = fdt
        .find_node("/memory")
        .ok_or(DeviceTreeError::Missing("/memory node"))?;
    let ram = memory
        .reg()
        .and_then(|mut regs| regs.next())
        .ok_or(DeviceTreeError::Missing("memory region"))?;
    let ram = Region {
        base: ram.starting_address as u64,
        bytes: ram.size.unwrap_or(0) as u64,
    };
    let gic = fdt
        .find_compatible(&["arm,gic-v3"])
        .ok_or(DeviceTreeError::Missing(
            "GICv3 (`arm,gic-v3`): boot with -machine virt,gic-version=3",
        ))?;
    let mut regs = gic
        .reg()
        .ok_or(DeviceTreeError::Missing("GICv3 registers"))?;
    let distributor = regs
        .next()
        .ok_or(DeviceTreeError::Missing("GICv3 distributor"))?;
    let redistributor_regions = gic
        .property("#redistributor-regions")
        .and_then(|p| p.as_usize())
        .unwrap_or(1);
    let mut gic_redistributors = [Region { base: 0, bytes: 0 }; MAX_REDISTRIBUTOR_REGIONS];
    let mut gic_redistributor_count = 0;
    for (slot, r) in gic_redistributors
        .iter_mut()
        .zip(regs.take(redistributor_regions))
    {
        *slot = Region {
            base: r.starting_address as u64,
            bytes: r.size.unwrap_or(0) as u64,
        };
        gic_redistributor_count += 1;
    }
    if gic_redistributor_count == 0 {
        return Err(DeviceTreeError::Missing("GICv3 redistributor region"));
    }
    let psci = match fdt
        .find_compatible(&["arm,psci-1.0", "arm,psci-0.2", "arm,psci"])
        .and_then(|node| node.property("method"))
        .and_then(|p| p.as_str())
    {
        Some("hvc") => PsciConduit::Hvc,
        Some("smc") => PsciConduit::Smc,
        _ => return Err(DeviceTreeError::Missing("PSCI node with a method")),
    };
    let mut cpus = [0u64; MAX_CORES];
    let mut cpus_listed = 0;
    for cpu in fdt.cpus() {
        if let Some(slot) = cpus.get_mut(cpus_listed) {
            *slot = cpu.ids().first() as u64;
        }
        cpus_listed += 1;
    }
    if cpus_listed == 0 {
        return Err(DeviceTreeError::Missing("CPU"));
    }
    Ok(Machine {
        ram,
        uart: first_reg(&fdt, &["arm,pl011"]).unwrap_or(DEFAULT_UART),
        gic_distributor: distributor.starting_address as u64,
        gic_redistributors,
        gic_redistributor_count,
        fw_cfg: first_reg(&fdt, &["qemu,fw-cfg-mmio"]),
        psci,
        cpus,
        cpu_count: cpus_listed.min(MAX_CORES),
        cpus_listed,
    })
}
