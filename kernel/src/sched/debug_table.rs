//! A fixed-layout table the host reads from a hung guest's memory (through
//! QEMU's monitor) to say which cores are halted with work in their inbox.
//! Layout, as little-endian u64 words (documented in the README and parsed
//! by `xtask`): magic, version, core count, then `MAX_CORES` APIC ids,
//! `MAX_CORES` addresses of each core's protocol-state byte, `MAX_CORES`
//! addresses of each core's inbox item count, then the address of the
//! stealable pool's queued-chunk count (a `usize`; 0 with `pool=pinned`),
//! so that the host can also name stealable work stranded with every core
//! halted, then the address of the core the pool last chose to search
//! (plus one), so that it can name a busy core holding the search.

use super::core_sched;
use crate::smp::cores::{self, MAX_CORES};
use core::sync::atomic::{AtomicU64, Ordering};

use vigil_proto::debug_table as layout;
pub use vigil_proto::debug_table::{MAGIC, VERSION};

// The struct below is the layout `vigil-proto` defines, word for word.
const _: () = {
    assert!(core::mem::size_of::<DebugTable>() == layout::TABLE_WORDS * 8);
    assert!(core::mem::offset_of!(DebugTable, apic_id) == layout::APIC_IDS_AT * 8);
    assert!(core::mem::offset_of!(DebugTable, state_address) == layout::STATE_ADDRESSES_AT * 8);
    assert!(
        core::mem::offset_of!(DebugTable, inbox_len_address) == layout::INBOX_LEN_ADDRESSES_AT * 8
    );
    assert!(
        core::mem::offset_of!(DebugTable, stealable_queued_address)
            == layout::STEALABLE_QUEUED_AT * 8
    );
    assert!(
        core::mem::offset_of!(DebugTable, search_target_address) == layout::SEARCH_TARGET_AT * 8
    );
};

/// The table's layout.
#[derive(Debug)]
#[repr(C)]
pub struct DebugTable {
    magic: AtomicU64,
    version: AtomicU64,
    core_count: AtomicU64,
    apic_id: [AtomicU64; MAX_CORES],
    state_address: [AtomicU64; MAX_CORES],
    inbox_len_address: [AtomicU64; MAX_CORES],
    stealable_queued_address: AtomicU64,
    search_target_address: AtomicU64,
}

/// The table. Exported under a fixed symbol name so it can also be found in
/// the kernel ELF (`nm`), not only through the address printed at boot.
#[unsafe(no_mangle)]
pub static VIGIL_DEBUG: DebugTable = DebugTable {
    magic: AtomicU64::new(0),
    version: AtomicU64::new(0),
    core_count: AtomicU64::new(0),
    apic_id: [const { AtomicU64::new(0) }; MAX_CORES],
    state_address: [const { AtomicU64::new(0) }; MAX_CORES],
    inbox_len_address: [const { AtomicU64::new(0) }; MAX_CORES],
    stealable_queued_address: AtomicU64::new(0),
    search_target_address: AtomicU64::new(0),
};

/// Fills the table once the schedulers and the stealable pool exist;
/// returns its address.
pub fn publish() -> u64 {
    let table = &VIGIL_DEBUG;
    for (i, core) in core_sched::cores().iter().enumerate() {
        let (state, inbox_len) = core.wake.debug_addresses();
        table.apic_id[i].store(u64::from(cores::apic_id(i)), Ordering::Relaxed);
        table.state_address[i].store(state as u64, Ordering::Relaxed);
        table.inbox_len_address[i].store(inbox_len as u64, Ordering::Relaxed);
    }
    if super::stealable::enabled() {
        table.stealable_queued_address.store(
            super::stealable::pool().queued_address() as u64,
            Ordering::Relaxed,
        );
        table
            .search_target_address
            .store(super::stealable::search_target_address(), Ordering::Relaxed);
    }
    table
        .core_count
        .store(core_sched::cores().len() as u64, Ordering::Relaxed);
    table.version.store(VERSION, Ordering::Relaxed);
    // Release: a reader in the guest that sees the magic sees the rest (the
    // host reads a stopped guest, for which any order is fine).
    table.magic.store(MAGIC, Ordering::Release);
    core::ptr::from_ref(table) as u64
}
