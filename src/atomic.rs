//! Atomic file writes: a uniquely named temporary file beside the destination, synced to disk,
//! then renamed over it. A reader sees the old file or the new one, never half of one, and two
//! processes writing the same destination never share a temporary file.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// Writes `path` through `fill`, atomically. On any failure the temporary file is removed and
/// the destination is left as it was.
pub fn write_with<E>(path: &Path, fill: impl FnOnce(&mut File) -> Result<(), E>) -> Result<(), E>
where
    E: From<io::Error>,
{
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".partial");
    // Files get the permissions `std::fs::write` would give them (0666 less the umask), not a
    // temporary file's owner-only mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    fill(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `bytes` to `path`, atomically.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_with(path, |f| f.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.md");
        write(&p, b"old").unwrap();
        let r: io::Result<()> = write_with(&p, |f| {
            f.write_all(b"half")?;
            Err(io::Error::other("interrupted"))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn concurrent_writers_to_one_file_do_not_collide() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.md");
        std::thread::scope(|s| {
            for i in 0..8u8 {
                let p = &p;
                s.spawn(move || write(p, &[i; 4096]).unwrap());
            }
        });
        let got = std::fs::read(&p).unwrap();
        assert_eq!(got.len(), 4096);
        assert!(
            got.iter().all(|b| *b == got[0]),
            "one writer's bytes, whole"
        );
    }

    #[cfg(unix)]
    #[test]
    fn files_are_not_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.md");
        write(&p, b"x").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        let plain = dir.path().join("plain.md");
        std::fs::write(&plain, b"x").unwrap();
        let want = std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, want);
    }
}
