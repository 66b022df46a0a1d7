//! The 8254 PIT, used only as a reference clock before the LAPIC timer and
//! the TSC are calibrated: channel 2 in one-shot mode, gated through port
//! 0x61 and polled (no interrupt needed).

use x86_64::instructions::port::Port;

/// The PIT's input clock in Hz.
pub const PIT_HZ: u64 = 1_193_182;
const CHANNEL2_DATA: u16 = 0x42;
const MODE_COMMAND: u16 = 0x43;
const GATE_PORT: u16 = 0x61;
/// Longest wait one countdown can time (16-bit counter).
pub const MAX_WAIT_US: u64 = 50_000;

/// Busy-waits `us` microseconds (at most [`MAX_WAIT_US`]) on PIT channel 2.
pub fn wait_us(us: u64) {
    assert!(
        us > 0 && us <= MAX_WAIT_US,
        "PIT wait of {us} us out of range"
    );
    let count = (PIT_HZ * us / 1_000_000).max(1) as u16;
    let mut gate: Port<u8> = Port::new(GATE_PORT);
    let mut command: Port<u8> = Port::new(MODE_COMMAND);
    let mut data: Port<u8> = Port::new(CHANNEL2_DATA);
    // SAFETY: ports 0x42/0x43/0x61 are the PIT and its gate; channel 2 only
    // drives the PC speaker, which stays disabled (bit 1 of 0x61 cleared).
    unsafe {
        let g = gate.read();
        gate.write((g & !0x02) & !0x01); // gate low: stop channel 2
        command.write(0b1011_0000); // channel 2, lobyte/hibyte, mode 0, binary
        data.write(count as u8);
        data.write((count >> 8) as u8);
        let g = gate.read();
        gate.write(g | 0x01); // gate high: start counting
        while gate.read() & 0x20 == 0 {
            core::hint::spin_loop();
        }
        let g = gate.read();
        gate.write(g & !0x01);
    }
}
