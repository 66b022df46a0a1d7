//! `vigil-boot <kernel-elf> [--out-dir DIR]`: writes the BIOS and UEFI images.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
