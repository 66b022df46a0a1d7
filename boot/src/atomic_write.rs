//! Files written whole or not at all: a reader of the path (a QEMU or
//! Bochs still booting the previous image, another thread of the harness
//! writing the same file) never sees half a file.

use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{Context, Result};

/// Runs `write` on a temporary sibling of `out_path`, then renames it over
/// `out_path`. The temporary file is removed if `write` fails or panics.
///
/// The sibling is `tempfile`'s: created exclusively under a random name,
/// so two threads writing the same path at once (two tests booting one
/// parameter line) each write their own file, and the later rename wins
/// with a whole file. A name from the process id alone was shared: one
/// thread's rename took the file the other was writing, and the other's
/// rename then failed.
pub fn write_atomically(out_path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let file_name = out_path
        .file_name()
        .with_context(|| format!("{} has no file name", out_path.display()))?;
    let dir = match out_path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut prefix = file_name.to_os_string();
    prefix.push(".tmp-");
    // Made as `File::create` makes a file (0o666 less the umask), not
    // `tempfile`'s 0o600: the images are read by emulators, the kernel
    // copy by debuggers.
    let tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    // On an error here `tmp` is dropped, and its file removed.
    write(tmp.path())?;
    let tmp_path = tmp.path().to_path_buf();
    tmp.persist(out_path)
        .with_context(|| format!("renaming {} to {}", tmp_path.display(), out_path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::io::Write;

    use anyhow::bail;

    use super::*;

    #[test]
    fn failed_write_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.img");
        let err = write_atomically(&out, |tmp| {
            fs::write(tmp, b"partial").unwrap();
            bail!("simulated failure")
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "simulated failure");
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn successful_write_replaces_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.img");
        fs::write(&out, b"old").unwrap();
        write_atomically(&out, |tmp| Ok(fs::write(tmp, b"new")?)).unwrap();
        assert_eq!(fs::read(&out).unwrap(), b"new");
    }

    /// Two writers of one path in one process: each write succeeds and the
    /// file ends whole. Both have created their temporary file before
    /// either writes (a barrier), so with a name shared between them both
    /// hold the one file, the first rename takes it and the second finds
    /// nothing to rename, in every run.
    #[test]
    fn two_threads_writing_one_path_both_succeed_with_a_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.img");
        let both_writing = std::sync::Barrier::new(2);
        let contents = [vec![b'a'; 4096], vec![b'b'; 4096]];
        std::thread::scope(|scope| {
            for content in &contents {
                let (out, both_writing) = (&out, &both_writing);
                scope.spawn(move || {
                    write_atomically(out, |tmp| {
                        let mut file = fs::File::create(tmp)?;
                        both_writing.wait();
                        file.write_all(content)?;
                        Ok(())
                    })
                    .unwrap_or_else(|err| panic!("{err:#}"));
                });
            }
        });
        let written = fs::read(&out).unwrap();
        assert!(contents.contains(&written), "{} bytes", written.len());
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    }
}
