//! An initramfs, written here: a cpio archive in the `newc` format (what
//! Linux unpacks into its root filesystem at boot, `Documentation/
//! driver-api/early-userspace/buffer-format.rst`), uncompressed. Each entry
//! is a 110-byte ASCII header (`070701` and thirteen 8-digit hex fields),
//! its NUL-terminated name, padding to 4 bytes, its data, padding to 4
//! bytes; a `TRAILER!!!` entry ends the archive. Written by hand (about 60
//! lines) rather than with a crate: the crates that write cpio pull in
//! more than this, and the format is one header layout.
//!
//! Every timestamp and owner is 0 and inodes are numbered in order, so the
//! same entries give the same bytes.

/// What an entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A directory (mode 0755).
    Directory,
    /// A regular file with these bytes and this mode (e.g. 0o755).
    File {
        /// Contents.
        data: Vec<u8>,
        /// Permission bits.
        mode: u32,
    },
    /// A character device node (mode 0600), e.g. `/dev/console` (5, 1).
    CharDevice {
        /// Device major number.
        major: u32,
        /// Device minor number.
        minor: u32,
    },
}

/// One entry: a path without the leading `/` (`init`, `dev/console`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path inside the archive.
    pub path: String,
    /// What it is.
    pub kind: EntryKind,
}

const MAGIC: &str = "070701";
const TRAILER: &str = "TRAILER!!!";
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFCHR: u32 = 0o020000;

fn pad_to_4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// One header, its name and its data, each padded to 4 bytes.
fn write_header(
    out: &mut Vec<u8>,
    inode: u32,
    mode: u32,
    rdev: (u32, u32),
    path: &str,
    data: &[u8],
) {
    let nlink = if mode & S_IFDIR != 0 { 2 } else { 1 };
    let fields: [u32; 13] = [
        inode,
        mode,
        0, // uid
        0, // gid
        nlink,
        0, // mtime
        u32::try_from(data.len()).expect("an initramfs file under 4 GiB"),
        0, // devmajor
        0, // devminor
        rdev.0,
        rdev.1,
        u32::try_from(path.len() + 1).expect("a short path"),
        0, // check (newc has none)
    ];
    out.extend_from_slice(MAGIC.as_bytes());
    for field in fields {
        out.extend_from_slice(format!("{field:08x}").as_bytes());
    }
    out.extend_from_slice(path.as_bytes());
    out.push(0);
    pad_to_4(out);
    out.extend_from_slice(data);
    pad_to_4(out);
}

/// The archive of `entries`, in order (a directory must come before what
/// is in it), with its trailer, zero-padded to a multiple of 512 bytes as
/// cpio pads it.
pub fn newc_archive(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let inode = u32::try_from(index + 1).expect("fewer than 4 billion entries");
        let (mode, rdev, data): (u32, (u32, u32), &[u8]) = match &entry.kind {
            EntryKind::Directory => (S_IFDIR | 0o755, (0, 0), &[]),
            EntryKind::File { data, mode } => (S_IFREG | (mode & 0o7777), (0, 0), data),
            EntryKind::CharDevice { major, minor } => (S_IFCHR | 0o600, (*major, *minor), &[]),
        };
        write_header(&mut out, inode, mode, rdev, &entry.path, data);
    }
    write_header(&mut out, 0, 0, (0, 0), TRAILER, &[]);
    while !out.len().is_multiple_of(512) {
        out.push(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the entries back, checking every header's magic, field digits
    /// and padding: (path, mode, rdev major, rdev minor, data).
    fn read_back(archive: &[u8]) -> Vec<(String, u32, u32, u32, Vec<u8>)> {
        let mut entries = Vec::new();
        let mut at = 0;
        loop {
            assert_eq!(at % 4, 0, "headers start 4-aligned");
            let header = std::str::from_utf8(&archive[at..at + 110]).unwrap();
            assert_eq!(&header[..6], MAGIC);
            let field = |index: usize| {
                u32::from_str_radix(&header[6 + 8 * index..14 + 8 * index], 16).unwrap()
            };
            let (mode, size, major, minor, name_size) =
                (field(1), field(6), field(9), field(10), field(11));
            let name_start = at + 110;
            let name =
                std::str::from_utf8(&archive[name_start..name_start + name_size as usize - 1])
                    .unwrap()
                    .to_string();
            assert_eq!(archive[name_start + name_size as usize - 1], 0);
            let data_start = (name_start + name_size as usize).next_multiple_of(4);
            let data = archive[data_start..data_start + size as usize].to_vec();
            at = (data_start + size as usize).next_multiple_of(4);
            if name == TRAILER {
                break;
            }
            entries.push((name, mode, major, minor, data));
        }
        assert!(archive[at..].iter().all(|&byte| byte == 0));
        assert_eq!(archive.len() % 512, 0);
        entries
    }

    #[test]
    fn entries_round_trip_through_the_newc_layout() {
        let entries = vec![
            Entry {
                path: "dev".to_string(),
                kind: EntryKind::Directory,
            },
            Entry {
                path: "dev/console".to_string(),
                kind: EntryKind::CharDevice { major: 5, minor: 1 },
            },
            Entry {
                path: "init".to_string(),
                kind: EntryKind::File {
                    data: b"\x7fELF and five".to_vec(),
                    mode: 0o755,
                },
            },
        ];
        let archive = newc_archive(&entries);
        let back = read_back(&archive);
        assert_eq!(
            back,
            vec![
                ("dev".to_string(), 0o040755, 0, 0, Vec::new()),
                ("dev/console".to_string(), 0o020600, 5, 1, Vec::new()),
                (
                    "init".to_string(),
                    0o100755,
                    0,
                    0,
                    b"\x7fELF and five".to_vec()
                ),
            ]
        );
        // The same entries, the same bytes.
        assert_eq!(newc_archive(&entries), archive);
    }

    #[test]
    fn the_first_header_is_byte_exact() {
        let archive = newc_archive(&[Entry {
            path: "a".to_string(),
            kind: EntryKind::File {
                data: b"xyz".to_vec(),
                mode: 0o644,
            },
        }]);
        let fields = [
            "00000001", "000081a4", "00000000", "00000000", "00000001", "00000000", "00000003",
            "00000000", "00000000", "00000000", "00000000", "00000002", "00000000",
        ];
        // 110-byte header, "a\0" (112: aligned), "xyz" and one byte of padding.
        let expected = format!("070701{}a\0xyz\0", fields.concat());
        assert_eq!(&archive[..expected.len()], expected.as_bytes());
        assert_eq!(&archive[116..122], b"070701");
    }
}
