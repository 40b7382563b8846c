//! What reading a file gives, and how to read it: each document in the file (the file
//! itself, or an attachment inside it) with its pages, and the reading's options.

use super::kind::Kind;
use super::pdf_text::{self, PageText};

/// One document read from a file: the file itself, or an attachment inside it.
#[derive(Clone, Debug)]
pub struct Document {
    /// Where inside the file: empty for the file itself, else the attachment names leading to
    /// it (`["invoice.pdf"]` for an invoice attached to an email).
    pub within: Vec<String>,
    pub kind: Kind,
    pub pages: Vec<PageText>,
    /// An attachment's own bytes, which the intake guard hashes (the file's are on disk).
    pub embedded: Option<Vec<u8>>,
    /// Why this part of a file could not be read, when it could not (its pages are then
    /// empty): an email's damaged attachment is named with its reason, and the rest of the
    /// email is still evidence.
    pub unreadable: Option<String>,
    /// What a reader of the text should know about how it was read: a damaged PDF that
    /// poppler repaired, a conversion that had to substitute fonts.
    pub notes: Vec<String>,
}

impl Document {
    /// The document's name from the file's: `letter.eml`, or `letter.eml › invoice.pdf`.
    pub fn shown(&self, file: &str) -> String {
        let mut s = file.to_string();
        for w in &self.within {
            s.push_str(" › ");
            s.push_str(w);
        }
        s
    }

    /// The text of each page.
    pub fn texts(&self) -> Vec<String> {
        self.pages.iter().map(|p| p.text.clone()).collect()
    }
}

/// How to read.
#[derive(Clone, Debug)]
pub struct Options {
    /// OCR language, resolution, text cache, and whether a page that needs OCR may come back
    /// empty when tesseract is not installed (the workflow's `ocr optional`); by default it is
    /// an error naming the package.
    pub scan: pdf_text::Options,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scan: pdf_text::Options {
                ocr_optional: false,
                ..pdf_text::Options::default()
            },
        }
    }
}

impl Options {
    pub fn ocr_optional(mut self, optional: bool) -> Self {
        self.scan.ocr_optional = optional;
        self
    }
}
