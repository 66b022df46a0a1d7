//! Interrupts between cores, as the kernel above the arch layer sees them:
//! a fixed IPI to one core by its hardware id, and whether an interrupt is
//! pending on this core. On x86_64 both are the local APIC's ([`super::lapic`]).

/// Sends the interrupt `vector` to the core whose hardware id (APIC id) is
/// `hw_id`. The ICR write is not reordered with this core's earlier stores
/// (see `lapic::send_icr`): a wake IPI never overtakes the push it announces.
pub fn send(hw_id: u32, vector: u8) {
    super::lapic::send_ipi(hw_id, vector);
}

/// Whether `vector` is pending (requested, not yet serviced) on this core.
pub fn is_pending(vector: u8) -> bool {
    super::lapic::is_pending(vector)
}

/// This core's hardware id (its local APIC id).
pub fn this_core_id() -> u32 {
    super::lapic::id()
}
