//! Where an application processor enters Rust from the trampoline.

/// Called by the trampoline on the AP's own stack with its APIC id.
pub extern "C" fn ap_entry(apic_id: u64) -> ! {
    crate::smp::bringup::ap_main(apic_id as u32)
}
