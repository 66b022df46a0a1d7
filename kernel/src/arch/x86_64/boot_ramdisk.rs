//! The bootloader's ramdisk: a file the image builder put on the disk
//! image, loaded and mapped by the bootloader for the kernel (Vigil's boot
//! parameters when there is no fw_cfg).

use bootloader_api::BootInfo;

/// The ramdisk's bytes, if the bootloader loaded one. The address and
/// length are read here from the bootloader's own record, so no caller can
/// hand in a range the bootloader did not map.
pub fn bytes(boot_info: &BootInfo) -> Option<&'static [u8]> {
    let address = boot_info.ramdisk_addr.into_option()?;
    let len = usize::try_from(boot_info.ramdisk_len).ok()?;
    if len == 0 {
        return None;
    }
    let start = address as *const u8;
    // SAFETY: `start..start + len` is the ramdisk the bootloader loaded and mapped (its frames are marked used, so the frame allocator never hands them out), and nothing writes it: a shared slice for the kernel's lifetime.
    let bytes = unsafe { core::slice::from_raw_parts(start, len) };
    Some(bytes)
}
