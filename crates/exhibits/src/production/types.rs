//! The types a production's steps share: what to produce (`Spec`, its patterns, boxes and
//! withholdings), the documents collected and each one's fate, the register's records of a
//! volume, the report of what a volume came to, and why one was not produced.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sources::Kind;

/// A pattern to redact, compiled.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// `ssn`, `account`, `dob`, or `pattern` for a declared expression.
    pub name: String,
    pub regex: regex::Regex,
    pub reason: String,
}

impl Pattern {
    pub fn label(&self) -> String {
        label(&self.reason)
    }
}

/// A declared box on one page of one document.
#[derive(Clone, Debug)]
pub struct BoxRule {
    /// The document's pattern (relative to the matter).
    pub file: String,
    pub page: u32,
    /// x, y, width, height in points from the page's top-left corner.
    pub rect: [f64; 4],
    pub reason: String,
}

impl BoxRule {
    pub fn label(&self) -> String {
        label(&self.reason)
    }
}

/// `REDACTED – PII`.
pub fn label(reason: &str) -> String {
    format!("REDACTED – {}", reason.trim().to_uppercase())
}

#[derive(Clone, Debug)]
pub struct Withhold {
    pub files: Vec<String>,
    pub privilege: String,
    pub description: Option<String>,
}

/// What to produce, and how.
#[derive(Clone, Debug)]
pub struct Spec {
    pub volume: String,
    pub prefix: String,
    pub start: u64,
    /// No start was declared: numbering continues after the matter's earlier volumes.
    pub continues: bool,
    pub width: u32,
    pub suffix: String,
    /// (name, words), least protective first.
    pub legends: Vec<(String, String)>,
    /// (legend name, document patterns).
    pub designate: Vec<(String, Vec<String>)>,
    pub patterns: Vec<Pattern>,
    pub boxes: Vec<BoxRule>,
    pub withhold: Vec<Withhold>,
    pub natives: Vec<String>,
    pub fields: Vec<String>,
    pub dpi: u32,
    pub lang: String,
    pub images: Images,
}

/// What each page of `IMAGES/` is written as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Images {
    /// One PDF a page, `IMAGES/<BATES>.pdf`, its stamps live text.
    #[default]
    Pdf,
    /// One single-page Group IV TIFF a page, `IMAGES/0001/<BATES>.tif`, its stamps and
    /// labels burned into the pixels.
    Tiff,
}

/// TIFF images to a folder of `IMAGES/`, as review platforms load them.
pub const IMAGES_PER_FOLDER: u64 = 1000;

impl Spec {
    /// Where page `n` of a volume that starts at `first` is written, relative to the
    /// volume, with `/` between folders.
    pub fn image_rel(&self, first: u64, n: u64) -> String {
        let bates = self.number(n);
        match self.images {
            Images::Pdf => format!("IMAGES/{bates}.pdf"),
            Images::Tiff => format!(
                "IMAGES/{:04}/{bates}.tif",
                n.saturating_sub(first) / IMAGES_PER_FOLDER + 1
            ),
        }
    }

    pub fn number(&self, n: u64) -> String {
        crate::bates::bates_number(&self.prefix, n, &self.suffix, self.width)
    }
}

/// A collected document, by the file it is in and its place inside.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Produced {
    pub document: String,
    pub first: String,
    pub last: String,
    pub pages: u64,
    pub hash: String,
}

/// One earlier volume, as the register holds it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VolumeRecord {
    pub volume: String,
    pub prefix: String,
    pub first: u64,
    pub last: u64,
    pub documents: Vec<Produced>,
    pub withheld: Vec<String>,
    /// Each withheld document with its hash and the privilege asserted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<Held>,
}

/// A withheld document: what it was, and why it was withheld.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Held {
    pub document: String,
    pub hash: String,
    pub privilege: String,
    /// Its slip sheet's Bates number.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub bates: String,
}

/// Why a volume was not produced. Nothing is left of it on disk.
#[derive(Debug, thiserror::Error)]
pub enum ProductionError {
    #[error("cannot read or write `{}`: {}", .0.display(), .1)]
    Io(PathBuf, #[source] std::io::Error),
    #[error("`{document}` cannot be imaged: {why}")]
    Unimageable { document: String, why: String },
    #[error("the redactions would black out the whole of page {page} of `{document}`; narrow the pattern, or withhold the document")]
    WholePage { document: String, page: u32 },
    #[error("the redaction box at {rect:?} on page {page} of `{document}` lies outside the page ({}); give the box in points from the page's top-left corner", describe_size(*size))]
    BoxOutside {
        document: String,
        page: u32,
        rect: [f64; 4],
        size: (f64, f64),
    },
    #[error("`{document}` is to be produced natively but holds text to redact ({what}); drop it from `natives` to produce it imaged and redacted, or withhold it")]
    NativeRedaction { document: String, what: String },
    /// Bates numbers an earlier volume already used (the message says which).
    #[error("{0}")]
    Collision(String),
    #[error("nothing to produce: every collected document is withheld or an exception")]
    Empty,
    #[error("page {page} of `{document}` cannot be made a TIFF image: {why}; nothing was written. pdftoppm (Debian `poppler-utils`, or scripts/install-tools) rasterises each page; or write `images pdf`")]
    Tiff {
        page: String,
        document: String,
        why: String,
    },
    #[error("the volume failed its re-reading and was not written:\n  {}", .0.join("\n  "))]
    Reread(Vec<String>),
}

fn describe_size((w, h): (f64, f64)) -> String {
    if w == 0.0 {
        "the document has fewer pages".into()
    } else {
        format!("{w:.0} × {h:.0} points")
    }
}

/// Metadata for the load file.
#[derive(Clone, Debug, Default)]
pub(super) struct Meta {
    pub(super) from: String,
    pub(super) to: String,
    pub(super) cc: String,
    pub(super) bcc: String,
    pub(super) date: String,
    pub(super) subject: String,
    /// The time it was sent, with its zone: `09:15:00 -05:00`.
    pub(super) time_sent: String,
    /// The date its first `Received` header gives.
    pub(super) received: String,
    pub(super) message_id: String,
}

/// One collected document.
pub(super) struct Doc {
    /// `rivera/lease-email.eml` or `rivera/lease-email.eml › rent-ledger.xlsx`.
    pub(super) name: String,
    /// The file it is in, relative to the matter.
    pub(super) rel: String,
    pub(super) path: PathBuf,
    /// Its own file name (an attachment's name for an attachment).
    pub(super) file_name: String,
    pub(super) kind: Kind,
    pub(super) texts: Vec<String>,
    pub(super) bytes: Option<Vec<u8>>,
    pub(super) family: usize,
    pub(super) attachment: bool,
    pub(super) meta: Meta,
    pub(super) hash: String,
    /// Why the document cannot be processed (a file or attachment that cannot be read): it
    /// is an exception, produced as a technical-issue slip sheet.
    pub(super) problem: Option<String>,
    pub(super) level: Level,
}

impl Doc {
    /// Its name without the folders it was collected from: `lease-email.eml › ledger.xlsx`.
    pub(super) fn shown(&self) -> String {
        let base = self.rel.rsplit('/').next().unwrap_or(&self.rel);
        match self.name.split_once(" › ") {
            Some((_, inner)) => format!("{base} › {inner}"),
            None => base.to_string(),
        }
    }
}

/// Where a collected item sits: a file as collected, a message of a mailbox, an email's
/// attachment, or a file embedded in a document (a PDF's embedded file, an Office object).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    File,
    Message,
    Attachment,
    Embedded,
}

impl Level {
    pub const ALL: [Level; 4] = [
        Level::File,
        Level::Message,
        Level::Attachment,
        Level::Embedded,
    ];

    pub fn plural(self) -> &'static str {
        match self {
            Level::File => "files",
            Level::Message => "messages",
            Level::Attachment => "attachments",
            Level::Embedded => "embedded files",
        }
    }
}

/// What becomes of a collected document: imaged page by page, produced natively, or
/// withheld under the spec's withholding of that index.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Fate {
    Imaged,
    Native,
    Withheld(usize),
    /// It cannot be processed (`Ready::problems` says why): a technical-issue slip sheet.
    Exception,
}

/// The files the production reads, each with its path relative to the matter.
pub struct Input {
    pub path: PathBuf,
    pub rel: String,
}

/// What a volume came to.
#[derive(Debug)]
pub struct Report {
    pub folder: PathBuf,
    pub record: VolumeRecord,
    pub collected: usize,
    pub produced: usize,
    pub withheld: usize,
    pub exceptions: Vec<String>,
    pub pages: u64,
    pub redactions: usize,
    /// Patterns that matched nothing, listed in the reconciliation.
    pub unmatched: Vec<String>,
    /// For each level of item (files, messages, attachments, embedded files): collected,
    /// produced, withheld, exceptions, and unaccounted for.
    pub levels: Vec<(String, [usize; 5])>,
    /// Every collected item is in exactly one place, with one row of the load file.
    pub balanced: bool,
    /// Documents produced again: their hash was produced in an earlier volume.
    pub again: Vec<String>,
    /// How many pages were rasterised rather than produced as themselves, by why.
    pub rasterised: Vec<(String, usize)>,
}

/// The error for a file that cannot be read or written.
pub(super) fn io(p: &Path) -> impl FnOnce(std::io::Error) -> ProductionError + '_ {
    move |e| ProductionError::Io(p.to_path_buf(), e)
}
