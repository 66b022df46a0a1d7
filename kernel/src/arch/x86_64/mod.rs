//! x86_64 arch layer: the bootloader's entry point, descriptor tables,
//! exceptions, legacy PIC, port I/O devices (COM1, fw_cfg, isa-debug-exit,
//! PIT), the local APIC, the AP trampoline and bring-up, the halt
//! primitive, per-core access and paging. The modules the kernel above the
//! arch layer uses are listed in `arch/mod.rs`; the rest are this layer's
//! own.
pub mod acpi_madt;
pub mod acpi_poweroff;
pub mod ap_entry;
pub mod boot;
pub mod boot_ramdisk;
pub mod bringup;
pub mod context;
pub mod exceptions;
pub mod forced_reset;
pub mod fw_cfg;
pub mod gdt;
pub mod halt;
pub mod interrupt_vectors;
pub mod interrupts;
pub mod ipi;
pub mod lapic;
pub mod paging;
pub mod percpu;
pub mod pic;
pub mod pit;
pub mod power;
pub mod probe_read;
pub mod qemu_exit;
pub mod serial;
pub mod timer;
pub mod trampoline;
pub mod tsc;
