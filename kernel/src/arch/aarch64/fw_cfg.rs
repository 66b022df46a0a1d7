//! QEMU's fw_cfg device, memory-mapped on `virt` (its address from the
//! device tree): the carrier of Vigil's boot parameters
//! (`-fw_cfg name=opt/vigil/cmdline,...`), as on x86_64 through ports.
//! Registers: data at +0 (read a byte at a time), selector at +8 (16-bit,
//! big-endian).

use alloc::string::String;
use core::sync::atomic::{AtomicU64, Ordering};

const DATA: u64 = 0;
const SELECTOR: u64 = 8;
const SELECT_SIGNATURE: u16 = 0x0000;
const SELECT_FILE_DIR: u16 = 0x0019;
const FILE_NAME_BYTES: usize = 56;
/// Longest file Vigil will read (parameters are a short line).
pub const MAX_FILE_BYTES: usize = 4096;

/// The device's registers (0: none in the device tree).
static BASE: AtomicU64 = AtomicU64::new(0);

/// Why a fw_cfg file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FwCfgError {
    /// No device, or no "QEMU" signature.
    NoDevice,
    /// The file exists but is larger than [`MAX_FILE_BYTES`].
    TooLarge(usize),
    /// The file's contents are not UTF-8.
    NotUtf8,
}

/// Records the device's address (from the device tree), if it has one.
pub fn init(base: Option<u64>) {
    BASE.store(base.unwrap_or(0), Ordering::Relaxed);
}

fn select(base: u64, key: u16) {
    // SAFETY: the selector register of the fw_cfg device (Device memory);
    // writing it only changes which item the data register streams.
    unsafe { ((base + SELECTOR) as *mut u16).write_volatile(key.to_be()) };
}

fn read_bytes(base: u64, buf: &mut [u8]) {
    for byte in buf {
        // SAFETY: the data register streams the selected item, a byte per
        // read.
        *byte = unsafe { ((base + DATA) as *const u8).read_volatile() };
    }
}

fn read_be_u32(base: u64) -> u32 {
    let mut b = [0u8; 4];
    read_bytes(base, &mut b);
    u32::from_be_bytes(b)
}

fn read_be_u16(base: u64) -> u16 {
    let mut b = [0u8; 2];
    read_bytes(base, &mut b);
    u16::from_be_bytes(b)
}

/// Whether the fw_cfg device answers with its "QEMU" signature.
pub fn present() -> bool {
    let base = BASE.load(Ordering::Relaxed);
    if base == 0 {
        return false;
    }
    select(base, SELECT_SIGNATURE);
    let mut sig = [0u8; 4];
    read_bytes(base, &mut sig);
    &sig == b"QEMU"
}

/// Reads the named file; `Ok(None)` if the device has no such file.
pub fn read_file(name: &str) -> Result<Option<String>, FwCfgError> {
    if !present() {
        return Err(FwCfgError::NoDevice);
    }
    let base = BASE.load(Ordering::Relaxed);
    select(base, SELECT_FILE_DIR);
    let count = read_be_u32(base);
    let mut found = None;
    for _ in 0..count {
        let size = read_be_u32(base) as usize;
        let key = read_be_u16(base);
        let _reserved = read_be_u16(base);
        let mut raw_name = [0u8; FILE_NAME_BYTES];
        read_bytes(base, &mut raw_name);
        let len = raw_name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(FILE_NAME_BYTES);
        if found.is_none() && &raw_name[..len] == name.as_bytes() {
            found = Some((key, size));
        }
    }
    let Some((key, size)) = found else {
        return Ok(None);
    };
    if size > MAX_FILE_BYTES {
        return Err(FwCfgError::TooLarge(size));
    }
    select(base, key);
    let mut data = alloc::vec![0u8; size];
    read_bytes(base, &mut data);
    String::from_utf8(data)
        .map(Some)
        .map_err(|_| FwCfgError::NotUtf8)
}
