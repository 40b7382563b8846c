//! Any source as a PDF, for Bates stamping and binding: a PDF as it is; Word, OpenDocument
//! and RTF files as LibreOffice prints them; photos (PNG, JPEG) on a page each; emails,
//! spreadsheets, web pages and text as a rendered page of what lexrun reads from them (each
//! page of the reading on a new printed page, headed by its document's name), printed by
//! LibreOffice from HTML lexrun writes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::error::{SourceError, Unreadable};
use super::kind::{self, Kind};
use super::parts::Options;
use super::{office, read};

/// The PDFs for a list of sources, in order. Converted ones live in a folder that is removed
/// when this is dropped; each is named after its source (`lease.docx` → `lease.pdf`).
pub struct Prepared {
    _dir: Option<tempfile::TempDir>,
    pub pdfs: Vec<PathBuf>,
}

/// Converts what needs converting. Every input is tried; the error names each one that
/// could not be, with why.
pub fn prepare(inputs: &[PathBuf]) -> Result<Prepared, Vec<Unreadable>> {
    let mut dir: Option<tempfile::TempDir> = None;
    let mut pdfs = Vec::new();
    let mut bad = Vec::new();
    for input in inputs {
        match convert(input, &mut dir) {
            Ok(p) => pdfs.push(p),
            Err(source) => bad.push(Unreadable {
                path: input.clone(),
                source,
            }),
        }
    }
    if !bad.is_empty() {
        return Err(bad);
    }
    Ok(Prepared { _dir: dir, pdfs })
}

fn convert(input: &Path, dir: &mut Option<tempfile::TempDir>) -> Result<PathBuf, SourceError> {
    // A PDF named as one is used as it is, without reading it all (its reader says if it is
    // damaged or encrypted).
    if input
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pdf"))
    {
        let mut head = Vec::with_capacity(1024);
        let f = std::fs::File::open(input).map_err(SourceError::Io)?;
        std::io::Read::read_to_end(&mut std::io::Read::take(f, 1024), &mut head)
            .map_err(SourceError::Io)?;
        if memchr::memmem::find(&head, b"%PDF-").is_some() {
            return Ok(input.to_path_buf());
        }
    }
    let size = std::fs::metadata(input).map_err(SourceError::Io)?.len();
    super::limits::check_size(size)?;
    let bytes = std::fs::read(input).map_err(SourceError::Io)?;
    let kind = kind::detect(input, &bytes)?;
    let made = match kind {
        Kind::Pdf => None,
        Kind::Docx | Kind::Doc | Kind::Odt | Kind::Rtf => {
            Some(office::to_pdf(Some(input), &bytes, kind)?)
        }
        Kind::Heic | Kind::Tiff => {
            return Err(SourceError::Refused(format!(
                "a {}: convert it to JPEG or PDF to stamp it",
                kind.describe()
            )))
        }
        Kind::Png | Kind::Jpeg => {
            let abs = input.canonicalize().map_err(SourceError::Io)?;
            let url = url::Url::from_file_path(&abs).map_err(|_| {
                SourceError::Refused("its path cannot be given to LibreOffice".into())
            })?;
            let html = format!(
                "<html><body><p><img src=\"{url}\" style=\"width:100%\" width=\"620\"></p></body></html>"
            );
            Some(office::to_pdf(None, html.as_bytes(), Kind::Html)?)
        }
        _ => {
            let name = input
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let docs = read(input, &Options::default())?;
            let mut html = String::from(
                "<html><head><meta charset=\"utf-8\"></head><body style=\"font-family: Liberation Sans\">",
            );
            let mut first = true;
            for d in &docs {
                for p in &d.pages {
                    let style = if first {
                        ""
                    } else {
                        " style=\"page-break-before: always\""
                    };
                    first = false;
                    let _ = write!(
                        html,
                        "<h3{style}>{} — page {}</h3><pre style=\"white-space: pre-wrap; font-family: Liberation Mono; font-size: 9pt\">{}</pre>",
                        escape(&d.shown(&name)),
                        p.page,
                        escape(&p.text)
                    );
                }
            }
            html.push_str("</body></html>");
            Some(office::to_pdf(None, html.as_bytes(), Kind::Html)?)
        }
    };
    if dir.is_none() {
        *dir = Some(tempfile::tempdir().map_err(SourceError::Io)?);
    }
    let folder = dir.as_ref().expect("made above").path();
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "source".into());
    let dest = folder.join(format!("{stem}.pdf"));
    match made {
        Some(pdf) => std::fs::copy(pdf, &dest),
        None => std::fs::write(&dest, &bytes).map(|_| 0),
    }
    .map_err(SourceError::Io)?;
    Ok(dest)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
