//! Confinement: every path lexrun reads under a declared root (a matter, a sources folder, a
//! workflow's folder) is resolved, symbolic links included, and must stay inside that root. A
//! link that leads out is refused by name, with its target, never followed; a link back into a
//! folder already walked (`a -> .`) is walked once; a file reached by two paths is listed once.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// A path that leads outside its root.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{}` {} `{}`, outside `{}`: lexrun reads nothing outside it; copy the file in if it belongs there", link.display(), if *linked { "is a symbolic link to" } else { "resolves to" }, target.display(), root.display())]
pub struct Escape {
    /// The link (or, with no link on the way, the path) that leaves the root.
    pub link: PathBuf,
    /// Where it leads.
    pub target: PathBuf,
    pub root: PathBuf,
    /// Whether `link` is a symbolic link (else a `..` or absolute path).
    pub linked: bool,
}

/// Whether `path`, as written, stays under the folder it is relative to: not absolute and
/// never climbing above its start with `..`. Says nothing of symbolic links.
pub fn lexically_inside(path: &Path) -> bool {
    let mut depth = 0i32;
    for c in path.components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::CurDir => {}
            Component::ParentDir => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    true
}

/// `path` resolved (every link followed), if it stays inside `root`; otherwise the first link
/// on the way that leads out of it. A path that does not exist is an I/O error for the caller
/// to report in its own words.
pub fn resolve_within(root: &Path, path: &Path) -> Result<PathBuf, ConfineError> {
    let real_root = root
        .canonicalize()
        .map_err(|e| ConfineError::Io(root.to_path_buf(), e))?;
    let real = path
        .canonicalize()
        .map_err(|e| ConfineError::Io(path.to_path_buf(), e))?;
    if real.starts_with(&real_root) {
        return Ok(real);
    }
    Err(ConfineError::Escape(escape_of(
        root, &real_root, path, &real,
    )))
}

/// Names the link that takes `path` out of `root`: the first prefix of the path that is a
/// symbolic link resolving outside it.
fn escape_of(root: &Path, real_root: &Path, path: &Path, real: &Path) -> Escape {
    let mut prefix = PathBuf::new();
    for c in path.components() {
        prefix.push(c);
        let is_link = std::fs::symlink_metadata(&prefix).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            continue;
        }
        if let Ok(t) = prefix.canonicalize() {
            if !t.starts_with(real_root) {
                let shown = std::fs::read_link(&prefix).unwrap_or(t);
                return Escape {
                    link: prefix,
                    target: shown,
                    root: root.to_path_buf(),
                    linked: true,
                };
            }
        }
    }
    Escape {
        link: path.to_path_buf(),
        target: real.to_path_buf(),
        root: root.to_path_buf(),
        linked: false,
    }
}

/// The workflow library: the folder a workflow and everything it is made of (the files it
/// `use`s, its prompt templates, the drafts it verifies) live in. It is the nearest folder
/// at or above the workflow's own that holds a `lexrun.toml` or a `.git`; with neither, the
/// workflow's folder. A library laid out as `workflows/`, `prompts/` and `lib/` side by side
/// is one library; a file outside it is refused, by `..`, an absolute path or a link alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Library {
    pub root: PathBuf,
    /// The file that makes `root` the library (`lexrun.toml` or `.git`), if one does.
    pub marker: Option<&'static str>,
}

/// The rule, as the messages state it.
pub const LIBRARY_RULE: &str = "a workflow reads only files inside its library, the nearest folder at or above it holding a `lexrun.toml` or `.git` (else its own folder)";

impl Library {
    /// The library of a workflow in folder `dir` (relative folders are taken from the current
    /// one).
    pub fn of(dir: &Path) -> Library {
        let abs = absolute(dir);
        for d in abs.ancestors() {
            for marker in ["lexrun.toml", ".git"] {
                if d.join(marker).exists() {
                    return Library {
                        root: d.to_path_buf(),
                        marker: Some(marker),
                    };
                }
            }
        }
        Library {
            root: abs,
            marker: None,
        }
    }

    /// Checks that `written` (a path as the file at `from` wrote it, relative to `from`)
    /// stays inside the library, symbolic links included. A file that does not exist is
    /// judged by its path alone: reading it reports the rest. `what` names it in the message
    /// ("the template `x`").
    pub fn admit(&self, from: &Path, written: &str, what: &str) -> Result<(), String> {
        let from = lexical(&absolute(from));
        let full = lexical(&from.join(written));
        let root = lexical(&self.root);
        // The library as seen from the file that names the path, so messages read the same
        // on every machine.
        let seen = match from.strip_prefix(&root) {
            Ok(rest) if rest.as_os_str().is_empty() => "this file's folder".to_string(),
            Ok(rest) => format!("`{}`", vec![".."; rest.components().count()].join("/")),
            Err(_) => format!("`{}`", root.display()),
        };
        let whose = match self.marker {
            Some(m) => format!("the workflow library ({seen}, the nearest folder holding `{m}`)"),
            None => format!(
                "the workflow library ({seen}: no folder above holds a `lexrun.toml` or `.git`)"
            ),
        };
        if !full.starts_with(&root) {
            return Err(format!(
                "{what} `{written}` leads out of {whose}; {LIBRARY_RULE}"
            ));
        }
        match resolve_within(&root, &full) {
            Err(ConfineError::Escape(e)) => Err(format!(
                "{what} `{written}` is outside {whose}: {e}; {LIBRARY_RULE}"
            )),
            _ => Ok(()),
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    }
}

/// `a/b/../c` → `a/c`, without touching the disk.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error("cannot read `{}`: {}", .0.display(), .1)]
    Io(PathBuf, #[source] std::io::Error),
    #[error("{0}")]
    Escape(Escape),
}

/// Every file under `root` for which `wanted` holds, sorted, following symbolic links that
/// stay inside it. Folders for which `skip_dir` holds (by name) are not entered; a link
/// leading outside `root` is an error naming it — a link to a folder always, a link to a file
/// when the file is wanted (a link nothing reads reads nothing); a folder reached again through a link is not walked twice, and a file
/// reached by two paths is listed once — by its real path, when it has one without links.
/// Dangling links are not files and are passed over.
pub fn walk(
    root: &Path,
    skip_dir: &dyn Fn(&str) -> bool,
    wanted: &dyn Fn(&Path) -> bool,
) -> Result<Vec<PathBuf>, ConfineError> {
    use std::os::unix::fs::MetadataExt;
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |e| ConfineError::Io(p, e)
    };
    let real_root = root.canonicalize().map_err(io(root))?;
    let meta = std::fs::metadata(&real_root).map_err(io(root))?;
    let mut seen_dirs: HashSet<(u64, u64)> = HashSet::from([(meta.dev(), meta.ino())]);
    let mut seen_files: HashSet<(u64, u64)> = HashSet::new();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    // Links are followed only once the tree without them is walked, so that what is reached
    // both ways is found at its own place first.
    let mut links: Vec<PathBuf> = Vec::new();
    loop {
        while let Some(dir) = stack.pop() {
            let mut entries = Vec::new();
            for e in std::fs::read_dir(&dir).map_err(io(&dir))? {
                entries.push(e.map_err(io(&dir))?);
            }
            entries.sort_by_key(|e| e.file_name());
            for e in entries.into_iter().rev() {
                let p = e.path();
                let Ok(ft) = e.file_type() else { continue };
                if ft.is_symlink() {
                    links.push(p);
                    continue;
                }
                let Ok(meta) = e.metadata() else { continue };
                let id = (meta.dev(), meta.ino());
                if meta.is_dir() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if !skip_dir(&name) && seen_dirs.insert(id) {
                        stack.push(p);
                    }
                } else if meta.is_file() && wanted(&p) && seen_files.insert(id) {
                    files.push(p);
                }
            }
        }
        if links.is_empty() {
            break;
        }
        links.sort();
        for p in std::mem::take(&mut links) {
            let Ok(target) = p.canonicalize() else {
                continue;
            };
            if !target.starts_with(&real_root) && (target.is_dir() || wanted(&p)) {
                return Err(ConfineError::Escape(Escape {
                    target: std::fs::read_link(&p).unwrap_or(target),
                    link: p,
                    root: root.to_path_buf(),
                    linked: true,
                }));
            }
            let Ok(meta) = std::fs::metadata(&target) else {
                continue;
            };
            if !target.starts_with(&real_root) {
                continue;
            }
            let id = (meta.dev(), meta.ino());
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if meta.is_dir() {
                if !skip_dir(&name) && seen_dirs.insert(id) {
                    stack.push(p);
                }
            } else if meta.is_file() && wanted(&p) && seen_files.insert(id) {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn lexical_escapes() {
        assert!(lexically_inside(Path::new("intake/a.pdf")));
        assert!(lexically_inside(Path::new("a/../b")));
        assert!(!lexically_inside(Path::new("../x")));
        assert!(!lexically_inside(Path::new("a/../../x")));
        assert!(!lexically_inside(Path::new("/etc/passwd")));
    }

    #[test]
    fn links_out_are_refused_links_in_are_followed_once() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "x").unwrap();
        let m = tempfile::tempdir().unwrap();
        std::fs::create_dir(m.path().join("docs")).unwrap();
        std::fs::write(m.path().join("docs/a.txt"), "a").unwrap();
        symlink(".", m.path().join("loop")).unwrap();
        symlink("docs", m.path().join("alias")).unwrap();
        symlink("docs/a.txt", m.path().join("b.txt")).unwrap();
        symlink("nowhere", m.path().join("dangling")).unwrap();
        let got = walk(m.path(), &|_| false, &|_| true).unwrap();
        let rel: Vec<_> = got
            .iter()
            .map(|p| p.strip_prefix(m.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(rel.len(), 1, "{rel:?}");
        symlink(
            outside.path().join("secret.txt"),
            m.path().join("docs/s.txt"),
        )
        .unwrap();
        let Err(ConfineError::Escape(e)) = walk(m.path(), &|_| false, &|_| true) else {
            panic!("a link outside was followed")
        };
        assert_eq!(e.link, m.path().join("docs/s.txt"));
        assert_eq!(e.target, outside.path().join("secret.txt"));
        let Err(ConfineError::Escape(e)) = resolve_within(m.path(), &m.path().join("docs/s.txt"))
        else {
            panic!("resolved outside")
        };
        assert!(e.linked && e.to_string().contains("symbolic link"));
    }

    #[test]
    fn the_library_is_the_nearest_marked_folder() {
        let t = tempfile::tempdir().unwrap();
        let lib = t.path().join("firm");
        for d in ["workflows/deep", "prompts", "lib"] {
            std::fs::create_dir_all(lib.join(d)).unwrap();
        }
        std::fs::write(lib.join("lexrun.toml"), "").unwrap();
        std::fs::write(lib.join("prompts/demand.hbs"), "x").unwrap();
        std::fs::write(t.path().join("leak.hbs"), "x").unwrap();
        let l = Library::of(&lib.join("workflows/deep"));
        assert_eq!(l.root, lib);
        let from = lib.join("workflows");
        assert!(l
            .admit(&from, "../prompts/demand.hbs", "the template")
            .is_ok());
        assert!(l.admit(&from, "../lib/missing.lex", "the file").is_ok());
        let e = l
            .admit(&from, "../../leak.hbs", "the template")
            .unwrap_err();
        assert!(
            e.contains("leads out of the workflow library") && e.contains("lexrun.toml"),
            "{e}"
        );
        symlink(t.path().join("leak.hbs"), lib.join("prompts/linked.hbs")).unwrap();
        let e = l
            .admit(&from, "../prompts/linked.hbs", "the template")
            .unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        // No marker: the workflow's own folder.
        let bare = tempfile::tempdir().unwrap();
        std::fs::create_dir(bare.path().join("w")).unwrap();
        let l = Library::of(&bare.path().join("w"));
        if l.marker.is_none() {
            assert_eq!(l.root, bare.path().join("w"));
            let e = l
                .admit(&bare.path().join("w"), "../x.lex", "the file")
                .unwrap_err();
            assert!(
                e.contains("this file's folder") && e.contains("its own folder"),
                "{e}"
            );
        }
    }
}
