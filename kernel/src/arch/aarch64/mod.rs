//! AArch64 arch layer, for QEMU's `virt` machine (GICv3, EL1, direct
//! kernel boot): the entry code and the device tree, the MMU (identity map,
//! stacks with guard pages), exceptions, the GICv3, SGIs between cores,
//! the generic timer (clock and one-shot), the `wfi` sleep, PSCI (core
//! start, power-off), semihosting (the exit code), the PL011 console and
//! fw_cfg. The modules the kernel above the arch layer uses are listed in
//! `arch/mod.rs`; the rest are this layer's own.
pub mod boot;
pub mod bringup;
pub mod context;
pub mod devicetree;
pub mod entry;
pub mod exceptions;
pub mod forced_reset;
pub mod fw_cfg;
pub mod gic;
pub mod halt;
pub mod interrupt_vectors;
pub mod interrupts;
pub mod ipi;
pub mod paging;
pub mod percpu;
pub mod power;
pub mod probe_read;
pub mod psci;
pub mod serial;
pub mod sysreg;
pub mod timer;
pub mod tsc;
