//! Building the kernel ELF (`cargo build -p vigil-kernel --target
//! x86_64-unknown-none --target-dir target/kernel`) and its BIOS/UEFI images;
//! for AArch64 the ELF alone (`--target aarch64-unknown-none-softfloat`,
//! with `core` and `alloc` built from the toolchain's `rust-src`: the
//! pinned nightly ships no prebuilt standard library for it), which QEMU's
//! `virt` boots directly.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::{Result, XtaskError};
use crate::guest::settings::Feature;
use crate::runner::platform::Arch;
use crate::runner::strip_debug::strip_debug;
use crate::runner::workspace::{
    KERNEL_PACKAGE, cargo, display_command, kernel_target_dir, workspace_root,
};

/// How to build the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildConfig {
    /// `--release` (optimised, still with debug info).
    pub release: bool,
    /// Kernel cargo features.
    pub features: Vec<Feature>,
    /// The architecture.
    pub arch: Arch,
}

/// What builds the AArch64 kernel's `core`, `alloc` and compiler builtins
/// (with the `mem` functions: there is no C library to supply `memcpy`).
pub const BUILD_STD_ARGS: [&str; 2] = [
    "-Zbuild-std=core,alloc,compiler_builtins",
    "-Zbuild-std-features=compiler-builtins-mem",
];

impl BuildConfig {
    /// `debug` or `release`: cargo's output directory name for the profile.
    pub fn profile_dir(&self) -> &'static str {
        if self.release { "release" } else { "debug" }
    }

    /// Sorted, deduplicated feature names.
    pub fn feature_names(&self) -> Vec<&'static str> {
        let mut features = self.features.clone();
        features.sort();
        features.dedup();
        features.into_iter().map(Feature::cargo_name).collect()
    }

    /// Name of this build's image directory: the architecture if not
    /// x86_64, the profile, then the features (`debug`,
    /// `release-idle-poll`, `aarch64-debug`), so differently configured
    /// builds never overwrite each other's images.
    pub fn variant_name(&self) -> String {
        let mut name = match self.arch {
            Arch::X86_64 => String::new(),
            arch => format!("{arch}-"),
        };
        name.push_str(self.profile_dir());
        for feature in self.feature_names() {
            name.push('-');
            name.push_str(feature);
        }
        name
    }

    /// The cargo arguments that build the kernel.
    pub fn cargo_args(&self) -> Vec<String> {
        let mut args = vec![
            "build".to_string(),
            "-p".to_string(),
            KERNEL_PACKAGE.to_string(),
            "--target".to_string(),
            self.arch.kernel_target().to_string(),
            "--target-dir".to_string(),
            kernel_target_dir().display().to_string(),
        ];
        if self.arch == Arch::Aarch64 {
            args.extend(BUILD_STD_ARGS.map(String::from));
        }
        if self.release {
            args.push("--release".to_string());
        }
        let features = self.feature_names();
        if !features.is_empty() {
            args.push("--features".to_string());
            args.push(features.join(","));
        }
        args
    }

    /// The ELF cargo writes (shared by all feature sets of one profile).
    pub fn cargo_elf_path(&self) -> PathBuf {
        kernel_target_dir()
            .join(self.arch.kernel_target())
            .join(self.profile_dir())
            .join(KERNEL_PACKAGE)
    }

    /// Directory holding this variant's ELF copy and images.
    pub fn image_dir(&self) -> PathBuf {
        kernel_target_dir().join("images").join(self.variant_name())
    }
}

/// File name of the ELF without debug sections that goes into the images.
pub const STRIPPED_ELF_NAME: &str = "vigil-kernel.stripped";

/// A built kernel: its ELF and both disk images (for AArch64, the ELF
/// alone: the image paths are the ELF QEMU boots).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelArtifacts {
    /// The architecture it was built for.
    pub arch: Arch,
    /// The kernel ELF, with symbols and debug info (for gdb and for
    /// symbolizing RIPs; the images hold the same code without the debug
    /// sections).
    pub elf: PathBuf,
    /// The ELF the images carry: [`Self::elf`] without its debug sections,
    /// or `elf` itself when stripping failed.
    pub image_elf: PathBuf,
    /// MBR image for SeaBIOS.
    pub bios_image: PathBuf,
    /// GPT image for OVMF.
    pub uefi_image: PathBuf,
}

impl KernelArtifacts {
    /// The image to boot.
    pub fn image(&self, uefi: bool) -> &Path {
        if uefi {
            &self.uefi_image
        } else {
            &self.bios_image
        }
    }
}

/// Where the checkout's path is mapped to in the kernel's ELF.
const REMAPPED_ROOT: &str = "/vigil";

/// The kernel's rustflags: the caller's (`CARGO_ENCODED_RUSTFLAGS`, else
/// `RUSTFLAGS` split on whitespace, as cargo reads them) and
/// `--remap-path-prefix=<workspace>=/vigil`. Without it the kernel's bytes
/// depend on where the repository is checked out (measured: one commit
/// built at `/work/main`, `/work/wt/pool` and `/tmp/ci` gave three ELFs,
/// and the same kernel ran a different Bochs execution in each, so a
/// committed recording replayed only at the path it was made in); with
/// it, builds at `/tmp/p1` and `/tmp/pathtwo-longer` gave the same bytes.
/// Encoded (0x1f between flags) so that a path with spaces stays one flag.
fn path_independent_rustflags() -> String {
    let mut flags: Vec<String> = match std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        Ok(encoded) if !encoded.is_empty() => encoded.split('\u{1f}').map(String::from).collect(),
        _ => std::env::var("RUSTFLAGS")
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect(),
    };
    flags.push(format!(
        "--remap-path-prefix={}={REMAPPED_ROOT}",
        workspace_root().display()
    ));
    flags.join("\u{1f}")
}

/// Builds the kernel and both images; cargo's progress goes to stderr.
pub fn build_kernel(config: &BuildConfig) -> Result<KernelArtifacts> {
    let started = Instant::now();
    let mut command = cargo();
    command.args(config.cargo_args());
    command.env("CARGO_ENCODED_RUSTFLAGS", path_independent_rustflags());
    eprintln!("xtask: building kernel: {}", display_command(&command));
    let status = command
        .status()
        .map_err(|err| XtaskError::failed(format!("could not run cargo: {err}")))?;
    if !status.success() {
        return Err(XtaskError::failed(format!(
            "kernel build failed ({status}): {}",
            display_command(&command)
        )));
    }
    let built_elf = config.cargo_elf_path();
    if !built_elf.is_file() {
        return Err(XtaskError::failed(format!(
            "cargo succeeded but {} is missing",
            built_elf.display()
        )));
    }

    let image_dir = config.image_dir();
    fs::create_dir_all(&image_dir)
        .map_err(|err| XtaskError::failed(format!("creating {}: {err}", image_dir.display())))?;
    // Keep a per-variant copy of the ELF: cargo reuses one path for every
    // feature set, and gdb must see the ELF that is inside the image.
    let elf = image_dir.join(KERNEL_PACKAGE);
    copy_atomically(&built_elf, &elf)?;
    // The images get the ELF without debug sections: far less for the
    // bootloader to read through the firmware (see `strip_debug`).
    let stripped = image_dir.join(STRIPPED_ELF_NAME);
    let image_elf = match strip_debug(&elf, &stripped) {
        Ok(()) => stripped,
        Err(why) => {
            eprintln!("xtask: note: the images carry the full ELF (slower boots): {why}");
            elf.clone()
        }
    };
    if config.arch == Arch::Aarch64 {
        eprintln!(
            "xtask: kernel ready in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        return Ok(KernelArtifacts {
            arch: config.arch,
            elf,
            bios_image: image_elf.clone(),
            uefi_image: image_elf.clone(),
            image_elf,
        });
    }
    let images = vigil_boot::create_images(&image_elf, &image_dir)
        .map_err(|err| XtaskError::failed(format!("creating disk images: {err:#}")))?;
    eprintln!(
        "xtask: kernel and images ready in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(KernelArtifacts {
        arch: config.arch,
        elf,
        image_elf,
        bios_image: images.bios,
        uefi_image: images.uefi,
    })
}

/// Where [`build_kernel_with_params`] puts its images: apart from the
/// plain ones, which every QEMU run boots.
pub const WITH_PARAMS_DIR: &str = "with-params";

/// [`build_kernel`], then images that also carry `params` as one line (the
/// bootloader's ramdisk; the kernel reads it when there is no fw_cfg), in
/// the variant's [`WITH_PARAMS_DIR`], one directory per parameter line
/// (named by its hash, so that two lines never share images).
pub fn build_kernel_with_params(
    config: &BuildConfig,
    params: &[String],
) -> Result<KernelArtifacts> {
    if config.arch != Arch::X86_64 {
        return Err(XtaskError::usage(
            "parameters in a disk image are x86_64's (AArch64 boots the ELF, its parameters through fw_cfg)",
        ));
    }
    let plain = build_kernel(config)?;
    let (dir, line_path) = write_param_line(&config.image_dir(), params)?;
    // The ELF `build_kernel` put in its images (a stripped file left from
    // an earlier build would be stale when this build's strip failed).
    let images = vigil_boot::create_images_with(&plain.image_elf, Some(&line_path), &dir)
        .map_err(|err| XtaskError::failed(format!("creating disk images: {err:#}")))?;
    Ok(KernelArtifacts {
        arch: plain.arch,
        elf: plain.elf,
        image_elf: plain.image_elf,
        bios_image: images.bios,
        uefi_image: images.uefi,
    })
}

/// The directory for images that carry `params` (under `image_dir`, named
/// by the line's hash) and the parameter file written in it, the file the
/// image builder puts in the ramdisk.
fn write_param_line(image_dir: &Path, params: &[String]) -> Result<(PathBuf, PathBuf)> {
    let line = params.join(" ");
    let dir = image_dir
        .join(WITH_PARAMS_DIR)
        .join(format!("{:016x}", fnv1a_64(line.as_bytes())));
    fs::create_dir_all(&dir)
        .map_err(|err| XtaskError::failed(format!("creating {}: {err}", dir.display())))?;
    let line_path = dir.join(vigil_proto::boot_params::RAMDISK_FILE);
    // Whole or not at all: two threads booting one line (two tests, two
    // jobs of a campaign) write it at once, and the image builder reads it.
    vigil_boot::write_atomically(&line_path, |tmp| Ok(fs::write(tmp, &line)?))
        .map_err(|err| XtaskError::failed(format!("writing {}: {err:#}", line_path.display())))?;
    Ok((dir, line_path))
}

/// A BIOS image of the already built `kernel` that also carries `params`
/// (as [`build_kernel_with_params`], without building again and without
/// the UEFI image): what a campaign under Bochs boots, one image per
/// parameter line, in the kernel's image directory.
pub fn bios_image_with_params(kernel: &KernelArtifacts, params: &[String]) -> Result<PathBuf> {
    let parent = kernel.elf.parent().unwrap_or(Path::new("."));
    let (dir, line_path) = write_param_line(parent, params)?;
    let image = dir.join(vigil_boot::BIOS_IMAGE_NAME);
    vigil_boot::create_image(
        vigil_boot::Firmware::Bios,
        &kernel.image_elf,
        Some(&line_path),
        &image,
    )
    .map_err(|err| XtaskError::failed(format!("creating the BIOS image: {err:#}")))?;
    Ok(image)
}

/// The FNV-1a hash of the ELF the images carry, `0x` and 16 hex digits: a
/// recording names the kernel it booted, so that a replay on another
/// build can say so.
pub fn image_elf_fingerprint(kernel: &KernelArtifacts) -> Result<String> {
    let bytes = fs::read(&kernel.image_elf).map_err(|err| {
        XtaskError::failed(format!("reading {}: {err}", kernel.image_elf.display()))
    })?;
    Ok(format!("{:#018x}", fnv1a_64(&bytes)))
}

/// FNV-1a, 64 bits: a stable name for a parameter line, a fingerprint of
/// a file or of a serial output.
pub fn fnv1a_64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Copies `from` to a temporary sibling of `to`, then renames it into place,
/// so a reader of `to` never sees a half-written file.
fn copy_atomically(from: &Path, to: &Path) -> Result<()> {
    vigil_boot::write_atomically(to, |tmp| Ok(fs::copy(from, tmp).map(drop)?)).map_err(|err| {
        XtaskError::failed(format!(
            "copying {} to {}: {err:#}",
            from.display(),
            to.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_build_uses_the_kernel_target_dir_and_no_features() {
        let config = BuildConfig::default();
        let args = config.cargo_args();
        assert_eq!(
            &args[..5],
            [
                "build",
                "-p",
                "vigil-kernel",
                "--target",
                "x86_64-unknown-none"
            ]
        );
        assert_eq!(args[5], "--target-dir");
        assert!(args[6].ends_with("target/kernel"), "{}", args[6]);
        assert_eq!(args.len(), 7);
        assert!(
            config
                .cargo_elf_path()
                .ends_with("target/kernel/x86_64-unknown-none/debug/vigil-kernel")
        );
        assert_eq!(config.variant_name(), "debug");
    }

    #[test]
    fn release_with_features_passes_both_and_gets_its_own_images() {
        let config = BuildConfig {
            release: true,
            features: vec![Feature::IdlePoll, Feature::IdlePoll],
            arch: Arch::X86_64,
        };
        let args = config.cargo_args();
        assert!(args.contains(&"--release".to_string()));
        assert_eq!(args[args.len() - 2..], ["--features", "idle-poll"]);
        assert_eq!(config.variant_name(), "release-idle-poll");
        assert!(
            config
                .image_dir()
                .ends_with("target/kernel/images/release-idle-poll")
        );
    }

    #[test]
    fn aarch64_builds_core_from_source_into_its_own_directory() {
        let config = BuildConfig {
            release: true,
            features: Vec::new(),
            arch: Arch::Aarch64,
        };
        let args = config.cargo_args();
        assert_eq!(args[4], "aarch64-unknown-none-softfloat");
        assert!(args.contains(&"-Zbuild-std=core,alloc,compiler_builtins".to_string()));
        assert_eq!(config.variant_name(), "aarch64-release");
        assert!(
            config
                .cargo_elf_path()
                .ends_with("target/kernel/aarch64-unknown-none-softfloat/release/vigil-kernel")
        );
        assert!(
            !BuildConfig::default()
                .cargo_args()
                .iter()
                .any(|a| a.starts_with("-Zbuild-std"))
        );
    }

    #[test]
    fn copy_atomically_replaces_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("a"), dir.path().join("b"));
        fs::write(&from, b"new").unwrap();
        fs::write(&to, b"old").unwrap();
        copy_atomically(&from, &to).unwrap();
        assert_eq!(fs::read(&to).unwrap(), b"new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
