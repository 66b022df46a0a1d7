//! Power-off through ACPI, for machines without QEMU's `isa-debug-exit`
//! (Bochs, real hardware): write `SLP_TYPa | SLP_EN` to the FADT's PM1a
//! control register (and `SLP_TYPb` to PM1b, if there is one), with the S5
//! sleep type read from the DSDT's `\_S5` package.
//!
//! Found once at boot ([`prepare`]); [`power_off`] uses what was found.
//! Only the `_S5_` name and its package are decoded from the AML (see
//! [`s5_sleep_types`]): no interpreter.

use acpi::AcpiTables;
use acpi::address::AddressSpace;
use acpi::fadt::Fadt;
use spin::Once;
use x86_64::PhysAddr;
use x86_64::instructions::port::Port;

use super::acpi_madt::OffsetMapped;
use super::paging;

/// PM1 control register: SLP_EN (bit 13) starts the sleep, SLP_TYP is bits
/// 10-12.
const SLP_EN: u16 = 1 << 13;
const SLP_TYP_SHIFT: u16 = 10;
/// PM1 control register: SCI_EN (bit 0), set once the OS owns ACPI.
const SCI_EN: u16 = 1;

/// What a power-off needs, found at boot.
#[derive(Debug, Clone, Copy)]
struct PowerOff {
    pm1a_control_port: u16,
    pm1b_control_port: Option<u16>,
    slp_typ_a: u16,
    slp_typ_b: u16,
    smi_command_port: u16,
    acpi_enable: u8,
}

static POWER_OFF: Once<Option<PowerOff>> = Once::new();

/// Why power-off is not available (said once at boot, not an error: QEMU's
/// exit device usually ends the run first).
fn find(rsdp_phys: u64) -> Result<PowerOff, &'static str> {
    // SAFETY: `rsdp_phys` is the RSDP the bootloader found; every table it
    // leads to is reached through the bootloader's physical-memory mapping.
    let tables = unsafe { AcpiTables::from_rsdp(OffsetMapped, rsdp_phys as usize) }
        .map_err(|_| "ACPI tables unusable")?;
    let fadt = tables.find_table::<Fadt>().map_err(|_| "no FADT")?;
    let io_port = |address: acpi::address::GenericAddress| {
        (address.address_space == AddressSpace::SystemIo)
            .then(|| u16::try_from(address.address).ok())
            .flatten()
    };
    let pm1a = fadt
        .pm1a_control_block()
        .ok()
        .and_then(io_port)
        .ok_or("no PM1a control port")?;
    let pm1b = fadt.pm1b_control_block().ok().flatten().and_then(io_port);
    let dsdt = tables.dsdt().map_err(|_| "no DSDT")?;
    let virt = paging::phys_to_virt(PhysAddr::new(dsdt.address as u64));
    // SAFETY: the DSDT's AML stream is `dsdt.length` bytes of firmware
    // memory at `dsdt.address`, mapped by the bootloader for as long as the
    // kernel runs and never written by it; the slice is only read here.
    let aml = unsafe { core::slice::from_raw_parts(virt.as_ptr::<u8>(), dsdt.length as usize) };
    let (slp_typ_a, slp_typ_b) = s5_sleep_types(aml).ok_or("no \\_S5 package in the DSDT")?;
    Ok(PowerOff {
        pm1a_control_port: pm1a,
        pm1b_control_port: pm1b,
        slp_typ_a,
        slp_typ_b,
        smi_command_port: u16::try_from(fadt.smi_cmd_port).unwrap_or(0),
        acpi_enable: fadt.acpi_enable,
    })
}

/// Whether [`prepare`] found how to power off.
pub fn available() -> bool {
    matches!(POWER_OFF.get(), Some(Some(_)))
}

/// Finds the power-off registers; returns why not if they are missing.
pub fn prepare(rsdp_phys: Option<u64>) -> Result<(), &'static str> {
    let found = rsdp_phys.ok_or("no RSDP").and_then(find);
    let error = found.err();
    POWER_OFF.call_once(|| found.ok());
    error.map_or(Ok(()), Err)
}

/// The two S5 sleep-type values from the DSDT's AML: the `_S5_` name
/// (`NameOp`, optionally rooted with `\`), a package, and its first two
/// elements (each a `BytePrefix` constant, `ZeroOp` or `OneOp`).
pub fn s5_sleep_types(aml: &[u8]) -> Option<(u16, u16)> {
    const NAME_OP: u8 = 0x08;
    const PACKAGE_OP: u8 = 0x12;
    // The first `_S5_` that is a Name (the string may also appear in a
    // method's name or a string constant).
    let at = aml
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"_S5_")
        .map(|(at, _)| at)
        .find(|&at| {
            (at >= 1 && aml[at - 1] == NAME_OP)
                || (at >= 2 && aml[at - 1] == b'\\' && aml[at - 2] == NAME_OP)
        })?;
    let mut rest = aml.get(at + 4..)?;
    if *rest.first()? != PACKAGE_OP {
        return None;
    }
    // PkgLength: bits 7-6 of the lead byte count the bytes that follow it.
    let length_bytes = usize::from(rest.get(1)? >> 6);
    rest = rest.get(2 + length_bytes..)?;
    let _element_count = rest.first()?;
    rest = rest.get(1..)?;
    let mut element = || -> Option<u16> {
        let (value, used) = match *rest.first()? {
            0x0a => (u16::from(*rest.get(1)?), 2),
            0x00 => (0, 1),
            0x01 => (1, 1),
            _ => return None,
        };
        rest = rest.get(used..)?;
        Some(value)
    };
    let a = element()?;
    let b = element().unwrap_or(0);
    Some((a & 7, b & 7))
}

/// Powers the machine off through ACPI, if [`prepare`] found how; returns
/// only if it could not (no ACPI power-off, or the machine ignored it).
pub fn power_off() {
    let Some(Some(off)) = POWER_OFF.get().copied() else {
        return;
    };
    let mut pm1a: Port<u16> = Port::new(off.pm1a_control_port);
    // SAFETY: PM1a_CNT is the FADT's power-management control port; reading
    // it has no side effect, and the writes below request the S5 sleep
    // state, which ends the machine (memory safety does not come into it).
    unsafe {
        if pm1a.read() & SCI_EN == 0 && off.smi_command_port != 0 {
            // Hand ACPI to the OS first (firmware that starts in legacy
            // mode); bounded wait for SCI_EN.
            Port::<u8>::new(off.smi_command_port).write(off.acpi_enable);
            for _ in 0..1_000_000 {
                if pm1a.read() & SCI_EN != 0 {
                    break;
                }
                core::hint::spin_loop();
            }
        }
        pm1a.write((off.slp_typ_a << SLP_TYP_SHIFT) | SLP_EN);
        if let Some(port) = off.pm1b_control_port {
            Port::<u16>::new(port).write((off.slp_typ_b << SLP_TYP_SHIFT) | SLP_EN);
        }
    }
}
