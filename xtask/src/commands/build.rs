//! `cargo xtask build`: the kernel ELF plus BIOS and UEFI images.

use crate::cli::BuildArgs;
use crate::error::Result;
use crate::kernel_build::build_kernel;

/// Builds and prints where everything is.
pub fn run(args: &BuildArgs) -> Result<()> {
    let artifacts = build_kernel(&args.build_config())?;
    println!("kernel ELF: {}", artifacts.elf.display());
    println!("BIOS image: {}", artifacts.bios_image.display());
    println!("UEFI image: {}", artifacts.uefi_image.display());
    Ok(())
}
