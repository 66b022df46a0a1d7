//! The debug table's layout: little-endian u64 words the host reads from a
//! hung guest's memory (through QEMU's monitor) to say which cores are
//! halted with work in their inbox. The kernel fills it
//! (`kernel/src/sched/debug_table.rs`, a `#[repr(C)]` struct checked
//! against these offsets), xtask reads it (`xtask/src/diagnosis/debug_table.rs`).
//!
//! | words | what |
//! |---|---|
//! | [`MAGIC_AT`] | [`MAGIC`], written last |
//! | [`VERSION_AT`] | [`VERSION`] |
//! | [`CORE_COUNT_AT`] | cores registered |
//! | [`APIC_IDS_AT`] .. +[`MAX_CORES`] | each core's APIC id |
//! | [`STATE_ADDRESSES_AT`] .. +[`MAX_CORES`] | address of each core's wake-state byte ([`State::as_raw`](crate::State::as_raw)) |
//! | [`INBOX_LEN_ADDRESSES_AT`] .. +[`MAX_CORES`] | address of each core's inbox item count (a u64) |
//! | [`STEALABLE_QUEUED_AT`] | address of the stealable pool's queued count (0: no pool) |
//! | [`SEARCH_TARGET_AT`] | address of the core the pool last chose to search, plus one (a u64; 0: none chosen yet; the word's address is 0 with no pool) |

/// "VIGILDBG".
pub const MAGIC: u64 = 0x5649_4749_4c44_4247;
/// Bumped whenever the layout changes (4: the search target's word; 3:
/// 256-entry arrays; 2 had 64).
pub const VERSION: u64 = 4;
/// Entries per array: the kernel's compiled maximum core count.
pub const MAX_CORES: usize = 256;

/// Word of the magic.
pub const MAGIC_AT: usize = 0;
/// Word of the version.
pub const VERSION_AT: usize = 1;
/// Word of the core count.
pub const CORE_COUNT_AT: usize = 2;
/// First word of the APIC ids.
pub const APIC_IDS_AT: usize = 3;
/// First word of the state-byte addresses.
pub const STATE_ADDRESSES_AT: usize = APIC_IDS_AT + MAX_CORES;
/// First word of the inbox-count addresses.
pub const INBOX_LEN_ADDRESSES_AT: usize = STATE_ADDRESSES_AT + MAX_CORES;
/// Word of the stealable pool's queued-count address.
pub const STEALABLE_QUEUED_AT: usize = INBOX_LEN_ADDRESSES_AT + MAX_CORES;
/// Word of the address of the pool's last chosen searcher (core + 1).
pub const SEARCH_TARGET_AT: usize = STEALABLE_QUEUED_AT + 1;
/// Words in the whole table.
pub const TABLE_WORDS: usize = SEARCH_TARGET_AT + 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_is_three_arrays_between_the_header_and_the_pool() {
        assert_eq!(TABLE_WORDS, 3 + 3 * MAX_CORES + 2);
        assert_eq!(TABLE_WORDS, 773);
        assert_eq!(STEALABLE_QUEUED_AT, TABLE_WORDS - 2);
        assert_eq!(SEARCH_TARGET_AT, TABLE_WORDS - 1);
    }
}
