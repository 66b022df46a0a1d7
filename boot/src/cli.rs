//! Command line of the `vigil-boot` binary.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Wraps a Vigil kernel ELF into bootable BIOS and UEFI disk images.
#[derive(Debug, Parser)]
#[command(name = "vigil-boot", version)]
struct Cli {
    /// The kernel ELF (x86_64-unknown-none) to boot.
    kernel_elf: PathBuf,
    /// Directory for the images (default: the kernel ELF's directory).
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

/// Parses the command line (clap exits 2 on bad usage), writes the images
/// and prints their paths. A kernel that is missing or not an ELF file is
/// bad input: exit status 2; a failure to write the images: exit status 1.
pub(crate) fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(err) = vigil_boot::check_kernel(&cli.kernel_elf) {
        eprintln!("vigil-boot: {err:#}");
        return ExitCode::from(2);
    }
    let out_dir = match cli.out_dir {
        Some(dir) => dir,
        None => cli
            .kernel_elf
            .parent()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(".")),
    };
    match vigil_boot::create_images(&cli.kernel_elf, &out_dir) {
        Ok(paths) => {
            println!("BIOS image: {}", paths.bios.display());
            println!("UEFI image: {}", paths.uefi.display());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("vigil-boot: {err:#}");
            ExitCode::FAILURE
        }
    }
}
