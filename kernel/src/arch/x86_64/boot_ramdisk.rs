//! The bootloader's ramdisk: a file the image builder put on the disk
//! image, loaded and mapped by the bootloader for the kernel (Vigil's boot
//! parameters when there is no fw_cfg).

/// The ramdisk's bytes, if the bootloader loaded one.
pub fn bytes(address: Option<u64>, len: u64) -> Option<&'static [u8]> {
    let address = address?;
    if len == 0 {
        return None;
    }
    // SAFETY: `address` and `len` are the ramdisk the bootloader loaded and
    // mapped into the kernel's address space before entering it (its frames
    // are marked used in the memory map, so the frame allocator never hands
    // them out); nothing writes it, so a shared slice for the kernel's
    // lifetime is sound.
    let bytes = unsafe { core::slice::from_raw_parts(address as *const u8, len as usize) };
    Some(bytes)
}
