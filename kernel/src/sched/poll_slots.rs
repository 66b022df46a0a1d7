//! How many idle cores may poll their inbox at once: as many as the host
//! runs at once ([`host_parallelism`](super::host_parallelism): the boot's
//! reading, raised where a workload's rounds showed more), unless
//! `pollers=` says otherwise.
//!
//! A core that polls before it halts answers a wake at once (no IPI, no
//! wake latency), which is what keeps a run of fork-join rounds fast; but
//! a polling vCPU is a runnable host thread, and with more runnable vCPUs
//! than host cores it takes host time from the cores that have the work.
//! So the idle driver asks for a slot before it polls
//! ([`vigil_wake::IdleHooks::may_poll`]) and the cores beyond the slots
//! halt at once. How long a core polls is still its adaptive backoff's
//! (`backoff=`): a poll that catches nothing teaches it to stop, so an
//! idle guest keeps no core polling.

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Slots in use. Relaxed everywhere: a slot orders nothing (a poll reads
/// its inbox through the protocol's own orderings); the count only bounds
/// how many cores spin at once.
static IN_USE: AtomicUsize = AtomicUsize::new(0);
/// The number of slots: unlimited until the boot measurement sets it. The
/// APs may already poll then (they went back to their idle loops after
/// the measurement), so the count of slots in use is kept apart from the
/// limit: setting the limit cannot lose or add a slot a core holds (a
/// count of free slots, overwritten with the limit while a core polled,
/// gained one slot for good when that core gave its slot back).
static SLOTS: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Whether `pollers=` fixed the number of slots ([`fix`]). Relaxed: set
/// once at boot, before any workload.
static FIXED: AtomicBool = AtomicBool::new(false);

/// Sets the number of slots: at boot (none while the host is measured,
/// then the limit), where a workload's rounds raised the parallelism in
/// force ([`follow`]), and back where an in-kernel test raised it.
pub fn set(slots: usize) {
    SLOTS.store(slots, Ordering::Relaxed);
}

/// Fixes the number of slots (`pollers=`): [`follow`] leaves it alone.
pub fn fix(slots: usize) {
    FIXED.store(true, Ordering::Relaxed);
    set(slots);
}

/// Whether `pollers=` fixed the number of slots.
pub fn is_fixed() -> bool {
    FIXED.load(Ordering::Relaxed)
}

/// Sets the number of slots to the host parallelism in force
/// (`at_once`), unless `pollers=` fixed it ([`fix`]): at boot, and when a
/// workload's rounds showed the host runs more cores at once
/// (`host_parallelism::show_by_rounds`). Returns the number of slots.
pub fn follow(at_once: usize) -> usize {
    if !is_fixed() {
        set(at_once);
    }
    slots()
}

/// The number of slots now.
pub fn slots() -> usize {
    SLOTS.load(Ordering::Relaxed)
}

/// Takes a slot if one is free. (Cores that took theirs before the limit
/// was lowered keep them until their poll ends; meanwhile no new core
/// gets one.)
pub fn acquire() -> bool {
    IN_USE
        .try_update(Ordering::Relaxed, Ordering::Relaxed, |in_use| {
            (in_use < SLOTS.load(Ordering::Relaxed)).then_some(in_use + 1)
        })
        .is_ok()
}

/// Gives back a slot taken by [`acquire`].
pub fn release() {
    IN_USE.fetch_sub(1, Ordering::Relaxed);
}
