//! Reading every kind of source into text per page. PDFs give their text layer, scans and
//! images are OCR'd (`scan`), text and Markdown are read as UTF-8 with pages split at form
//! feeds, and any other kind of file is refused with what to do instead. Prompts, verification, exhibits and the intake guard all read through
//! [`read_pages`], so a file reads the same wherever it is used. `stamp` finds the Bates
//! number at the foot of a page.

pub mod scan;
pub mod stamp;

use std::path::{Path, PathBuf};

pub use stamp::stamp_of;

/// Why a source could not be read; says what the file is, not where (the caller names it).
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot be read: {0}")]
    Io(#[source] std::io::Error),
    #[error("a binary file, not text")]
    Binary,
    #[error("not UTF-8 text (invalid byte at offset {0}); save it as UTF-8")]
    NotUtf8(usize),
    #[error("a GIF or BMP image: convert it to PNG or PDF so it can be OCR'd")]
    Image,
    #[error("a .{0} file: lexrun reads text, Markdown and PDF sources")]
    Unsupported(String),
    #[error("{0}")]
    Scan(#[from] scan::TextError),
}

/// A source that could not be read, and which one.
#[derive(Debug, thiserror::Error)]
#[error("`{}`: {source}", path.display())]
pub struct Unreadable {
    pub path: PathBuf,
    #[source]
    pub source: SourceError,
}

fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default()
}

/// The text of every page of a source file.
pub fn read_pages(path: &Path) -> Result<Vec<String>, SourceError> {
    match extension(path).as_str() {
        // The text layer, and OCR where there is none (when tesseract is installed; otherwise
        // such pages come back empty).
        "pdf" | "png" | "jpg" | "jpeg" | "tif" | "tiff" => {
            let pages = scan::pages(path, &scan::Options::default())?;
            Ok(pages.into_iter().map(|p| p.text).collect())
        }
        "txt" | "md" | "markdown" | "text" | "" => read_text(path),
        "gif" | "bmp" => Err(SourceError::Image),
        other => Err(SourceError::Unsupported(other.to_string())),
    }
}

fn read_text(path: &Path) -> Result<Vec<String>, SourceError> {
    let bytes = std::fs::read(path).map_err(SourceError::Io)?;
    if bytes.contains(&0) {
        return Err(SourceError::Binary);
    }
    let text =
        String::from_utf8(bytes).map_err(|e| SourceError::NotUtf8(e.utf8_error().valid_up_to()))?;
    Ok(text.split('\u{000C}').map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_splits_at_form_feeds_and_refuses_what_is_not_text() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("a.txt");
        std::fs::write(&ok, "one\u{000C}two").unwrap();
        assert_eq!(read_pages(&ok).unwrap(), ["one", "two"]);
        let latin = dir.path().join("b.md");
        std::fs::write(&latin, b"caf\xe9").unwrap();
        assert!(matches!(read_pages(&latin), Err(SourceError::NotUtf8(3))));
        let bin = dir.path().join("c.txt");
        std::fs::write(&bin, b"PK\x03\x04\x00").unwrap();
        assert!(matches!(read_pages(&bin), Err(SourceError::Binary)));
        let docx = dir.path().join("d.docx");
        std::fs::write(&docx, b"PK\x03\x04\x00").unwrap();
        assert_eq!(
            read_pages(&docx).unwrap_err().to_string(),
            "a .docx file: lexrun reads text, Markdown and PDF sources"
        );
        let gif = dir.path().join("e.gif");
        std::fs::write(&gif, b"GIF89a").unwrap();
        assert!(matches!(read_pages(&gif), Err(SourceError::Image)));
    }
}
