//! Non-exception interrupt vectors. Empty until the local APIC is brought up;
//! kept as the one place that assigns vectors.

use x86_64::structures::idt::InterruptDescriptorTable;

/// Installs the handlers of every non-exception vector Vigil uses.
pub fn install(_idt: &mut InterruptDescriptorTable) {}
