//! The program as a machine's `/init`: the pseudo-filesystems it reads,
//! its console lines, and the end of the run through QEMU's exit device
//! (so the host reads the verdict from QEMU's exit status, as it does
//! Vigil's).

use std::io::Write as _;

use rustix::mount::{MountFlags, mount};
use vigil_proto::exit_code::{DEBUG_EXIT_PORT, ExitCode};
use vigil_proto::serial_line::CorePrefix;

/// Mounts `/proc` and `/sys` (an initramfs starts with neither); one that
/// is already mounted is fine.
pub fn mount_pseudo_filesystems() -> std::io::Result<()> {
    for (source, target) in [("proc", "/proc"), ("sysfs", "/sys")] {
        match mount(source, target, source, MountFlags::empty(), None) {
            Ok(()) | Err(rustix::io::Errno::BUSY) => {}
            Err(err) => {
                return Err(std::io::Error::other(format!(
                    "mounting {source} on {target}: {err}"
                )));
            }
        }
    }
    Ok(())
}

/// Prints one console line with the prefix of the CPU printing it (Vigil's
/// core prefix, `[cN] `, which the host's parsers expect).
pub fn say(message: &str) {
    let line = format!("{}{message}\n", CorePrefix(rustix::thread::sched_getcpu()));
    let mut out = std::io::stdout().lock();
    // Nothing to do about a console that cannot be written: the exit code
    // still reaches the host.
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
}

/// Ends the run with `code`: written to QEMU's `isa-debug-exit` port
/// (QEMU then exits with status `(code << 1) | 1`, the statuses the host
/// reads for Vigil). Without the device (or the right to its port) the
/// machine is powered off instead, which QEMU reports as status 0: never a
/// success to the host.
pub fn power_off(code: ExitCode) -> ! {
    say(&format!(
        "linux-laplace: exit {:#04x} ({})",
        code.code(),
        code.label()
    ));
    // A write to the console returns once Linux has the bytes, not once
    // the UART has sent them: without this wait QEMU exited before the
    // result line reached the serial port (seen at 4 vCPUs: the host got
    // the success code and no result line, and failed the boot). Nothing
    // to do if it fails: the host then misses lines and says so.
    let _ = rustix::termios::tcdrain(std::io::stdout());
    let port = libc::c_ulong::from(DEBUG_EXIT_PORT);
    // SAFETY: ioperm(2) changes only this process's I/O permission bitmap;
    // `/init` runs as root with CAP_SYS_RAWIO.
    if unsafe { libc::ioperm(port, 4, 1) } == 0 {
        // SAFETY: the harness's QEMU has its exit device at this port
        // (`isa-debug-exit,iobase=0xf4`); writing it ends the virtual
        // machine and touches no memory of ours. On a machine without the
        // device the write goes nowhere and the power-off below follows.
        unsafe {
            core::arch::asm!(
                "out dx, al",
                in("dx") DEBUG_EXIT_PORT,
                in("al") code.code(),
                options(nomem, nostack, preserves_flags)
            );
        }
    }
    let _ = rustix::system::reboot(rustix::system::RebootCommand::PowerOff);
    // Linux powers off asynchronously: wait for it (returning from `/init`
    // would panic the kernel instead).
    loop {
        std::thread::park();
    }
}
