//! `cargo xtask replay FILE.json --explain`: the history of a lost
//! wakeup's victim core, from Bochs's own instrumentation, with no change
//! to the guest. The recorded boot runs three more times:
//!
//! 1. stopped where the kernel has filled its debug table ([`Reach`]):
//!    the debugger reads the table's magic, the victim's wake-state byte
//!    and inbox-count addresses and every core's APIC id from it;
//! 2. stopped at the same point: the debugger translates those two
//!    addresses to physical ones (Bochs's watchpoints are physical);
//! 3. stopped at the same point, then with read and write watchpoints on
//!    both words: at each stop the debugger prints the CPU, the
//!    instruction after the access and the emulated time, and reads both
//!    words (an RMW is one stop, reported as its write; the words read
//!    belong to a stop with one access).
//!
//! Whether the stops change the execution depends on the turn the boot
//! was recorded with (see [`crate::runner::bochs`]). In 1-instruction
//! turns (`s all`, the default) a stop comes between two rounds of turns
//! and changes nothing: every pass must print the recording byte for byte,
//! or the explanation fails. Bochs checks instruction breakpoints only
//! after its turn count, so in 1-instruction turns they never fire: the
//! passes stop every so many rounds instead, and pass 1's first stop that
//! finds the table's magic is the point. In 5-instruction turns
//! (`continue`, older recordings) a breakpoint at [`BREAK_AFTER_TABLE`]
//! reaches the point (one stop, before the APs start: byte for byte), but
//! each watch stop cuts the stopped CPU's turn short, so pass 3 is a
//! neighbouring execution: its output must agree with the recording on
//! the lines that say what failed, time figures masked, and the report
//! says so.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use vigil_proto::debug_table::{
    APIC_IDS_AT, INBOX_LEN_ADDRESSES_AT, MAGIC as DEBUG_TABLE_MAGIC, MAGIC_AT, STATE_ADDRESSES_AT,
};

use crate::diagnosis::debug_table::ProtocolState;
use crate::diagnosis::symbolize;
use crate::error::{Result, XtaskError};
use crate::guest::run_output::{LOST_WAKEUP, parse_debug_table_line, parse_hex};
use crate::guest::serial_diff::FirstDifference;
use crate::guest::test_output::strip_core_prefix;
use crate::runner::bochs::STEP_TURN;
use crate::runner::kernel_build::KernelArtifacts;
use crate::stress::replay::{Recording, Replayed, replay_with_debugger};

/// The kernel function the explanation's first two passes break at: it
/// starts the APs, after the debug table is filled and before any AP runs.
pub const BREAK_AFTER_TABLE: &str = "vigil_kernel::smp::bringup::start_all_aps";

/// Continues the watch pass feeds the debugger (each followed by two
/// memory reads). A boot with more stops than this is cut (reported).
pub const MAX_WATCH_STOPS: usize = 400_000;

/// The passes run without the recording's stall limit and with this many
/// times the recorded boot's wall time (at least 10 minutes) as their
/// timeout: a debugger stop at every access is much slower than the
/// recorded boot, and a cut pass would look like another execution.
pub const EXPLAIN_TIMEOUT_FACTOR: u64 = 20;

/// Pass 1's stops per emulated second with 1-instruction turns (one
/// every 2 ms: the first after the table is filled comes before the APs
/// are through their INIT-SIPI sequence, 10 ms).
pub const TABLE_STOPS_PER_EMULATED_S: u64 = 500;

/// Pass 1's stops at most (20 emulated seconds).
pub const TABLE_STOPS: usize = 10_000;

/// The emulated time (`Next at t=`) the `index`-th stop printed.
fn stop_tick(log: &str, index: usize) -> Option<u64> {
    log.lines()
        .filter_map(|line| line.trim().strip_prefix("Next at t="))
        .nth(index)
        .and_then(|t| t.trim().parse().ok())
}

/// Events shown before the lost halt.
pub const EVENTS_BEFORE_THE_HALT: usize = 12;

/// What the recorded output says about the boot to explain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Victim {
    /// The core the first lost-wakeup report names.
    pub core: usize,
    /// The debug table's address (the kernel's boot line).
    pub table_address: u64,
    /// Where the kernel image was loaded (ELF address = RIP - this).
    pub image_offset: u64,
}

/// The victim of the first lost-wakeup report and the debug table's
/// address, from a recorded serial output. A boot without a lost-wakeup
/// report or a debug-table line is a usage error: there is nothing to
/// explain, or no way to find the words.
pub fn victim_of(serial: &str) -> Result<Victim> {
    let messages = || serial.lines().filter_map(strip_core_prefix).map(|(_, m)| m);
    let core = messages()
        .find_map(|message| {
            let rest = message.strip_prefix(LOST_WAKEUP)?;
            rest.split(':').next()?.trim().parse().ok()
        })
        .ok_or_else(|| {
            XtaskError::usage(
                "--explain explains a lost wakeup, and the recorded guest reported none (no `LOST WAKEUP on core N` line)",
            )
        })?;
    let table = messages()
        .find_map(|message| parse_debug_table_line(message.trim_end()))
        .ok_or_else(|| {
            XtaskError::usage("the recorded output has no `vigil: debug table at` line")
        })?;
    Ok(Victim {
        core,
        table_address: table.table_address,
        image_offset: table.image_offset,
    })
}

/// Which of the victim's words an access touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    /// The wake-state byte.
    State,
    /// The inbox's item count.
    InboxLen,
}

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A load.
    Read,
    /// A store, or a read-modify-write (Bochs reports one stop per
    /// instruction, the write when it writes).
    Write,
}

/// One stop of the watch pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchEvent {
    /// Bochs's emulated time at the stop.
    pub tick: u64,
    /// The Bochs CPU that made the access.
    pub cpu: u32,
    /// Read or write.
    pub access: Access,
    /// Which word.
    pub word: Word,
    /// The linear address of the instruction after the access.
    pub next_rip: u64,
    /// The state byte read at the stop, if this was the stop's only
    /// access (with two CPUs caught at one stop, the values read after it
    /// are not either access's own).
    pub state_after: Option<u8>,
    /// The inbox count read at the stop, likewise.
    pub inbox_after: Option<u64>,
}

/// How the passes reach a point where the debug table is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// A breakpoint at [`BREAK_AFTER_TABLE`] (this address), then
    /// `continue`: for boots run in 5-instruction turns. (Bochs checks
    /// breakpoints after its turn check, so a breakpoint never fires in
    /// 1-instruction turns.)
    Breakpoint(u64),
    /// Stops every `stride` rounds of 1-instruction turns (`s all
    /// stride`), each between two rounds, so none moves the execution:
    /// the first stop that finds the table's magic is the point, `stops`
    /// at most.
    Rounds {
        /// Rounds of turns between two stops.
        stride: u64,
        /// Stops tried for the table.
        stops: usize,
    },
}

impl Reach {
    /// The commands that reach the point the `index`-th stop of pass 1
    /// found the table at (0 for a breakpoint), and stop there.
    pub fn to_stop(&self, index: usize) -> String {
        match self {
            Reach::Breakpoint(address) => format!("lb {address:#x}\ncontinue\n"),
            Reach::Rounds { stride, .. } => format!("s all {stride}\n").repeat(index + 1),
        }
    }

    /// How many stops pass 1 makes.
    fn stops(&self) -> usize {
        match self {
            Reach::Breakpoint(_) => 1,
            Reach::Rounds { stops, .. } => *stops,
        }
    }
}

/// Pass 1's reads at one stop: the table's magic, the APIC ids of `cores`
/// cores and the victim's two word addresses.
fn table_reads(victim: &Victim, cores: u32) -> [String; 4] {
    let word = |index: usize| victim.table_address + 8 * index as u64;
    [
        format!("x /1gx {:#x}", word(MAGIC_AT)),
        format!("x /{cores}gx {:#x}", word(APIC_IDS_AT)),
        format!("x /1gx {:#x}", word(STATE_ADDRESSES_AT + victim.core)),
        format!("x /1gx {:#x}", word(INBOX_LEN_ADDRESSES_AT + victim.core)),
    ]
}

/// Pass 1: at each stop ([`Reach`]), read the table's magic, the APIC ids
/// of `cores` cores and the victim's two word addresses; then run to the
/// end with `resume`
/// ([`crate::runner::bochs::BochsSettings::resume_command`]).
pub fn address_commands(reach: &Reach, victim: &Victim, cores: u32, resume: &str) -> String {
    let reads = table_reads(victim, cores).join("\n");
    let mut out = String::new();
    match reach {
        Reach::Breakpoint(_) => {
            let _ = writeln!(out, "{}{reads}", reach.to_stop(0));
        }
        Reach::Rounds { stride, stops } => {
            for _ in 0..*stops {
                let _ = writeln!(out, "s all {stride}\n{reads}");
            }
        }
    }
    out + &run_to_end(resume)
}

/// What pass 1 read at the first stop that found the table filled: its
/// index, the APIC ids, the victim's state-byte and inbox-count
/// addresses. `None` if no stop found the magic.
pub fn table_at_first_filled_stop(
    log: &str,
    victim: &Victim,
    cores: u32,
) -> Option<(usize, Vec<u64>, u64, u64)> {
    let [magic, apic, state, inbox] = table_reads(victim, cores);
    let index = examined_values(log, &magic)
        .iter()
        .position(|values| values.first() == Some(&DEBUG_TABLE_MAGIC))?;
    let at = |command: &str| examined_values(log, command).into_iter().nth(index);
    let apic_ids = at(&apic).filter(|ids| ids.len() == cores as usize)?;
    let state = at(&state)?.first().copied()?;
    let inbox = at(&inbox)?.first().copied()?;
    Some((index, apic_ids, state, inbox))
}

/// The commands that run the machine to its end after the last stop.
fn run_to_end(resume: &str) -> String {
    format!("{resume}\n").repeat(RUN_TO_END_COMMANDS)
}

/// Resume commands after a pass's last stop (each `s all` runs at most
/// 2^32 rounds of turns; the end is the guest's power-off).
const RUN_TO_END_COMMANDS: usize = 64;

/// Pass 2: the point pass 1 found, then the two words' translations.
pub fn translation_commands(reach_it: &str, state: u64, inbox_len: u64, resume: &str) -> String {
    format!(
        "{reach_it}page {state:#x}\npage {inbox_len:#x}\n{}",
        run_to_end(resume)
    )
}

/// What the watch pass stops at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    /// Every read and write: the inbox check and the waker's state read
    /// show, at the price of a stop at every poll of the inbox.
    ReadsAndWrites,
    /// Writes only: a tenth or so of the stops, so the execution moves
    /// less (the fallback when the first watched boot did not fail as
    /// recorded).
    Writes,
}

/// Pass 3: watchpoints on both physical words from the breakpoint on,
/// then stop after stop: resume, read both words.
pub fn watch_commands(
    reach_it: &str,
    state: u64,
    inbox_len: u64,
    watched: Watched,
    resume: &str,
) -> String {
    let mut out = format!("{reach_it}watch w {state:#x} 1\nwatch w {inbox_len:#x} 8\n");
    if watched == Watched::ReadsAndWrites {
        let _ = write!(out, "watch r {state:#x} 1\nwatch r {inbox_len:#x} 8\n");
    }
    for _ in 0..MAX_WATCH_STOPS {
        let _ = write!(
            out,
            "{resume}\nxp /1bx {state:#x}\nxp /1gx {inbox_len:#x}\n"
        );
    }
    out
}

/// The values a debugger `x`/`xp` command printed, in order, for each
/// occurrence of `command` in `log`.
pub fn examined_values(log: &str, command: &str) -> Vec<Vec<u64>> {
    let mut found = Vec::new();
    let mut lines = log.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() != command {
            continue;
        }
        let mut values = Vec::new();
        while let Some(next) = lines.peek() {
            let next = next.trim();
            if next == "[bochs]:" {
                lines.next();
                continue;
            }
            let Some((_, words)) = next.split_once(">:").filter(|_| next.starts_with("0x")) else {
                break;
            };
            values.extend(words.split_whitespace().filter_map(parse_hex));
            lines.next();
        }
        found.push(values);
    }
    found
}

/// The physical address each `page` command's output gives, in order
/// (`linear page 0xL maps to physical page 0xP`), plus the page offset of
/// the linear address asked for.
pub fn translations(log: &str) -> Vec<u64> {
    let mut asked = None;
    let mut out = Vec::new();
    for line in log.lines() {
        let line = line.trim();
        if let Some(address) = line.strip_prefix("page ") {
            asked = parse_hex(address);
        } else if let Some(rest) = line.strip_prefix("linear page ")
            && let Some((_, physical)) = rest.split_once(" maps to physical page ")
            && let (Some(physical), Some(linear)) = (parse_hex(physical), asked.take())
        {
            out.push(physical + (linear & 0xfff));
        }
    }
    out
}

/// The watch pass's stops, from its debugger log: each `Caught ... watch
/// point` with its CPU's next instruction, the stop's time and the two
/// words read after it. Returns the events and how many resume commands
/// (`resume`, as the log echoes it) ran.
pub fn watch_events(
    log: &str,
    state: u64,
    inbox_len: u64,
    resume: &str,
) -> (Vec<WatchEvent>, usize) {
    let mut events: Vec<WatchEvent> = Vec::new();
    let mut block_start = 0;
    let mut continues = 0;
    let mut tick = 0;
    let mut pending: Vec<(u32, Access, Word)> = Vec::new();
    let mut reading: Option<Word> = None;
    for line in log.lines() {
        let line = line.trim();
        if line == resume {
            continues += 1;
            block_start = events.len();
            pending.clear();
            continue;
        }
        if let Some(t) = line.strip_prefix("Next at t=") {
            tick = t.trim().parse().unwrap_or(tick);
            for event in &mut events[block_start..] {
                event.tick = tick;
            }
            continue;
        }
        if let Some(address) = line.strip_prefix("xp /1bx ") {
            reading = (parse_hex(address) == Some(state)).then_some(Word::State);
            continue;
        }
        if let Some(address) = line.strip_prefix("xp /1gx ") {
            reading = (parse_hex(address) == Some(inbox_len)).then_some(Word::InboxLen);
            continue;
        }
        if let Some(word) = reading
            && line.starts_with("0x")
            && let Some((_, value)) = line.split_once(">:")
        {
            let value = parse_hex(value).filter(|_| events.len() - block_start == 1);
            for event in &mut events[block_start..] {
                match word {
                    Word::State => event.state_after = value.and_then(|v| u8::try_from(v).ok()),
                    Word::InboxLen => event.inbox_after = value,
                }
            }
            reading = None;
            continue;
        }
        let Some((cpu, rest)) = line
            .strip_prefix('(')
            .and_then(|rest| rest.split_once(')'))
            .and_then(|(cpu, rest)| Some((cpu.parse::<u32>().ok()?, rest.trim())))
        else {
            continue;
        };
        if let Some(caught) = rest.strip_prefix("Caught ") {
            let access = if caught.starts_with("read") {
                Access::Read
            } else {
                Access::Write
            };
            let address = caught
                .rsplit(' ')
                .next()
                .and_then(parse_hex)
                .unwrap_or_default();
            // Bochs names the access's start: an access that covers a
            // word from below starts up to 7 bytes before it.
            let word = if address == state {
                Word::State
            } else if (inbox_len..inbox_len + 8).contains(&address) {
                Word::InboxLen
            } else if (state.saturating_sub(7)..state).contains(&address) {
                Word::State
            } else if (inbox_len.saturating_sub(7)..inbox_len).contains(&address) {
                Word::InboxLen
            } else {
                continue;
            };
            pending.push((cpu, access, word));
        } else if rest.starts_with("[0x")
            && let Some(index) = pending.iter().position(|(c, _, _)| *c == cpu)
            && let Some(next_rip) = rest
                .split_once(':')
                .and_then(|(_, after)| after.split_whitespace().next())
                .and_then(|rip| u64::from_str_radix(rip, 16).ok())
        {
            let (cpu, access, word) = pending.remove(index);
            events.push(WatchEvent {
                tick,
                cpu,
                access,
                word,
                next_rip,
                state_after: None,
                inbox_after: None,
            });
        }
    }
    (events, continues)
}

/// The lost halt: the first write of `Halted` to the victim's state, by
/// the victim, while its inbox holds items, that nobody else notices: no
/// other CPU reads `halted` from the state (a waker that would send the
/// IPI) or writes it (a waker's claim) before the victim's next write of
/// its state. A halt that a waker then finds is the protocol working.
pub fn lost_halt(events: &[WatchEvent], victim_cpu: u32) -> Option<usize> {
    (0..events.len()).find(|&index| {
        let event = &events[index];
        let halts_with_work = event.cpu == victim_cpu
            && event.word == Word::State
            && event.access == Access::Write
            && event.state_after.map(ProtocolState::from_byte) == Some(ProtocolState::Halted)
            && event.inbox_after.is_some_and(|len| len > 0);
        halts_with_work
            && !events[index + 1..]
                .iter()
                .take_while(|later| {
                    !(later.cpu == victim_cpu
                        && later.word == Word::State
                        && later.access == Access::Write)
                })
                .any(|later| {
                    later.cpu != victim_cpu
                        && later.word == Word::State
                        && (later.access == Access::Write
                            || later.state_after.map(ProtocolState::from_byte)
                                == Some(ProtocolState::Halted))
                })
    })
}

/// One history line: time, core, access, whose word, both words after
/// it, where the access was written.
pub fn describe(
    event: &WatchEvent,
    victim: usize,
    core_of_cpu: &dyn Fn(u32) -> String,
    function: &str,
) -> String {
    let state = event.state_after.map_or_else(
        || "?".to_string(),
        |byte| ProtocolState::from_byte(byte).to_string(),
    );
    let inbox = event
        .inbox_after
        .map_or_else(|| "?".to_string(), |len| len.to_string());
    let word = match event.word {
        Word::State => format!("core {victim}'s state"),
        Word::InboxLen => format!("core {victim}'s inbox count"),
    };
    format!(
        "t={:>11}  core {:>2} {:<6} {word:<21} (now: state {state}, inbox {inbox})  in {function}",
        event.tick,
        core_of_cpu(event.cpu),
        match event.access {
            Access::Read => "reads",
            Access::Write => "writes",
        },
    )
}

/// `text` with every time figure (a number right before ` us`, or after
/// `_us=`) replaced by `#`.
pub fn without_time_figures(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        for (i, word) in words.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            let before_us = words.get(i + 1).is_some_and(|next| next.starts_with("us"))
                && word.chars().all(|c| c.is_ascii_digit())
                && !word.is_empty();
            if before_us {
                out.push('#');
            } else if let Some((key, _)) = word.split_once("_us=") {
                let _ = write!(out, "{key}_us=#");
            } else {
                out.push_str(word);
            }
        }
        out.push('\n');
    }
    out
}

/// The lines that say what failed and how: each lost-wakeup report with
/// the items and counts under it, and the result line, time figures
/// masked. The watch pass must print these as the recording does.
pub fn failure_lines(serial: &str) -> Vec<String> {
    serial
        .lines()
        .filter(|line| {
            strip_core_prefix(line).is_some_and(|(_, message)| {
                message.starts_with(LOST_WAKEUP)
                    || message.contains("notified by core")
                    || message.trim_start().starts_with("counts:")
                    || message.starts_with("laplace:")
                    || message.starts_with("vigil: FAILED")
            })
        })
        .map(|line| without_time_figures(line).trim_end().to_string())
        .collect()
}

/// Where the full history goes: `target/explain/<file stem>-boot-<order>.txt`.
pub fn history_path(recording: &Path, order: u64) -> PathBuf {
    let stem = recording.file_stem().map_or_else(
        || "recording".into(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    PathBuf::from("target")
        .join("explain")
        .join(format!("{stem}-boot-{order}.txt"))
}

/// Where each event's access was written: the innermost two inlined
/// frames outside `core` (`Inbox::push, from CoreWake::push`), with the
/// file and line of the first, from the ELF (the access is the
/// instruction before the stop's next one). The reason when nothing could
/// be named.
pub fn event_functions(
    elf: &Path,
    events: &[WatchEvent],
    image_offset: u64,
) -> (Vec<Option<String>>, Option<String>) {
    let addresses: Vec<u64> = events
        .iter()
        .map(|event| event.next_rip.wrapping_sub(image_offset).wrapping_sub(1))
        .collect();
    match symbolize::inline_chains(elf, &addresses) {
        Ok(chains) => (
            chains.iter().map(|chain| where_written(chain)).collect(),
            None,
        ),
        Err(why) => (vec![None; events.len()], Some(why)),
    }
}

/// The kernel's own frames of one access's chain, as one phrase.
fn where_written(chain: &[symbolize::Frame]) -> Option<String> {
    let mut own = chain.iter().filter(|frame| {
        !frame.function.starts_with("core::") && !frame.function.starts_with("<core::")
    });
    let first = own.next()?;
    let file = first.location.rsplit('/').next().unwrap_or(&first.location);
    let mut phrase = format!(
        "{} ({file})",
        symbolize::short_function_name(&first.function)
    );
    if let Some(caller) = own.next() {
        let _ = write!(
            phrase,
            " from {}",
            symbolize::short_function_name(&caller.function)
        );
    }
    Some(phrase)
}

/// What `--explain` found.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The victim core.
    pub victim: usize,
    /// Every access, in order.
    pub events: Vec<WatchEvent>,
    /// One line per access ([`describe`]).
    pub lines: Vec<String>,
    /// The lost halt's index in `events`.
    pub halt: Option<usize>,
    /// The lost halt's four steps (indices in `events`), when they are
    /// seed 004's: the victim's inbox check finds it empty, a waker
    /// pushes, the waker reads the victim's state as not halted, the
    /// victim halts.
    pub racy_check: Option<[usize; 4]>,
    /// The lost halt's push, with writes only ([`push_before_halt`]):
    /// (push, halt) indices.
    pub missed_push: Option<[usize; 2]>,
    /// How many continues the watch pass ran (more than
    /// [`MAX_WATCH_STOPS`]: cut).
    pub continues: usize,
    /// Where the watched boot's output first differs from the recording.
    pub watched_difference: Option<FirstDifference>,
    /// Whether the watched boot failed as the recording did
    /// ([`failure_lines`] equal).
    pub same_failure: bool,
    /// Why functions are unnamed, if they are.
    pub unnamed: Option<String>,
    /// The watched boot was cut by the host (its limits are lifted, so
    /// only the explanation's own timeout).
    pub watched_cut: bool,
    /// Progress lines of the three passes.
    pub passes: Vec<String>,
    /// What the history's watch pass stopped at.
    pub watched: Watched,
    /// Each core's APIC id (Bochs's CPU number), from the debug table.
    pub apic_ids: Vec<u64>,
    /// The boot ran in 1-instruction turns, so the watched boot must
    /// print the recording byte for byte (with 5-instruction turns its
    /// stops move the interleaving, and only the failure must agree).
    pub exact: bool,
}

impl Explanation {
    /// Whether the explanation holds: the watched boot failed as
    /// recorded, and the lost halt is among the accesses.
    pub fn is_complete(&self) -> bool {
        !self.watched_cut
            && self.same_failure
            && self.halt.is_some()
            && (!self.exact || self.watched_difference.is_none())
    }

    /// Writes every line of the history to `path`.
    pub fn write_history(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|err| XtaskError::failed(format!("creating {}: {err}", dir.display())))?;
        }
        std::fs::write(path, self.lines.join("\n") + "\n")
            .map_err(|err| XtaskError::failed(format!("writing {}: {err}", path.display())))
    }

    /// What the command prints (the history is at `path`).
    pub fn report(&self, path: &Path) -> String {
        let mut out = String::new();
        for line in &self.passes {
            let _ = writeln!(out, "explain: {line}");
        }
        if let Some(why) = &self.unnamed {
            let _ = writeln!(out, "explain: note: functions not named: {why}");
        }
        if self.continues >= MAX_WATCH_STOPS {
            let _ = writeln!(
                out,
                "explain: note: the boot stopped at the watchpoints more than {MAX_WATCH_STOPS} times; the history ends there"
            );
        }
        let _ = writeln!(
            out,
            "explain: {} {} to core {}'s state and inbox count; the whole history: {}",
            self.events.len(),
            match self.watched {
                Watched::ReadsAndWrites => "accesses",
                Watched::Writes => "writes",
            },
            self.victim,
            path.display()
        );
        match &self.watched_difference {
            None => {
                let _ = writeln!(
                    out,
                    "explain: the watched boot's serial output is identical to the recording, byte for byte: the history is the recorded execution's"
                );
            }
            Some(difference) if self.exact => {
                let _ = writeln!(
                    out,
                    "explain: FAILED: the watched boot's serial output differs from the recording although its stops fall between rounds of 1-instruction turns: {difference}"
                );
                return out;
            }
            Some(difference) => {
                let _ = writeln!(
                    out,
                    "explain: the watched boot's serial output differs from the recording (each stop cuts a 5-instruction turn short): {difference}"
                );
            }
        }
        if self.watched_cut {
            let _ = writeln!(
                out,
                "explain: FAILED: the watched boot was cut at the explanation's time limit ({EXPLAIN_TIMEOUT_FACTOR}x the recorded boot's wall time, at least 10 min) before it ended: the history is incomplete"
            );
            return out;
        }
        if !self.same_failure {
            let _ = writeln!(
                out,
                "explain: FAILED: the watched boot did not fail as the recording did (its lost-wakeup reports, counts or result differ beyond time figures): the history would be another execution's"
            );
            return out;
        }
        let _ = writeln!(
            out,
            "explain: its lost-wakeup reports, counts and result are the recording's (time figures aside)"
        );
        let Some(halt) = self.halt else {
            let _ = writeln!(
                out,
                "explain: FAILED: core {} never writes `halted` with items in its inbox among the accesses",
                self.victim
            );
            return out;
        };
        let _ = writeln!(
            out,
            "explain: the lost halt: core {} writes `halted` with work in its inbox (access {} of {}); the accesses up to it:",
            self.victim,
            halt + 1,
            self.events.len()
        );
        for line in &self.lines[halt.saturating_sub(EVENTS_BEFORE_THE_HALT)..=halt] {
            let _ = writeln!(out, "  {line}");
        }
        if self.racy_check.is_none()
            && let Some([push, halt]) = self.missed_push
        {
            let _ = writeln!(
                out,
                "explain: the interleaving (writes only: reads are not watched): core {w} pushes while core {v}'s state is running (access {}), core {v} then halts (access {}) with the item queued, and no core claims it",
                push + 1,
                halt + 1,
                v = self.victim,
                w = self.core_name(self.events[push].cpu),
            );
        }
        if let Some([check, push, read, halt]) = self.racy_check {
            let _ = writeln!(
                out,
                "explain: the interleaving: core {v}'s inbox check finds it empty (access {}), core {w} pushes (access {}) and reads core {v}'s state as {} (access {}): no IPI; core {v} halts (access {}) with the item queued",
                check + 1,
                push + 1,
                self.events[read].state_after.map_or_else(
                    || "?".to_string(),
                    |b| ProtocolState::from_byte(b).to_string()
                ),
                read + 1,
                halt + 1,
                v = self.victim,
                w = self.core_name(self.events[push].cpu),
            );
        }
        out
    }

    fn core_name(&self, cpu: u32) -> String {
        core_of(&self.apic_ids, cpu)
    }
}

/// The kernel's core index of Bochs CPU `cpu` (its APIC id), from the
/// debug table's APIC ids.
fn core_of(apic_ids: &[u64], cpu: u32) -> String {
    apic_ids
        .iter()
        .position(|&id| id == u64::from(cpu))
        .map_or_else(|| format!("cpu{cpu}"), |core| core.to_string())
}

/// Seed 004's interleaving right before the lost halt at `halt`: the
/// victim's last inbox read before it saw 0, a waker's push after that
/// read, that waker's read of the victim's state after its push (not
/// `halted`), and no write of the victim's state in between.
pub fn racy_check(events: &[WatchEvent], victim_cpu: u32, halt: usize) -> Option<[usize; 4]> {
    let before = &events[..halt];
    let check = before.iter().rposition(|event| {
        event.cpu == victim_cpu && event.word == Word::InboxLen && event.access == Access::Read
    })?;
    (before[check].inbox_after == Some(0)).then_some(())?;
    let push = (check + 1..halt).find(|&i| {
        let event = &events[i];
        event.cpu != victim_cpu && event.word == Word::InboxLen && event.access == Access::Write
    })?;
    let read = (push + 1..halt).find(|&i| {
        let event = &events[i];
        event.cpu == events[push].cpu && event.word == Word::State && event.access == Access::Read
    })?;
    let state_read = events[read].state_after.map(ProtocolState::from_byte);
    (state_read != Some(ProtocolState::Halted)).then_some(())?;
    let victim_wrote_state = (check + 1..halt).any(|i| {
        let event = &events[i];
        event.cpu == victim_cpu && event.word == Word::State && event.access == Access::Write
    });
    (!victim_wrote_state).then_some([check, push, read, halt])
}

/// With writes only: the push the lost halt missed, the last write of the
/// victim's inbox count by another CPU before the halt, made while the
/// victim's state read `running` (its check was still to come or done),
/// with no write of the victim's state between it and the halt.
pub fn push_before_halt(events: &[WatchEvent], victim_cpu: u32, halt: usize) -> Option<[usize; 2]> {
    let push = events[..halt].iter().rposition(|event| {
        event.cpu != victim_cpu && event.word == Word::InboxLen && event.access == Access::Write
    })?;
    let running =
        events[push].state_after.map(ProtocolState::from_byte) == Some(ProtocolState::Running);
    let victim_wrote_state = events[push + 1..halt].iter().any(|event| {
        event.cpu == victim_cpu && event.word == Word::State && event.access == Access::Write
    });
    (running && !victim_wrote_state).then_some([push, halt])
}

/// Runs the three passes for `victim` of `recording` (see the module
/// docs). The first two must print the recording byte for byte.
pub fn explain(
    recording: &Recording,
    kernel: &KernelArtifacts,
    victim: &Victim,
    echo: bool,
) -> Result<Explanation> {
    let recorded = &recording.run.record.serial;
    let smp = recording.run.planned.boot.smp;
    let settings = recording
        .run
        .planned
        .boot
        .bochs
        .ok_or_else(|| XtaskError::usage("not a Bochs boot"))?;
    let resume = settings.resume_command(smp);
    // With 1-instruction turns every stop falls between two rounds of
    // turns, and one CPU has no turns: the watched boot is the recorded
    // execution, byte for byte.
    let exact = settings.turn == STEP_TURN || smp == 1;
    let stepped = settings.turn == STEP_TURN && smp > 1;
    let reach = if stepped {
        Reach::Rounds {
            stride: (settings.ips / TABLE_STOPS_PER_EMULATED_S).max(1),
            stops: TABLE_STOPS,
        }
    } else {
        Reach::Breakpoint(
            symbolize::function_address(&kernel.elf, BREAK_AFTER_TABLE)
                .map_err(XtaskError::failed)?
                + victim.image_offset,
        )
    };
    let how = match reach {
        Reach::Breakpoint(address) => {
            format!("a breakpoint at {BREAK_AFTER_TABLE}, {address:#x}")
        }
        Reach::Rounds { stride, .. } => format!(
            "a stop every {stride} rounds of 1-instruction turns until the table's magic is there"
        ),
    };
    let mut passes = vec![format!(
        "core {} lost a wakeup; pass 1 of 3 read its words' addresses from the debug table at {:#x} ({how})",
        victim.core, victim.table_address
    )];
    let first = replay_with_debugger(
        recording,
        kernel,
        false,
        Some(address_commands(&reach, victim, smp, &resume)),
    )?;
    require_identical(&first, "pass 1")?;
    let log = first.outcome.debugger_log.clone().unwrap_or_default();
    let (stop, apic_ids, state, inbox_len) = table_at_first_filled_stop(&log, victim, smp)
        .ok_or_else(|| {
            XtaskError::failed(format!(
                "none of pass 1's {} stops found the debug table filled (its magic, {smp} APIC ids and core {}'s two addresses; {} bytes of debugger log)",
                reach.stops(),
                victim.core,
                log.len()
            ))
        })?;
    let reach_it = reach.to_stop(stop);
    let at_tick = stop_tick(&log, stop);
    passes.push(format!(
        "pass 2 of 3 translated core {}'s state byte ({state:#x}) and inbox count ({inbox_len:#x}) to physical addresses at stop {} (t={})",
        victim.core,
        stop + 1,
        at_tick.map_or_else(|| "?".to_string(), |t| t.to_string())
    ));
    let second = replay_with_debugger(
        recording,
        kernel,
        false,
        Some(translation_commands(&reach_it, state, inbox_len, &resume)),
    )?;
    require_identical(&second, "pass 2")?;
    let physical = translations(second.outcome.debugger_log.as_deref().unwrap_or(""));
    let [state_phys, inbox_phys] = physical[..] else {
        return Err(XtaskError::failed(format!(
            "the debugger translated {} of the 2 addresses",
            physical.len()
        )));
    };
    passes.push(format!(
        "pass 3 of 3 watched every read and write of physical {state_phys:#x} (state) and {inbox_phys:#x} (inbox count) from that stop on"
    ));
    let core_of_cpu = |cpu: u32| core_of(&apic_ids, cpu);
    let victim_cpu = apic_ids
        .get(victim.core)
        .and_then(|&id| u32::try_from(id).ok())
        .unwrap_or(u32::MAX);
    if !exact {
        passes.push(format!(
            "note: this boot ran in turns of {} instructions (the debugger's `continue`, `--bochs-turn {}`): a stop cuts the stopped CPU's turn short, so the watched boot is a neighbouring execution, not the recorded one (same failure required, time figures differ); boots recorded with `--bochs-turn {STEP_TURN}` (the default) are watched exactly",
            settings.turn, settings.turn
        ));
    }
    let mut explanation = None;
    for watched in [Watched::ReadsAndWrites, Watched::Writes] {
        if watched == Watched::Writes {
            passes.push(
                "the watched boot did not fail as recorded (its stops moved the interleaving): watching writes only, far fewer stops".to_string(),
            );
        }
        let third = replay_with_debugger(
            recording,
            kernel,
            echo,
            Some(watch_commands(
                &reach_it, state_phys, inbox_phys, watched, &resume,
            )),
        )?;
        let log = third.outcome.debugger_log.as_deref().unwrap_or("");
        let (events, continues) = watch_events(log, state_phys, inbox_phys, &resume);
        let (functions, unnamed) = event_functions(&kernel.elf, &events, victim.image_offset);
        let lines = events
            .iter()
            .zip(&functions)
            .map(|(event, function)| {
                describe(
                    event,
                    victim.core,
                    &core_of_cpu,
                    function.as_deref().unwrap_or("??"),
                )
            })
            .collect();
        let halt = lost_halt(&events, victim_cpu);
        let racy = halt.and_then(|halt| racy_check(&events, victim_cpu, halt));
        let missed_push = halt.and_then(|halt| push_before_halt(&events, victim_cpu, halt));
        let done = Explanation {
            victim: victim.core,
            lines,
            halt,
            racy_check: racy,
            missed_push,
            continues,
            watched_difference: third.difference.clone(),
            watched_cut: third.outcome.timed_out || third.outcome.stalled,
            same_failure: failure_lines(recorded) == failure_lines(&third.outcome.serial),
            unnamed,
            passes: passes.clone(),
            events,
            watched,
            apic_ids: apic_ids.clone(),
            exact,
        };
        // An exact watch is not tried again: a difference there is news.
        let again = !exact && !done.same_failure && !done.watched_cut;
        explanation = Some(done);
        if !again {
            break;
        }
    }
    Ok(explanation.expect("the watch pass ran"))
}

/// A pass that stops once, before any AP runs, must print the recording.
fn require_identical(replayed: &Replayed, pass: &str) -> Result<()> {
    match &replayed.difference {
        None => Ok(()),
        Some(difference) => Err(XtaskError::failed(format!(
            "{pass}'s boot (one breakpoint before the APs start) differs from the recording, so its addresses may be another boot's: {difference}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WATCH_LOG: &str = "\
watch r 0x112f2b0 8
read watchpoint at 0x00000112f2b0 len=8 inserted
c
(0) Caught read watch point at 0x00000112f2b0
Next at t=201669683
(0) [0x00000101d542] 0008:000000800001e542 (unk. ctxt): test rax, rax             ; 4885c0
(1) [0x0000010345ce] 0008:00000080000355ce (unk. ctxt): cli                       ; fa
xp /1bx 0x112f2b9
[bochs]:
0x000000000112f2b9 <bogus+       0>:\t0x00
xp /1gx 0x112f2b0
[bochs]:
0x000000000112f2b0 <bogus+       0>:\t0x0000000000000000
c
Next at t=201742163
(0) [0x000001034150] 0008:0000008000035150 (unk. ctxt): rdtsc                     ; 0f31
(3) Caught write watch point at 0x00000112f2b0
(3) [0x0000010320df] 0008:00000080000330df (unk. ctxt): inc rbp                   ; 48ffc5
xp /1bx 0x112f2b9
[bochs]:
0x000000000112f2b9 <bogus+       0>:\t0x02
xp /1gx 0x112f2b0
[bochs]:
0x000000000112f2b0 <bogus+       0>:\t0x0000000000000001
c
(0) Caught write watch point at 0x00000112f2b9
Next at t=201743503
(0) [0x0000010343db] 0008:00000080000353db (unk. ctxt): inc qword ptr ds:[r10+192] ; 49ff82c0000000
xp /1bx 0x112f2b9
[bochs]:
0x000000000112f2b9 <bogus+       0>:\t0x02
xp /1gx 0x112f2b0
[bochs]:
0x000000000112f2b0 <bogus+       0>:\t0x0000000000000001
";

    #[test]
    fn stops_become_events_with_their_cpu_time_instruction_and_words() {
        let (events, continues) = watch_events(WATCH_LOG, 0x112f2b9, 0x112f2b0, "c");
        assert_eq!(continues, 3);
        assert_eq!(
            events,
            [
                WatchEvent {
                    tick: 201669683,
                    cpu: 0,
                    access: Access::Read,
                    word: Word::InboxLen,
                    next_rip: 0x800001e542,
                    state_after: Some(0),
                    inbox_after: Some(0),
                },
                WatchEvent {
                    tick: 201742163,
                    cpu: 3,
                    access: Access::Write,
                    word: Word::InboxLen,
                    next_rip: 0x80000330df,
                    state_after: Some(2),
                    inbox_after: Some(1),
                },
                WatchEvent {
                    tick: 201743503,
                    cpu: 0,
                    access: Access::Write,
                    word: Word::State,
                    next_rip: 0x80000353db,
                    state_after: Some(2),
                    inbox_after: Some(1),
                },
            ]
        );
        // Core 0 halts (writes Halted) with an item in its inbox.
        assert_eq!(lost_halt(&events, 0), Some(2));
        assert_eq!(lost_halt(&events, 3), None);
        // A waker that then reads `halted` (and sends the IPI) finds it:
        // not lost.
        let mut found = events.clone();
        found.push(WatchEvent {
            cpu: 3,
            access: Access::Read,
            word: Word::State,
            state_after: Some(2),
            ..events[2].clone()
        });
        assert_eq!(lost_halt(&found, 0), None);
        // Nor with two accesses in one stop: their values are nobody's.
        let (shared, _) = watch_events(
            &WATCH_LOG.replace(
                "(0) Caught write watch point at 0x00000112f2b9\n",
                "(0) Caught write watch point at 0x00000112f2b9\n(3) Caught read watch point at 0x00000112f2b9\n(3) [0x0000010320df] 0008:00000080000330df (unk. ctxt): inc rbp ; 48ffc5\n",
            ),
            0x112f2b9,
            0x112f2b0,
            "c",
        );
        assert_eq!(shared.len(), 4);
        assert_eq!((shared[2].state_after, shared[3].inbox_after), (None, None));
        assert_eq!(lost_halt(&shared, 0), None);
        // No state read by the waker between its push and the halt: not
        // seed 004's shape.
        assert_eq!(racy_check(&events, 0, 2), None);
        let mut with_read = events.clone();
        with_read.insert(
            2,
            WatchEvent {
                access: Access::Read,
                word: Word::State,
                state_after: Some(0),
                ..events[1].clone()
            },
        );
        assert_eq!(racy_check(&with_read, 0, 3), Some([0, 1, 2, 3]));
        // Writes only: the push made while the victim ran, then its halt.
        let mut writes: Vec<WatchEvent> = events
            .iter()
            .filter(|event| event.access == Access::Write)
            .cloned()
            .collect();
        assert_eq!(
            push_before_halt(&writes, 0, 1),
            None,
            "pushed onto a halted core"
        );
        writes[0].state_after = Some(0);
        assert_eq!(push_before_halt(&writes, 0, 1), Some([0, 1]));
        // The same with the victim's check seeing the item: no race.
        with_read[0].inbox_after = Some(1);
        assert_eq!(racy_check(&with_read, 0, 3), None);
    }

    #[test]
    fn the_first_passes_outputs_parse() {
        let log = "x /4gx 0x800004f7f0\n[bochs]:\n0x000000800004f7f0 <bogus+       0>:\t0x2800112f2b9\t0x2800112f439\n0x000000800004f800 <bogus+      16>:\t0x2800112f5b9\t0x2800112f739\nc\n";
        assert_eq!(
            examined_values(log, "x /4gx 0x800004f7f0"),
            [vec![
                0x2800112f2b9,
                0x2800112f439,
                0x2800112f5b9,
                0x2800112f739
            ]]
        );
        let log = "page 0x2800112f2b9\nPML4: 0x000000000111f023    ps         A pcd pwt S W P\n PDE: 0x80000000010000e3 XD PS g pat D A pcd pwt S W P\nlinear page 0x000002800112f000 maps to physical page 0x00000112f000\n";
        assert_eq!(translations(log), [0x112f2b9]);
    }

    #[test]
    fn pass_one_takes_the_first_stop_that_finds_the_table_filled() {
        let victim = Victim {
            core: 1,
            table_address: 0x1000,
            image_offset: 0,
        };
        let reach = Reach::Rounds {
            stride: 100,
            stops: 3,
        };
        let commands = address_commands(&reach, &victim, 2, "s all 7");
        assert!(
            commands.starts_with(
                "s all 100\nx /1gx 0x1000\nx /2gx 0x1018\nx /1gx 0x1820\nx /1gx 0x2020\ns all 100\n"
            ),
            "{commands}"
        );
        assert_eq!(commands.matches("s all 100\n").count(), 3);
        assert!(commands.ends_with("s all 7\n"));
        assert_eq!(reach.to_stop(2), "s all 100\n".repeat(3));
        assert_eq!(Reach::Breakpoint(0xabc).to_stop(0), "lb 0xabc\ncontinue\n");
        // Stop 1: not mapped yet; stop 2: mapped, magic not written;
        // stop 3: filled.
        let stop = |magic: &str, apic: &str, state: &str, inbox: &str, t: u64| {
            format!(
                "s all 100\nNext at t={t}\nx /1gx 0x1000\n[bochs]:\n0x0000000000001000 <bogus+       0>:\t{magic}\nx /2gx 0x1018\n[bochs]:\n0x0000000000001018 <bogus+       0>:\t{apic}\nx /1gx 0x1820\n[bochs]:\n0x0000000000001820 <bogus+       0>:\t{state}\nx /1gx 0x2020\n[bochs]:\n0x0000000000002020 <bogus+       0>:\t{inbox}\n"
            )
        };
        let unmapped =
            "bx_dbg_read_linear: physical address not available for linear 0x0000000000001000";
        let log = [
            stop(unmapped, unmapped, unmapped, unmapped, 100),
            stop("0x0000000000000000", "0x0\t0x0", "0x0", "0x0", 200),
            stop(
                "0x5649474c49474956",
                "0x0\t0x1",
                "0x2800112f439",
                "0x2800112f430",
                300,
            ),
            stop(
                "0x5649474c49474956",
                "0x0\t0x1",
                "0x2800112f439",
                "0x2800112f430",
                400,
            ),
        ]
        .concat();
        let log = log.replace("0x5649474c49474956", &format!("{DEBUG_TABLE_MAGIC:#x}"));
        assert_eq!(
            table_at_first_filled_stop(&log, &victim, 2),
            Some((2, vec![0, 1], 0x2800112f439, 0x2800112f430))
        );
        assert_eq!(stop_tick(&log, 2), Some(300));
        let never = [stop("0x0", "0x0\t0x0", "0x0", "0x0", 100)].concat();
        assert_eq!(table_at_first_filled_stop(&never, &victim, 2), None);
    }

    #[test]
    fn the_victim_is_the_first_reported_core() {
        let serial = "[c0] vigil: debug table at 0x800004efd8, kernel image offset 0x8000000000\n[c3] LOST WAKEUP on core 2: work was announced\n[c0] LOST WAKEUP on core 0: x\n";
        assert_eq!(
            victim_of(serial).unwrap(),
            Victim {
                core: 2,
                table_address: 0x800004efd8,
                image_offset: 0x8000000000
            }
        );
        assert_eq!(victim_of("[c0] vigil: ok\n").unwrap_err().exit_code(), 2);
    }

    #[test]
    fn time_figures_are_masked_and_nothing_else() {
        assert_eq!(
            without_time_figures(
                "[c3]          8547 us ago: WokeByIpi\n[c0] laplace: size=64 elapsed_us=854924 residual=2\n"
            ),
            "[c3]          # us ago: WokeByIpi\n[c0] laplace: size=64 elapsed_us=# residual=2\n"
        );
    }
}
