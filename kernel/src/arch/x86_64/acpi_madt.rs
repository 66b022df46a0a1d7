//! CPU discovery from the ACPI MADT: every enabled Local APIC and Local
//! x2APIC entry (by APIC id, not processor uid), and the LAPIC base with its
//! 64-bit override. Tables are read through the bootloader's mapping of all
//! physical memory, so "mapping" a region is an address translation.

use super::paging;
use acpi::madt::{Madt, MadtEntry};
use acpi::{AcpiHandler, AcpiTables, PhysicalMapping};
use alloc::vec::Vec;
use core::fmt;
use core::ptr::NonNull;
use x86_64::PhysAddr;

const MADT_ENTRY_ENABLED: u32 = 1;

#[derive(Clone, Debug)]
pub(super) struct OffsetMapped;

impl AcpiHandler for OffsetMapped {
    unsafe fn map_physical_region<T>(
        &self,
        physical_address: usize,
        size: usize,
    ) -> PhysicalMapping<Self, T> {
        let virt = paging::phys_to_virt(PhysAddr::new(physical_address as u64));
        let ptr =
            NonNull::new(virt.as_mut_ptr::<T>()).expect("physical-memory mapping at address 0");
        // SAFETY: the bootloader maps all physical memory at a fixed offset,
        // so `virt` addresses the `size` bytes at `physical_address` for as
        // long as the kernel runs; unmapping is a no-op.
        unsafe { PhysicalMapping::new(physical_address, ptr, size, size, Self) }
    }

    fn unmap_physical_region<T>(_region: &PhysicalMapping<Self, T>) {}
}

/// What the MADT says about the CPUs.
#[derive(Debug, Clone)]
pub struct Topology {
    /// Physical base of the local APIC (after any 64-bit override).
    pub lapic_phys: u64,
    /// APIC ids of the enabled CPUs, in MADT order.
    pub apic_ids: Vec<u32>,
}

/// Why CPU discovery failed.
#[derive(Debug)]
pub enum MadtError {
    /// The bootloader passed no RSDP address.
    NoRsdp,
    /// The ACPI tables are missing or malformed.
    Acpi(acpi::AcpiError),
    /// The MADT lists no enabled CPU.
    NoCpus,
}

impl fmt::Display for MadtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoRsdp => write!(f, "the bootloader found no ACPI RSDP"),
            Self::Acpi(err) => write!(f, "ACPI tables unusable: {err:?}"),
            Self::NoCpus => write!(f, "the MADT lists no enabled CPU"),
        }
    }
}

/// Reads the MADT reached from the RSDP at `rsdp_phys`.
pub fn discover(rsdp_phys: Option<u64>) -> Result<Topology, MadtError> {
    let rsdp = rsdp_phys.ok_or(MadtError::NoRsdp)?;
    // SAFETY: `rsdp` is the RSDP address the bootloader found (BIOS scan or
    // UEFI configuration table); every table it leads to is reached through
    // the bootloader's physical-memory mapping.
    let tables =
        unsafe { AcpiTables::from_rsdp(OffsetMapped, rsdp as usize) }.map_err(MadtError::Acpi)?;
    let madt = tables.find_table::<Madt>().map_err(MadtError::Acpi)?;
    let mut lapic_phys = u64::from(madt.get().local_apic_address);
    let mut apic_ids = Vec::new();
    for entry in madt.get().entries() {
        match entry {
            MadtEntry::LocalApic(e) if e.flags & MADT_ENTRY_ENABLED != 0 => {
                apic_ids.push(u32::from(e.apic_id))
            }
            MadtEntry::LocalX2Apic(e) if e.flags & MADT_ENTRY_ENABLED != 0 => {
                let id = e.x2apic_id;
                if !apic_ids.contains(&id) {
                    apic_ids.push(id);
                }
            }
            MadtEntry::LocalApicAddressOverride(e) => lapic_phys = e.local_apic_address,
            _ => {}
        }
    }
    if apic_ids.is_empty() {
        return Err(MadtError::NoCpus);
    }
    Ok(Topology {
        lapic_phys,
        apic_ids,
    })
}
