//! This core's interrupt flag (RFLAGS.IF): `cli`, `sti`, and a closure run
//! with interrupts off.

/// Disables interrupts on this core (`cli`).
pub fn disable() {
    x86_64::instructions::interrupts::disable();
}

/// Enables interrupts on this core (`sti`).
pub fn enable() {
    x86_64::instructions::interrupts::enable();
}

/// Runs `f` with interrupts disabled, restoring the flag as it was.
pub fn without<R>(f: impl FnOnce() -> R) -> R {
    x86_64::instructions::interrupts::without_interrupts(f)
}
