//! `cargo xtask run`: build, boot under QEMU, stream the serial port, and
//! succeed only if the kernel wrote the success code.

use crate::cli::RunArgs;
use crate::error::{Result, XtaskError};
use crate::install::ensure_qemu;
use crate::kernel_build::build_kernel;
use crate::qemu::{self, RunConfig};
use crate::qemu_command::GDB_PORT;

/// Runs one boot; the verdict line (`vigil: ok (...)` or
/// `vigil: FAILED (...)`) is the last thing printed.
pub fn run(args: &RunArgs) -> Result<()> {
    let config = RunConfig {
        smp: args.smp,
        machine: args.machine,
        apic: args.apic,
        uefi: args.uefi,
        timeout_s: if args.gdb { None } else { Some(args.timeout_s) },
        gdb: args.gdb,
        params: args.params.clone(),
        echo: true,
        ipi_oracle: args.ipi_oracle,
        ..RunConfig::default()
    };
    // Bad combinations (e.g. 200 cores in xAPIC mode) exit 2 before the build.
    config.validate()?;
    ensure_qemu(args.uefi)?;
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
    println!("{}", outcome.verdict_line());
    if outcome.verdict.is_success() {
        Ok(())
    } else {
        Err(XtaskError::Reported)
    }
}
