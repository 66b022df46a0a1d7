//! Everything that touches the CPU or platform devices directly. The rest of
//! the kernel calls these safe wrappers; `unsafe` is confined here and to the
//! few places that must touch hardware memory.
pub mod x86_64;

pub use self::x86_64::*;
