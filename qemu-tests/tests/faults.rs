//! Injected faults are reported as what they are, never as success.

use qemu_tests::{boot, boot_with, describe};
use xtask::Verdict;
use xtask::diagnosis::stuck_cores::SEARCH_HELD_BY_BUSY_CORE;
use xtask::runner::qemu::RunConfig;

const FAULT_TIMEOUT_S: u64 = 120;
/// Short on purpose: the guest hangs forever, the harness must cut it off.
const HANG_TIMEOUT_S: u64 = 20;

#[test]
fn panic_is_reported_with_core_id_and_message() {
    let outcome = boot(1, FAULT_TIMEOUT_S, &["mode=test", "fault=panic"]);
    assert_eq!(outcome.verdict, Verdict::Panic, "{}", describe(&outcome));
    assert_eq!(outcome.exit_status, Some(37), "{}", describe(&outcome));
    let panic_line = outcome
        .serial
        .lines()
        .find(|line| line.contains("PANIC at "))
        .unwrap_or_else(|| panic!("no PANIC line\n{}", describe(&outcome)));
    assert!(
        panic_line.starts_with("[c0] PANIC at "),
        "{}",
        describe(&outcome)
    );
    // `PANIC at file:line: message`: the message follows the location.
    let after_location = panic_line.splitn(3, ':').nth(2).unwrap_or("");
    assert!(!after_location.trim().is_empty(), "{}", describe(&outcome));
}

#[test]
fn triple_fault_is_a_failure_not_a_success() {
    let outcome = boot(1, FAULT_TIMEOUT_S, &["mode=test", "fault=triple-fault"]);
    assert_eq!(
        outcome.verdict,
        Verdict::TripleFault,
        "{}",
        describe(&outcome)
    );
    assert_eq!(outcome.exit_status, Some(0), "{}", describe(&outcome));
    assert!(!outcome.verdict.is_success());
    assert_eq!(
        outcome.verdict_line(),
        "vigil: FAILED (triple fault: QEMU exited with status 0)"
    );
}

#[test]
fn hang_is_cut_off_at_the_timeout_and_examined() {
    let outcome = boot(2, HANG_TIMEOUT_S, &["mode=test", "fault=hang"]);
    assert_eq!(outcome.verdict, Verdict::Timeout, "{}", describe(&outcome));
    assert_eq!(outcome.exit_status, None);
    assert_eq!(outcome.verdict_line(), "vigil: FAILED (timeout after 20 s)");
    assert!(
        outcome.elapsed.as_secs() < HANG_TIMEOUT_S + 30,
        "took {:?} to kill a hung guest",
        outcome.elapsed
    );
    // The monitor was asked for every vCPU's registers before the kill.
    let registers = outcome.registers_at_timeout.as_deref().unwrap_or("");
    assert!(registers.contains("CPU#0"), "registers: {registers}");
    assert!(registers.contains("CPU#1"), "registers: {registers}");
    assert!(registers.contains("RIP="), "registers: {registers}");
}

#[test]
fn page_fault_is_reported_as_a_cpu_exception() {
    let outcome = boot(1, FAULT_TIMEOUT_S, &["mode=test", "fault=page-fault"]);
    assert_eq!(
        outcome.verdict,
        Verdict::Exception,
        "{}",
        describe(&outcome)
    );
    assert_eq!(outcome.exit_status, Some(41), "{}", describe(&outcome));
    assert!(outcome.serial.contains("[c0]"), "{}", describe(&outcome));
}

/// A task wake lost above the wake protocol (here: one fork-join release
/// wake dropped on purpose) leaves no work in any inbox, so neither the
/// lost-wakeup watchdog nor the host's halted-with-work check can name it.
/// The stuck-round watch does: an idle core finds the round too old, dumps
/// the round and the worker that never got its wake, and fails the run.
/// (Without the injected fault the same boot passes: `laplace.rs`.)
#[test]
fn a_dropped_task_wake_is_named_by_the_stuck_round_watch() {
    let outcome = boot(
        4,
        FAULT_TIMEOUT_S,
        &[
            "workload=laplace",
            "iterations=20",
            "pool=pinned",
            "fault=dropped-task-wake",
        ],
    );
    assert_eq!(
        outcome.verdict,
        Verdict::CheckFailed,
        "{}",
        describe(&outcome)
    );
    let serial = &outcome.serial;
    assert!(
        serial.contains("STUCK ROUND: a fork-join round has not finished after "),
        "{}",
        describe(&outcome)
    );
    // The first round from 10 on in which the last worker was parked when
    // its release wake was due (the fault drops only a wake that is needed).
    let round: u64 = serial
        .split("fork-join: round ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|round| round.parse().ok())
        .unwrap_or_else(|| panic!("no stuck round named\n{}", describe(&outcome)));
    assert!(round >= 10, "round {round}\n{}", describe(&outcome));
    assert!(
        serial.contains(&format!(
            "fork-join: round {round}, 4 worker(s), latch 1 count-down(s) missing"
        )),
        "{}",
        describe(&outcome)
    );
    // Worker 3, the last, is the one whose release wake was dropped: its job
    // is still in its slot and its task is parked with nobody to wake it.
    // (Its task number depends on what the boot's measurements spawned.)
    let worker_3 = serial
        .split("worker 3 (task ")
        .nth(1)
        .and_then(|rest| rest.split_once("): "))
        .map(|(_task, state)| state)
        .unwrap_or_else(|| panic!("no worker 3 in the dump\n{}", describe(&outcome)));
    assert!(
        worker_3.starts_with(&format!(
            "last finished round {}, job waiting in its slot, parker parked",
            round - 1
        )),
        "{}",
        describe(&outcome)
    );
    assert!(
        !serial.contains("laplace: size="),
        "a stuck run has no result\n{}",
        describe(&outcome)
    );
}

/// `fault=stranded-steal`: a round's search wake is dropped and its caller
/// does not help, with every other core idle. The watchdog core's strand
/// watch reports the stranded chunks (two ticks in a row, nothing taken)
/// and ends the run failed, in every boot.
#[test]
fn stranded_stealable_work_is_reported_by_the_strand_watch() {
    for seed in 1..=3 {
        let seed = format!("seed={seed}");
        let outcome = boot(
            4,
            FAULT_TIMEOUT_S,
            &[
                "workload=laplace",
                "iterations=100",
                "pool=steal",
                // 3 chunks: the caller's own and 2 published (the round
                // plan's count depends on the host's timing).
                "chunks=3",
                "fault=stranded-steal",
                &seed,
            ],
        );
        assert_eq!(
            outcome.verdict,
            Verdict::CheckFailed,
            "{}",
            describe(&outcome)
        );
        let serial = &outcome.serial;
        for expected in [
            "fault: stranded-steal: round ",
            "STRANDED STEALABLE WORK: 2 chunk(s) queued with every core halted",
            "vigil: FAILED: stealable work stranded (every core halted)",
        ] {
            assert!(
                serial.contains(expected),
                "no `{expected}`\n{}",
                describe(&outcome)
            );
        }
    }
}

/// The in-kernel test of stealable work beside a busy core, alone.
const BESIDE_BUSY: &str = "test=stealable_work_runs_beside_a_busy_core";

/// Without a fault the test passes at 4 cores: the chunks run on a halted
/// core while core 1's long pinned task runs.
#[test]
fn stealable_work_runs_beside_a_busy_core() {
    let outcome = boot(4, FAULT_TIMEOUT_S, &["mode=test", BESIDE_BUSY]);
    assert_eq!(outcome.verdict, Verdict::Success, "{}", describe(&outcome));
    assert!(
        outcome
            .serial
            .contains("stealable beside a busy core: 8 of 8 chunks ran while core 1's long task ran, 0 on core 0 or 1"),
        "{}",
        describe(&outcome)
    );
}

/// `fault=busy-searcher` (core 1 keeps its idle registration while it runs
/// its long task, and is chosen to search): the held-search watch names
/// core 1 and ends the run, in every boot (3 seeds).
#[test]
fn a_busy_searcher_is_reported_by_the_held_search_watch() {
    for seed in 1..=3 {
        let seed = format!("seed={seed}");
        let outcome = boot(
            4,
            FAULT_TIMEOUT_S,
            &["mode=test", BESIDE_BUSY, "fault=busy-searcher", &seed],
        );
        assert_eq!(
            outcome.verdict,
            Verdict::CheckFailed,
            "{}",
            describe(&outcome)
        );
        for expected in [
            "fault=busy-searcher fired: core 1 ",
            "SEARCH HELD BY A CORE THAT DOES NOT LOOK: core 1 holds the stealable pool's search",
            "1 chunk(s) stay queued",
            "(the fault=busy-searcher core: busy with pinned work)",
        ] {
            assert!(
                outcome.serial.contains(expected),
                "no `{expected}`\n{}",
                describe(&outcome)
            );
        }
    }
}

/// The same with `watchdog=off`: the test hangs (core 1 waits for the
/// chunk, the chunk for core 1), and the host's examination names core 1
/// as the busy core holding the search and the 1 queued chunk.
#[test]
fn a_busy_searcher_without_watchdog_hangs_and_the_host_names_the_core() {
    let outcome = boot_with(RunConfig {
        smp: 4,
        timeout_s: Some(FAULT_TIMEOUT_S),
        stall_s: Some(8),
        registers_on_timeout: true,
        ..RunConfig::with_params(&[
            "mode=test",
            BESIDE_BUSY,
            "fault=busy-searcher",
            "watchdog=off",
        ])
    });
    assert_eq!(outcome.verdict, Verdict::Stuck, "{}", describe(&outcome));
    let examination = outcome
        .examination
        .as_ref()
        .unwrap_or_else(|| panic!("not examined\n{}", describe(&outcome)));
    assert_eq!(
        examination.busy_search_holder(),
        Some((1, 1)),
        "{}",
        examination.report()
    );
    assert!(
        examination.report().contains(SEARCH_HELD_BY_BUSY_CORE),
        "{}",
        examination.report()
    );
}
