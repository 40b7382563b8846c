//! Reading every kind of source into pages of text, each with a stable place: the file (or the
//! attachment inside it), the page, and the Bates number stamped at its foot. Prompts,
//! verification, the exhibits tools and the intake guard all read through [`read`], so a file
//! reads the same wherever it is used.
//!
//! What a file is comes from its bytes, not its name (`kind`): a Word document renamed `.txt`
//! is read as Word. Each family has its own reader: PDFs and scans (`scan`), images (`image`),
//! Word (`docx`), other office files through LibreOffice (`office`), email (`email`),
//! spreadsheets (`sheet`), saved web pages (`html`), and text. A file that cannot be read is
//! refused with the reason, for that file alone. `limits` keeps enormous files, archives that
//! expand without bound and tools that never finish from stalling a read. `pdf` turns any of
//! these into a PDF for Bates stamping and binding. `stamp` finds the Bates number on a page.

use lexrun_base::atomic;

pub mod as_pdf;
mod docx;
mod email;
mod error;
mod html;
mod image;
pub mod kind;
pub mod limits;
mod numfmt;
mod office;
mod paging;
mod parts;
pub mod pdf_text;
mod sheet;
mod stamp;

use std::path::Path;

pub use error::{SourceError, Unreadable, Unreadables};
pub use kind::Kind;
pub use parts::{Document, Options};
pub use pdf_text::PageText;
pub use stamp::{declare_prefixes, stamp_of};

/// Every document in a file: the file itself first, then its attachments, depth first.
pub fn read(path: &Path, opts: &Options) -> Result<Vec<Document>, SourceError> {
    let size = std::fs::metadata(path).map_err(SourceError::Io)?.len();
    limits::check_size(size)?;
    let bytes = std::fs::read(path).map_err(SourceError::Io)?;
    read_bytes(path, &bytes, opts, 0)
}

/// The pages of a file read with the default [`Options`], with attachments following as
/// further pages. For callers that keep one list of pages per file; [`read`] keeps them apart.
pub fn read_pages(path: &Path) -> Result<Vec<String>, SourceError> {
    Ok(read(path, &Options::default())?
        .into_iter()
        .flat_map(|d| d.pages.into_iter().map(|p| p.text))
        .collect())
}

/// Reads `bytes`, named `path` (a real file, or an attachment's name inside one).
pub fn read_bytes(
    path: &Path,
    bytes: &[u8],
    opts: &Options,
    depth: usize,
) -> Result<Vec<Document>, SourceError> {
    limits::check_size(bytes.len() as u64)?;
    let kind = kind::detect(path, bytes)?;
    // Outside programs may read the file itself only when it is one (not an attachment).
    let real = (depth == 0).then_some(path);
    let noted = |(pages, notes): (Vec<PageText>, Vec<String>)| {
        Ok(vec![Document {
            within: Vec::new(),
            kind,
            pages,
            embedded: None,
            unreadable: None,
            notes,
        }])
    };
    let one = |pages: Vec<PageText>| noted((pages, Vec::new()));
    match kind {
        Kind::Pdf => noted(image::on_disk(real, bytes, "pdf", |p| {
            pdf_text::read(p, &opts.scan).map_err(SourceError::from)
        })?),
        Kind::Png | Kind::Jpeg | Kind::Tiff | Kind::Heic => {
            one(image::pages(real, bytes, kind, opts)?)
        }
        Kind::Docx => one(docx::pages(bytes)?),
        Kind::Doc | Kind::Odt | Kind::Rtf => noted(office::pages(real, bytes, kind, opts)?),
        Kind::Xlsx | Kind::Ods | Kind::Xls => one(sheet::workbook(bytes, kind)?),
        Kind::Csv => one(sheet::csv(&text_of(bytes)?)?),
        Kind::Html => one(paging::pages(&html::to_text(&text_of(bytes)?), "html")),
        // A message saved under another name than `.eml` (a printout saved as text) keeps its
        // header lines as written.
        Kind::Eml => email::message(bytes, opts, depth, !kind::named(path, "eml")),
        Kind::Mbox => email::mailbox(bytes, opts, depth),
        Kind::Text => one(text_of(bytes)?
            .split('\u{000C}')
            .enumerate()
            .map(|(i, t)| PageText {
                page: i as u32 + 1,
                text: t.to_string(),
                from: "text".into(),
            })
            .collect()),
    }
}

/// Text in UTF-8, or UTF-16 with its byte-order mark (as Windows tools save it).
pub(crate) fn text_of(bytes: &[u8]) -> Result<String, SourceError> {
    let utf16 = |b: &[u8], le: bool| {
        let units: Vec<u16> = b
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16(&units).map_err(|_| SourceError::NotUtf8(0))
    };
    match bytes {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, true),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, false),
        [0xEF, 0xBB, 0xBF, rest @ ..] => text_of(rest),
        _ => {
            if bytes.contains(&0) {
                return Err(SourceError::Binary);
            }
            String::from_utf8(bytes.to_vec())
                .map_err(|e| SourceError::NotUtf8(e.utf8_error().valid_up_to()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_one(path: &Path) -> Result<Vec<String>, SourceError> {
        read_pages(path)
    }

    #[test]
    fn text_splits_at_form_feeds_and_refuses_what_is_not_text() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("a.txt");
        std::fs::write(&ok, "one\u{000C}two").unwrap();
        assert_eq!(read_one(&ok).unwrap(), ["one", "two"]);
        let latin = dir.path().join("b.md");
        std::fs::write(&latin, b"caf\xe9").unwrap();
        assert!(matches!(read_one(&latin), Err(SourceError::NotUtf8(3))));
        let bin = dir.path().join("c.txt");
        std::fs::write(&bin, b"\x00\x01binary").unwrap();
        assert!(matches!(read_one(&bin), Err(SourceError::Binary)));
        let empty = dir.path().join("d.txt");
        std::fs::write(&empty, b"").unwrap();
        assert!(matches!(read_one(&empty), Err(SourceError::Empty)));
        let gif = dir.path().join("e.gif");
        std::fs::write(&gif, b"GIF89a\x01\x00").unwrap();
        assert!(read_one(&gif).unwrap_err().to_string().contains("GIF"));
        let utf16 = dir.path().join("f.txt");
        std::fs::write(&utf16, b"\xFF\xFEh\x00i\x00").unwrap();
        assert_eq!(read_one(&utf16).unwrap(), ["hi"]);
    }

    #[test]
    fn a_zip_that_is_not_an_office_file_is_refused_by_its_contents() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("notes.txt");
        let mut z = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
        z.start_file("a.bin", zip::write::SimpleFileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut z, b"x").unwrap();
        z.finish().unwrap();
        let e = read_one(&p).unwrap_err().to_string();
        assert!(e.contains("ZIP archive"), "{e}");
    }
}
