//! QEMU's `isa-debug-exit` device (iobase 0xf4, 4 bytes): writing `v` makes
//! QEMU exit with status `(v << 1) | 1`. Status 0 is never produced by this
//! device, so the harness can tell a triple fault (`-no-reboot`: status 0)
//! from any code the kernel chose.

use vigil_proto::exit_code::DEBUG_EXIT_PORT;
use x86_64::instructions::port::Port;

/// Asks QEMU to exit with `(value << 1) | 1`; returns if no such device
/// exists (real hardware, Bochs, or QEMU started without it).
pub fn exit_qemu(value: u32) {
    let mut port: Port<u32> = Port::new(DEBUG_EXIT_PORT);
    // SAFETY: port 0xf4 is the debug-exit device the harness attaches under
    // QEMU (which then terminates); on a machine without it the write goes
    // to an unclaimed port and is dropped. Either way no memory is touched.
    unsafe { port.write(value) };
}
