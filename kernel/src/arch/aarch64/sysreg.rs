//! System-register access: one macro for reads and writes by name, so that
//! every `mrs`/`msr` of the layer is written the same way. The GIC's CPU
//! interface registers are named by their encodings (`S3_0_C12_...`), which
//! every assembler accepts.

/// Reads a system register: `read_sysreg!("cntvct_el0")`.
macro_rules! read_sysreg {
    ($name:literal) => {{
        let value: u64;
        // SAFETY: reading a system register has no side effect on memory;
        // the registers read by this layer have no read side effects.
        unsafe {
            core::arch::asm!(concat!("mrs {}, ", $name), out(reg) value, options(nomem, nostack, preserves_flags))
        };
        value
    }};
}

/// Writes a system register: `write_sysreg!("cntv_ctl_el0", 1)`. Not
/// `nomem`: the writes of this layer change what memory accesses or
/// interrupts do (translation, the GIC), so the compiler must not move
/// memory accesses across them. Ordering against other cores' view is
/// each caller's (`dsb`/`isb`, argued where used).
macro_rules! write_sysreg {
    ($name:literal, $value:expr) => {{
        let value: u64 = $value;
        // SAFETY: each caller writes a register this layer owns, with a
        // value it documents; the register's effect is the caller's
        // intent (no Rust-visible memory is changed).
        unsafe { core::arch::asm!(concat!("msr ", $name, ", {}"), in(reg) value, options(nostack, preserves_flags)) };
    }};
}

/// `isb`: later instructions see the effect of earlier system-register
/// writes (context synchronization).
pub fn isb() {
    // SAFETY: a barrier; no memory or register effect.
    unsafe { core::arch::asm!("isb", options(nostack, preserves_flags)) };
}

pub(crate) use {read_sysreg, write_sysreg};
