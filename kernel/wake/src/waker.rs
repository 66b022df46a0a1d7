//! The waker side of the driver: [`wake_core`] gives a core an item, runs
//! the protocol's notify, sends the IPI it asks for, and keeps the
//! lost-wakeup detector's counts, in the one order the detector's argument
//! needs (started, push, decision, IPI, finished).

use crate::core_wake::CoreWake;
use crate::idle_hooks::WakerHooks;
use crate::notify::NotifyOutcome;
use crate::platform::Platform;

/// Gives core `target` (of `cores`) `item`, from the calling core
/// `platform.core()` (not `target`: a core runs its own tasks from its run
/// queue without the protocol). Sends the wake IPI through the platform if
/// the protocol asks for one, after the push.
///
/// Call with interrupts disabled if an interrupt handler on this core could
/// send to the same target (the inbox lock is a spinlock).
pub fn wake_core<T>(
    cores: &[CoreWake<T>],
    target: usize,
    item: T,
    platform: &impl Platform,
    hooks: &impl WakerHooks,
) -> NotifyOutcome {
    let me = platform.core();
    debug_assert_ne!(me, target, "wake_core to the calling core");
    let core = &cores[target];
    let record = core.lost_wakeup_record();
    record.notify_started();
    let from = &cores[me];
    let pushed = core.push(item, from);
    hooks.between_push_and_notify();
    let outcome = core.notify(pushed, from);
    hooks.decided(&outcome);
    if outcome.must_wake() {
        hooks.before_ipi();
        platform.send_wake(target);
    }
    record.notify_finished();
    hooks.notified();
    outcome
}
