//! AArch64 arch layer (QEMU `virt`, EL1, GICv3): in progress.
