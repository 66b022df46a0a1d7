//! x86_64 arch layer: descriptor tables, exceptions, legacy PIC, port I/O
//! devices (COM1, fw_cfg, isa-debug-exit, PIT), the local APIC, the AP
//! trampoline, the halt primitive, per-core access and paging.
pub mod acpi_madt;
pub mod acpi_poweroff;
pub mod ap_entry;
pub mod boot_ramdisk;
pub mod context;
pub mod exceptions;
pub mod fault_injection;
pub mod fault_probe;
pub mod fw_cfg;
pub mod gdt;
pub mod halt;
pub mod idle_platform;
pub mod interrupt_vectors;
pub mod lapic;
pub mod paging;
pub mod percpu;
pub mod pic;
pub mod pit;
pub mod qemu_exit;
pub mod serial;
pub mod trampoline;
pub mod tsc;
