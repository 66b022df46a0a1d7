//! The table of cores: dense index 0..N-1 (index 0 is the bootstrap core)
//! to APIC id, and which cores have checked in.

use crate::arch::tsc;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

pub use crate::arch::interrupt_vectors::MAX_CORES;

struct Slot {
    apic_id: AtomicU32,
    online: AtomicBool,
    checkin_tsc: AtomicU64,
}

static SLOTS: [Slot; MAX_CORES] = [const {
    Slot {
        apic_id: AtomicU32::new(u32::MAX),
        online: AtomicBool::new(false),
        checkin_tsc: AtomicU64::new(0),
    }
}; MAX_CORES];
static COUNT: AtomicUsize = AtomicUsize::new(1);
static ONLINE: AtomicUsize = AtomicUsize::new(0);

/// Records the cores that will be started (index = position in `apic_ids`).
/// Runs on the bootstrap core before any AP starts; the APs' first read of
/// these values happens after the INIT/SIPI IPIs, which order it.
pub fn register(apic_ids: &[u32]) {
    assert!(apic_ids.len() <= MAX_CORES);
    for (slot, &id) in SLOTS.iter().zip(apic_ids) {
        slot.apic_id.store(id, Ordering::Relaxed);
    }
    COUNT.store(apic_ids.len(), Ordering::Release);
}

/// Number of cores the kernel runs on (registered, whether or not online).
pub fn count() -> usize {
    COUNT.load(Ordering::Acquire)
}

/// APIC id of core `index`.
pub fn apic_id(index: usize) -> u32 {
    SLOTS[index].apic_id.load(Ordering::Relaxed)
}

/// Index of the core with `apic_id`.
#[cfg(target_arch = "x86_64")]
pub fn index_of_apic(apic_id: u32) -> Option<usize> {
    (0..count()).find(|&i| SLOTS[i].apic_id.load(Ordering::Relaxed) == apic_id)
}

/// Marks core `index` online (once, from that core).
pub fn mark_online(index: usize) {
    SLOTS[index]
        .checkin_tsc
        .store(tsc::now(), Ordering::Relaxed);
    // Release: pairs with the Acquire in `online_count`/`is_online`, so a core
    // that sees this one online also sees its per-core setup.
    SLOTS[index].online.store(true, Ordering::Release);
    ONLINE.fetch_add(1, Ordering::Release);
}

/// Whether core `index` has checked in.
pub fn is_online(index: usize) -> bool {
    SLOTS[index].online.load(Ordering::Acquire)
}

/// How many cores have checked in.
pub fn online_count() -> usize {
    ONLINE.load(Ordering::Acquire)
}

/// TSC at which core `index` checked in.
pub fn checkin_tsc(index: usize) -> u64 {
    SLOTS[index].checkin_tsc.load(Ordering::Relaxed)
}
