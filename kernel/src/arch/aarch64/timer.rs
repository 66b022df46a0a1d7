//! This core's one-shot: the generic timer's virtual timer (`CNTV_*`),
//! compared against [`tsc::now`](super::tsc::now)'s counter, raising PPI
//! [`TIMER_VECTOR`](super::interrupt_vectors::TIMER_VECTOR) (INTID 27).
//! Its interrupt is level-triggered: it stays asserted while the deadline
//! has passed and the timer is enabled, so the handler disables it
//! ([`acknowledge`]).

use super::sysreg::{isb, write_sysreg};
use super::tsc;

/// CNTV_CTL_EL0.ENABLE.
const ENABLE: u64 = 1;

/// Arms this core's one-shot to fire in `us` microseconds, replacing any
/// armed deadline. The `isb` makes the new deadline and enable take effect
/// before the caller goes on (to its halt, typically).
pub fn arm_oneshot_us(us: u64) {
    let deadline = tsc::now() + tsc::us_to_ticks(us).max(1);
    write_sysreg!("cntv_cval_el0", deadline);
    write_sysreg!("cntv_ctl_el0", ENABLE);
    isb();
}

/// Disarms this core's one-shot (its interrupt, if asserted, drops).
pub fn cancel() {
    write_sysreg!("cntv_ctl_el0", 0);
    isb();
}

/// From the timer's handler: the deadline passed; disable the timer so its
/// level-triggered interrupt drops before the end of interrupt.
pub fn acknowledge() {
    cancel();
}
