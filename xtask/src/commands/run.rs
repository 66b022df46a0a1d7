//! `cargo xtask run`: build, boot under QEMU, stream the serial port, and
//! succeed only if the kernel wrote the success code.

use crate::cli::{Peer, RunArgs};
use crate::error::{Result, XtaskError};
use crate::guest::linux_costs::find_linux_costs;
use crate::runner::bochs::{self, BochsConfig};
use crate::runner::install::ensure_qemu_for;
use crate::runner::kernel_build::{bios_image_with_params, build_kernel};
use crate::runner::linux_peer::build_linux_peer;
use crate::runner::platform::{Apic, Emulator, Machine};
use crate::runner::qemu::{self, RunConfig};
use crate::runner::qemu::{Guest, run_guest};
use crate::runner::qemu_command::GDB_PORT;
use vigil_proto::linux_peer::LinuxIdle;

/// Runs one boot; the verdict line (`vigil: ok (...)` or
/// `vigil: FAILED (...)`) is the last thing printed.
pub fn run(args: &RunArgs) -> Result<()> {
    args.bochs.check_emulator(args.emulator)?;
    crate::runner::platform::check_arch(
        args.build.arch,
        args.machine,
        args.apic,
        args.uefi,
        args.emulator,
    )
    .map_err(XtaskError::Usage)?;
    if args.emulator == Emulator::Bochs {
        return run_bochs(args);
    }
    if let Some(Peer::Linux) = args.peer {
        return run_linux_peer(args);
    }
    let config = RunConfig {
        arch: args.build.arch,
        smp: args.smp,
        machine: args.machine,
        apic: args.apic,
        uefi: args.uefi,
        timeout_s: if args.gdb { None } else { Some(args.timeout_s) },
        gdb: args.gdb,
        params: args.params.clone(),
        echo: true,
        ipi_oracle: args.ipi_oracle,
        host_cores: args.host_cores,
        ..RunConfig::default()
    };
    // Bad combinations (e.g. 200 cores in xAPIC mode) exit 2 before the build.
    config.validate()?;
    ensure_qemu_for(&[args.build.arch], args.uefi)?;
    let kernel = build_kernel(&args.build.build_config())?;
    if args.gdb {
        eprintln!(
            "xtask: QEMU waits for gdb (no timeout); attach with:\n  gdb {} -ex 'target remote :{GDB_PORT}'",
            kernel.elf.display()
        );
    }
    let outcome = qemu::run(&config, &kernel)?;
    if !outcome.serial.is_empty() && !outcome.serial.ends_with('\n') {
        println!(); // the kernel was cut off mid-line
    }
    eprintln!("xtask: QEMU ran for {:.1} s", outcome.elapsed.as_secs_f64());
    for check in &outcome.checksum_checks {
        println!("{}", check.describe());
    }
    if let Some(check) = outcome.ipi_oracle {
        println!(
            "vigil: wake IPIs {}: {}",
            if check.matches() { "match" } else { "DIFFER" },
            check.describe()
        );
    } else if args.ipi_oracle {
        println!("vigil: no IPI comparison (the guest printed no statistics line)");
    }
    // The host's own finding in the final statistics: a core left halted
    // with work in its inbox (a lost wakeup the run survived because
    // another core did the work; the guest reports it itself only with its
    // watchdog on).
    let left_halted_with_work = crate::campaign::run_class::halted_with_work_at_end(&outcome);
    if let Some(finding) = &left_halted_with_work {
        println!("vigil: LOST WAKEUP found by the host: {finding}");
    }
    println!("{}", outcome.verdict_line());
    if outcome.verdict.is_success() && left_halted_with_work.is_none() {
        Ok(())
    } else {
        Err(XtaskError::Reported)
    }
}

/// `--peer linux`: Debian's kernel and the peer's initramfs on the same
/// machine; the verdict is the program's exit code, the checksum the
/// host's check, and the costs line is shown as the guest printed it.
fn run_linux_peer(args: &RunArgs) -> Result<()> {
    if args.emulator != Emulator::Qemu {
        return Err(XtaskError::usage("--peer linux boots under QEMU only"));
    }
    if !args.build.features.is_empty() || args.build.release {
        return Err(XtaskError::usage(
            "--peer linux builds no Vigil kernel: no --release or --features (its /init is always a release build)",
        ));
    }
    let idle = args.linux_idle.unwrap_or(LinuxIdle::Default);
    let config = RunConfig {
        arch: args.build.arch,
        smp: args.smp,
        machine: args.machine,
        apic: args.apic,
        uefi: args.uefi,
        timeout_s: Some(args.timeout_s),
        gdb: args.gdb,
        params: args.params.clone(),
        echo: true,
        ipi_oracle: args.ipi_oracle,
        host_cores: args.host_cores,
        ..RunConfig::default()
    };
    config.validate_for_linux_peer()?;
    ensure_qemu_for(&[config.arch], false)?;
    let peer = build_linux_peer()?;
    eprintln!(
        "xtask: Linux peer: Debian's {} ({}), idle {}",
        peer.package,
        peer.kernel.display(),
        idle.name()
    );
    let outcome = run_guest(&config, Guest::LinuxPeer(&peer, idle))?;
    if !outcome.serial.is_empty() && !outcome.serial.ends_with('\n') {
        println!();
    }
    eprintln!("xtask: QEMU ran for {:.1} s", outcome.elapsed.as_secs_f64());
    for check in &outcome.checksum_checks {
        println!("{}", check.describe());
    }
    if outcome.verdict.is_success() && outcome.checksum_checks.is_empty() {
        println!("vigil: FAILED (the Linux peer exited with success but printed no result line)");
        return Err(XtaskError::Reported);
    }
    if let Some(costs) = find_linux_costs(&outcome.serial) {
        println!(
            "vigil: Linux paid {} wake IPIs (rescheduling and function-call) and {} context switches per iteration (idle={}, cpuidle driver {})",
            costs
                .ipis_per_iteration()
                .map_or_else(|| "-".to_string(), |ipis| format!("{ipis:.2}")),
            costs
                .switches_per_iteration()
                .map_or_else(|| "-".to_string(), |switches| format!("{switches:.2}")),
            costs.idle.name(),
            costs.idle_driver
        );
    }
    println!("{}", outcome.verdict_line());
    if outcome.verdict.is_success() {
        Ok(())
    } else {
        Err(XtaskError::Reported)
    }
}

/// What `--emulator bochs` cannot do, as a usage error (exit 2).
pub fn bochs_conflicts(args: &RunArgs) -> Option<&'static str> {
    if args.uefi {
        Some("--emulator bochs boots the BIOS image only (no --uefi)")
    } else if args.machine != Machine::Pc {
        Some("--emulator bochs is a PC (i440FX/PIIX4) machine only (no --machine q35)")
    } else if args.apic != Apic::Xapic {
        Some("--emulator bochs runs in xAPIC mode only (no --apic x2apic)")
    } else if args.smp > 64 {
        Some("--emulator bochs runs in xAPIC mode only: at most 64 cores")
    } else if args.gdb {
        Some("--gdb is QEMU's gdb stub (Bochs has its own debugger)")
    } else if args.ipi_oracle {
        Some("--ipi-oracle reads QEMU's trace (not available under Bochs)")
    } else if args.host_cores.is_some() {
        Some("--host-cores confines QEMU's vCPU threads (Bochs runs every CPU on one host thread)")
    } else {
        None
    }
}

/// `--emulator bochs`: the image with the parameters inside, booted under
/// Bochs; the verdict is the kernel's own line.
fn run_bochs(args: &RunArgs) -> Result<()> {
    if let Some(why) = bochs_conflicts(args) {
        return Err(XtaskError::usage(why));
    }
    if let Some(why) = bochs::missing() {
        return Err(XtaskError::usage(why));
    }
    let kernel = build_kernel(&args.build.build_config())?;
    let image = bios_image_with_params(&kernel, &args.params)?;
    let settings = args.bochs.settings();
    eprintln!(
        "xtask: Bochs settings (they and the image determine the boot): ips={}, turns of {} instruction(s), time0={}, clock sync=none",
        settings.ips, settings.turn, settings.time0
    );
    let outcome = bochs::run(
        &BochsConfig {
            echo: true,
            settings,
            ..BochsConfig::new(args.smp, args.timeout_s)
        },
        &image,
    )?;
    eprintln!(
        "xtask: serial output: {} bytes, FNV-1a {}",
        outcome.serial_bytes.len(),
        crate::campaign::boot_record::serial_fingerprint(&outcome.serial_bytes)
    );
    eprintln!(
        "xtask: Bochs ran for {:.1} s",
        outcome.elapsed.as_secs_f64()
    );
    for check in &outcome.checksum_checks {
        println!("{}", check.describe());
    }
    println!("{}", outcome.verdict_line());
    if outcome.is_success() {
        Ok(())
    } else {
        Err(XtaskError::Reported)
    }
}
