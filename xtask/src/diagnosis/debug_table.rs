//! The kernel's debug table, read from a (stopped) guest through QEMU's
//! monitor: for each core, its APIC id, its raw wake-protocol state and how
//! many items wait in its inbox.
//!
//! Layout (little-endian u64 words at the address the kernel prints at
//! boot): `[0]` magic [`MAGIC`], `[1]` version [`VERSION`], `[2]` core
//! count, then [`MAX_CORES`] APIC ids, [`MAX_CORES`] addresses of each
//! core's state byte, [`MAX_CORES`] addresses of each core's inbox length
//! (a u64), then the address of the stealable pool's queued-chunk count (a
//! u64; 0 when the kernel runs no stealable pool), then (version 4) the
//! address of the core the pool last chose to search, plus one (a u64;
//! 0: none yet). `x` translates virtual addresses with the current vCPU's page
//! tables, which every core shares.

use std::fmt;
use std::io;

use serde::{Deserialize, Serialize};

use vigil_proto::State;

use crate::guest::run_output::parse_hex;
use crate::runner::monitor::Monitor;

use vigil_proto::debug_table::{
    APIC_IDS_AT, INBOX_LEN_ADDRESSES_AT, SEARCH_TARGET_AT, STATE_ADDRESSES_AT, STEALABLE_QUEUED_AT,
};
pub use vigil_proto::debug_table::{MAGIC, MAX_CORES, TABLE_WORDS, VERSION};

/// A core's raw wake-protocol state byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProtocolState {
    /// 0: running (or about to look at its inbox).
    Running,
    /// 1: announced it is about to halt.
    Halting,
    /// 2: halted (or about to execute `sti; hlt`).
    Halted,
    /// 3: a waker told it not to sleep.
    DontSleep,
    /// Any other byte.
    Unknown(u8),
}

impl ProtocolState {
    /// Decodes the raw byte (the wake crate's encoding, `State::from_raw`).
    pub fn from_byte(byte: u8) -> Self {
        match State::from_raw(byte) {
            Some(State::Running) => Self::Running,
            Some(State::Halting) => Self::Halting,
            Some(State::Halted) => Self::Halted,
            Some(State::DontSleep) => Self::DontSleep,
            None => Self::Unknown(byte),
        }
    }

    /// The wake crate's state, if the byte is one.
    pub fn state(self) -> Option<State> {
        match self {
            Self::Running => Some(State::Running),
            Self::Halting => Some(State::Halting),
            Self::Halted => Some(State::Halted),
            Self::DontSleep => Some(State::DontSleep),
            Self::Unknown(_) => None,
        }
    }
}

impl fmt::Display for ProtocolState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The wake crate's names, the ones the kernel prints.
        match self.state() {
            Some(state) => f.write_str(state.name()),
            None => match self {
                Self::Unknown(byte) => write!(f, "unknown({byte:#04x})"),
                _ => unreachable!("every other variant is a state"),
            },
        }
    }
}

/// One core's entry, as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoreEntry {
    /// Kernel core index.
    pub core: u32,
    /// Its APIC id (= QEMU vCPU index).
    pub apic_id: u32,
    /// Its protocol state, or why it could not be read.
    pub state: Result<ProtocolState, String>,
    /// Items in its inbox, or why it could not be read.
    pub inbox_len: Result<u64, String>,
}

/// The table's words, before the per-core reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableWords {
    /// Cores the kernel registered.
    pub core_count: usize,
    /// APIC id per core.
    pub apic_ids: Vec<u64>,
    /// Address of each core's state byte.
    pub state_addresses: Vec<u64>,
    /// Address of each core's inbox length.
    pub inbox_len_addresses: Vec<u64>,
    /// Address of the stealable pool's queued count (`None`: no pool).
    pub stealable_queued_address: Option<u64>,
    /// Address of the pool's last chosen searcher, plus one (`None`: no
    /// pool).
    pub search_target_address: Option<u64>,
}

/// What the table says about the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRead {
    /// One entry per core.
    pub cores: Vec<CoreEntry>,
    /// Chunks queued in the stealable pool (`None`: the kernel runs no
    /// stealable pool), or why it could not be read.
    pub stealable_queued: Option<Result<u64, String>>,
    /// The core the pool last chose to search (`Ok(None)`: none yet;
    /// `None`: no pool), or why it could not be read.
    pub search_target: Option<Result<Option<u64>, String>>,
}

impl TableWords {
    /// Checks magic, version and core count and splits the arrays.
    pub fn from_words(words: &[u64]) -> Result<Self, String> {
        if words.len() < TABLE_WORDS {
            return Err(format!(
                "read {} words of the debug table, expected {TABLE_WORDS}",
                words.len()
            ));
        }
        if words[0] != MAGIC {
            return Err(format!(
                "bad debug table magic {:#x} (expected {MAGIC:#x})",
                words[0]
            ));
        }
        if words[1] != VERSION {
            return Err(format!(
                "debug table version {} (this xtask reads version {VERSION})",
                words[1]
            ));
        }
        let core_count = usize::try_from(words[2]).unwrap_or(usize::MAX);
        if core_count == 0 || core_count > MAX_CORES {
            return Err(format!("debug table claims {} cores", words[2]));
        }
        let array = |at: usize| words[at..][..core_count].to_vec();
        Ok(Self {
            core_count,
            apic_ids: array(APIC_IDS_AT),
            state_addresses: array(STATE_ADDRESSES_AT),
            inbox_len_addresses: array(INBOX_LEN_ADDRESSES_AT),
            stealable_queued_address: Some(words[STEALABLE_QUEUED_AT])
                .filter(|&address| address != 0),
            search_target_address: Some(words[SEARCH_TARGET_AT]).filter(|&address| address != 0),
        })
    }
}

/// Parses the output of `x /Ngx ADDR` (`ADDR: 0xWORD 0xWORD` lines) or
/// `x /Nbx ADDR` into the values, in order. A `Cannot access memory` line
/// is an error.
pub fn parse_examine_output(text: &str) -> Result<Vec<u64>, String> {
    let mut values = Vec::new();
    for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
        let Some((_address, rest)) = line.split_once(": ") else {
            return Err(format!("unexpected monitor output: {line}"));
        };
        for word in rest.split_whitespace() {
            values
                .push(parse_hex(word).ok_or_else(|| format!("unexpected monitor output: {line}"))?);
        }
    }
    Ok(values)
}

/// Reads the table at `address`, each core's state and inbox length and
/// the stealable pool's queued count. Errors are the monitor's (I/O); a
/// table that does not check out is an `Ok(Err(why))`.
pub fn read_debug_table(
    monitor: &mut Monitor,
    address: u64,
) -> io::Result<Result<TableRead, String>> {
    let words = examine(monitor, &format!("x /{TABLE_WORDS}gx {address:#x}"))?;
    let table = match words.and_then(|words| TableWords::from_words(&words)) {
        Ok(table) => table,
        Err(why) => return Ok(Err(why)),
    };
    let mut cores = Vec::with_capacity(table.core_count);
    for core in 0..table.core_count {
        let state = examine(
            monitor,
            &format!("x /1bx {:#x}", table.state_addresses[core]),
        )?
        .and_then(|bytes| single(&bytes))
        .map(|byte| ProtocolState::from_byte(byte as u8));
        let inbox_len = examine(
            monitor,
            &format!("x /1gx {:#x}", table.inbox_len_addresses[core]),
        )?
        .and_then(|words| single(&words));
        cores.push(CoreEntry {
            core: core as u32,
            apic_id: table.apic_ids[core] as u32,
            state,
            inbox_len,
        });
    }
    let stealable_queued = match table.stealable_queued_address {
        None => None,
        Some(address) => Some(
            examine(monitor, &format!("x /1gx {address:#x}"))?.and_then(|words| single(&words)),
        ),
    };
    let search_target = match table.search_target_address {
        None => None,
        Some(address) => Some(
            examine(monitor, &format!("x /1gx {address:#x}"))?
                .and_then(|words| single(&words))
                .map(|plus_one| plus_one.checked_sub(1)),
        ),
    };
    Ok(Ok(TableRead {
        cores,
        stealable_queued,
        search_target,
    }))
}

fn examine(monitor: &mut Monitor, command: &str) -> io::Result<Result<Vec<u64>, String>> {
    let output = monitor.command(command)?;
    Ok(parse_examine_output(&output).map_err(|why| format!("`{command}`: {why}")))
}

fn single(values: &[u64]) -> Result<u64, String> {
    match values {
        [value] => Ok(*value),
        _ => Err(format!("expected one value, got {}", values.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examine_output_from_qemu_parses() {
        // As QEMU 7.2 printed the start of a real table.
        let text = "000001000009b9b8: 0x564947494c444247 0x0000000000000001\n\
                    000001000009b9c8: 0x0000000000000002 0x0000000000000000\n";
        assert_eq!(parse_examine_output(text).unwrap(), vec![MAGIC, 1, 2, 0]);
        assert_eq!(
            parse_examine_output("000001000009b9b8: 0x47\n").unwrap(),
            vec![0x47]
        );
        assert!(
            parse_examine_output("0000000000000010: Cannot access memory\n")
                .unwrap_err()
                .contains("Cannot access memory")
        );
    }

    fn table(core_count: u64) -> Vec<u64> {
        let mut words = vec![0u64; TABLE_WORDS];
        words[0] = MAGIC;
        words[1] = VERSION;
        words[2] = core_count;
        for core in 0..core_count as usize {
            words[3 + core] = core as u64 * 2;
            words[3 + MAX_CORES + core] = 0x1000 + core as u64;
            words[3 + 2 * MAX_CORES + core] = 0x2000 + 8 * core as u64;
        }
        words[3 + 3 * MAX_CORES] = 0x3000;
        words[4 + 3 * MAX_CORES] = 0x4000;
        words
    }

    #[test]
    fn table_words_split_into_arrays() {
        let table = TableWords::from_words(&table(3)).unwrap();
        assert_eq!(table.core_count, 3);
        assert_eq!(table.apic_ids, vec![0, 2, 4]);
        assert_eq!(table.state_addresses, vec![0x1000, 0x1001, 0x1002]);
        assert_eq!(table.inbox_len_addresses, vec![0x2000, 0x2008, 0x2010]);
        assert_eq!(table.stealable_queued_address, Some(0x3000));
        assert_eq!(table.search_target_address, Some(0x4000));
        let mut words = self::table(3);
        words[3 + 3 * MAX_CORES] = 0;
        assert_eq!(
            TableWords::from_words(&words)
                .unwrap()
                .stealable_queued_address,
            None
        );
    }

    #[test]
    fn a_full_256_core_table_splits() {
        let table = TableWords::from_words(&table(256)).unwrap();
        assert_eq!(table.core_count, 256);
        assert_eq!(TABLE_WORDS, 773);
        assert_eq!(table.apic_ids[255], 510);
        assert_eq!(table.state_addresses[255], 0x1000 + 255);
        assert_eq!(table.inbox_len_addresses[255], 0x2000 + 8 * 255);
        assert_eq!(table.stealable_queued_address, Some(0x3000));
    }

    #[test]
    fn bad_tables_are_refused() {
        let mut words = table(3);
        words[0] = 0;
        assert!(
            TableWords::from_words(&words)
                .unwrap_err()
                .contains("magic")
        );
        let mut words = table(3);
        words[1] = 1;
        assert!(
            TableWords::from_words(&words)
                .unwrap_err()
                .contains("version")
        );
        let mut words = table(3);
        words[2] = 257;
        assert!(
            TableWords::from_words(&words)
                .unwrap_err()
                .contains("257 cores")
        );
        assert!(TableWords::from_words(&table(0)).is_err());
        assert!(TableWords::from_words(&[MAGIC, VERSION]).is_err());
    }

    #[test]
    fn states_decode() {
        assert_eq!(ProtocolState::from_byte(2), ProtocolState::Halted);
        assert_eq!(ProtocolState::from_byte(3).to_string(), "dont-sleep");
        assert_eq!(ProtocolState::from_byte(9).to_string(), "unknown(0x09)");
    }
}
