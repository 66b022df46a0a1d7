//! BIOS and UEFI disk image creation around `bootloader` 0.11.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use bootloader::{BiosBoot, BootConfig, UefiBoot};
use bootloader_boot_config::LevelFilter;

use crate::atomic_write::write_atomically;

/// File name of the BIOS (MBR) image inside an output directory.
pub const BIOS_IMAGE_NAME: &str = "vigil-bios.img";
/// File name of the UEFI (GPT) image inside an output directory.
pub const UEFI_IMAGE_NAME: &str = "vigil-uefi.img";

/// The bootloader's run-time configuration (its `boot.json`). It logs
/// warnings and errors only, on the serial port only: its info lines would
/// bury the kernel's `[cN]` lines, and drawing text into the framebuffer is
/// slow under TCG.
pub fn boot_config() -> BootConfig {
    let mut config = BootConfig::default();
    config.log_level = LevelFilter::Warn;
    config.frame_buffer_logging = false;
    config.serial_logging = true;
    config
}

/// Where [`create_images`] put the two images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePaths {
    /// MBR image for legacy BIOS (SeaBIOS) boot.
    pub bios: PathBuf,
    /// GPT image for UEFI (OVMF) boot.
    pub uefi: PathBuf,
}

/// The firmware an image is laid out for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Firmware {
    /// Legacy BIOS (SeaBIOS, Bochs's BIOS): an MBR image.
    Bios,
    /// UEFI (OVMF): a GPT image with an EFI system partition.
    Uefi,
}

impl Firmware {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bios => "BIOS",
            Self::Uefi => "UEFI",
        }
    }
}

/// Writes a `firmware`-bootable disk image for `kernel_elf` to `out_path`,
/// with `ramdisk` (a file), if given, loaded by the bootloader and handed
/// to the kernel (Vigil's boot parameters on machines without QEMU's
/// fw_cfg).
///
/// The image is written to a temporary file next to `out_path` and renamed
/// into place, so a QEMU that still has the previous image open keeps
/// reading a consistent file.
pub fn create_image(
    firmware: Firmware,
    kernel_elf: &Path,
    ramdisk: Option<&Path>,
    out_path: &Path,
) -> Result<()> {
    check_kernel(kernel_elf)?;
    let config = boot_config();
    write_atomically(out_path, |tmp| {
        // The two builders share their methods but no trait.
        let written = match firmware {
            Firmware::Bios => {
                let mut boot = BiosBoot::new(kernel_elf);
                if let Some(ramdisk) = ramdisk {
                    boot.set_ramdisk(ramdisk);
                }
                boot.set_boot_config(&config).create_disk_image(tmp)
            }
            Firmware::Uefi => {
                let mut boot = UefiBoot::new(kernel_elf);
                if let Some(ramdisk) = ramdisk {
                    boot.set_ramdisk(ramdisk);
                }
                boot.set_boot_config(&config).create_disk_image(tmp)
            }
        };
        written.with_context(|| {
            format!(
                "creating {} image from {}",
                firmware.name(),
                kernel_elf.display()
            )
        })
    })
}

/// Writes both images into `out_dir` (created if missing) under the names
/// [`BIOS_IMAGE_NAME`] and [`UEFI_IMAGE_NAME`].
pub fn create_images(kernel_elf: &Path, out_dir: &Path) -> Result<ImagePaths> {
    create_images_with(kernel_elf, None, out_dir)
}

/// [`create_images`], both images carrying `ramdisk` (see
/// [`create_image`]).
pub fn create_images_with(
    kernel_elf: &Path,
    ramdisk: Option<&Path>,
    out_dir: &Path,
) -> Result<ImagePaths> {
    check_kernel(kernel_elf)?;
    fs::create_dir_all(out_dir)
        .with_context(|| format!("creating output directory {}", out_dir.display()))?;
    let paths = ImagePaths {
        bios: out_dir.join(BIOS_IMAGE_NAME),
        uefi: out_dir.join(UEFI_IMAGE_NAME),
    };
    create_image(Firmware::Bios, kernel_elf, ramdisk, &paths.bios)?;
    create_image(Firmware::Uefi, kernel_elf, ramdisk, &paths.uefi)?;
    Ok(paths)
}

/// Fails early, with the path in the message, when the kernel is not a
/// readable ELF file (the bootloader's own error would be less direct).
pub fn check_kernel(kernel_elf: &Path) -> Result<()> {
    let bytes = fs::read(kernel_elf)
        .with_context(|| format!("reading kernel ELF {}", kernel_elf.display()))?;
    if bytes.len() < 4 || bytes[..4] != *b"\x7fELF" {
        bail!("{} is not an ELF file", kernel_elf.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_kernel_is_reported_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such-kernel");
        let out = dir.path().join("out.img");
        let err = create_image(Firmware::Bios, &missing, None, &out).unwrap_err();
        assert!(format!("{err:#}").contains("no-such-kernel"), "{err:#}");
        assert!(!dir.path().join("out.img").exists());
    }

    #[test]
    fn non_elf_kernel_is_rejected_without_an_image() {
        let dir = tempfile::tempdir().unwrap();
        let kernel = dir.path().join("kernel");
        fs::write(&kernel, b"not an elf").unwrap();
        let err = create_images(&kernel, &dir.path().join("images")).unwrap_err();
        assert!(format!("{err:#}").contains("is not an ELF file"), "{err:#}");
        assert!(!dir.path().join("images").exists());
    }

    #[test]
    fn images_are_bootable_disk_layouts() {
        // Any ELF will do for the layout: use this test binary.
        let kernel = std::env::current_exe().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let paths = create_images(&kernel, &dir.path().join("images")).unwrap();
        let bios = fs::read(&paths.bios).unwrap();
        assert_eq!(bios[510..512], [0x55, 0xaa], "MBR boot signature");
        let uefi = fs::read(&paths.uefi).unwrap();
        assert_eq!(&uefi[512..520], b"EFI PART", "GPT header at LBA 1");
        let kernel_len = fs::metadata(&kernel).unwrap().len() as usize;
        assert!(bios.len() > kernel_len && uefi.len() > kernel_len);
        assert_eq!(fs::read_dir(dir.path().join("images")).unwrap().count(), 2);
    }
}
