//! Host-side image creation for Vigil: turns the kernel ELF into disk images
//! that QEMU can boot, using the `bootloader` crate's BIOS and UEFI stages.

mod atomic_write;
mod images;

pub use atomic_write::write_atomically;
pub use images::{
    BIOS_IMAGE_NAME, Firmware, ImagePaths, UEFI_IMAGE_NAME, boot_config, check_kernel,
    create_image, create_images, create_images_with,
};
