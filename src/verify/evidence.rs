//! Evidence as pages of normalised text, each with the Bates number stamped on it.
//!
//! Text and Markdown files split into pages at form feeds, as `pdftotext` writes them; PDFs
//! give the text layer of each page. A Bates number printed at the foot of a page is that
//! page's number. A file that cannot be read is kept with its problem, so that the report says
//! so and nothing it might have supported passes silently.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::normalize;

#[derive(Clone, Debug, Serialize)]
pub struct SourceFile {
    pub path: String,
    pub pages: u32,
    /// Why the file could not be read, if it could not.
    pub problem: Option<String>,
    /// Pages with no text at all (scans without a text layer).
    pub empty_pages: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct Page {
    pub file: usize,
    pub number: u32,
    pub bates: Option<String>,
    /// Normalised text.
    pub text: String,
}

#[derive(Clone, Debug, Default)]
pub struct Evidence {
    pub files: Vec<SourceFile>,
    pub pages: Vec<Page>,
    /// Bates prefixes declared by the caller; when empty, those stamped on pages are used.
    pub declared_prefixes: Vec<String>,
}

/// A stamp at the foot of a page: a capitalised prefix and at least four digits, alone at the
/// end of one of the last lines.
static STAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|\s)(?P<p>[A-Z][A-Z0-9_]{1,15}?)[ _-]?(?P<n>\d{4,10})\s*$")
        .expect("stamp pattern compiles")
});

impl Evidence {
    pub fn new(declared_prefixes: Vec<String>) -> Self {
        Evidence {
            declared_prefixes,
            ..Evidence::default()
        }
    }

    /// Adds a file, or every text, Markdown and PDF file under a folder (sorted by path).
    /// Files of other kinds inside a folder are listed as unreadable, never silently skipped.
    pub fn add_path(&mut self, path: &Path) -> std::io::Result<()> {
        let meta = std::fs::metadata(path)?;
        if meta.is_dir() {
            let mut files = Vec::new();
            let mut stack = vec![path.to_path_buf()];
            while let Some(dir) = stack.pop() {
                for e in std::fs::read_dir(&dir)? {
                    let p = e?.path();
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    if name.starts_with('.') {
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
            for f in files {
                self.add_file(&f);
            }
        } else {
            self.add_file(path);
        }
        Ok(())
    }

    pub fn add_file(&mut self, path: &Path) {
        let display = path.display().to_string();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        let result = match ext.as_str() {
            "pdf" => read_pdf(path),
            "txt" | "md" | "markdown" | "text" | "" => read_text(path),
            "png" | "jpg" | "jpeg" | "tif" | "tiff" | "gif" | "bmp" => Err(
                "an image: its text needs OCR, which `lexrun verify` does not run; extract it with the exhibits `ocr` tool first".to_string(),
            ),
            other => Err(format!("a .{other} file: lexrun reads text, Markdown and PDF sources")),
        };
        match result {
            Ok(pages) => self.add_pages(display, pages),
            Err(problem) => self.files.push(SourceFile {
                path: display,
                pages: 0,
                problem: Some(problem),
                empty_pages: Vec::new(),
            }),
        }
    }

    /// Adds a document given as the raw text of its pages.
    pub fn add_pages(&mut self, path: String, pages: Vec<String>) {
        let file = self.files.len();
        let mut empty = Vec::new();
        for (i, raw) in pages.iter().enumerate() {
            let number = i as u32 + 1;
            if raw.trim().is_empty() {
                empty.push(number);
            }
            let bates = stamp_of(raw);
            self.pages.push(Page {
                file,
                number,
                bates,
                text: normalize(raw),
            });
        }
        self.files.push(SourceFile {
            path,
            pages: pages.len() as u32,
            problem: None,
            empty_pages: empty,
        });
    }

    /// Total bytes of text held.
    pub fn text_len(&self) -> usize {
        self.pages.iter().map(|p| p.text.len()).sum()
    }
}

/// The Bates number stamped at the foot of a page, if any.
fn stamp_of(raw: &str) -> Option<String> {
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

fn read_pdf(path: &Path) -> Result<Vec<String>, String> {
    let doc = lopdf::Document::load(path).map_err(|e| format!("not a readable PDF: {e}"))?;
    if doc.is_encrypted() {
        return Err(
            "an encrypted PDF: decrypt it (e.g. `qpdf --decrypt`) before using it as evidence"
                .into(),
        );
    }
    let pages = doc.get_pages();
    Ok(pages
        .keys()
        .map(|n| doc.extract_text(&[*n]).unwrap_or_default())
        .collect())
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
    fn pages_split_at_form_feeds_and_stamps_are_read() {
        let mut ev = Evidence::new(vec![]);
        ev.add_pages(
            "a.txt".into(),
            "Lease text\n\nSMITH000002\n\u{000C}More\nSMITH 000003\n\u{000C}\n"
                .split('\u{000C}')
                .map(str::to_string)
                .collect(),
        );
        assert_eq!(ev.pages.len(), 3);
        assert_eq!(ev.pages[0].bates.as_deref(), Some("SMITH000002"));
        assert_eq!(ev.pages[1].bates.as_deref(), Some("SMITH000003"));
        assert_eq!(ev.files[0].empty_pages, vec![3]);
    }

    #[test]
    fn a_year_at_the_foot_is_not_a_stamp() {
        assert_eq!(stamp_of("Signed March 1, 2024"), None);
        assert_eq!(stamp_of("Page 2"), None);
    }
}
