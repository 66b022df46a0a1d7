//! This core's one-shot timer, as the kernel above the arch layer sees it:
//! the local APIC timer (or TSC-deadline mode), raising `TIMER_VECTOR`.

/// Arms this core's one-shot to fire in `us` microseconds, replacing any
/// armed deadline.
pub fn arm_oneshot_us(us: u64) {
    super::lapic::arm_oneshot_us(us);
}

/// Disarms this core's one-shot.
pub fn cancel() {
    super::lapic::cancel_timer();
}
