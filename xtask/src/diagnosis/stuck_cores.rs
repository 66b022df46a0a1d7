//! The host-side stuck-core detector's examination of a hung guest: stop
//! it, read every vCPU's `RIP`/`HLT` (`info registers -a`) and, through
//! the kernel's debug table, every core's protocol state and inbox length;
//! name each RIP from the kernel ELF; point at the cores that are halted
//! with work in their inbox (a lost wakeup the guest could not report), and
//! at stealable work queued with every core halted (a search wake lost).

use std::fmt::Write as _;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::diagnosis::debug_table::{
    CoreEntry, ProtocolState, TableRead, parse_examine_output, read_debug_table,
};
use crate::diagnosis::guest_registers::{
    VcpuState, WFI, parse_info_registers, vcpu_of_mpidr_affinity,
};
use crate::diagnosis::symbolize;
use crate::guest::run_output::DebugTableLocation;
use crate::runner::monitor::Monitor;
use crate::runner::platform::Arch;

/// Marker printed after a core that is halted with work in its inbox.
pub const HALTED_WITH_WORK: &str = "<- HALTED WITH WORK";

/// Marker printed after the stealable pool's line when chunks are queued
/// and every core is halted.
pub const STRANDED_STEALABLE: &str = "<- STRANDED STEALABLE WORK";

/// Marker printed after the stealable pool's line when chunks are queued
/// while the core chosen to search runs (HLT=0) with its inbox undrained
/// and another core halts idle.
pub const SEARCH_HELD_BY_BUSY_CORE: &str = "<- SEARCH HELD BY A BUSY CORE";

/// What the examination found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestExamination {
    /// `info registers -a` as QEMU printed it (or why it could not).
    pub registers_text: String,
    /// One line per core (or per vCPU, without the table).
    pub cores: Vec<CoreView>,
    /// Chunks queued in the stealable pool (`None`: no pool, or the table
    /// was not read).
    pub stealable_queued: Option<u64>,
    /// The core the stealable pool last chose to search (`None`: no pool,
    /// none chosen yet, or the table was not read).
    #[serde(default)]
    pub search_target: Option<u64>,
    /// Problems on the way: table unreadable, no addr2line, ...
    pub notes: Vec<String>,
}

/// One core as seen from the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreView {
    /// Kernel core index (`None` when the debug table was not read).
    pub core: Option<u32>,
    /// QEMU vCPU index (= the core's APIC id).
    pub vcpu: u32,
    /// `HLT=1`.
    pub halted: Option<bool>,
    /// Instruction pointer.
    pub rip: Option<u64>,
    /// Function at `rip`.
    pub function: Option<String>,
    /// Raw protocol state from the debug table.
    pub state: Option<ProtocolState>,
    /// Items waiting in its inbox.
    pub inbox_len: Option<u64>,
}

impl CoreView {
    /// Halted (HLT=1) while its inbox holds work: nobody will wake it.
    pub fn halted_with_work(&self) -> bool {
        self.halted == Some(true) && self.inbox_len.is_some_and(|len| len > 0)
    }

    /// Halted with an empty inbox: simply idle.
    pub fn idle_and_empty(&self) -> bool {
        self.halted == Some(true) && self.inbox_len == Some(0)
    }

    /// `core 5 (vCPU 5): HLT=1 RIP=0x... function state=halted inbox=1  <- HALTED WITH WORK`.
    pub fn line(&self) -> String {
        let mut line = match self.core {
            Some(core) => format!("core {core} (vCPU {}):", self.vcpu),
            None => format!("vCPU {}:", self.vcpu),
        };
        match self.halted {
            Some(halted) => {
                let _ = write!(line, " HLT={}", u8::from(halted));
            }
            None => line.push_str(" HLT=?"),
        }
        match self.rip {
            Some(rip) => {
                let _ = write!(line, " RIP={rip:#x}");
            }
            None => line.push_str(" RIP=?"),
        }
        if let Some(function) = &self.function {
            let _ = write!(line, " {function}");
        }
        if let Some(state) = self.state {
            let _ = write!(line, " state={state}");
        }
        if let Some(len) = self.inbox_len {
            let _ = write!(line, " inbox={len}");
        }
        if self.halted_with_work() {
            let _ = write!(line, "  {HALTED_WITH_WORK}");
        }
        line
    }
}

impl GuestExamination {
    /// Cores halted with work in their inbox.
    pub fn halted_with_work(&self) -> Vec<&CoreView> {
        self.cores
            .iter()
            .filter(|core| core.halted_with_work())
            .collect()
    }

    /// Chunks queued in the stealable pool while every core is halted
    /// (HLT=1): nobody is left to take them (`None` if not so).
    pub fn stranded_stealable(&self) -> Option<u64> {
        let queued = self.stealable_queued.filter(|&queued| queued > 0)?;
        let all_halted =
            !self.cores.is_empty() && self.cores.iter().all(|core| core.halted == Some(true));
        all_halted.then_some(queued)
    }

    /// Chunks queued while the core the pool chose to search is running
    /// (HLT=0) with items still in its inbox (its search wake, undrained:
    /// it has not looked) and some other core halts with an empty inbox
    /// (one that would take them): the search waits for that core's pinned
    /// work. `(core, queued)`, or `None` if not so.
    pub fn busy_search_holder(&self) -> Option<(u64, u64)> {
        let queued = self.stealable_queued.filter(|&queued| queued > 0)?;
        let target = self.search_target?;
        let holder = self
            .cores
            .iter()
            .find(|core| core.core.map(u64::from) == Some(target))?;
        let busy = holder.halted == Some(false) && holder.inbox_len.is_some_and(|len| len > 0);
        let someone_idle = self
            .cores
            .iter()
            .any(|core| core.core.map(u64::from) != Some(target) && core.idle_and_empty());
        (busy && someone_idle).then_some((target, queued))
    }

    /// The human report: a line per core that is not simply idle (halted
    /// with an empty inbox), a count of those that are, the notes, and a
    /// verdict line. (The JSON keeps every core.)
    pub fn report(&self) -> String {
        let mut out = String::new();
        let (idle, busy): (Vec<&CoreView>, Vec<&CoreView>) =
            self.cores.iter().partition(|core| core.idle_and_empty());
        for core in busy {
            let _ = writeln!(out, "  {}", core.line());
        }
        if !idle.is_empty() {
            let states: std::collections::BTreeSet<String> = idle
                .iter()
                .map(|core| {
                    core.state
                        .map_or("?".to_string(), |state| state.to_string())
                })
                .collect();
            let names: Vec<u32> = idle
                .iter()
                .map(|core| core.core.unwrap_or(core.vcpu))
                .collect();
            let _ = writeln!(
                out,
                "  {} other core(s) halted with an empty inbox (state {}): {} {}",
                idle.len(),
                states.into_iter().collect::<Vec<_>>().join("/"),
                if idle.iter().all(|core| core.core.is_some()) {
                    "cores"
                } else {
                    "vCPUs"
                },
                ranges(&names)
            );
        }
        if let Some(queued) = self.stealable_queued {
            let _ = write!(out, "  stealable pool: {queued} chunk(s) queued");
            if self.stranded_stealable().is_some() {
                let _ = write!(out, " with every core halted  {STRANDED_STEALABLE}");
            } else if let Some((holder, _)) = self.busy_search_holder() {
                let _ = write!(
                    out,
                    "; core {holder}, chosen to search, is running with its inbox undrained while other cores halt idle  {SEARCH_HELD_BY_BUSY_CORE}"
                );
            }
            out.push('\n');
        }
        for note in &self.notes {
            let _ = writeln!(out, "  note: {note}");
        }
        let stuck = self.halted_with_work();
        if let Some(queued) = self.stranded_stealable() {
            let _ = writeln!(
                out,
                "  {queued} stealable chunk(s) stranded: every core is halted, none will take them"
            );
        }
        if let Some((holder, queued)) = self.busy_search_holder() {
            let _ = writeln!(
                out,
                "  {queued} stealable chunk(s) wait for core {holder}: it holds the pool's search but is busy (not halted) and has not drained its search wake"
            );
        }
        if stuck.is_empty()
            && self.stranded_stealable().is_none()
            && self.busy_search_holder().is_none()
        {
            let _ = writeln!(
                out,
                "  no core is halted with work in its inbox (slow, or stuck elsewhere)"
            );
        } else if !stuck.is_empty() {
            let names: Vec<String> = stuck
                .iter()
                .map(|core| match core.core {
                    Some(index) => index.to_string(),
                    None => format!("vCPU {}", core.vcpu),
                })
                .collect();
            let _ = writeln!(
                out,
                "  {} core(s) halted with work in their inbox: {}",
                stuck.len(),
                names.join(", ")
            );
        }
        out
    }
}

/// `0-3, 5, 7-63`: the numbers, sorted, with every run of consecutive ones
/// written as one range (so 255 idle cores of 256 take one line).
pub fn ranges(numbers: &[u32]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut iter = sorted.into_iter().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end += 1;
            iter.next();
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
    }
    parts.join(", ")
}

/// Examines a guest through an open monitor. The guest is stopped first
/// (`stop`) so registers and memory are one consistent snapshot; it is
/// about to be killed anyway. `location` comes from the kernel's boot line;
/// `elf` is the kernel ELF that is inside the booted image.
pub fn examine(
    monitor: &mut Monitor,
    location: Option<DebugTableLocation>,
    elf: &Path,
    arch: Arch,
) -> GuestExamination {
    let mut examination = GuestExamination::default();
    if let Err(err) = monitor.command("stop") {
        examination
            .notes
            .push(format!("could not stop the guest: {err}"));
    }
    examination.registers_text = monitor
        .command("info registers -a")
        .unwrap_or_else(|err| format!("<could not read registers from the monitor: {err}>"));
    let mut vcpus = parse_info_registers(&examination.registers_text);
    if arch == Arch::Aarch64 {
        mark_vcpus_in_wfi(monitor, &mut vcpus, &mut examination.notes);
    }
    if vcpus.is_empty() {
        examination
            .notes
            .push("no CPU#n blocks in `info registers -a`".to_string());
    }

    let entries = match location {
        None => {
            examination.notes.push(
                "the kernel printed no debug table address: inbox lengths unknown".to_string(),
            );
            None
        }
        Some(location) => match read_debug_table(monitor, location.table_address) {
            Ok(Ok(TableRead {
                cores,
                stealable_queued,
                search_target,
            })) => {
                let cores = match arch {
                    Arch::X86_64 => cores,
                    // The table holds MPIDR affinities; the registers are
                    // by vCPU index.
                    Arch::Aarch64 => cores
                        .into_iter()
                        .map(|entry| CoreEntry {
                            apic_id: vcpu_of_mpidr_affinity(entry.apic_id),
                            ..entry
                        })
                        .collect(),
                };
                examination.search_target = match search_target {
                    None => None,
                    Some(Ok(target)) => target,
                    Some(Err(why)) => {
                        examination
                            .notes
                            .push(format!("search target unreadable: {why}"));
                        None
                    }
                };
                examination.stealable_queued = match stealable_queued {
                    None => None,
                    Some(Ok(queued)) => Some(queued),
                    Some(Err(why)) => {
                        examination
                            .notes
                            .push(format!("stealable queued count unreadable: {why}"));
                        None
                    }
                };
                Some(cores)
            }
            Ok(Err(why)) => {
                examination
                    .notes
                    .push(format!("debug table unreadable: {why}"));
                None
            }
            Err(err) => {
                examination
                    .notes
                    .push(format!("monitor failed reading the debug table: {err}"));
                None
            }
        },
    };
    examination.cores = join_views(&vcpus, entries.as_deref(), &mut examination.notes);

    if let Some(offset) = location.map(|location| location.image_offset) {
        let addresses: Vec<u64> = examination
            .cores
            .iter()
            .map(|core| core.rip.map_or(0, |rip| rip.wrapping_sub(offset)))
            .collect();
        match symbolize::function_names(elf, &addresses) {
            Ok(names) => {
                for (core, name) in examination.cores.iter_mut().zip(names) {
                    if core.rip.is_some() {
                        core.function = name;
                    }
                }
            }
            Err(why) => examination.notes.push(why),
        }
    }
    examination
}

/// AArch64: each vCPU whose PC follows a `wfi` is halted (see
/// [`WFI`]); read from guest memory through the monitor.
fn mark_vcpus_in_wfi(monitor: &mut Monitor, vcpus: &mut [VcpuState], notes: &mut Vec<String>) {
    for vcpu in vcpus.iter_mut() {
        let Some(pc) = vcpu.rip else {
            continue;
        };
        let command = format!("x /1wx {:#x}", pc.wrapping_sub(4));
        match monitor
            .command(&command)
            .map(|text| parse_examine_output(&text))
        {
            Ok(Ok(words)) if words.len() == 1 => vcpu.halted = Some(words[0] as u32 == WFI),
            Ok(Ok(words)) => notes.push(format!(
                "vCPU {}: `{command}` gave {} words",
                vcpu.vcpu,
                words.len()
            )),
            Ok(Err(why)) => notes.push(format!("vCPU {}: {why}", vcpu.vcpu)),
            Err(err) => notes.push(format!("vCPU {}: monitor failed: {err}", vcpu.vcpu)),
        }
    }
}

/// Pairs each debug-table core with the vCPU of its APIC id; without the
/// table, one view per vCPU.
pub fn join_views(
    vcpus: &[VcpuState],
    entries: Option<&[CoreEntry]>,
    notes: &mut Vec<String>,
) -> Vec<CoreView> {
    let Some(entries) = entries else {
        return vcpus
            .iter()
            .map(|vcpu| CoreView {
                core: None,
                vcpu: vcpu.vcpu,
                halted: vcpu.halted,
                rip: vcpu.rip,
                function: None,
                state: None,
                inbox_len: None,
            })
            .collect();
    };
    entries
        .iter()
        .map(|entry| {
            let vcpu = vcpus.iter().find(|vcpu| vcpu.vcpu == entry.apic_id);
            if vcpu.is_none() {
                notes.push(format!(
                    "core {} has APIC id {} but QEMU printed no CPU#{}",
                    entry.core, entry.apic_id, entry.apic_id
                ));
            }
            for (what, problem) in [
                ("state", entry.state.as_ref().err()),
                ("inbox length", entry.inbox_len.as_ref().err()),
            ] {
                if let Some(problem) = problem {
                    notes.push(format!("core {}: {what} unreadable: {problem}", entry.core));
                }
            }
            CoreView {
                core: Some(entry.core),
                vcpu: entry.apic_id,
                halted: vcpu.and_then(|vcpu| vcpu.halted),
                rip: vcpu.and_then(|vcpu| vcpu.rip),
                function: None,
                state: entry.state.as_ref().ok().copied(),
                inbox_len: entry.inbox_len.as_ref().ok().copied(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vcpu(index: u32, halted: bool) -> VcpuState {
        VcpuState {
            vcpu: index,
            rip: Some(0x100_0002_d282),
            halted: Some(halted),
        }
    }

    fn entry(core: u32, state: ProtocolState, inbox_len: u64) -> CoreEntry {
        CoreEntry {
            core,
            apic_id: core,
            state: Ok(state),
            inbox_len: Ok(inbox_len),
        }
    }

    #[test]
    fn a_halted_core_with_work_is_pointed_at() {
        let vcpus = [vcpu(0, false), vcpu(1, true), vcpu(2, true)];
        let entries = [
            entry(0, ProtocolState::Running, 0),
            entry(1, ProtocolState::Halted, 1),
            entry(2, ProtocolState::Halted, 0),
        ];
        let mut notes = Vec::new();
        let mut cores = join_views(&vcpus, Some(&entries), &mut notes);
        assert!(notes.is_empty());
        cores[1].function =
            Some("vigil_kernel::arch::x86_64::halt::enable_interrupts_and_halt".into());
        let examination = GuestExamination {
            cores,
            ..GuestExamination::default()
        };
        assert_eq!(
            examination.cores[1].line(),
            "core 1 (vCPU 1): HLT=1 RIP=0x1000002d282 \
             vigil_kernel::arch::x86_64::halt::enable_interrupts_and_halt \
             state=halted inbox=1  <- HALTED WITH WORK"
        );
        assert!(!examination.cores[2].line().contains(HALTED_WITH_WORK));
        let report = examination.report();
        assert!(report.contains("  core 0 (vCPU 0): HLT=0"), "{report}");
        assert!(
            report
                .contains("  1 other core(s) halted with an empty inbox (state halted): cores 2\n"),
            "{report}"
        );
        assert!(!report.contains("core 2 (vCPU 2)"), "{report}");
        assert!(
            report.contains("1 core(s) halted with work in their inbox: 1"),
            "{report}"
        );
    }

    #[test]
    fn a_busy_core_holding_the_search_is_named() {
        // Core 0 spins (the publisher), core 1 runs its pinned task with
        // its search wake undrained, core 2 halts idle, 8 chunks queued.
        let entries = [
            entry(0, ProtocolState::Running, 0),
            entry(1, ProtocolState::Running, 1),
            entry(2, ProtocolState::Halted, 0),
        ];
        let vcpus = [vcpu(0, false), vcpu(1, false), vcpu(2, true)];
        let mut notes = Vec::new();
        let mut examination = GuestExamination {
            cores: join_views(&vcpus, Some(&entries), &mut notes),
            stealable_queued: Some(8),
            search_target: Some(1),
            ..GuestExamination::default()
        };
        assert_eq!(examination.busy_search_holder(), Some((1, 8)));
        assert_eq!(examination.stranded_stealable(), None);
        let report = examination.report();
        assert!(report.contains(SEARCH_HELD_BY_BUSY_CORE), "{report}");
        assert!(
            report.contains("8 stealable chunk(s) wait for core 1"),
            "{report}"
        );
        // The same with the holder halted (a lost search wake: the
        // halted-with-work finding's), with its inbox drained (it looked),
        // or with nobody idle to take the chunks: not this finding.
        examination.cores[1].halted = Some(true);
        assert_eq!(examination.busy_search_holder(), None);
        examination.cores[1].halted = Some(false);
        examination.cores[1].inbox_len = Some(0);
        assert_eq!(examination.busy_search_holder(), None);
        examination.cores[1].inbox_len = Some(1);
        examination.cores[2].halted = Some(false);
        assert_eq!(examination.busy_search_holder(), None);
        examination.cores[2].halted = Some(true);
        examination.search_target = Some(2);
        assert_eq!(examination.busy_search_holder(), None);
    }

    #[test]
    fn stealable_work_queued_with_every_core_halted_is_stranded() {
        let entries = [
            entry(0, ProtocolState::Halted, 0),
            entry(1, ProtocolState::Halted, 0),
        ];
        let mut notes = Vec::new();
        let mut examination = GuestExamination {
            cores: join_views(&[vcpu(0, true), vcpu(1, true)], Some(&entries), &mut notes),
            stealable_queued: Some(3),
            ..GuestExamination::default()
        };
        assert_eq!(examination.stranded_stealable(), Some(3));
        let report = examination.report();
        assert!(
            report.contains(&format!(
                "stealable pool: 3 chunk(s) queued with every core halted  {STRANDED_STEALABLE}"
            )),
            "{report}"
        );
        assert!(report.contains("3 stealable chunk(s) stranded"), "{report}");
        assert!(!report.contains("no core is halted with work"), "{report}");

        // One core running: it will take them (slow, not stranded).
        examination.cores =
            join_views(&[vcpu(0, false), vcpu(1, true)], Some(&entries), &mut notes);
        assert_eq!(examination.stranded_stealable(), None);
        let report = examination.report();
        assert!(
            report.contains("stealable pool: 3 chunk(s) queued\n"),
            "{report}"
        );
        assert!(!report.contains(STRANDED_STEALABLE), "{report}");
        // Nothing queued: idle.
        examination.cores = join_views(&[vcpu(0, true), vcpu(1, true)], Some(&entries), &mut notes);
        examination.stealable_queued = Some(0);
        assert_eq!(examination.stranded_stealable(), None);
    }

    #[test]
    fn without_the_table_each_vcpu_is_listed_and_none_is_accused() {
        let mut notes = Vec::new();
        let cores = join_views(&[vcpu(0, true), vcpu(1, true)], None, &mut notes);
        assert_eq!(cores.len(), 2);
        assert_eq!(cores[0].line(), "vCPU 0: HLT=1 RIP=0x1000002d282");
        let report = GuestExamination {
            cores,
            ..GuestExamination::default()
        }
        .report();
        assert!(report.contains("no core is halted with work"), "{report}");
    }

    #[test]
    fn a_core_without_its_vcpu_is_noted() {
        let mut notes = Vec::new();
        let cores = join_views(
            &[vcpu(0, false)],
            Some(&[
                entry(0, ProtocolState::Running, 0),
                entry(1, ProtocolState::Halted, 2),
            ]),
            &mut notes,
        );
        assert_eq!(cores[1].halted, None);
        assert!(!cores[1].halted_with_work());
        assert!(notes[0].contains("no CPU#1"), "{notes:?}");
    }

    #[test]
    fn ranges_join_consecutive_numbers() {
        assert_eq!(ranges(&[]), "");
        assert_eq!(ranges(&[4]), "4");
        assert_eq!(ranges(&[3, 1, 2, 5, 7, 8]), "1-3, 5, 7-8");
        assert_eq!(ranges(&[0, 0, 1]), "0-1");
    }

    #[test]
    fn the_report_at_256_cores_stays_readable() {
        // 256 cores: 0 runs, 17 is halted with work, 200 is Halting (not
        // yet halted), the other 253 are idle: 3 core lines, one idle range
        // line, one verdict.
        let vcpus: Vec<VcpuState> = (0..256).map(|i| vcpu(i, i != 0 && i != 200)).collect();
        let entries: Vec<CoreEntry> = (0..256)
            .map(|i| match i {
                0 => entry(0, ProtocolState::Running, 0),
                17 => entry(17, ProtocolState::Halted, 2),
                200 => entry(200, ProtocolState::Halting, 0),
                _ => entry(i, ProtocolState::Halted, 0),
            })
            .collect();
        let mut notes = Vec::new();
        let examination = GuestExamination {
            cores: join_views(&vcpus, Some(&entries), &mut notes),
            ..GuestExamination::default()
        };
        assert!(notes.is_empty(), "{notes:?}");
        let report = examination.report();
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines.len(), 5, "{report}");
        assert!(lines[0].starts_with("  core 0 (vCPU 0): HLT=0"), "{report}");
        assert!(
            lines[1].starts_with("  core 17 (vCPU 17): HLT=1")
                && lines[1].ends_with(HALTED_WITH_WORK),
            "{report}"
        );
        assert!(
            lines[2].starts_with("  core 200 (vCPU 200): HLT=0"),
            "{report}"
        );
        assert_eq!(
            lines[3],
            "  253 other core(s) halted with an empty inbox (state halted): cores 1-16, 18-199, 201-255"
        );
        assert_eq!(lines[4], "  1 core(s) halted with work in their inbox: 17");
    }
}
