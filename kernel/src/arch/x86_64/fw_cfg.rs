//! QEMU fw_cfg over its legacy I/O ports (selector 0x510, data 0x511): the
//! carrier of Vigil's boot parameters (`-fw_cfg name=opt/vigil/cmdline,...`).
//! Works on the `pc` and `q35` machines, BIOS and UEFI alike.

use alloc::string::String;
use x86_64::instructions::port::Port;

const SELECTOR_PORT: u16 = 0x510;
const DATA_PORT: u16 = 0x511;
const SELECT_SIGNATURE: u16 = 0x0000;
const SELECT_FILE_DIR: u16 = 0x0019;
const FILE_NAME_BYTES: usize = 56;
/// Longest file Vigil will read (parameters are a short line).
pub const MAX_FILE_BYTES: usize = 4096;

/// Why a fw_cfg file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FwCfgError {
    /// No "QEMU" signature: not running under QEMU, or no fw_cfg device.
    NoDevice,
    /// The file exists but is larger than [`MAX_FILE_BYTES`].
    TooLarge(usize),
    /// The file's contents are not UTF-8.
    NotUtf8,
}

fn select(key: u16) {
    let mut port: Port<u16> = Port::new(SELECTOR_PORT);
    // SAFETY: writing the fw_cfg selector only changes which item the data
    // port streams.
    unsafe { port.write(key) };
}

fn read_bytes(buf: &mut [u8]) {
    let mut port: Port<u8> = Port::new(DATA_PORT);
    for byte in buf {
        // SAFETY: reading the fw_cfg data port streams the selected item.
        *byte = unsafe { port.read() };
    }
}

fn read_be_u32() -> u32 {
    let mut b = [0u8; 4];
    read_bytes(&mut b);
    u32::from_be_bytes(b)
}

fn read_be_u16() -> u16 {
    let mut b = [0u8; 2];
    read_bytes(&mut b);
    u16::from_be_bytes(b)
}

/// Whether the fw_cfg device answers with its "QEMU" signature.
pub fn present() -> bool {
    select(SELECT_SIGNATURE);
    let mut sig = [0u8; 4];
    read_bytes(&mut sig);
    &sig == b"QEMU"
}

/// Reads the named file; `Ok(None)` if the device has no such file.
pub fn read_file(name: &str) -> Result<Option<String>, FwCfgError> {
    if !present() {
        return Err(FwCfgError::NoDevice);
    }
    select(SELECT_FILE_DIR);
    let count = read_be_u32();
    let mut found = None;
    for _ in 0..count {
        let size = read_be_u32() as usize;
        let key = read_be_u16();
        let _reserved = read_be_u16();
        let mut raw_name = [0u8; FILE_NAME_BYTES];
        read_bytes(&mut raw_name);
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
    select(key);
    let mut data = alloc::vec![0u8; size];
    read_bytes(&mut data);
    String::from_utf8(data)
        .map(Some)
        .map_err(|_| FwCfgError::NotUtf8)
}
