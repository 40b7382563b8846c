//! Evidence as pages of normalised text, each with the Bates number stamped on it.
//!
//! Text and Markdown files split into pages at form feeds, as `pdftotext` writes them; PDFs
//! give the text layer of each page. A Bates number printed at the foot of a page is that
//! page's number. A file that cannot be read is kept with its problem, so that the report says
//! so and nothing it might have supported passes silently.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

use super::extract::re;
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

/// The evidence: the sources in order, and the Bates prefixes declared for them.
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    pub sources: Vec<DocSource>,
    /// Bates prefixes declared by the caller; those stamped on pages are added to them.
    pub declared_prefixes: Vec<String>,
    /// Reporter abbreviations accepted beyond the catalogue (`allow reporter "…"`).
    pub allowed_reporters: super::Allowed,
}

/// A stamp at the foot of a page: a capitalised prefix and at least four digits, alone at the
/// end of one of the last lines.
static STAMP: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?:^|(?-u:\s))(?P<p>[A-Z][A-Z0-9_]{1,15}?)[ _-]?(?P<n>[0-9]{4,10})(?-u:\s)*$")
        .expect("stamp pattern compiles")
});

impl Evidence {
    pub fn new(declared_prefixes: Vec<String>) -> Self {
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
            self.sources.push(DocSource::File(path.to_path_buf()));
            return Ok(());
        }
        let mut files = Vec::new();
        let mut stack = vec![path.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir)? {
                let p = e?.path();
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                // Hidden files, and the page map `lexrun bates` writes beside stamped copies.
                if name.starts_with('.')
                    || name == "bates-map.json"
                    || name.ends_with(".lexrun-tmp")
                {
                    continue;
                }
                if p.is_dir() {
                    stack.push(p);
                } else {
                    files.push(p);
                }
            }
        }
        files.sort();
        self.sources.extend(files.into_iter().map(DocSource::File));
        Ok(())
    }

    /// Adds a document given as the raw text of its pages.
    pub fn add_pages(&mut self, path: String, pages: Vec<String>) {
        self.sources
            .push(DocSource::Memory(Doc::Pages { path, pages }));
    }
}

fn read_doc(path: &Path) -> Doc {
    let display = path.display().to_string();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let result = match ext.as_str() {
        // PDFs and images: the text layer, and OCR where there is none (when tesseract is
        // installed; otherwise such pages are reported as having no text).
        "pdf" | "png" | "jpg" | "jpeg" | "tif" | "tiff" => {
            crate::exhibits::text::pages(path, &crate::exhibits::text::Options::default())
                .map(|pages| pages.into_iter().map(|p| p.text).collect())
                .map_err(|e| e.to_string())
        }
        "txt" | "md" | "markdown" | "text" | "" => read_text(path),
        "gif" | "bmp" => {
            Err("a GIF or BMP image: convert it to PNG or PDF so it can be OCR'd".to_string())
        }
        other => Err(format!(
            "a .{other} file: lexrun reads text, Markdown and PDF sources"
        )),
    };
    match result {
        Ok(pages) => Doc::Pages {
            path: display,
            pages,
        },
        Err(problem) => Doc::Unreadable {
            path: display,
            problem,
        },
    }
}

/// The Bates number stamped at the foot of a page, if any.
pub(crate) fn stamp_of(raw: &str) -> Option<String> {
    raw.lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .find_map(|l| {
            STAMP
                .captures(l.trim_end())
                .map(|c| format!("{}{}", &c["p"], &c["n"]))
        })
}

fn read_text(path: &Path) -> Result<Vec<String>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.contains(&0) {
        return Err("a binary file, not text".into());
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {}); save it as UTF-8",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(text.split('\u{000C}').map(str::to_string).collect())
}

/// Collects source paths for the command line, keeping their order.
pub fn load(paths: &[PathBuf], prefixes: Vec<String>) -> Result<Evidence, String> {
    let mut ev = Evidence::new(prefixes);
    for p in paths {
        ev.add_path(p)
            .map_err(|e| format!("cannot read sources `{}`: {e}", p.display()))?;
    }
    Ok(ev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_read_from_the_foot_of_a_page() {
        assert_eq!(
            stamp_of("Lease text\n\nSMITH000002\n").as_deref(),
            Some("SMITH000002")
        );
        assert_eq!(
            stamp_of("More\nSMITH 000003\n").as_deref(),
            Some("SMITH000003")
        );
    }

    #[test]
    fn a_year_at_the_foot_is_not_a_stamp() {
        assert_eq!(stamp_of("Signed March 1, 2024"), None);
        assert_eq!(stamp_of("Page 2"), None);
    }
}
