//! Where the kernel finds its parameter line: QEMU's fw_cfg file, else the
//! disk image's ramdisk (fw_cfg wins when both exist).

/// The fw_cfg file the harness writes the parameter line to.
pub const FW_CFG_FILE: &str = "opt/vigil/cmdline";

/// The file name the image builder gives the parameter line before the
/// bootloader loads it as the kernel's ramdisk.
pub const RAMDISK_FILE: &str = "vigil-params.txt";

/// Where a boot's parameters came from (printed in the boot line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamSource {
    /// QEMU's fw_cfg file.
    FwCfg,
    /// The disk image (the bootloader's ramdisk).
    DiskImage,
    /// Neither: every default.
    None,
}

impl ParamSource {
    /// How the boot line names it.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::FwCfg => "fw_cfg",
            Self::DiskImage => "disk image",
            Self::None => "none",
        }
    }
}
