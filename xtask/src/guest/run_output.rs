//! Parsing what the kernel prints in run mode: the Laplace/floor result
//! line, lost wakeups caught by the in-guest watchdog, the address of the
//! debug table, and the idle workload's markers. (`VIGIL-STATS` lives in
//! [`crate::guest::vigil_stats`], test-mode lines in [`crate::guest::test_output`].)

use serde::{Deserialize, Serialize};

use crate::guest::test_output::strip_core_prefix;

pub use vigil_proto::serial_line::{
    GridResult, GridWorkload, HELD_SEARCH_PREFIX, IDLE_END, IDLE_START,
    LOST_WAKEUP_PREFIX as LOST_WAKEUP, STRANDED_PREFIX, STUCK_ROUND_PREFIX,
};

/// Every result line in a serial log, in order.
pub fn grid_results(serial: &str) -> Vec<GridResult> {
    messages(serial).filter_map(GridResult::parse).collect()
}

/// What the in-guest watchdog reported.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LostWakeups {
    /// `LOST WAKEUP on core N: ...` lines.
    pub reports: Vec<String>,
    /// K from the closing `vigil: FAILED: K lost wakeup(s) detected by the
    /// watchdog`, if printed.
    pub total: Option<u64>,
}

impl LostWakeups {
    /// Collects the watchdog's lines from a serial log.
    pub fn parse(serial: &str) -> Self {
        let mut lost = Self::default();
        for message in messages(serial) {
            if message.starts_with(LOST_WAKEUP) {
                lost.reports.push(message.to_string());
            } else if let Some(count) = message
                .strip_prefix("vigil: FAILED: ")
                .and_then(|rest| rest.strip_suffix(" lost wakeup(s) detected by the watchdog"))
            {
                lost.total = count.trim().parse().ok();
            }
        }
        lost
    }

    /// Lost wakeups detected: the kernel's total if it got to print it,
    /// otherwise the reports seen so far.
    pub fn count(&self) -> u64 {
        self.total.unwrap_or(self.reports.len() as u64)
    }
}

/// Where the kernel's debug table is: `vigil: debug table at 0xADDR, kernel
/// image offset 0xOFF` (virtual addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DebugTableLocation {
    /// Virtual address of the table.
    pub table_address: u64,
    /// Where the kernel image was loaded: ELF address = RIP - this.
    pub image_offset: u64,
}

/// Parses the debug-table line (after the core prefix).
pub fn parse_debug_table_line(message: &str) -> Option<DebugTableLocation> {
    let rest = message.strip_prefix("vigil: debug table at ")?;
    let (address, offset) = rest.split_once(", kernel image offset ")?;
    Some(DebugTableLocation {
        table_address: parse_hex(address)?,
        image_offset: parse_hex(offset.trim_end())?,
    })
}

/// Parses `0x1f` (the `0x` is required).
pub fn parse_hex(text: &str) -> Option<u64> {
    u64::from_str_radix(text.trim().strip_prefix("0x")?, 16).ok()
}

/// The in-guest report of stealable work nobody runs, if the guest printed
/// one: the strand watch's (queued with every core halted) or the
/// held-search watch's (the search held by a core that does not look).
pub fn stranded_report(serial: &str) -> Option<&str> {
    messages(serial).find(|message| {
        message.starts_with(STRANDED_PREFIX) || message.starts_with(HELD_SEARCH_PREFIX)
    })
}

/// The guest's stuck-round dump (`STUCK ROUND: ...` and the indented lines
/// after it), one message per line, if it printed one.
pub fn stuck_round_dump(serial: &str) -> Option<Vec<&str>> {
    let mut lines = messages(serial).skip_while(|message| !message.starts_with(STUCK_ROUND_PREFIX));
    let first = lines.next()?;
    let mut dump = vec![first];
    dump.extend(lines.take_while(|message| message.starts_with("  ")));
    Some(dump)
}

/// The messages of every `[cN] ...` line.
fn messages(serial: &str) -> impl Iterator<Item = &str> {
    serial
        .lines()
        .filter_map(strip_core_prefix)
        .map(|(_core, message)| message.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strand_report_is_found() {
        let serial = "[c0] laplace: ...\n[c2] STRANDED STEALABLE WORK: 4 chunk(s) queued with every core halted\n[c2]   core 0: Halted\n";
        assert_eq!(
            stranded_report(serial),
            Some("STRANDED STEALABLE WORK: 4 chunk(s) queued with every core halted")
        );
        assert_eq!(stranded_report("[c0] fine\n"), None);
    }

    #[test]
    fn laplace_and_floor_lines_parse() {
        let line = "laplace: size=64 iterations=1000 workers=4 elapsed_us=3782019 residual=252862090 checksum=0x8619c70354398c3d";
        assert_eq!(
            GridResult::parse(line),
            Some(GridResult {
                workload: GridWorkload::Laplace,
                size: 64,
                iterations: 1000,
                workers: 4,
                elapsed_us: 3_782_019,
                residual: 252_862_090,
                checksum: 0x8619_c703_5439_8c3d,
            })
        );
        let floor = GridResult::parse(&line.replacen("laplace", "floor", 1)).unwrap();
        assert_eq!(floor.workload, GridWorkload::Floor);
        assert_eq!(
            grid_results(&format!("[c0] boot\n[c0] {line}\r\n")).len(),
            1
        );
    }

    #[test]
    fn malformed_result_lines_are_not_results() {
        assert_eq!(GridResult::parse("laplace: size=64 iterations=1000"), None);
        assert_eq!(
            GridResult::parse(
                "laplace: size=64 iterations=1000 workers=4 elapsed_us=1 residual=2 checksum=8619"
            ),
            None
        );
        assert_eq!(GridResult::parse("ping-pong: round_trips=5"), None);
        assert_eq!(
            GridResult::parse("laplace progress: iteration 250/1000 after 10004 ms"),
            None
        );
    }

    #[test]
    fn the_stuck_round_dump_is_cut_out_of_the_serial() {
        let serial = "[c0] booted\n[c2] STUCK ROUND: a fork-join round has not finished after 20587 ms; core 2 found it\n[c2]   8 core(s) halted\n[c2]   worker 7 (task 8): last finished round 9, job waiting in its slot, parker parked\n[c2] vigil: FAILED: stuck fork-join round\n";
        let dump = stuck_round_dump(serial).expect("a dump");
        assert_eq!(dump.len(), 3);
        assert!(dump[0].starts_with("STUCK ROUND: "));
        assert!(dump[2].contains("worker 7"));
        assert_eq!(stuck_round_dump("[c0] booted\n"), None);
    }

    #[test]
    fn lost_wakeups_are_counted() {
        let serial = "[c2] LOST WAKEUP on core 2: task 7 waited 200 ms in the inbox while the core was halted and no wake IPI came; notified by core 0, which saw Halting and no IPI; rescued by the watchdog. Core 2's idle history:\n\
            [c2]   history line\n\
            [c3] LOST WAKEUP on core 3: task 9 waited 201 ms ...\n\
            [c0] vigil: FAILED: 2 lost wakeup(s) detected by the watchdog\n";
        let lost = LostWakeups::parse(serial);
        assert_eq!(lost.reports.len(), 2);
        assert_eq!(lost.total, Some(2));
        assert_eq!(lost.count(), 2);
        assert_eq!(LostWakeups::parse("[c0] fine\n").count(), 0);
        let cut_off = LostWakeups::parse("[c1] LOST WAKEUP on core 1: ...\n");
        assert_eq!(cut_off.count(), 1);
    }

    #[test]
    fn debug_table_line_parses() {
        assert_eq!(
            parse_debug_table_line(
                "vigil: debug table at 0x1000009b9b8, kernel image offset 0x10000000000"
            ),
            Some(DebugTableLocation {
                table_address: 0x100_0009_b9b8,
                image_offset: 0x100_0000_0000,
            })
        );
        assert_eq!(parse_debug_table_line("vigil: debug table at 12"), None);
    }
}
