//! How a run ends on x86_64: QEMU's `isa-debug-exit` device first (its
//! status is the harness's verdict), then an ACPI power-off (Bochs, or a
//! machine without the device).

/// Asks the emulator to exit with `code` (QEMU: status `(code << 1) | 1`);
/// returns if there is no such device.
pub fn exit_emulator(code: u8) {
    super::qemu_exit::exit_qemu(u32::from(code));
}

/// Powers the machine off, if the boot found how; returns if it could not.
pub fn power_off() {
    super::acpi_poweroff::power_off();
}
