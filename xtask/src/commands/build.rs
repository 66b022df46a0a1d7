//! `cargo xtask build`: the kernel ELF plus BIOS and UEFI images; with
//! `KEY=VALUE` parameters, images that carry them.

use crate::cli::BuildCommandArgs;
use crate::error::Result;
use crate::runner::kernel_build::{build_kernel, build_kernel_with_params};

/// Builds and prints where everything is.
pub fn run(args: &BuildCommandArgs) -> Result<()> {
    let config = args.build.build_config();
    let artifacts = if args.params.is_empty() {
        build_kernel(&config)?
    } else {
        build_kernel_with_params(&config, &args.params)?
    };
    println!("kernel ELF: {}", artifacts.elf.display());
    println!("BIOS image: {}", artifacts.bios_image.display());
    println!("UEFI image: {}", artifacts.uefi_image.display());
    if !args.params.is_empty() {
        println!("boot parameters in the images: `{}`", args.params.join(" "));
    }
    Ok(())
}
