//! Evidence as pages of normalised text, each with the Bates number stamped on it.
//!
//! Every file is read through `sources`, whatever its kind (PDF, scan, Word, email,
//! spreadsheet, web page, text); an email's attachments are sources of their own. A Bates number printed at the foot of a page is that
//! page's number. A file that cannot be read is kept with its problem, so that the report says
//! so and nothing it might have supported passes silently.

use std::path::{Path, PathBuf};

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct SourceFile {
    pub path: String,
    pub pages: u32,
    /// Why the file could not be read, if it could not.
    pub problem: Option<String>,
    /// Pages with no text at all (scans without a text layer).
    pub empty_pages: Vec<u32>,
}

/// A document's raw pages, or why it could not be read.
#[derive(Clone, Debug)]
pub enum Doc {
    Pages { path: String, pages: Vec<String> },
    Unreadable { path: String, problem: String },
}

/// A source to read when the index is built: a file on disk (read then, and dropped after),
/// or pages given in memory.
#[derive(Clone, Debug)]
pub enum DocSource {
    File(PathBuf),
    Memory(Doc),
}

impl DocSource {
    pub fn load(&self) -> Doc {
        match self {
            DocSource::Memory(d) => d.clone(),
            DocSource::File(p) => read_doc(p),
        }
    }
}

/// A function the evidence pass calls with each document's name and pages as it reads them
/// (from its threads), so that a caller can look at every file without reading it again.
#[derive(Clone, Default)]
pub struct Observer(Option<std::sync::Arc<Observe>>);

type Observe = dyn Fn(&str, &[String]) + Send + Sync;

impl Observer {
    pub fn new(f: impl Fn(&str, &[String]) + Send + Sync + 'static) -> Self {
        Observer(Some(std::sync::Arc::new(f)))
    }

    pub(crate) fn saw(&self, path: &str, pages: &[String]) {
        if let Some(f) = &self.0 {
            f(path, pages);
        }
    }
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Observer(set)"
        } else {
            "Observer(none)"
        })
    }
}

/// The evidence: the sources in order, and the Bates prefixes declared for them.
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    pub sources: Vec<DocSource>,
    /// Called with each document as the evidence pass reads it.
    pub observer: Observer,
    /// Bates prefixes declared by the caller; those stamped on pages are added to them.
    pub declared_prefixes: Vec<String>,
    /// Reporter abbreviations accepted beyond the catalogue (`allow reporter "…"`).
    pub allowed_reporters: super::cites::Allowed,
    /// Prefixes of identifiers that are not Bates numbers (`ignore prefixes "BD"`): never a
    /// Bates claim unless declared or stamped on the sources.
    pub ignored_prefixes: Vec<String>,
    /// Each source's name as reviewers' decisions record it (relative to the matter's
    /// folder), where it differs from the name the evidence knows it by.
    pub ledger_names: Vec<(String, String)>,
}

impl Evidence {
    /// The name decisions record for the source the evidence calls `name`.
    pub fn ledger_name(&self, name: &str) -> String {
        self.ledger_names
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(|| name.to_string(), |(_, l)| l.clone())
    }

    /// The name the evidence knows by the source decisions record as `ledger`.
    pub fn evidence_name(&self, ledger: &str) -> String {
        self.ledger_names
            .iter()
            .find(|(_, l)| l == ledger)
            .map_or_else(|| ledger.to_string(), |(n, _)| n.clone())
    }

    pub fn new(declared_prefixes: Vec<String>) -> Self {
        crate::sources::declare_prefixes(&declared_prefixes);
        Evidence {
            declared_prefixes,
            ..Evidence::default()
        }
    }

    /// Adds a file, or every file under a folder (sorted by path). Files lexrun cannot read
    /// as text are reported as unreadable when the index is built, never silently skipped.
    pub fn add_path(&mut self, path: &Path) -> std::io::Result<()> {
        let meta = std::fs::metadata(path)?;
        if !meta.is_dir() {
            self.add_file(path);
            return Ok(());
        }
        // Links are followed only inside the folder; one leading out of it is refused.
        // Hidden files, and the page map `lexrun bates` writes beside stamped copies, are not
        // sources.
        let wanted = |p: &Path| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !(name.starts_with('.') || name == "bates-map.json" || name.ends_with(".lexrun-tmp"))
        };
        let files = crate::confine::walk(path, &|name| name.starts_with('.'), &wanted).map_err(
            |e| match e {
                crate::confine::ConfineError::Io(_, e) => e,
                escape => std::io::Error::other(escape.to_string()),
            },
        )?;
        for f in files {
            self.add_file(&f);
        }
        Ok(())
    }

    /// A file is read when the index is built; an email or mailbox now, since each of its
    /// messages and attachments is a source of its own (`letter.eml › invoice.pdf`).
    fn add_file(&mut self, path: &Path) {
        if !crate::sources::kind::is_mail(path) {
            self.sources.push(DocSource::File(path.to_path_buf()));
            return;
        }
        let display = path.display().to_string();
        match crate::sources::read(path, &crate::sources::Options::default()) {
            // A part that could not be read (a damaged attachment) is named with why, as an
            // unreadable file is; the message and its other parts are still sources.
            Ok(docs) => self.sources.extend(docs.into_iter().map(|d| {
                DocSource::Memory(match &d.unreadable {
                    Some(why) => Doc::Unreadable {
                        path: d.shown(&display),
                        problem: why.clone(),
                    },
                    None => Doc::Pages {
                        path: d.shown(&display),
                        pages: d.texts(),
                    },
                })
            })),
            Err(e) => self.sources.push(DocSource::Memory(Doc::Unreadable {
                path: display,
                problem: e.to_string(),
            })),
        }
    }

    /// Adds a document given as the raw text of its pages.
    pub fn add_pages(&mut self, path: String, pages: Vec<String>) {
        self.sources
            .push(DocSource::Memory(Doc::Pages { path, pages }));
    }

    /// The raw text of each page asked for (file, page number), or `None` for one no source
    /// has; each document is read once.
    pub fn page_texts(&self, want: &[(String, u32)]) -> Vec<Option<String>> {
        let mut out = vec![None; want.len()];
        for src in &self.sources {
            let path = match src {
                DocSource::Memory(Doc::Pages { path, .. }) => path.clone(),
                DocSource::Memory(Doc::Unreadable { .. }) => continue,
                DocSource::File(p) => p.display().to_string(),
            };
            if !want.iter().any(|(f, _)| *f == path) {
                continue;
            }
            let Doc::Pages { pages, .. } = src.load() else {
                continue;
            };
            for (i, (f, n)) in want.iter().enumerate() {
                if *f == path && out[i].is_none() && *n >= 1 {
                    out[i] = pages.get(*n as usize - 1).cloned();
                }
            }
        }
        out
    }

    /// Calls `f` with every page (file, page number, raw text) in source order until it
    /// returns something.
    pub fn find_page<T>(&self, mut f: impl FnMut(&str, u32, &str) -> Option<T>) -> Option<T> {
        for src in &self.sources {
            if let Doc::Pages { path, pages } = src.load() {
                for (i, t) in pages.iter().enumerate() {
                    if let Some(x) = f(&path, i as u32 + 1, t) {
                        return Some(x);
                    }
                }
            }
        }
        None
    }
}

fn read_doc(path: &Path) -> Doc {
    let display = path.display().to_string();
    match crate::sources::read_pages(path) {
        Ok(pages) => Doc::Pages {
            path: display,
            pages,
        },
        Err(e) => Doc::Unreadable {
            path: display,
            problem: e.to_string(),
        },
    }
}

/// A source path that could not be listed.
#[derive(Debug, thiserror::Error)]
#[error("cannot read sources `{}`: {source}", path.display())]
pub struct LoadError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Collects source paths for the command line, keeping their order.
pub fn load(paths: &[PathBuf], prefixes: Vec<String>) -> Result<Evidence, LoadError> {
    let mut ev = Evidence::new(prefixes);
    for p in paths {
        ev.add_path(p).map_err(|source| LoadError {
            path: p.clone(),
            source,
        })?;
    }
    Ok(ev)
}
