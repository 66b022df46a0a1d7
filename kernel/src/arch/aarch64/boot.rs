//! The AArch64 boot on QEMU's `virt` (direct kernel boot: `-kernel` with
//! the ELF, no firmware, EL1): `entry.rs`'s `_start` gives the bootstrap
//! core its stacks and exception table and calls
//! [`vigil_boot_primary`], which reads the device tree, builds the
//! identity map and turns the MMU on (before that, nothing here touches an
//! atomic: load/store-exclusive needs Normal memory), then sets up the
//! console, the frames, the heap, fw_cfg, PSCI and the GIC's distributor,
//! and hands over to the arch-neutral boot sequence,
//! `start::kernel_main`.

use super::devicetree::{self, Machine};
use super::{fw_cfg, gic, halt, paging, psci, serial, tsc};
pub use crate::arch::param_line::ParamLine;
use crate::{console, heap, memory};
use spin::Once;
use vigil_proto::boot_params::{FW_CFG_FILE, ParamSource};

/// What the arch-neutral boot sequence needs from the platform's early
/// boot.
#[derive(Debug)]
pub struct BootEnv {
    /// Bytes the heap got.
    pub heap_bytes: u64,
    /// Where the kernel image was loaded minus where it was linked: 0, the
    /// ELF is loaded at its link address.
    pub kernel_image_offset: u64,
    /// The machine, from the device tree.
    pub(super) machine: &'static Machine,
}

static MACHINE: Once<Machine> = Once::new();

unsafe extern "C" {
    /// The end of the kernel's image (`link.ld`): frames start above it.
    static __kernel_end: u8;
}

/// The bootstrap core's first Rust code (from `_start`: MMU off, IRQs
/// masked, on its boot stack).
#[unsafe(no_mangle)]
extern "C" fn vigil_boot_primary() -> ! {
    // SAFETY: on `virt` the device tree's address is the start of RAM,
    // which nothing writes during the boot.
    let machine = match unsafe { devicetree::read() } {
        Ok(machine) => machine,
        Err(err) => {
            serial::write_early(
                devicetree::DEFAULT_UART,
                format_args!("boot error: {err}\n"),
            );
            halt::halt_forever()
        }
    };
    let registers = paging::build_identity_map(&machine);
    paging::enable(&registers);
    paging::keep_registers(registers);
    serial::init(machine.uart);
    console::init();
    let machine = MACHINE.call_once(|| machine);
    tsc::init();
    let kernel_end = (&raw const __kernel_end) as u64;
    let ram_end = machine.ram.base + machine.ram.bytes;
    memory::frames::init(core::iter::once((kernel_end, ram_end)));
    let heap_bytes = heap::init();
    fw_cfg::init(machine.fw_cfg);
    psci::init(machine.psci);
    gic::init_distributor(
        machine.gic_distributor,
        &machine.gic_redistributors[..machine.gic_redistributor_count],
    );
    crate::start::kernel_main(BootEnv {
        heap_bytes,
        kernel_image_offset: 0,
        machine,
    })
}

impl BootEnv {
    /// The boot parameters: fw_cfg (the harness's only carrier on `virt`),
    /// else none.
    pub fn param_line(&self) -> ParamLine {
        match fw_cfg::read_file(FW_CFG_FILE) {
            Ok(Some(line)) => ParamLine::Found(ParamSource::FwCfg, line),
            Ok(None) | Err(fw_cfg::FwCfgError::NoDevice) => ParamLine::Absent,
            Err(err) => {
                ParamLine::Unreadable(alloc::format!("cannot read fw_cfg {FW_CFG_FILE}: {err:?}"))
            }
        }
    }
}
