//! The x86_64 entry point: the bootloader (`bootloader` 0.11, BIOS or UEFI)
//! calls [`entry`] on the bootstrap core with its `BootInfo`; this sets up
//! what every later step needs (console, exception table, the masked PIC,
//! paging, frames, heap), moves onto a stack of its own, sets up this
//! core's GDT/TSS and the ACPI power-off, and hands over to the
//! arch-neutral boot sequence, `start::kernel_main`.

use super::paging::GuardOwner;
use super::{acpi_poweroff, boot_ramdisk, exceptions, fw_cfg, gdt, paging, pic, serial};
pub use crate::arch::param_line::ParamLine;
use crate::{console, heap, memory, println};
use bootloader_api::BootInfo;
use bootloader_api::config::{BootloaderConfig, Mapping};
use bootloader_api::info::MemoryRegionKind;
use core::sync::atomic::{AtomicU64, Ordering};
use spin::Once;
use vigil_proto::boot_params::{FW_CFG_FILE, ParamSource};

/// Bytes of the bootstrap core's own stack (its idle loop runs on it).
const KERNEL_STACK_BYTES: u64 = 256 * 1024;

/// Bytes of the stack the bootloader gives [`entry`], used only until the
/// bootstrap core moves onto its own (paging, frames and heap set-up).
const BOOTLOADER_STACK_BYTES: u64 = 64 * 1024;

/// Asks the bootloader to map all physical memory (ACPI tables, the LAPIC
/// page and the AP trampoline are reached through it).
pub static BOOTLOADER_CONFIG: BootloaderConfig = {
    let mut config = BootloaderConfig::new_default();
    config.mappings.physical_memory = Some(Mapping::Dynamic);
    config.kernel_stack_size = BOOTLOADER_STACK_BYTES;
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
    // The bootstrap core leaves the bootloader's stack for one of its own,
    // as every other core's is: zeroed frames with a guard page below.
    // Under QEMU's TCG the bootloader's stack (physical 0x1125000 in the
    // boots measured) was slow: 32 chunks of the parallelism
    // measurement's register work took 695-788 thousand ticks there
    // against 552 thousand on a fresh stack, and this core's idle loop
    // runs on this stack for the whole run. Why is not pinned down: that
    // frame is the bootloader's own, not memory code is known to have run
    // from (`paging::map_stack` has the mechanism that slowed the other
    // stacks).
    let stack = paging::map_stack(
        KERNEL_STACK_BYTES,
        GuardOwner {
            what: "bootstrap core stack",
            index: 0,
        },
    );
    BOOTSTRAP_STACK.call_once(|| (stack.bottom.as_u64(), stack.top.as_u64()));
    // SAFETY: `stack` was just mapped for this core alone and its top is
    // page-aligned; nothing on the bootloader's stack is used again (the
    // call never returns, and `boot_info` lives in the bootloader's
    // mapping, not on its stack).
    unsafe { continue_on_stack(stack.top.as_u64(), continue_boot, boot_info, heap_bytes) }
}

/// The bootstrap core's own stack, `[bottom, top)` (set once, at boot).
static BOOTSTRAP_STACK: Once<(u64, u64)> = Once::new();
/// The address of a local of [`continue_boot`]: where the bootstrap core's
/// stack was when its boot went on (set once, at boot). Relaxed: it is
/// stored on the bootstrap core before any other core starts, and read
/// by the in-kernel tests, which run on the bootstrap core after it:
/// program order covers it.
static CONTINUED_AT: AtomicU64 = AtomicU64::new(0);

/// Whether the bootstrap core went on with its boot on the stack
/// [`entry`] mapped for it, not on the bootloader's.
pub fn bootstrap_core_on_own_stack() -> bool {
    let at = CONTINUED_AT.load(Ordering::Relaxed);
    BOOTSTRAP_STACK
        .get()
        .is_some_and(|&(bottom, top)| bottom <= at && at < top)
}

/// The rest of the bootstrap core's boot, on its own stack.
extern "C" fn continue_boot(boot_info: &'static mut BootInfo, heap_bytes: u64) -> ! {
    let here = 0u8;
    CONTINUED_AT.store(core::ptr::addr_of!(here) as u64, Ordering::Relaxed);
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

/// Moves onto the stack whose top is `top` and calls `next(boot_info,
/// heap_bytes)` there, with a zero frame pointer (backtraces end there).
///
/// # Safety
///
/// `top` must be the 16-byte-aligned top of a mapped, writable stack that
/// nothing else uses, and nothing on the current stack may be used again
/// (`next` never returns, so the current frames are abandoned).
unsafe fn continue_on_stack(
    top: u64,
    next: extern "C" fn(&'static mut BootInfo, u64) -> !,
    boot_info: &'static mut BootInfo,
    heap_bytes: u64,
) -> ! {
    // SAFETY: the caller's contract: `top` is a fresh stack of this core's
    // alone. The System V call leaves `rsp` 8 mod 16 at `next`'s entry, as
    // the ABI wants (`top` is 16-aligned and `call` pushes 8 bytes).
    // `boot_info` and `heap_bytes` travel in the first two argument
    // registers, which the other operands cannot take.
    unsafe {
        core::arch::asm!(
            "mov rsp, {top}",
            "xor ebp, ebp",
            "call {next}",
            "ud2",
            top = in(reg) top,
            next = in(reg) next,
            in("rdi") boot_info,
            in("rsi") heap_bytes,
            options(noreturn),
        )
    }
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
