//! Naming a stuck core: the debug table read from a hung guest, its registers, symbols, the IPI oracle.

pub mod debug_table;
pub mod guest_registers;
pub mod ipi_oracle;
pub mod stuck_cores;
pub mod symbolize;
