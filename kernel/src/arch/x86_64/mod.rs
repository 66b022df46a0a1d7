//! x86_64 arch layer: descriptor tables, exceptions, legacy PIC, port I/O
//! devices (COM1, fw_cfg, isa-debug-exit), the halt primitive and paging.
pub mod exceptions;
pub mod fault_injection;
pub mod fault_probe;
pub mod fw_cfg;
pub mod gdt;
pub mod halt;
pub mod interrupt_vectors;
pub mod paging;
pub mod percpu;
pub mod pic;
pub mod qemu_exit;
pub mod serial;
