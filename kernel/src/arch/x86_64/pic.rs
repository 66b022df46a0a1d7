//! The legacy 8259 PIC pair: remapped away from the exception vectors
//! (32..48) and fully masked. Vigil uses the local APIC for every interrupt it
//! wants; the PIC must only never deliver a stray IRQ onto an exception vector.

use x86_64::instructions::port::Port;

/// First vector of the remapped master PIC.
pub const PIC1_VECTOR_BASE: u8 = 0x20;
/// First vector of the remapped slave PIC.
pub const PIC2_VECTOR_BASE: u8 = 0x28;

const PIC1_COMMAND: u16 = 0x20;
const PIC1_DATA: u16 = 0x21;
const PIC2_COMMAND: u16 = 0xa0;
const PIC2_DATA: u16 = 0xa1;
const ICW1_INIT_WITH_ICW4: u8 = 0x11;
const ICW4_8086: u8 = 0x01;
const MASK_ALL: u8 = 0xff;

/// Remaps both PICs to 0x20/0x28 and masks every line.
pub fn remap_and_mask() {
    let mut cmd1: Port<u8> = Port::new(PIC1_COMMAND);
    let mut data1: Port<u8> = Port::new(PIC1_DATA);
    let mut cmd2: Port<u8> = Port::new(PIC2_COMMAND);
    let mut data2: Port<u8> = Port::new(PIC2_DATA);
    // SAFETY: these are the 8259's fixed ports; the ICW sequence below is the
    // documented initialisation and touches no memory.
    unsafe {
        cmd1.write(ICW1_INIT_WITH_ICW4);
        cmd2.write(ICW1_INIT_WITH_ICW4);
        data1.write(PIC1_VECTOR_BASE);
        data2.write(PIC2_VECTOR_BASE);
        data1.write(4); // ICW3: slave on IRQ2
        data2.write(2); // ICW3: cascade identity
        data1.write(ICW4_8086);
        data2.write(ICW4_8086);
        data1.write(MASK_ALL);
        data2.write(MASK_ALL);
    }
}

/// The interrupt mask registers of (master, slave).
pub fn masks() -> (u8, u8) {
    let mut data1: Port<u8> = Port::new(PIC1_DATA);
    let mut data2: Port<u8> = Port::new(PIC2_DATA);
    // SAFETY: reading the IMR has no side effects.
    unsafe { (data1.read(), data2.read()) }
}
