//! Text per page: a PDF's text layer, and OCR where a page has none (and for images), with
//! each page's Bates stamp. Extracted text is cached by the file's blake3, so no page is ever
//! OCR'd twice. A cache entry carries the blake3 of its own pages and is checked on every
//! read: an entry edited or damaged on disk is a miss, and the source is read again. The
//! cache is readable by its owner only.
//!
//! A PDF's text layer is read by poppler's `pdftotext` (Debian `poppler-utils`, or
//! `LEXRUN_PDFTOTEXT`), else by lopdf. OCR renders the page with `pdftoppm` (Debian `poppler-utils`) and reads it with
//! `tesseract` (Debian `tesseract-ocr`), found on PATH or through `LEXRUN_PDFTOPPM` and
//! `LEXRUN_TESSERACT`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

pub use super::error::TextError;

/// Bumped whenever the cached form or what is extracted changes, so old entries miss.
const CACHE_FORMAT: u32 = 5;

/// A cache entry: the source it was read from, its pages, and the blake3 of those pages.
#[derive(Serialize, Deserialize)]
struct Entry {
    source: String,
    pages: Vec<PageText>,
    check: String,
    /// What the reader repaired to read it.
    #[serde(default)]
    notes: Vec<String>,
}

fn pages_hash(pages: &[PageText]) -> String {
    blake3::hash(&serde_json::to_vec(pages).unwrap_or_default())
        .to_hex()
        .to_string()
}

/// The pages of a cache entry, when it is whole and belongs to the source `hash`.
fn cached_pages(bytes: &[u8], hash: &str) -> Option<(Vec<PageText>, Vec<String>)> {
    let e: Entry = serde_json::from_slice(bytes).ok()?;
    (e.source == hash && pages_hash(&e.pages) == e.check).then_some((e.pages, e.notes))
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct PageText {
    pub page: u32,
    pub text: String,
    /// `text layer`, `ocr`, or `none` (no text layer and no OCR available).
    pub from: String,
}

#[derive(Clone, Debug)]
pub struct Options {
    pub lang: String,
    pub dpi: u32,
    /// Where extracted text is cached; `None` disables the cache.
    pub cache: Option<PathBuf>,
    /// OCR pages without a text layer when the tools are installed; when they are not, such
    /// pages come back empty (`from: none`) instead of failing.
    pub ocr_optional: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            lang: "eng".into(),
            dpi: 300,
            cache: default_cache(),
            ocr_optional: true,
        }
    }
}

/// The text cache's folder, unless a symbolic link stands in its place: entries read through a
/// link could be anyone's, and none is written there.
fn usable_cache(opts: &Options) -> Option<&Path> {
    let dir = opts.cache.as_deref()?;
    let linked = std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink());
    (!linked).then_some(dir)
}

/// `$LEXRUN_CACHE/text`, else `$XDG_CACHE_HOME/lexrun/text`, else `~/.cache/lexrun/text`.
pub fn default_cache() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("LEXRUN_CACHE") {
        return Some(PathBuf::from(d).join("text"));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("lexrun").join("text"))
}

pub fn tool(name: &'static str, var: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn is_image(path: &Path) -> bool {
    matches!(
        path.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("png" | "jpg" | "jpeg" | "tif" | "tiff")
    )
}

/// The text of every page of a PDF or an image.
pub fn pages(path: &Path, opts: &Options) -> Result<Vec<PageText>, TextError> {
    read(path, opts).map(|(pages, _)| pages)
}

/// The text of every page of a PDF or an image, and what was repaired to read it.
pub fn read(path: &Path, opts: &Options) -> Result<(Vec<PageText>, Vec<String>), TextError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| TextError::Read(shown.clone(), e.to_string()))?;
    let hash = blake3::hash(&bytes).to_hex().to_string();
    let cache_file = usable_cache(opts).map(|d| {
        d.join(format!(
            "{hash}-{}-{}-v{CACHE_FORMAT}.json",
            opts.lang, opts.dpi
        ))
    });
    if let Some(cf) = &cache_file {
        // A damaged or edited cache entry is a miss, never a wrong answer.
        match crate::atomic::read_own(cf).map(|b| cached_pages(&b, &hash)) {
            Ok(Some(cached)) => return Ok(cached),
            Ok(None) => {
                tracing::warn!(entry = %cf.display(), "text cache entry does not match its hash; reading the source again")
            }
            Err(_) => {}
        }
    }
    let mut notes = Vec::new();
    let pages = if is_image(path) {
        let text = ocr_image(path, opts, &shown)?;
        text.split('\u{000C}')
            .filter(|t| !t.trim().is_empty())
            .enumerate()
            .map(|(i, t)| PageText {
                page: i as u32 + 1,
                text: t.to_string(),
                from: "ocr".into(),
            })
            .collect()
    } else {
        pdf_pages(path, &bytes, opts, &shown, &mut notes)?
    };
    let complete = pages.iter().all(|p| p.from != "none");
    if let (Some(cf), true) = (&cache_file, complete) {
        // A cache folder that cannot be made private (a link in its place) is not written to.
        let private = cf
            .parent()
            .is_none_or(|dir| crate::atomic::private_dir(dir).is_ok());
        let entry = Entry {
            source: hash.clone(),
            check: pages_hash(&pages),
            pages: pages.clone(),
            notes: notes.clone(),
        };
        // A cache that cannot be written is only a cache miss next time.
        if private {
            let _ =
                crate::atomic::write_private(cf, serde_json::to_vec(&entry).unwrap_or_default());
        }
    }
    Ok((pages, notes))
}

fn pdf_pages(
    path: &Path,
    bytes: &[u8],
    opts: &Options,
    shown: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<PageText>, TextError> {
    let texts = match tool("pdftotext", "LEXRUN_PDFTOTEXT") {
        Some(pdftotext) => {
            if xref_broken(bytes) {
                notes.push(
                    "its cross-reference table is broken; poppler rebuilt it to read the file"
                        .into(),
                );
            }
            poppler_text(&pdftotext, path, shown, notes)?
        }
        None => lopdf_text(bytes, shown)?,
    };
    if texts.is_empty() {
        // A page tree that leads to no page: a damaged file, never an empty source.
        return Err(TextError::Damaged(
            shown.to_string(),
            "its page tree lists no pages (the file is damaged); repair it (e.g. `qpdf IN OUT`) or print it to a new PDF".into(),
        ));
    }
    let mut out = Vec::new();
    for (i, text) in texts.into_iter().enumerate() {
        let n = i as u32 + 1;
        if !only_a_stamp(&text) {
            out.push(PageText {
                page: n,
                text,
                from: "text layer".into(),
            });
            continue;
        }
        // A scan: no text layer, or only the Bates stamp lexrun (or another tool) put on it.
        // The page is read by OCR and the stamp kept at its foot.
        match ocr_pdf_page(path, n, opts, shown) {
            Ok(t) => {
                let t = if text.trim().is_empty() {
                    t
                } else {
                    format!("{}\n{}\n", t.trim_end(), text.trim())
                };
                out.push(PageText {
                    page: n,
                    text: t,
                    from: "ocr".into(),
                })
            }
            Err(TextError::MissingTool { .. }) if opts.ocr_optional => out.push(PageText {
                page: n,
                text: String::new(),
                from: "none".into(),
            }),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Each page's text as poppler's `pdftotext` reads it: words spaced from the glyphs'
/// positions, fonts' Unicode maps (CJK CMaps included) applied, form fields' shown values,
/// damaged cross-reference tables rebuilt, and files encrypted with only an owner password
/// (no password to open) opened, as every PDF reader opens them.
fn poppler_text(
    pdftotext: &Path,
    path: &Path,
    shown: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<String>, TextError> {
    let ranges = page_ranges(path);
    if ranges.len() < 2 {
        return poppler_range(pdftotext, path, shown, notes, None);
    }
    // A long PDF is read in page ranges at once, one `pdftotext` per core; the ranges'
    // pages joined are the pages of one whole read (else the file is read again whole).
    // Each range's pages and what poppler said of the file.
    type Part = Result<(Vec<String>, Vec<String>), TextError>;
    let parts: Vec<Part> = std::thread::scope(|s| {
        let running: Vec<_> = ranges
            .iter()
            .map(|&r| {
                s.spawn(move || {
                    let mut said = Vec::new();
                    poppler_range(pdftotext, path, shown, &mut said, Some(r)).map(|p| (p, said))
                })
            })
            .collect();
        running
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(TextError::Read(
                        shown.to_string(),
                        "the reader stopped".into(),
                    ))
                })
            })
            .collect()
    });
    let mut pages = Vec::new();
    let mut first_notes = None;
    for (part, &(from, to)) in parts.into_iter().zip(&ranges) {
        match part {
            Ok((p, said)) if p.len() == (to - from + 1) as usize => {
                first_notes.get_or_insert(said);
                pages.extend(p);
            }
            _ => return poppler_range(pdftotext, path, shown, notes, None),
        }
    }
    notes.extend(first_notes.unwrap_or_default());
    Ok(pages)
}

/// The smallest PDF (bytes) worth reading in parallel page ranges: below it one `pdftotext`
/// is done before a second would have started.
const SPLIT_BYTES: u64 = 1 << 20;
/// The fewest pages per range.
const SPLIT_PAGES: u32 = 64;

/// The page ranges (first, last; counted from 1) a long PDF's text is read in, one per core
/// (at most four); one range or none for a short file, or when poppler's `pdfinfo` cannot
/// count the pages.
fn page_ranges(path: &Path) -> Vec<(u32, u32)> {
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4) as u32;
    if cores < 2 || std::fs::metadata(path).map_or(0, |m| m.len()) < SPLIT_BYTES {
        return Vec::new();
    }
    let Some(pdfinfo) = tool("pdfinfo", "LEXRUN_PDFINFO") else {
        return Vec::new();
    };
    let Ok(work) = tempfile::tempdir() else {
        return Vec::new();
    };
    let out = work.path().join("info.txt");
    let mut cmd = Command::new(pdfinfo);
    cmd.arg(path);
    if super::limits::run_to("pdfinfo", &mut cmd, work.path(), Some(&out)).is_err() {
        return Vec::new();
    }
    let info = std::fs::read_to_string(&out).unwrap_or_default();
    let pages: u32 = info
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    split(pages, cores)
}

/// `pages` in `n` ranges of about equal length, none shorter than [`SPLIT_PAGES`].
fn split(pages: u32, n: u32) -> Vec<(u32, u32)> {
    let n = n.min(pages / SPLIT_PAGES).max(1);
    let each = pages.div_ceil(n);
    (0..n)
        .map(|i| (i * each + 1, ((i + 1) * each).min(pages)))
        .filter(|(a, b)| a <= b)
        .collect()
}

/// The text of the pages `range` (all when `None`) as `pdftotext` reads them.
fn poppler_range(
    pdftotext: &Path,
    path: &Path,
    shown: &str,
    notes: &mut Vec<String>,
    range: Option<(u32, u32)>,
) -> Result<Vec<String>, TextError> {
    let work =
        tempfile::tempdir().map_err(|e| TextError::Read(shown.to_string(), e.to_string()))?;
    let out = work.path().join("text.txt");
    let mut cmd = Command::new(pdftotext);
    cmd.args(["-enc", "UTF-8"]);
    if let Some((from, to)) = range {
        cmd.args(["-f", &from.to_string(), "-l", &to.to_string()]);
    }
    cmd.arg(path).arg(&out);
    if let Err(e) = super::limits::run("pdftotext", &mut cmd, work.path()) {
        let why = std::fs::read_to_string(work.path().join("pdftotext.stderr"))
            .unwrap_or_default()
            .to_ascii_lowercase();
        if why.contains("password") {
            return Err(TextError::Encrypted(shown.to_string()));
        }
        return Err(TextError::Damaged(
            shown.to_string(),
            match e {
                super::limits::ToolError::Failed { message, .. } => format!(
                    "poppler cannot open it ({}); print it to a new PDF",
                    message.trim()
                ),
                other => other.to_string(),
            },
        ));
    }
    // What poppler had to repair to read the file (a broken cross-reference table, a loop
    // in the page tree) is said, once.
    let said = std::fs::read_to_string(work.path().join("pdftotext.stderr")).unwrap_or_default();
    if let Some(first) = said.lines().map(str::trim).find(|l| !l.is_empty()) {
        let more = said.lines().filter(|l| !l.trim().is_empty()).count() - 1;
        notes.push(format!(
            "the PDF is damaged; poppler repaired what it could to read it ({first}{})",
            if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            }
        ));
    }
    let bytes =
        std::fs::read(&out).map_err(|e| TextError::Read(shown.to_string(), e.to_string()))?;
    let text = String::from_utf8_lossy(&bytes);
    // Each page ends with a form feed.
    let mut pages: Vec<String> = text.split('\u{000C}').map(str::to_string).collect();
    pages.pop();
    Ok(pages)
}

/// True when the file's last `startxref` does not point at a cross-reference table or
/// stream: readers then rebuild the table by scanning the file.
fn xref_broken(bytes: &[u8]) -> bool {
    let tail = &bytes[bytes.len().saturating_sub(2048)..];
    let Some(at) = memchr::memmem::rfind(tail, b"startxref") else {
        return true;
    };
    let rest = String::from_utf8_lossy(&tail[at + 9..]);
    let Some(offset) = rest
        .split_whitespace()
        .next()
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return true;
    };
    let Some(there) = bytes.get(offset..) else {
        return true;
    };
    let there = &there[..there.len().min(64)];
    let s = String::from_utf8_lossy(there);
    let s = s.trim_start();
    // A table (`xref`), or a stream object (`12 0 obj`).
    !(s.starts_with("xref")
        || s.split_whitespace().take(3).collect::<Vec<_>>().get(2) == Some(&"obj")
        || s.split_whitespace()
            .nth(1)
            .is_some_and(|g| g.starts_with("0obj")))
}

/// Each page's text from lopdf, where poppler is not installed.
fn lopdf_text(bytes: &[u8], shown: &str) -> Result<Vec<String>, TextError> {
    let doc = lopdf::Document::load_mem(bytes).map_err(|e| {
        let m = e.to_string();
        if m.to_ascii_lowercase().contains("crypt") {
            TextError::Encrypted(shown.to_string())
        } else {
            TextError::Damaged(shown.to_string(), m)
        }
    })?;
    // lopdf opens a file encrypted with an empty user password; one it could not is still
    // encrypted.
    if doc.is_encrypted() {
        return Err(TextError::Encrypted(shown.to_string()));
    }
    Ok(doc
        .get_pages()
        .into_keys()
        .map(|n| doc.extract_text(&[n]).unwrap_or_default())
        .collect())
}

/// True for a page whose text layer is empty or holds nothing but a Bates-style stamp.
fn only_a_stamp(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        [] => true,
        [w] => {
            w.chars().any(|c| c.is_ascii_digit())
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
        }
        [p, n] => {
            p.chars().all(|c| c.is_ascii_uppercase()) && n.chars().all(|c| c.is_ascii_digit())
        }
        _ => false,
    }
}

fn ocr_pdf_page(path: &Path, page: u32, opts: &Options, shown: &str) -> Result<String, TextError> {
    let missing = |tool, package, var| TextError::MissingTool {
        tool,
        package,
        var,
        file: shown.to_string(),
    };
    let pdftoppm = tool("pdftoppm", "LEXRUN_PDFTOPPM")
        .ok_or_else(|| missing("pdftoppm", "poppler-utils", "LEXRUN_PDFTOPPM"))?;
    tool("tesseract", "LEXRUN_TESSERACT")
        .ok_or_else(|| missing("tesseract", "tesseract-ocr", "LEXRUN_TESSERACT"))?;
    let dir = tempfile::tempdir().map_err(|e| TextError::Ocr(shown.to_string(), e.to_string()))?;
    let base = dir.path().join("page");
    let n = page.to_string();
    let out = Command::new(pdftoppm)
        .args([
            "-r",
            &opts.dpi.to_string(),
            "-f",
            &n,
            "-l",
            &n,
            "-png",
            "-singlefile",
            "-gray",
        ])
        .arg(path)
        .arg(&base)
        .output()
        .map_err(|e| TextError::Ocr(shown.to_string(), format!("pdftoppm: {e}")))?;
    if !out.status.success() {
        return Err(TextError::Ocr(
            shown.to_string(),
            format!("pdftoppm: {}", String::from_utf8_lossy(&out.stderr).trim()),
        ));
    }
    ocr_image(&base.with_extension("png"), opts, shown)
}

fn ocr_image(image: &Path, opts: &Options, shown: &str) -> Result<String, TextError> {
    let tesseract =
        tool("tesseract", "LEXRUN_TESSERACT").ok_or_else(|| TextError::MissingTool {
            tool: "tesseract",
            package: "tesseract-ocr",
            var: "LEXRUN_TESSERACT",
            file: shown.to_string(),
        })?;
    let out = Command::new(tesseract)
        .arg(image)
        .arg("stdout")
        .args(["-l", &opts.lang])
        .env("OMP_THREAD_LIMIT", "1")
        .output()
        .map_err(|e| TextError::Ocr(shown.to_string(), format!("tesseract: {e}")))?;
    if !out.status.success() {
        return Err(TextError::Ocr(
            shown.to_string(),
            format!("tesseract: {}", String::from_utf8_lossy(&out.stderr).trim()),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_file_is_split_into_ranges_that_cover_every_page_once() {
        for (pages, n) in [(1000, 2), (1000, 4), (301, 4), (129, 2), (130, 3), (64, 4)] {
            let r = split(pages, n);
            assert_eq!(r.first().map(|r| r.0), Some(1));
            assert_eq!(r.last().map(|r| r.1), Some(pages));
            for w in r.windows(2) {
                assert_eq!(w[0].1 + 1, w[1].0, "{pages} in {n}: {r:?}");
            }
            assert!(r.len() as u32 <= n);
            if r.len() > 1 {
                assert!(r.iter().all(|(a, b)| b - a + 1 >= SPLIT_PAGES - 1), "{r:?}");
            }
        }
        assert_eq!(split(100, 4), vec![(1, 100)]);
        assert!(split(0, 2).is_empty());
    }

    #[test]
    fn a_link_in_place_of_the_text_cache_is_neither_read_nor_written() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("elsewhere");
        std::fs::create_dir(&real).unwrap();
        let linked = tmp.path().join("text");
        std::os::unix::fs::symlink(&real, &linked).unwrap();
        let opts = |cache: PathBuf| Options {
            cache: Some(cache),
            ..Options::default()
        };
        assert!(usable_cache(&opts(linked)).is_none());
        let fresh = tmp.path().join("fresh");
        assert_eq!(usable_cache(&opts(fresh.clone())), Some(fresh.as_path()));
        assert_eq!(usable_cache(&opts(real.clone())), Some(real.as_path()));
    }
}
