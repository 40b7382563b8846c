//! One open document, checked: the checker's diagnostics and workflow, and the name index.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use camino::Utf8PathBuf;
use lsp_types::{
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, Url,
};

use super::index::Index;
use super::lines::{line_starts, Lines};
use crate::check::{self, Checked};
use crate::diagnostic::{Diagnostic, FileId, Severity, Span};
use crate::plan::workflow::Workflow;

pub struct Analysis {
    pub checked: Checked,
    /// Built on first use: publishing diagnostics does not need it, so an edit's diagnostics
    /// go out before the names are indexed again.
    index: OnceCell<Index>,
    /// Where the lines of each file start, found once per file on first use: every range of
    /// every diagnostic is looked up in them.
    starts: Vec<OnceCell<Vec<usize>>>,
}

/// Where the document lives on disk, or where it would if it has no file yet: imports and
/// relative paths resolve against its folder.
pub fn doc_path(uri: &Url) -> Utf8PathBuf {
    let path = uri
        .to_file_path()
        .ok()
        .and_then(|p| Utf8PathBuf::from_path_buf(p).ok());
    path.unwrap_or_else(|| {
        let cwd = std::env::current_dir()
            .ok()
            .and_then(|p| Utf8PathBuf::from_path_buf(p).ok())
            .unwrap_or_default();
        let name = uri
            .path_segments()
            .and_then(|mut s| s.next_back().map(str::to_string))
            .filter(|n| n.ends_with(".lex"))
            .unwrap_or_else(|| "untitled.lex".into());
        cwd.join(name)
    })
}

/// Checks a document, reading the files in `open` (the other open documents, by path) from
/// their text in the editor rather than from disk.
/// `reuse` keeps the parse of the declarations between checks of the document.
pub fn analyze(
    uri: &Url,
    text: &str,
    open: &HashMap<PathBuf, &str>,
    reuse: &mut crate::syntax::Reuse,
) -> Analysis {
    let path = doc_path(uri);
    if path.as_str().ends_with(".test.lex") {
        return test_file(&path, text);
    }
    let overlay = |p: &camino::Utf8Path| {
        let key = crate::confine::lexical(&std::path::absolute(p.as_std_path()).ok()?);
        open.get(&key).map(|t| t.as_bytes().to_vec())
    };
    let checked = check::check_bytes_reusing(&path, text.as_bytes().to_vec(), &overlay, reuse);
    Analysis::new(checked, OnceCell::new())
}

/// A `.test.lex` file is read as tests, the way `lexrun check` reads it.
fn test_file(path: &camino::Utf8Path, text: &str) -> Analysis {
    Analysis::new(
        check::check_test_bytes(path, text.as_bytes()),
        OnceCell::from(Index::default()),
    )
}

impl Analysis {
    fn new(checked: Checked, index: OnceCell<Index>) -> Analysis {
        let starts = (0..checked.sources.len())
            .map(|_| OnceCell::new())
            .collect();
        Analysis {
            checked,
            index,
            starts,
        }
    }

    /// The lines of a file the check read.
    pub fn lines(&self, file: FileId) -> Lines<'_> {
        let text = self.text(file);
        match self.starts.get(file) {
            Some(cell) => Lines::with_starts(text, cell.get_or_init(|| line_starts(text))),
            None => Lines::new(text),
        }
    }

    pub fn index(&self) -> &Index {
        self.index
            .get_or_init(|| Index::build(&self.checked.sources))
    }

    pub fn workflow(&self) -> Option<&Workflow> {
        self.checked.workflow.as_ref()
    }

    pub fn text(&self, file: FileId) -> &str {
        &self.checked.sources.get(file).text
    }

    pub fn range(&self, file: FileId, span: Span) -> Range {
        self.lines(file).range(span)
    }

    /// The URI of a file the check read: the document, an import, or a stdlib file (written
    /// once to a read-only folder so editors can open it).
    pub fn url(&self, file: FileId, doc: &Url) -> Option<Url> {
        if file == 0 {
            return Some(doc.clone());
        }
        file_url(&self.checked.sources.get(file).name)
    }

    pub fn location(&self, file: FileId, span: Span, doc: &Url) -> Option<Location> {
        Some(Location::new(self.url(file, doc)?, self.range(file, span)))
    }

    /// The checker's diagnostics as the protocol shows them. Problems inside an imported
    /// file are shown on the `use` line that brings it in.
    pub fn diagnostics(&self, doc: &Url) -> Vec<lsp_types::Diagnostic> {
        self.checked
            .diagnostics
            .iter()
            .map(|d| self.diagnostic(d, doc))
            .collect()
    }

    fn diagnostic(&self, d: &Diagnostic, doc: &Url) -> lsp_types::Diagnostic {
        let first = d.labels.first();
        let (range, mut message) = match d.file {
            Some(0) => (
                self.range(0, first.map_or(Span::default(), |l| l.span)),
                d.message.clone(),
            ),
            Some(f) if f < self.checked.sources.len() => {
                let at = self.import_of(f).unwrap_or_default();
                let line = first.map_or(0, |l| self.lines(f).position(l.span.start).line + 1);
                (
                    self.range(0, at),
                    format!(
                        "in {} (line {line}): {}",
                        self.checked.sources.get(f).name,
                        d.message
                    ),
                )
            }
            _ => (Range::default(), d.message.clone()),
        };
        if let Some(l) = first.filter(|l| !l.text.is_empty()) {
            message.push_str(&format!(" ({})", l.text));
        }
        if let Some(h) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(h);
        }
        let related: Vec<DiagnosticRelatedInformation> = match d.file {
            Some(f) if f < self.checked.sources.len() => d
                .labels
                .iter()
                .skip(usize::from(f == 0))
                .filter_map(|l| {
                    Some(DiagnosticRelatedInformation {
                        location: self.location(f, l.span, doc)?,
                        message: if l.text.is_empty() {
                            d.message.clone()
                        } else {
                            l.text.clone()
                        },
                    })
                })
                .collect(),
            _ => Vec::new(),
        };
        lsp_types::Diagnostic {
            range,
            severity: Some(match d.severity() {
                Severity::Error => DiagnosticSeverity::ERROR,
                Severity::Warning => DiagnosticSeverity::WARNING,
            }),
            code: Some(NumberOrString::String(d.code.id().to_string())),
            source: Some("lexrun".into()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            ..Default::default()
        }
    }

    /// The `use` line of the document through which a file was loaded.
    fn import_of(&self, file: FileId) -> Option<Span> {
        let mut seen = vec![false; self.checked.sources.len()];
        let mut target = file;
        // Walk up the import chain to a `use` in the document itself.
        loop {
            if seen[target] {
                return None;
            }
            seen[target] = true;
            let imp = self
                .index()
                .imports
                .iter()
                .find(|i| i.target == Some(target))?;
            if imp.file == 0 {
                return Some(imp.span);
            }
            target = imp.file;
        }
    }
}

/// The URI of a file by the name the checker gave it.
pub fn file_url(name: &str) -> Option<Url> {
    let path = match name.strip_prefix("std/") {
        Some(rest) => stdlib_dir()?.join(rest),
        None => {
            let p = PathBuf::from(name);
            if p.is_absolute() {
                p
            } else {
                std::env::current_dir().ok()?.join(p)
            }
        }
    };
    // Imports may name `../common.lex`.
    Url::from_file_path(crate::confine::lexical(&path)).ok()
}

/// The embedded stdlib, written once per version to a read-only folder, so that go to
/// definition can open `std.prompts.gate` (and show that it is not to be edited).
pub fn stdlib_dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let mut h = blake3::Hasher::new();
        for (p, t) in check::stdlib::FILES {
            h.update(p.as_bytes());
            h.update(t.as_bytes());
        }
        let tag = &h.finalize().to_hex()[..12];
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir);
        let dir = base.join("lexrun").join(format!("stdlib-{tag}"));
        for (p, t) in check::stdlib::FILES {
            let file = dir.join(p);
            if std::fs::read_to_string(&file).is_ok_and(|have| have == *t) {
                continue;
            }
            let parent = file.parent()?;
            std::fs::create_dir_all(parent).ok()?;
            // Written aside and renamed into place, so a server starting at the same moment
            // never reads half a file; a read-only copy from an earlier version is replaced.
            let tmp = parent.join(format!(
                ".{}.{}",
                std::process::id(),
                file.file_name()?.to_string_lossy()
            ));
            std::fs::write(&tmp, t).ok()?;
            let mut perm = std::fs::metadata(&tmp).ok()?.permissions();
            perm.set_readonly(true);
            let _ = std::fs::set_permissions(&tmp, perm);
            std::fs::rename(&tmp, &file).ok()?;
        }
        Some(dir)
    })
    .as_deref()
}
