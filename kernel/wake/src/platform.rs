//! What the idle driver ([`IdleDriver`](crate::IdleDriver)) needs from the
//! machine it runs on: the [`Platform`] trait, and the contract every
//! implementation (the kernel's x86 one, the loom model's) must keep.
//!
//! # The contract
//!
//! The driver runs on one core, with that core's interrupts **disabled**
//! everywhere except inside [`Platform::sleep`]. What it
//! assumes of the machine, and no more:
//!
//! * **`sti; hlt` is atomic with respect to interrupts.** An interrupt that
//!   becomes pending while interrupts are disabled stays latched, and
//!   `sleep` then returns at once (on x86 the `sti`
//!   shadow defers recognition to inside `hlt`); otherwise it returns once an
//!   interrupt has been taken. It may also return for an interrupt the
//!   driver knows nothing about (a spurious or unrelated wake).
//! * **Interrupts coalesce.** Each vector is one latched bit per core: two
//!   wake IPIs sent before the core takes the first are taken once. The
//!   driver learns what ended a halt only from the per-core counts the
//!   interrupt handlers bump ([`InterruptCounts`]), read before and after.
//! * **An IPI carries no memory.** The driver never relies on an IPI to make
//!   the sender's writes visible to the receiver: everything the woken core
//!   reads about the work is ordered by the protocol's own atomics (the
//!   inbox count's read-modify-writes, the detector's Release/Acquire
//!   pairs). On x86 an IPI does in practice order the sender's earlier
//!   stores before the interrupt (the xAPIC ICR write is an uncached store;
//!   the x2APIC one needs a fence, as Linux's `weak_wrmsr_fence`) and the
//!   interrupt's `iret` is serialising, but the loom model leaves that out
//!   on purpose, and the driver is correct without it.
//! * **An IPI may become visible late.** After `send_wake` returns, the
//!   target's pending bit may not be set yet (measured under QEMU's TCG:
//!   microseconds). So the detector trusts the *sent* count
//!   ([`Platform::wakes_sent_to`]) for an IPI on its way, never the
//!   pending bit alone.
//! * **The one-shot timer is spent once it fired.** [`Platform::arm_oneshot_us`]
//!   arms one interrupt; once it has been taken (its count moved), nothing
//!   more comes until the next arm. It may fire a little early or late: the
//!   driver keys re-arming on the count, never on the clock.
//! * **The clock is monotonic per core** ([`Platform::now_ticks`]); the
//!   driver uses it only for the poll budget and statistics, never to decide
//!   whether a wakeup was lost.

/// What the interrupt handlers of the driver's core have counted so far.
/// Each count is bumped by this core's handler only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InterruptCounts {
    /// Wake IPIs taken.
    pub wake: u64,
    /// The watchdog core's lost-wakeup probes taken.
    pub probe: u64,
    /// One-shot timer interrupts taken.
    pub timer: u64,
}

/// The machine under the idle driver, as seen from one core (the kernel's
/// implementation is a zero-sized handle that reads the core's index from
/// its per-core data; the model's holds its core number). See the module
/// docs for the contract.
pub trait Platform {
    /// This core's index.
    fn core(&self) -> usize;

    /// Enables interrupts and halts in one step (`sti; hlt`), then disables
    /// them again. Returns once an interrupt was taken (at once if one was
    /// latched), or, on a model machine only, [`Resume::MachineStopped`].
    fn sleep(&self) -> Resume;

    /// This core's interrupt counts. Only meaningful on this core.
    fn interrupt_counts(&self) -> InterruptCounts;

    /// Whether a wake IPI is latched for this core and not yet taken (the
    /// LAPIC's IRR bit). Only meaningful on this core, interrupts disabled.
    fn wake_pending(&self) -> bool;

    /// Sends the wake IPI to core `target` and counts it at the send (see
    /// [`wakes_sent_to`](Platform::wakes_sent_to)). Must not
    /// overtake this core's earlier stores (the inbox push).
    fn send_wake(&self, target: usize);

    /// Sends the watchdog's lost-wakeup probe to core `target`: its own
    /// vector, not counted as a wake IPI.
    fn send_probe(&self, target: usize);

    /// Wake IPIs sent to core `target` so far, counted by the senders after
    /// each ICR write (Relaxed; ordered, where the detector needs it, by the
    /// wakers' Release on their notify-finished count).
    fn wakes_sent_to(&self, target: usize) -> u64;

    /// Arms this core's one-shot timer `us` from now.
    fn arm_oneshot_us(&self, us: u64);

    /// A monotonic clock in ticks.
    fn now_ticks(&self) -> u64;

    /// Converts microseconds to clock ticks.
    fn us_to_ticks(&self, us: u64) -> u64;

    /// Converts clock ticks to microseconds.
    fn ticks_to_us(&self, ticks: u64) -> u64;

    /// One iteration's pause of a poll loop (nothing in the kernel: under
    /// QEMU's TCG `pause` takes the global lock; a yield to the model
    /// checker under loom).
    fn relax(&self) {}
}

/// How [`Platform::sleep`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// An interrupt was taken (or was latched): look at the counts.
    Interrupted,
    /// A model machine has stopped: every other actor has finished and no
    /// interrupt can come. The driver returns to its caller. Real hardware
    /// never returns this.
    MachineStopped,
}
