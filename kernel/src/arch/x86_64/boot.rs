//! The x86_64 entry point: the bootloader (`bootloader` 0.11, BIOS or UEFI)
//! calls [`entry`] on the bootstrap core with its `BootInfo`; this sets up
//! what every later step needs (console, exception table, the masked PIC,
//! paging, frames, heap, this core's GDT/TSS, the ACPI power-off) and hands
//! over to the arch-neutral boot sequence, `start::kernel_main`.

use super::{acpi_poweroff, boot_ramdisk, exceptions, fw_cfg, gdt, paging, pic, serial};
pub use crate::arch::param_line::ParamLine;
use crate::{console, heap, memory, println};
use bootloader_api::BootInfo;
use bootloader_api::config::{BootloaderConfig, Mapping};
use bootloader_api::info::MemoryRegionKind;
use vigil_proto::boot_params::{FW_CFG_FILE, ParamSource};

const KERNEL_STACK_BYTES: u64 = 256 * 1024;

/// Asks the bootloader to map all physical memory (ACPI tables, the LAPIC
/// page and the AP trampoline are reached through it).
pub static BOOTLOADER_CONFIG: BootloaderConfig = {
    let mut config = BootloaderConfig::new_default();
    config.mappings.physical_memory = Some(Mapping::Dynamic);
    config.kernel_stack_size = KERNEL_STACK_BYTES;
    config
};

bootloader_api::entry_point!(entry, config = &BOOTLOADER_CONFIG);

/// What the arch-neutral boot sequence needs from the platform's early boot.
#[derive(Debug)]
pub struct BootEnv {
    /// Bytes the heap got.
    pub heap_bytes: u64,
    /// Where the kernel image was loaded, minus where it was linked (the
    /// host subtracts it from addresses before symbolizing them).
    pub kernel_image_offset: u64,
    /// The ACPI RSDP, for core discovery.
    pub(super) rsdp_phys: Option<u64>,
    /// The bootloader's ramdisk (the disk image's parameter line).
    ramdisk: Option<&'static [u8]>,
}

/// Entry point (called by the bootloader on the bootstrap core).
fn entry(boot_info: &'static mut BootInfo) -> ! {
    serial::init();
    console::init();
    exceptions::load_idt();
    pic::remap_and_mask();
    let phys_offset = boot_info
        .physical_memory_offset
        .into_option()
        .expect("bootloader did not map physical memory");
    paging::init(phys_offset);
    memory::frames::init(
        boot_info
            .memory_regions
            .iter()
            .filter(|r| r.kind == MemoryRegionKind::Usable)
            .map(|r| (r.start, r.end)),
    );
    let heap_bytes = heap::init();
    gdt::init_this_core();
    let rsdp_phys = boot_info.rsdp_addr.into_option();
    // Before anything can end the run (a bad parameter does): off QEMU,
    // the power-off is how a run ends.
    if let Err(why) = acpi_poweroff::prepare(rsdp_phys) {
        println!("acpi: no power-off ({why}); a run ends through QEMU's exit device only");
    }
    crate::start::kernel_main(BootEnv {
        heap_bytes,
        kernel_image_offset: boot_info.kernel_image_offset,
        rsdp_phys,
        ramdisk: boot_ramdisk::bytes(boot_info),
    })
}

impl BootEnv {
    /// The boot parameters: fw_cfg first (the harness's path under QEMU),
    /// then the disk image's ramdisk (Bochs), else none.
    pub fn param_line(&self) -> ParamLine {
        match fw_cfg::read_file(FW_CFG_FILE) {
            Ok(Some(line)) => ParamLine::Found(ParamSource::FwCfg, line),
            Ok(None) | Err(fw_cfg::FwCfgError::NoDevice) => match self.ramdisk {
                Some(bytes) => match core::str::from_utf8(bytes) {
                    Ok(text) => ParamLine::Found(ParamSource::DiskImage, text.into()),
                    Err(err) => ParamLine::Unreadable(alloc::format!(
                        "the disk image's parameter line is not UTF-8 ({err})"
                    )),
                },
                None => ParamLine::Absent,
            },
            Err(err) => {
                ParamLine::Unreadable(alloc::format!("cannot read fw_cfg {FW_CFG_FILE}: {err:?}"))
            }
        }
    }
}
