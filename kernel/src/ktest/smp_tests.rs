//! SMP bring-up, IPIs, the halt primitive and the one-shot timer, on every
//! core the machine has.

use super::runner::{TestCase, TestResult};
use crate::arch::interrupt_vectors::{self, COUNTS, TEST_VECTOR};
use crate::arch::{halt, interrupts, ipi, percpu, timer, tsc};
use crate::smp::{bringup, cores, remote_call};
use crate::{ensure, require};
use alloc::format;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

pub const CORES_ONLINE: TestCase = TestCase {
    name: "smp::cores_online",
    run: cores_online,
};
pub const ALL_PAIRS_IPI: TestCase = TestCase {
    name: "smp::all_pairs_ipi",
    run: all_pairs_ipi,
};
pub const HALT_WOKEN_AFTER_HALT: TestCase = TestCase {
    name: "smp::halt_woken_by_ipi_after_halt",
    run: halt_woken_after_halt,
};
pub const HALT_WOKEN_PENDING_BEFORE_STI: TestCase = TestCase {
    name: "smp::halt_woken_by_ipi_pending_before_sti",
    run: halt_woken_pending_before_sti,
};
pub const ONESHOT_TIMER: TestCase = TestCase {
    name: "smp::oneshot_timer_fires_once",
    run: oneshot_timer,
};

const JOB_TIMEOUT_MS: u64 = 10_000;
const N: usize = cores::MAX_CORES;

/// Every core the MADT listed is online; indices are dense, APIC ids
/// distinct, and each core's per-core block names its own index and APIC id.
fn cores_online() -> TestResult {
    let count = cores::count();
    ensure!(
        count == bringup::discovered().min(N),
        "{count} cores registered, MADT has {}",
        bringup::discovered()
    );
    ensure!(
        cores::online_count() == count,
        "{} of {count} online",
        cores::online_count()
    );
    for i in 0..count {
        for j in 0..i {
            ensure!(
                cores::apic_id(i) != cores::apic_id(j),
                "cores {j} and {i} share APIC id"
            );
        }
    }
    static SEEN: [AtomicBool; N] = [const { AtomicBool::new(false) }; N];
    for flag in &SEEN {
        flag.store(false, Ordering::Relaxed);
    }
    remote_call::run_everywhere(Arc::new(|me| {
        let index = percpu::current_index();
        let apic = ipi::this_core_id();
        ensure!(
            index == me,
            "per-core block says {index}, job ran as core {me}"
        );
        ensure!(
            apic == cores::apic_id(me),
            "LAPIC id {apic}, table says {}",
            cores::apic_id(me)
        );
        SEEN[me].store(true, Ordering::Relaxed);
        crate::println!("core {me} online: APIC id {apic}");
        Ok(())
    }))?;
    let missing = (0..count)
        .filter(|&i| !SEEN[i].load(Ordering::Relaxed))
        .count();
    ensure!(missing == 0, "{missing} cores never ran the job");
    Ok(())
}

/// `PENDING[r][s]`: sender `s` has sent an IPI to `r` that `r` has not yet
/// acknowledged. `DELIVERED[r][s]`: how many of `s`'s IPIs `r` acknowledged.
static PENDING: [[AtomicBool; N]; N] = [const { [const { AtomicBool::new(false) }; N] }; N];
static DELIVERED: [[AtomicU32; N]; N] = [const { [const { AtomicU32::new(0) }; N] }; N];

fn acknowledge_senders(me: usize) {
    for s in 0..cores::count() {
        // AcqRel: the swap acquires the sender's Release store of the flag and
        // releases our count to the sender, which waits on the flag.
        if PENDING[me][s].swap(false, Ordering::AcqRel) {
            DELIVERED[me][s].fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Every core sends one IPI to every other core, all at once; every
/// receiver records each sender exactly once.
fn all_pairs_ipi() -> TestResult {
    let count = cores::count();
    require!(count >= 2, "needs at least 2 cores, have {count}");
    for r in 0..count {
        for s in 0..count {
            PENDING[r][s].store(false, Ordering::Relaxed);
            DELIVERED[r][s].store(0, Ordering::Relaxed);
        }
    }
    interrupt_vectors::set_test_hook(Some(acknowledge_senders));
    let result = remote_call::run_everywhere(Arc::new(move |me| {
        // Every core must take the others' test IPIs while it spins on its
        // own sends: interrupts on for this job's window (the job runner
        // disables them again).
        interrupts::enable();
        for t in (0..count).filter(|&t| t != me) {
            PENDING[t][me].store(true, Ordering::Release);
            ipi::send(cores::apic_id(t), TEST_VECTOR);
            let deadline = tsc::now() + tsc::us_to_ticks(JOB_TIMEOUT_MS * 1000);
            while PENDING[t][me].load(Ordering::Acquire) {
                ensure!(tsc::now() < deadline, "IPI {me}->{t} never acknowledged");
                core::hint::spin_loop();
            }
        }
        Ok(())
    }));
    interrupt_vectors::set_test_hook(None);
    result?;
    for (r, row) in DELIVERED.iter().enumerate().take(count) {
        for (s, delivered) in row.iter().enumerate().take(count) {
            let got = delivered.load(Ordering::Relaxed);
            let want = u32::from(r != s);
            ensure!(
                got == want,
                "core {r} recorded {got} IPIs from core {s}, expected {want}"
            );
        }
    }
    Ok(())
}

static GO: AtomicBool = AtomicBool::new(false);
static READY: AtomicBool = AtomicBool::new(false);
static RETURNED: AtomicBool = AtomicBool::new(false);

fn wait_flag(flag: &AtomicBool, what: &str) -> TestResult {
    let deadline = tsc::now() + tsc::us_to_ticks(JOB_TIMEOUT_MS * 1000);
    while !flag.load(Ordering::Acquire) {
        ensure!(
            tsc::now() < deadline,
            "{what} not seen within {JOB_TIMEOUT_MS} ms"
        );
        core::hint::spin_loop();
    }
    Ok(())
}

/// Runs the halt scenario on core 1: the job waits (interrupts enabled, so
/// the wake IPI that delivered the job itself is serviced) for `GO`, disables
/// interrupts, announces `READY`, optionally waits until the test IPI is
/// pending, halts once through the arch function, and announces `RETURNED`.
/// Core 0 sends the test IPI once `READY` is seen (after `delay_us`).
fn halt_scenario(wait_until_pending: bool, delay_us: u64) -> TestResult {
    require!(
        cores::count() >= 2,
        "needs at least 2 cores, have {}",
        cores::count()
    );
    for flag in [&GO, &READY, &RETURNED] {
        flag.store(false, Ordering::Relaxed);
    }
    let ipis_before = COUNTS[1].test.load(Ordering::Relaxed);
    let job = Arc::new(move |_me: usize| {
        // Interrupts on while waiting, so that a wake IPI still pending
        // from the job's own delivery is taken now, not by the halt below.
        interrupts::enable();
        wait_flag(&GO, "GO").map_err(|e| format!("{e:?}"))?;
        interrupts::disable();
        READY.store(true, Ordering::Release);
        if wait_until_pending {
            let deadline = tsc::now() + tsc::us_to_ticks(JOB_TIMEOUT_MS * 1000);
            while !ipi::is_pending(TEST_VECTOR) {
                if tsc::now() > deadline {
                    interrupts::enable();
                    return Err("test IPI never became pending".into());
                }
                core::hint::spin_loop();
            }
        }
        halt::enable_interrupts_and_halt();
        RETURNED.store(true, Ordering::Release);
        Ok(())
    });
    let waiter = remote_call::spawn_on(1, job);
    GO.store(true, Ordering::Release);
    wait_flag(&READY, "core 1 about to halt")?;
    if delay_us > 0 {
        tsc::spin_us(delay_us);
    }
    ipi::send(cores::apic_id(1), TEST_VECTOR);
    wait_flag(&RETURNED, "core 1 returning from its halt")?;
    remote_call::join(waiter)?;
    let ipis = COUNTS[1].test.load(Ordering::Relaxed) - ipis_before;
    ensure!(ipis == 1, "core 1 took {ipis} test IPIs, expected 1");
    Ok(())
}

/// Core 1 halts through the arch function; core 0 sends the IPI after core 1
/// announced it is about to halt and 2 ms more (very likely after the `hlt`;
/// the delay shifts the odds toward that case, never the verdict).
fn halt_woken_after_halt() -> TestResult {
    halt_scenario(false, 2_000)
}

/// The IPI is pending in core 1's IRR before its `sti`: the `sti` shadow
/// must let it end the `hlt` rather than be taken just before it.
fn halt_woken_pending_before_sti() -> TestResult {
    halt_scenario(true, 0)
}

const TIMER_DEADLINE_US: u64 = 10_000;
const QUIET_AFTER_US: u64 = 20_000;
/// Tolerance for TSC vs LAPIC-timer calibration error (both against the same
/// 20 ms PIT window): 1% of the deadline.
const CALIBRATION_SLACK_US: u64 = TIMER_DEADLINE_US / 100;

/// Each core arms its one-shot timer: it fires once, not before the
/// deadline (within calibration slack), and not again.
fn oneshot_timer() -> TestResult {
    Ok(remote_call::run_everywhere(Arc::new(|me| {
        interrupts::disable();
        // The watchdog core's scan tick shares this timer: disarm it and
        // take a tick already pending, so that only this test's arming
        // counts.
        timer::cancel();
        interrupts::enable();
        interrupts::disable();
        let before = COUNTS[me].timer.load(Ordering::Relaxed);
        let armed = tsc::now();
        timer::arm_oneshot_us(TIMER_DEADLINE_US);
        while COUNTS[me].timer.load(Ordering::Relaxed) == before {
            // A timer interrupt ends the halt; interrupts are off again
            // when the loop re-checks.
            halt::enable_interrupts_and_halt();
            interrupts::disable();
            ensure!(
                tsc::ticks_to_us(tsc::now() - armed) < 100 * TIMER_DEADLINE_US,
                "timer never fired"
            );
        }
        interrupts::enable();
        let fired = COUNTS[me].timer_last_tsc.load(Ordering::Relaxed);
        let elapsed_us = tsc::ticks_to_us(fired.saturating_sub(armed));
        tsc::spin_us(QUIET_AFTER_US);
        let fires = COUNTS[me].timer.load(Ordering::Relaxed) - before;
        ensure!(fires == 1, "timer fired {fires} times");
        ensure!(
            elapsed_us + CALIBRATION_SLACK_US >= TIMER_DEADLINE_US,
            "timer fired after {elapsed_us} us, deadline {TIMER_DEADLINE_US} us"
        );
        Ok(())
    }))?)
}
