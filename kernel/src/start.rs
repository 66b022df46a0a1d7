//! The boot sequence of the bootstrap core, above the arch layer: the arch
//! layer's entry point (`arch::boot`) has set up the console, exceptions,
//! memory and the heap, and calls [`kernel_main`].

use crate::arch::boot::{BootEnv, ParamLine};
use crate::arch::{fault_injection, halt};
use crate::exit::{ExitCode, exit};
use crate::params::{self, BootParams, Fault, Mode, Pool, Trial, Workload};
use crate::sched::core_sched::{self, SchedConfig};
use crate::sched::wakeup;
use crate::smp::{cores, remote_call};
use crate::{chaos, ktest, println, sched, smp, workloads};
use alloc::sync::Arc;
use vigil_wake::Policy;

/// The arch-neutral boot sequence (on the bootstrap core, interrupts off).
pub fn kernel_main(boot: BootEnv) -> ! {
    let heap_bytes = boot.heap_bytes;
    let params = load_params(boot.param_line());
    let core_count = smp::bringup::prepare(&boot);
    let policy = wake_policy(&params);
    check_trial(&params);
    if params.chaos {
        chaos::enable(params.seed);
    }
    sched::watchdog::configure(params.watchdog.scan_period_ms().unwrap_or(0));
    configure_ipi_fault(&params);
    sched::fork_join::configure(params.release);
    sched::fork_join::configure_pool(params.pool);
    sched::host_parallelism::configure(params.parallelism.map(|n| n as usize));
    sched::round_plan::configure(sched::round_plan::Fixed {
        pool: params.pool,
        chunks: params.chunks.map(|n| n as usize),
        trial: params.trial,
    });
    // The stealable pool is there unless `pool=pinned` rules it out: each
    // workload's round plan chooses (nothing is published otherwise, and
    // an idle core's look at an empty pool takes no lock).
    sched::stealable::init(core_count, params.pool != Some(Pool::Pinned));
    core_sched::init(
        core_count,
        SchedConfig {
            policy,
            backoff: params.backoff,
        },
    );
    println!(
        "vigil: debug table at {:#x}, kernel image offset {:#x}",
        sched::debug_table::publish(),
        boot.kernel_image_offset
    );
    sched::stealable::register_aps_idle(core_count);
    smp::bringup::start_all_aps();
    println!(
        "Vigil {} booted: {core_count} cores, heap {} MiB, mode {:?}, policy {}{}, backoff {:?}, pool {}, watchdog {}, seed {}{}",
        env!("CARGO_PKG_VERSION"),
        heap_bytes >> 20,
        params.mode,
        policy.name(),
        if cfg!(feature = "idle-poll") {
            " (idle-poll build)"
        } else {
            ""
        },
        params.backoff,
        params.pool.map_or("chosen per workload", Pool::name),
        params.watchdog,
        params.seed,
        if params.chaos { ", chaos on" } else { "" },
    );
    let main = wakeup::spawn_on(0, move || main_task(&params));
    drop(main);
    core_sched::run_core(0)
}

/// The first task: runs the selected mode on core 0, then ends the run.
fn main_task(params: &BootParams) {
    measure_host(params);
    inject(params.fault);
    match params.mode {
        Mode::Test => {
            let outcome = ktest::runner::run_suite(params.test_filter.as_deref());
            let code = if outcome.failed == 0 {
                ExitCode::Success
            } else {
                ExitCode::CheckFailed
            };
            exit(fail_on_lost_wakeups(code))
        }
        Mode::Run => {
            let code = workloads::run(params);
            sched::stats::report(params.workload.name());
            chaos::report();
            sched::watchdog::summary();
            exit(fail_on_lost_wakeups(code))
        }
    }
}

/// Measures how many cores the host runs at once and what a fork-join
/// round costs here (`sched::host_parallelism`, `sched::round_plan`), sets
/// the poll slots and prints what it found and what it will use.
fn measure_host(params: &BootParams) {
    // No idle core polls while the host is measured: a polling vCPU would
    // take host time from the one timing its work alone.
    sched::poll_slots::set(0);
    let host = sched::host_parallelism::measure();
    let at_once = sched::host_parallelism::in_force();
    let pollers = match params.pollers {
        Some(n) => {
            sched::poll_slots::fix(n as usize);
            n as usize
        }
        None => sched::poll_slots::follow(at_once),
    };
    // With the pool and its chunk count fixed by boot parameters the plan
    // has nothing to choose, and its timed rounds are not run (under
    // Bochs's 1-instruction turns they are most of a short boot).
    let plan_fixed = match params.pool {
        Some(Pool::Pinned) => true,
        Some(Pool::Steal) => params.chunks.is_some(),
        None => false,
    };
    let rounds = if plan_fixed {
        "rounds not timed (pool= and its chunks fixed)".into()
    } else {
        let costs = sched::round_plan::measure_costs(at_once, sched::stealable::enabled());
        alloc::format!(
            "a round costs {} ns beyond its work stealing on {} cores, {} pinned{}",
            costs.steal_ns,
            costs.steal_cores,
            costs.pinned_ns.map_or_else(
                || "not measured (more cores than run at once)".into(),
                |ns| alloc::format!("{ns} ns")
            ),
            match (costs.chunk_work_us, costs.handoff_work_us) {
                (0, _) => alloc::string::String::new(),
                (chunk_us, Some(handoff_us)) => alloc::format!(
                    " (chunks of {chunk_us} us: a hand-off in {rounds} rounds of {rounds} at {handoff_us} us, times {} wake steps)",
                    sched::round_plan::wake_steps(costs.steal_cores),
                    rounds = sched::round_plan::HANDOFF_PROBE_ROUNDS
                ),
                (chunk_us, None) => alloc::format!(
                    " (chunks of {chunk_us} us: at no length up to it was the chunk handed off in {rounds} rounds of {rounds})",
                    rounds = sched::round_plan::HANDOFF_PROBE_ROUNDS
                ),
            },
        )
    };
    let window = sched::host_parallelism::WINDOW_US / 1000;
    let windows = host.first_window_milli.map_or_else(
        || alloc::format!("a {window} ms window"),
        |first| {
            alloc::format!(
                "the higher of two {window} ms windows, the first read {}.{:03}",
                first / 1000,
                first % 1000
            )
        },
    );
    println!(
        "host: {} of {} cores run at once (measured {}.{:03}, {}.{:03} seen at once, in {windows}{}), {pollers} may poll; {rounds}",
        at_once,
        host.cores,
        host.measured_milli / 1000,
        host.measured_milli % 1000,
        host.seen_milli / 1000,
        host.seen_milli % 1000,
        if params.parallelism.is_some() {
            ", overridden by parallelism="
        } else {
            ""
        },
    );
    sched::stats::mark_workload_start();
}

/// A run in which the watchdog caught a lost wakeup failed, whatever else
/// it did; so did one whose injected IPI fault never fired (it proved
/// nothing).
fn fail_on_lost_wakeups(code: ExitCode) -> ExitCode {
    if sched::fork_join::dropped_wake_unfired() {
        println!(
            "vigil: FAILED: the injected dropped task wake never fired (no parked last worker)"
        );
        return ExitCode::CheckFailed;
    }
    if sched::steal_join::strand_unfired() {
        println!(
            "vigil: FAILED: the injected stranded-steal fault never fired (no round published with every other core idle)"
        );
        return ExitCode::CheckFailed;
    }
    if sched::watchdog::stalled_waker_unfired() {
        println!(
            "vigil: FAILED: the injected stalled-waker fault never fired (no wake by a core other than core 0 from its round on)"
        );
        return ExitCode::CheckFailed;
    }
    if sched::stealable::busy_searcher_unfired() {
        println!(
            "vigil: FAILED: the injected busy-searcher fault never fired (no core but core 0 ran pinned work)"
        );
        return ExitCode::CheckFailed;
    }
    if let Some(fault) = sched::wake_ipi::unfired_fault() {
        println!(
            "vigil: FAILED: the injected {fault:?} IPI fault never fired (no wake IPI after its round)"
        );
        return ExitCode::CheckFailed;
    }
    let lost = sched::watchdog::lost_wakeups();
    if lost == 0 {
        return code;
    }
    println!("vigil: FAILED: {lost} lost wakeup(s) detected by the watchdog");
    ExitCode::CheckFailed
}

/// Arms `fault=dropped-ipi|misdirected-ipi|miscounted-ipi` (they fire in the
/// wake path, at a seeded round of the run).
fn configure_ipi_fault(params: &BootParams) {
    use sched::wake_ipi::{self, IpiFault};
    let fault = match params.fault {
        Fault::DroppedIpi => IpiFault::Dropped,
        Fault::MisdirectedIpi => IpiFault::Misdirected,
        Fault::MiscountedIpi => IpiFault::Miscounted,
        _ => return,
    };
    wake_ipi::configure(fault, params.seed, params.iterations);
}

/// `trial=always` where no trial can run is a bad parameter: it would do
/// nothing, silently.
fn check_trial(params: &BootParams) {
    if params.trial != Trial::Always || params.mode != Mode::Run {
        return;
    }
    let why = if params.workload != Workload::Laplace {
        "only the laplace workload runs a round trial"
    } else if params.chunks.is_some() {
        "`chunks=` fixes the chunks"
    } else if params.pool == Some(Pool::Pinned) {
        "`pool=pinned` has no stealable chunks"
    } else {
        return;
    };
    println!("bad boot parameter: `trial=always` has no effect: {why}");
    exit(ExitCode::BadParameter)
}

/// The protocol policy: from `policy=`, or `poll` in an `idle-poll` build.
fn wake_policy(params: &BootParams) -> Policy {
    if cfg!(feature = "idle-poll") {
        if params.policy_given {
            println!(
                "bad boot parameter: `policy=` has no effect in an idle-poll build (idle cores poll)"
            );
            exit(ExitCode::BadParameter)
        }
        return Policy::Poll;
    }
    params.policy
}

/// Parses the boot parameters the arch layer found (fw_cfg first, the
/// harness's path; then the disk image's ramdisk; else none); a bad line,
/// or one that cannot be read, ends the run with
/// [`ExitCode::BadParameter`] after saying exactly what is wrong.
fn load_params(found: ParamLine) -> BootParams {
    let (source, line) = match found {
        ParamLine::Found(source, line) => (source, line),
        ParamLine::Absent => (
            vigil_proto::boot_params::ParamSource::None,
            alloc::string::String::new(),
        ),
        ParamLine::Unreadable(why) => {
            println!("bad boot parameter: {why}");
            exit(ExitCode::BadParameter)
        }
    };
    match params::parse(&line) {
        Ok(parsed) => {
            println!("boot parameters ({}): `{}`", source.name(), line.trim());
            parsed
        }
        Err(err) => {
            println!("bad boot parameter: {err}");
            exit(ExitCode::BadParameter)
        }
    }
}

fn inject(fault: Fault) {
    match fault {
        Fault::None => {}
        Fault::Panic => panic!("injected fault (fault=panic)"),
        Fault::Triple => {
            println!("injecting a triple fault");
            fault_injection::triple_fault()
        }
        Fault::Hang => {
            println!("injecting a hang");
            halt::halt_forever()
        }
        Fault::GuardPageRead => {
            println!("injecting a page fault on a guard page");
            fault_injection::guard_page_read()
        }
        Fault::ApStackOverflow => {
            if cores::count() < 2 {
                println!("bad boot parameter: fault=ap-stack-overflow needs at least 2 cores");
                exit(ExitCode::BadParameter)
            }
            println!("injecting a stack overflow on core 1");
            let result = remote_call::run_on(1, Arc::new(|_| fault_injection::overflow_stack()));
            panic!("core 1 survived a stack overflow: {result:?}")
        }
        // Armed at boot; they fire in the wake path.
        Fault::DroppedIpi | Fault::MisdirectedIpi | Fault::MiscountedIpi => {}
        Fault::DroppedTaskWake => {
            println!(
                "injecting a dropped task wake: a fork-join round from round {} on will not wake its last worker while it is parked",
                sched::fork_join::DROPPED_WAKE_ROUND
            );
            sched::fork_join::drop_one_release_wake();
        }
        Fault::StalledWaker => {
            if smp::cores::count() < 3 {
                println!("bad boot parameter: fault=stalled-waker needs at least 3 cores");
                exit(ExitCode::BadParameter)
            }
            println!(
                "injecting a stalled waker: from fork-join round {} on, the first waker on a core other than core 0 stops after its push",
                vigil_proto::boot_params::STALLED_ROUND
            );
            sched::watchdog::arm_stalled_waker();
        }
        Fault::BusySearcher => {
            if !sched::stealable::enabled() || smp::cores::count() < 3 {
                println!(
                    "bad boot parameter: fault=busy-searcher needs pool=steal and at least 3 cores"
                );
                exit(ExitCode::BadParameter)
            }
            println!(
                "injecting a busy searcher: the first core but core 0 to run pinned work stays registered idle and never hands a search on"
            );
            sched::stealable::arm_busy_searcher();
        }
        Fault::StrandedSteal => {
            if !sched::stealable::enabled() || smp::cores::count() < 2 {
                println!(
                    "bad boot parameter: fault=stranded-steal needs pool=steal and at least 2 cores"
                );
                exit(ExitCode::BadParameter)
            }
            println!(
                "injecting stranded stealable work: a round from round {} on, published with every other core idle, drops its search wake and its caller does not help",
                sched::steal_join::STRANDED_ROUND
            );
            sched::steal_join::strand_one_round();
        }
    }
}
