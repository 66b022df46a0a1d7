//! `cargo xtask replay FILE.json [--run N] [--times N] [--explain]`: boot a
//! recorded Bochs boot again (N times) and fail (exit 1) if any boot's
//! serial output differs from the recording in any byte, naming the first
//! differing line; with `--explain`, the history of the lost wakeup's
//! victim's words.

use crate::cli::ReplayArgs;
use crate::error::{Result, XtaskError};
use crate::runner::kernel_build::build_kernel;
use crate::stress::explain;
use crate::stress::replay::{self, Replayed};

/// Replays the chosen boot; bad arguments (no such file or boot, a QEMU
/// boot) exit 2 before anything is built.
pub fn run(args: &ReplayArgs) -> Result<()> {
    let recording = replay::load(&args.file, args.run)?;
    if let Some(why) = crate::runner::bochs::missing() {
        return Err(XtaskError::usage(why));
    }
    let planned = &recording.run.planned;
    let record = &recording.run.record;
    println!(
        "replay: boot {} of {} (smp={} run {} seed={}), recorded as {}: {}",
        planned.order,
        args.file.display(),
        planned.boot.smp,
        planned.run,
        planned.seed,
        record.class,
        record.reason
    );
    println!("replay: {}", planned.boot.reproduce);
    let victim = if args.explain {
        Some(explain::victim_of(&record.serial)?)
    } else {
        None
    };
    let kernel = build_kernel(&recording.build)?;
    match victim {
        None => {
            // Boots identical in full, identical up to a wall-clock cut,
            // different, and not run (the emulator failed).
            let (mut identical, mut cut, mut differ, mut errors) = (0, 0, 0, 0);
            for time in 1..=args.times {
                if args.times > 1 {
                    println!("replay: boot {time} of {}", args.times);
                }
                match replay::replay(&recording, &kernel, args.echo) {
                    Ok(replayed) => match report(&recording.run.record.serial, &replayed) {
                        Ok(()) if replayed.compared_prefix_only => cut += 1,
                        Ok(()) => identical += 1,
                        Err(_) => differ += 1,
                    },
                    Err(err) if args.times > 1 => {
                        println!("replay: FAILED to boot: {err}");
                        errors += 1;
                    }
                    Err(err) => return Err(err),
                }
            }
            if args.times > 1 {
                println!(
                    "replay: {identical} of {} boots identical to the recording; {cut} identical up to a wall-clock cut, {differ} different, {errors} failed to boot",
                    args.times
                );
            }
            if identical + cut == args.times {
                Ok(())
            } else {
                Err(XtaskError::Reported)
            }
        }
        Some(victim) => {
            let explanation = explain::explain(&recording, &kernel, &victim, args.echo)?;
            let path = explain::history_path(&args.file, recording.run.planned.order);
            explanation.write_history(&path)?;
            print!("{}", explanation.report(&path));
            if explanation.is_complete() {
                Ok(())
            } else {
                Err(XtaskError::Reported)
            }
        }
    }
}

fn report(recorded: &str, replayed: &Replayed) -> Result<()> {
    if let Some((then, now)) = &replayed.other_kernel {
        println!(
            "replay: note: the kernel is not the recorded one (ELF FNV-1a {then} recorded, {now} now): a difference may come from the build"
        );
    }
    let outcome = &replayed.outcome;
    println!(
        "replay: Bochs ran for {:.1} s; {}",
        outcome.elapsed.as_secs_f64(),
        outcome.verdict_line()
    );
    match &replayed.difference {
        None => {
            let scope = if replayed.compared_prefix_only {
                " (the host cut the boot at a wall-clock limit, its timeout or stall limit: compared up to the shorter output)"
            } else {
                ""
            };
            println!(
                "replay: serial output identical to the recording{scope}: {} bytes, {} lines, FNV-1a {}",
                outcome.serial_bytes.len(),
                outcome.serial.lines().count(),
                replayed.serial_fnv1a
            );
            Ok(())
        }
        Some(difference) if difference.line == 0 => {
            println!(
                "replay: FAILED: the serial output's text matches but its bytes do not (FNV-1a {} recorded, {} replayed)",
                difference.recorded.as_deref().unwrap_or_default(),
                replayed.serial_fnv1a
            );
            Err(XtaskError::Reported)
        }
        Some(difference) => {
            println!(
                "replay: FAILED: the serial output differs from the recording ({} bytes recorded, {} replayed); {difference}",
                recorded.len(),
                outcome.serial_bytes.len()
            );
            Err(XtaskError::Reported)
        }
    }
}
