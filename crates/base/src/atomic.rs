//! Atomic file writes: a uniquely named temporary file beside the destination, synced to disk,
//! then renamed over it. A reader sees the old file or the new one, never half of one, and two
//! processes writing the same destination never share a temporary file. A symbolic link
//! planted at the destination is replaced, never followed: the rename swaps the name itself.
//!
//! Run records, cassettes and caches hold client evidence: [`write_private`] writes them
//! readable by their owner only, in folders made by [`private_dir`].

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// Writes `path` through `fill`, atomically. On any failure the temporary file is removed and
/// the destination is left as it was.
pub fn write_with<E>(path: &Path, fill: impl FnOnce(&mut File) -> Result<(), E>) -> Result<(), E>
where
    E: From<io::Error>,
{
    write_mode(path, 0o666, fill)
}

/// Writes `path` through `fill`, atomically, with permissions `mode` (less the umask).
pub fn write_mode<E>(
    path: &Path,
    mode: u32,
    fill: impl FnOnce(&mut File) -> Result<(), E>,
) -> Result<(), E>
where
    E: From<io::Error>,
{
    let (dir, mut tmp) = temporary_beside(path, mode)?;
    fill(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // The rename itself reaches the disk with the folder.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A uniquely named temporary file in `path`'s folder (`.NAME.XXXXXX.partial`), with
/// permissions `mode` less the umask — plain files as `std::fs::write` would make them, not
/// a temporary file's owner-only mode; private ones stay owner-only — and that folder.
fn temporary_beside(path: &Path, mode: u32) -> io::Result<(&Path, tempfile::NamedTempFile)> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".partial");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let tmp = builder.tempfile_in(dir)?;
    Ok((dir, tmp))
}

/// Writes several files as one: every file is written and synced under a temporary name
/// first, and only when all of them are on disk are they renamed into place, in order. A
/// failure before that leaves every destination as it was.
pub fn write_all(files: &[(&Path, &[u8])]) -> io::Result<()> {
    let mut staged = Vec::new();
    for (path, bytes) in files {
        let (_, mut tmp) = temporary_beside(path, 0o666)?;
        tmp.write_all(bytes)?;
        tmp.as_file().sync_all()?;
        staged.push((tmp, *path));
    }
    for (tmp, path) in staged {
        tmp.persist(path).map_err(|e| e.error)?;
    }
    Ok(())
}

/// Puts the folder `staged` in the place of `dest` in one step: with `dest` absent, a rename;
/// otherwise the two are exchanged atomically (`renameat2(RENAME_EXCHANGE)`) and the old
/// folder, now at `staged`, removed. Where the file system cannot exchange, the old folder is
/// renamed aside first, so that at every moment one whole set exists.
pub fn replace_dir(staged: &Path, dest: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    if std::fs::symlink_metadata(dest).is_err() {
        return std::fs::rename(staged, dest);
    }
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(io::Error::other);
    let (a, b) = (c(staged)?, c(dest)?);
    // SAFETY: both paths are NUL-terminated strings that outlive the call.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return std::fs::remove_dir_all(staged);
    }
    let aside = staged.with_extension("old");
    std::fs::rename(dest, &aside)?;
    std::fs::rename(staged, dest)?;
    std::fs::remove_dir_all(&aside)
}

/// Writes `bytes` to `path` atomically, readable and writable by its owner only.
pub fn write_private(path: impl AsRef<Path>, bytes: impl AsRef<[u8]>) -> io::Result<()> {
    write_mode(path.as_ref(), 0o600, |f| f.write_all(bytes.as_ref()))
}

/// Creates `dir` (and its missing parents) readable by its owner only; an existing folder is
/// made owner-only. A symbolic link in its place is refused, not followed.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if let Ok(m) = std::fs::symlink_metadata(dir) {
        if m.file_type().is_symlink() {
            return Err(io::Error::other(format!(
                "`{}` is a symbolic link to `{}`; lexrun keeps private files only in a real folder",
                dir.display(),
                std::fs::read_link(dir).unwrap_or_default().display()
            )));
        }
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// Reads a file lexrun wrote itself, refusing a symbolic link in its place (`O_NOFOLLOW`).
pub fn read_own(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mut out = Vec::new();
    f.read_to_end(&mut out)?;
    Ok(out)
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

    #[test]
    fn a_link_at_the_destination_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, b"keep").unwrap();
        let p = dir.path().join("out.md.provenance.json");
        std::os::unix::fs::symlink(&victim, &p).unwrap();
        assert!(read_own(&p).is_err(), "O_NOFOLLOW refuses the link");
        write_private(&p, b"{}").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(!std::fs::symlink_metadata(&p)
            .unwrap()
            .file_type()
            .is_symlink());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::os::unix::fs::symlink(dir.path(), dir.path().join("linked")).unwrap();
        assert!(private_dir(&dir.path().join("linked")).is_err());
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
