//! What one stress boot amounts to: passed, stuck (host-detected hang),
//! lost wakeups (guest-detected), checksum mismatch, or another failure.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::campaign::boot_spec::BootSpec;
use crate::guest::laplace_check;
use crate::guest::run_output::{self, LostWakeups};
use crate::guest::verdict::Verdict;
use crate::guest::vigil_stats::VigilStats;
use crate::runner::qemu::RunOutcome;

/// Outcome class of one boot, most specific first: a stuck guest is
/// `Stuck` even if the watchdog reported lost wakeups before it hung.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunClass {
    /// Success code, and the expected result line checked out.
    Passed,
    /// No serial output for the stall limit: examined and killed by the host.
    Stuck,
    /// The in-guest watchdog caught (and rescued) lost wakeups.
    LostWakeups,
    /// The in-guest strand watch found stealable work queued with every
    /// core halted (and ended the run).
    StrandedWork,
    /// A result differed from the host's computation.
    ChecksumMismatch,
    /// The guest's count of wake IPIs differed from QEMU's (the oracle).
    IpiCountMismatch,
    /// Killed at the boot's limit while still printing: slower than the
    /// campaign waits for (a guest that stops printing is [`Self::Stuck`]).
    TimedOut,
    /// Anything else: panic, exception, triple fault, timeout, missing
    /// result, QEMU error.
    Failed,
}

impl RunClass {
    /// Whether this is a pass.
    pub fn is_pass(self) -> bool {
        self == Self::Passed
    }

    /// Whether the class is a detector's: the guest's lost-wakeup, strand
    /// and held-search watches and checksum check, the host's stuck-core
    /// verdict or its reading of the final statistics, the IPI oracle. A
    /// boot that panicked, was killed while still printing, or failed
    /// otherwise is not a detection (a fault campaign counts these, see
    /// `stress::report::caught` for the stuck and stuck-round cases).
    pub fn is_detection(self) -> bool {
        matches!(
            self,
            Self::Stuck
                | Self::LostWakeups
                | Self::StrandedWork
                | Self::ChecksumMismatch
                | Self::IpiCountMismatch
        )
    }
}

impl fmt::Display for RunClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Passed => "passed",
            Self::Stuck => "stuck",
            Self::LostWakeups => "lost wakeups",
            Self::StrandedWork => "stranded stealable work",
            Self::ChecksumMismatch => "checksum mismatch",
            Self::IpiCountMismatch => "IPI count mismatch",
            Self::TimedOut => "timed out",
            Self::Failed => "failed",
        })
    }
}

/// Classifies a boot of `spec`: a success passes only with the result
/// line [`BootSpec::expect_result`] asks for and every line of
/// [`BootSpec::marks`].
pub fn classify(outcome: &RunOutcome, lost: &LostWakeups, spec: &BootSpec) -> RunClass {
    let mismatch = laplace_check::first_mismatch(&outcome.checksum_checks).is_some();
    if outcome.verdict == Verdict::Stuck {
        RunClass::Stuck
    } else if lost.count() > 0 || halted_with_work_at_end(outcome).is_some() {
        RunClass::LostWakeups
    } else if run_output::stranded_report(&outcome.serial).is_some() {
        RunClass::StrandedWork
    } else if mismatch {
        RunClass::ChecksumMismatch
    } else if outcome.verdict == Verdict::IpiCountMismatch {
        RunClass::IpiCountMismatch
    } else if outcome.verdict == Verdict::Timeout {
        RunClass::TimedOut
    } else if outcome.verdict.is_success() && missing_output(outcome, spec).is_none() {
        RunClass::Passed
    } else {
        RunClass::Failed
    }
}

/// The host's finding in the final statistics: cores halted with work in
/// their inbox at the end of the run (`None`: none, or no statistics).
pub fn halted_with_work_at_end(outcome: &RunOutcome) -> Option<String> {
    match VigilStats::find_in(&outcome.serial) {
        Some(Ok(stats)) => stats.describe_halted_with_work_at_end(),
        _ => None,
    }
}

/// What a successful boot of `spec` left out: its result line or a
/// marked line.
fn missing_output(outcome: &RunOutcome, spec: &BootSpec) -> Option<String> {
    if spec.expect_result && outcome.checksum_checks.is_empty() {
        return Some("printed no result line".to_string());
    }
    spec.marks
        .iter()
        .find(|mark| outcome.mark(mark).is_none())
        .map(|mark| format!("printed no `{mark}` line"))
}

/// One line on why a boot of `spec` is in its class.
pub fn explain(
    outcome: &RunOutcome,
    lost: &LostWakeups,
    class: RunClass,
    spec: &BootSpec,
) -> String {
    match class {
        RunClass::LostWakeups if lost.count() == 0 => {
            halted_with_work_at_end(outcome).unwrap_or_default()
        }
        RunClass::LostWakeups => format!(
            "{} lost wakeup(s) detected by the in-guest watchdog ({})",
            lost.count(),
            outcome.reason()
        ),
        RunClass::StrandedWork => run_output::stranded_report(&outcome.serial)
            .unwrap_or_default()
            .to_string(),
        RunClass::ChecksumMismatch => laplace_check::first_mismatch(&outcome.checksum_checks)
            .map(|check| check.describe())
            .unwrap_or_else(|| outcome.reason()),
        RunClass::Stuck => {
            let reason = outcome.reason();
            reason
                .strip_prefix("stuck: ")
                .map_or(reason.clone(), str::to_string)
        }
        RunClass::Failed if outcome.verdict.is_success() => format!(
            "exited with success but {}",
            missing_output(outcome, spec).unwrap_or_default()
        ),
        RunClass::Failed => match run_output::stuck_round_dump(&outcome.serial) {
            Some(dump) => format!(
                "{} after the guest's {}",
                outcome.reason(),
                dump.join("\n   ")
            ),
            None => outcome.reason(),
        },
        _ => outcome.reason(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guest::laplace_check::check_serial;
    use crate::guest::verdict::QemuExit;
    use crate::runner::qemu::LineMark;
    use std::time::Duration;

    const RESULT: &str = "[c0] laplace: size=64 iterations=300 workers=4 elapsed_us=1 residual=759484750 checksum=0x22b50accc8dd2c19\n";

    fn outcome(exit: QemuExit, serial: &str) -> RunOutcome {
        let checksum_checks = check_serial(serial);
        let mut verdict = Verdict::from_exit(exit);
        if verdict.is_success() && laplace_check::first_mismatch(&checksum_checks).is_some() {
            verdict = Verdict::ChecksumMismatch;
        }
        RunOutcome {
            verdict,
            exit,
            exit_status: None,
            serial: serial.to_string(),
            qemu_stderr: String::new(),
            elapsed: Duration::from_secs(1),
            command_line: String::new(),
            registers_at_timeout: None,
            examination: None,
            checksum_checks,
            marks: Vec::new(),
            ipi_oracle: None,
        }
    }

    fn spec() -> BootSpec {
        BootSpec::new(
            &crate::runner::kernel_build::BuildConfig::default(),
            4,
            crate::runner::platform::Apic::Xapic,
            Vec::new(),
            60,
            false,
        )
    }

    fn class_of(exit: QemuExit, serial: &str) -> RunClass {
        let outcome = outcome(exit, serial);
        classify(&outcome, &LostWakeups::parse(serial), &spec())
    }

    #[test]
    fn classes() {
        let ok = QemuExit::Status(33);
        assert_eq!(class_of(ok, RESULT), RunClass::Passed);
        assert_eq!(class_of(ok, "[c0] booted\n"), RunClass::Failed);
        assert_eq!(
            class_of(ok, &RESULT.replace("0x22b50accc8dd2c19", "0x1")),
            RunClass::ChecksumMismatch
        );
        let lost = format!(
            "[c1] LOST WAKEUP on core 1: task 2 waited 200 ms\n{RESULT}[c0] vigil: FAILED: 1 lost wakeup(s) detected by the watchdog\n"
        );
        assert_eq!(class_of(QemuExit::Status(35), &lost), RunClass::LostWakeups);
        assert_eq!(
            class_of(QemuExit::Stalled { stall_s: 60 }, &lost),
            RunClass::Stuck
        );
        assert_eq!(class_of(QemuExit::Status(37), RESULT), RunClass::Failed);
        assert_eq!(
            class_of(QemuExit::TimedOut { timeout_s: 9 }, ""),
            RunClass::TimedOut
        );
    }

    #[test]
    fn a_success_needs_every_marked_line() {
        let idle = BootSpec {
            expect_result: false,
            marks: vec!["idle: start".to_string(), "idle: end".to_string()],
            ..spec()
        };
        let mut run = outcome(QemuExit::Status(33), "[c0] idle: start\n");
        run.marks = vec![LineMark {
            mark: "idle: start".to_string(),
            line: "[c0] idle: start".to_string(),
            at_s: 1.0,
            qemu_cpu_s: Some(0.5),
        }];
        let lost = LostWakeups::default();
        assert_eq!(classify(&run, &lost, &idle), RunClass::Failed);
        assert_eq!(
            explain(&run, &lost, RunClass::Failed, &idle),
            "exited with success but printed no `idle: end` line"
        );
        run.marks.push(LineMark {
            mark: "idle: end".to_string(),
            line: "[c0] idle: end".to_string(),
            at_s: 2.0,
            qemu_cpu_s: Some(0.6),
        });
        assert_eq!(classify(&run, &lost, &idle), RunClass::Passed);
        // Without a result line, a grid boot fails; an idle one need not.
        assert_eq!(classify(&run, &lost, &spec()), RunClass::Failed);
    }

    #[test]
    fn explanations() {
        let serial = "[c1] LOST WAKEUP on core 1: x\n[c0] vigil: FAILED: 3 lost wakeup(s) detected by the watchdog\n";
        let run = outcome(QemuExit::Status(35), serial);
        let lost = LostWakeups::parse(serial);
        assert_eq!(
            explain(&run, &lost, RunClass::LostWakeups, &spec()),
            "3 lost wakeup(s) detected by the in-guest watchdog (check failed: exit code 0x11)"
        );
        let run = outcome(QemuExit::Stalled { stall_s: 20 }, "");
        assert_eq!(
            explain(&run, &LostWakeups::default(), RunClass::Stuck, &spec()),
            "no serial output for 20 s"
        );
        let run = outcome(QemuExit::Status(33), "");
        assert!(
            explain(&run, &LostWakeups::default(), RunClass::Failed, &spec()).contains("no result")
        );
        let run = outcome(
            QemuExit::Status(35),
            "[c3] STUCK ROUND: a fork-join round has not finished after 20000 ms\n[c3]   worker 2 (task 3): parker parked\n[c3] vigil: FAILED: stuck fork-join round\n",
        );
        assert_eq!(
            explain(&run, &LostWakeups::default(), RunClass::Failed, &spec()),
            "check failed: exit code 0x11 after the guest's STUCK ROUND: a fork-join round has not finished after 20000 ms\n     worker 2 (task 3): parker parked"
        );
    }
}
