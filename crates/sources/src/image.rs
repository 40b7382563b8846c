//! Photos and scans: PNG, JPEG and TIFF (every page of a multi-page TIFF) are read by OCR
//! (`scan`); an iPhone's HEIC photo is first turned into PNG with libheif's `heif-convert`
//! (Debian `libheif-examples`). Outside programs read files by name, so bytes that are not a
//! file of the right name on disk (an attachment, an image named `.txt`) are written to a
//! temporary copy first.

use std::path::Path;
use std::process::Command;

use super::error::{SourceError, TextError, ToolError};
use super::kind::Kind;
use super::limits;
use super::parts::Options;
use super::pdf_text::{self, PageText};

/// Calls `f` with a file holding `bytes` under a name ending in `.ext`: `path` itself when it
/// is that file, else a temporary copy.
pub fn on_disk<T>(
    path: Option<&Path>,
    bytes: &[u8],
    ext: &str,
    f: impl FnOnce(&Path) -> Result<T, SourceError>,
) -> Result<T, SourceError> {
    let named = path.filter(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| same_ext(e, ext))
    });
    if let Some(p) = named {
        return f(p);
    }
    let dir = tempfile::tempdir().map_err(SourceError::Io)?;
    let copy = dir.path().join(format!("source.{ext}"));
    std::fs::write(&copy, bytes).map_err(SourceError::Io)?;
    f(&copy)
}

fn same_ext(have: &str, want: &str) -> bool {
    let norm = |e: &str| match e.to_ascii_lowercase().as_str() {
        "jpeg" => "jpg".to_string(),
        "tiff" => "tif".to_string(),
        o => o.to_string(),
    };
    norm(have) == norm(want)
}

/// The pages of an image: its text by OCR, one page per image (per frame of a TIFF).
pub fn pages(
    path: Option<&Path>,
    bytes: &[u8],
    kind: Kind,
    opts: &Options,
) -> Result<Vec<PageText>, SourceError> {
    let read = |p: &Path| match pdf_text::pages(p, &opts.scan) {
        Ok(pages) if pages.is_empty() => Ok(vec![PageText {
            page: 1,
            text: String::new(),
            from: "ocr".into(),
        }]),
        Ok(pages) => Ok(pages),
        Err(TextError::MissingTool { .. }) if opts.scan.ocr_optional => Ok(vec![PageText {
            page: 1,
            text: String::new(),
            from: "none".into(),
        }]),
        Err(e) => Err(e.into()),
    };
    if kind != Kind::Heic {
        return on_disk(path, bytes, kind.extension(), read);
    }
    let convert =
        pdf_text::tool("heif-convert", "LEXRUN_HEIF_CONVERT").ok_or(ToolError::Missing {
            tool: "heif-convert",
            package: "libheif-examples",
            what: "HEIC photo",
        })?;
    on_disk(path, bytes, "heic", |heic| {
        let dir = tempfile::tempdir().map_err(SourceError::Io)?;
        let png = dir.path().join("photo.png");
        limits::run(
            "heif-convert",
            Command::new(&convert).arg(heic).arg(&png),
            dir.path(),
        )?;
        // heif-convert numbers the images of a multi-image file: photo-1.png, photo-2.png, …
        let mut frames: Vec<_> = std::fs::read_dir(dir.path())
            .map_err(SourceError::Io)?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "png"))
            .collect();
        frames.sort();
        let mut out = Vec::new();
        for f in frames {
            for mut p in read(&f)? {
                p.page = out.len() as u32 + 1;
                out.push(p);
            }
        }
        Ok(out)
    })
}
