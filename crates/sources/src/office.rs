//! Office files lexrun does not parse itself (`.doc`, `.odt`, `.rtf`) are turned into PDF by
//! LibreOffice (`soffice`, Debian `libreoffice-writer-nogui`) and read from that PDF's text
//! layer, so their pages are the pages LibreOffice prints, the same pages `lexrun bates`
//! stamps. The same conversion makes PDFs of Word files and of the HTML lexrun renders for
//! emails and sheets. Converted PDFs are cached by the source's blake3, like extracted text.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::error::{SourceError, ToolError};
use super::kind::Kind;
use super::parts::Options;
use super::pdf_text::{self, PageText};
use super::{image, limits};

/// The pages of a `.doc`, `.odt` or `.rtf`: LibreOffice's PDF of it, read as a PDF; and a
/// note when the fonts it asks for are not installed, so that LibreOffice printed it in others
/// (whose text may then read wrong: Japanese in a font without its glyphs).
pub fn pages(
    path: Option<&Path>,
    bytes: &[u8],
    kind: Kind,
    opts: &Options,
) -> Result<(Vec<PageText>, Vec<String>), SourceError> {
    if protected(bytes, kind) {
        return Err(SourceError::Refused(format!(
            "a password-protected {}: open it with its password and save an unprotected copy",
            kind.describe()
        )));
    }
    let pdf = to_pdf(path, bytes, kind)?;
    let mut pages = pdf_text::pages(&pdf, &opts.scan)?;
    for p in &mut pages {
        p.from = "libreoffice".into();
    }
    let missing = missing_fonts(&fonts_asked(bytes, kind));
    let notes = if missing.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "LibreOffice printed it with other fonts than it asks for, which are not installed ({}); text in scripts those fonts lack may read wrong: install the fonts (`fonts-noto-cjk` for Chinese, Japanese and Korean)",
            missing.join(", ")
        )]
    };
    Ok((pages, notes))
}

/// Whether a Word 97-2003 or OpenDocument file is encrypted with a password: the Word
/// file's header (FIB) says so in its `fEncrypted` bit; an OpenDocument file's manifest
/// lists the encryption of its parts.
pub fn protected(bytes: &[u8], kind: Kind) -> bool {
    match kind {
        Kind::Doc => word_encrypted(bytes).unwrap_or(false),
        Kind::Odt => {
            let Ok(mut z) = zip::ZipArchive::new(std::io::Cursor::new(bytes)) else {
                return false;
            };
            limits::zip_part(&mut z, "META-INF/manifest.xml", "OpenDocument text")
                .ok()
                .flatten()
                .is_some_and(|m| m.contains("encryption-data"))
        }
        _ => false,
    }
}

/// The `fEncrypted` bit of a Word 97-2003 file's FIB, at the start of its `WordDocument`
/// stream, found through the compound file's directory entry for that stream.
fn word_encrypted(bytes: &[u8]) -> Option<bool> {
    let shift = u16::from_le_bytes(bytes.get(30..32)?.try_into().ok()?);
    if !(7..=16).contains(&shift) {
        return None;
    }
    let sector = 1usize << shift;
    let name: Vec<u8> = "WordDocument"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .chain([0, 0])
        .collect();
    // Directory entries are 128 bytes, aligned within their sectors, and begin with the name.
    let entry = memchr::memmem::find_iter(bytes, &name)
        .find(|&at| (at % 128) == 0 && bytes.get(at + 64..at + 66) == Some(&[26, 0][..]))?;
    let start = u32::from_le_bytes(bytes.get(entry + 116..entry + 120)?.try_into().ok()?);
    let fib = (start as usize + 1).checked_mul(sector)?;
    let flags = u16::from_le_bytes(bytes.get(fib + 10..fib + 12)?.try_into().ok()?);
    // wIdent 0xA5EC (Word 97+) or 0xA5DC (Word 6) opens the FIB.
    let ident = u16::from_le_bytes(bytes.get(fib..fib + 2)?.try_into().ok()?);
    Some(matches!(ident, 0xA5EC | 0xA5DC) && flags & 0x0100 != 0)
}

/// The font families an RTF or OpenDocument file asks for (Word 97-2003 files: none read).
fn fonts_asked(bytes: &[u8], kind: Kind) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    match kind {
        Kind::Rtf => {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(256 << 10)]);
            let Some(start) = text.find("{\\fonttbl") else {
                return out;
            };
            // Each entry `{\f1\fnil\fcharset128 MS Mincho;}`: the name is what follows the
            // last control word, up to the `;`.
            let mut depth = 0;
            let mut end = text.len();
            for (i, c) in text[start..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = start + i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            for entry in text[start + 9..end].split(';') {
                let entry = entry.split('{').next_back().unwrap_or("");
                let name: String = entry
                    .split(['\\', '}'])
                    .next_back()
                    .unwrap_or("")
                    .split_once(' ')
                    .map_or("", |(_, n)| n)
                    .trim()
                    .to_string();
                if !name.is_empty() && name.is_ascii() && !out.contains(&name) {
                    out.push(name);
                }
            }
        }
        Kind::Odt => {
            let Ok(mut z) = zip::ZipArchive::new(std::io::Cursor::new(bytes)) else {
                return out;
            };
            for part in ["content.xml", "styles.xml"] {
                let Ok(Some(xml)) = limits::zip_part(&mut z, part, "OpenDocument text") else {
                    continue;
                };
                for (i, _) in xml.match_indices("svg:font-family=\"") {
                    let rest = &xml[i + 17..];
                    let name = rest[..rest.find('"').unwrap_or(0)]
                        .trim_matches(['\'', ' '])
                        .replace("&apos;", "");
                    if !name.is_empty() && !out.contains(&name) {
                        out.push(name);
                    }
                }
            }
        }
        _ => {}
    }
    out
}

/// Fonts fontconfig cannot find, nor a metric-compatible stand-in for (Liberation for Times
/// New Roman and Arial, Carlito for Calibri …): the ones LibreOffice printed in another font.
fn missing_fonts(asked: &[String]) -> Vec<String> {
    let Some(fc_match) = pdf_text::tool("fc-match", "LEXRUN_FC_MATCH") else {
        return Vec::new();
    };
    const STAND_INS: &[&str] = &[
        "times new roman",
        "times",
        "arial",
        "helvetica",
        "courier new",
        "courier",
        "calibri",
        "cambria",
        "symbol",
        "wingdings",
        "arial narrow",
        "georgia",
        "verdana",
        "tahoma",
        "segoe ui",
        "garamond",
        "book antiqua",
        "century gothic",
        "liberation serif",
        "liberation sans",
        "liberation mono",
        "dejavu sans",
        "dejavu serif",
        "dejavu sans mono",
    ];
    let mut out = Vec::new();
    for name in asked.iter().take(32) {
        let lower = name.to_ascii_lowercase();
        if STAND_INS.contains(&lower.as_str()) {
            continue;
        }
        let Ok(o) = Command::new(&fc_match)
            .args(["-f", "%{family}"])
            .arg(name)
            .output()
        else {
            return Vec::new();
        };
        let got = String::from_utf8_lossy(&o.stdout).to_ascii_lowercase();
        if !got.split(',').any(|f| f.trim() == lower) {
            out.push(name.clone());
        }
    }
    out
}

/// Where converted PDFs are kept: beside the text cache.
fn cache_dir() -> Option<PathBuf> {
    pdf_text::default_cache().map(|d| d.with_file_name("pdf"))
}

/// A PDF of `bytes` (of `kind`) made by LibreOffice: the cached one when there is one.
pub fn to_pdf(path: Option<&Path>, bytes: &[u8], kind: Kind) -> Result<PathBuf, SourceError> {
    to_pdf_in(cache_dir().as_deref(), path, bytes, kind)
}

/// [`to_pdf`], with converted PDFs cached in `cache`. A converted document is client
/// evidence: the cache, like the store, is owner-only (folder 0700, files 0600), and a link
/// in the place of the folder or of an entry is refused, never followed — the PDF is then
/// made again and kept in a private temporary folder.
fn to_pdf_in(
    cache: Option<&Path>,
    path: Option<&Path>,
    bytes: &[u8],
    kind: Kind,
) -> Result<PathBuf, SourceError> {
    let hash = blake3::hash(bytes).to_hex().to_string();
    let cache = cache.filter(|d| crate::atomic::private_dir(d).is_ok());
    let cached = cache.map(|d| d.join(format!("{hash}.pdf")));
    if let Some(c) = &cached {
        // A damaged entry is converted again, never used.
        if crate::atomic::read_own(c).is_ok_and(|b| lopdf::Document::load_mem(&b).is_ok()) {
            return Ok(c.clone());
        }
    }
    let soffice = pdf_text::tool("soffice", "LEXRUN_SOFFICE").ok_or(ToolError::Missing {
        tool: "soffice",
        package: "libreoffice-writer-nogui",
        what: kind.describe(),
    })?;
    let work = tempfile::tempdir().map_err(SourceError::Io)?;
    let made = image::on_disk(path, bytes, kind.extension(), |input| {
        convert(&soffice, input, work.path(), kind)
    })?;
    let pdf = std::fs::read(&made).map_err(SourceError::Io)?;
    let dest = match cached {
        Some(c) => c,
        None => {
            // No cache: the PDF is kept in a private folder that lives as long as the
            // process.
            let keep = tempfile::Builder::new()
                .prefix("lexrun-pdf")
                .tempdir()
                .map_err(SourceError::Io)?
                .keep();
            crate::atomic::private_dir(&keep).map_err(SourceError::Io)?;
            keep.join(format!("{hash}.pdf"))
        }
    };
    crate::atomic::write_private(&dest, &pdf).map_err(SourceError::Io)?;
    Ok(dest)
}

/// Runs LibreOffice on one file, with a profile of its own so that it neither waits for nor
/// disturbs a LibreOffice the user has open.
fn convert(soffice: &Path, input: &Path, work: &Path, kind: Kind) -> Result<PathBuf, SourceError> {
    let profile = work.join("profile");
    let out = work.join("out");
    let url = url::Url::from_directory_path(&profile)
        .map_err(|_| SourceError::Refused("the temporary folder has no usable path".into()))?;
    let mut cmd = Command::new(soffice);
    cmd.arg(format!("-env:UserInstallation={url}")).args([
        "--headless",
        "--norestore",
        "--nolockcheck",
    ]);
    if kind == Kind::Html {
        // Web pages open in Writer (not Writer/Web), whose PDF export lays out pages.
        cmd.arg("--infilter=HTML (StarWriter)");
    }
    cmd.args(["--convert-to", "pdf", "--outdir"])
        .arg(&out)
        .arg(input);
    limits::run("soffice", &mut cmd, work)?;
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pdf = out.join(format!("{stem}.pdf"));
    if !pdf.is_file() {
        let why = std::fs::read_to_string(work.join("soffice.stderr")).unwrap_or_default();
        return Err(SourceError::damaged(
            kind.describe(),
            format!(
                "LibreOffice could not open it{}",
                why.lines()
                    .find(|l| !l.trim().is_empty())
                    .map(|l| format!(" ({})", l.trim()))
                    .unwrap_or_default()
            ),
        ));
    }
    Ok(pdf)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compound file whose directory (sector 0) names a `WordDocument` stream starting at
    /// sector 1, whose FIB has the given flags.
    fn word97(flags: u16) -> Vec<u8> {
        let mut b = vec![0u8; 512 * 3];
        b[..8].copy_from_slice(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1");
        b[30..32].copy_from_slice(&9u16.to_le_bytes());
        let name: Vec<u8> = "WordDocument"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        b[512..512 + name.len()].copy_from_slice(&name);
        b[512 + 64..512 + 66].copy_from_slice(&26u16.to_le_bytes());
        b[512 + 116..512 + 120].copy_from_slice(&1u32.to_le_bytes());
        b[1024..1026].copy_from_slice(&0xA5ECu16.to_le_bytes());
        b[1034..1036].copy_from_slice(&flags.to_le_bytes());
        b
    }

    #[test]
    fn a_password_protected_word_or_opendocument_file_is_named_protected() {
        assert!(protected(&word97(0x0100 | 0x0200), Kind::Doc));
        assert!(!protected(&word97(0x0200), Kind::Doc));
        let odt = |manifest: &str| {
            let mut buf = std::io::Cursor::new(Vec::new());
            let mut z = zip::ZipWriter::new(&mut buf);
            let o = zip::write::SimpleFileOptions::default();
            z.start_file("mimetype", o).unwrap();
            std::io::Write::write_all(&mut z, b"application/vnd.oasis.opendocument.text").unwrap();
            z.start_file("META-INF/manifest.xml", o).unwrap();
            std::io::Write::write_all(&mut z, manifest.as_bytes()).unwrap();
            z.finish().unwrap();
            buf.into_inner()
        };
        let locked = odt(
            r#"<manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data manifest:checksum-type="SHA1/1K"/></manifest:file-entry>"#,
        );
        assert!(protected(&locked, Kind::Odt));
        assert!(!protected(&odt("<manifest:file-entry/>"), Kind::Odt));
        let e = pages(None, &locked, Kind::Odt, &Options::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("password-protected OpenDocument text"), "{e}");
    }

    #[test]
    fn converted_pdfs_are_cached_owner_only_and_a_link_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        if pdf_text::tool("soffice", "LEXRUN_SOFFICE").is_none() {
            panic!("LibreOffice is needed: apt-get install libreoffice-writer-nogui");
        }
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let root = tempfile::tempdir().unwrap();
        let rtf = b"{\\rtf1\\ansi The lease of 12 Harbor Road.\\par}";
        let cache = root.path().join("lexrun/pdf");
        let pdf = to_pdf_in(Some(&cache), None, rtf, Kind::Rtf).unwrap();
        assert_eq!(pdf.parent(), Some(cache.as_path()));
        assert_eq!(mode(&pdf), 0o600);
        assert_eq!(mode(&cache), 0o700);
        assert_eq!(mode(&root.path().join("lexrun")), 0o700);
        // The cached one, the second time; an entry that is a link is made again, in place.
        assert_eq!(to_pdf_in(Some(&cache), None, rtf, Kind::Rtf).unwrap(), pdf);
        let elsewhere = root.path().join("elsewhere.pdf");
        std::fs::rename(&pdf, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &pdf).unwrap();
        assert_eq!(to_pdf_in(Some(&cache), None, rtf, Kind::Rtf).unwrap(), pdf);
        assert!(!std::fs::symlink_metadata(&pdf).unwrap().is_symlink());
        // A link in the place of the folder: nothing is written where it points.
        let target = root.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let linked = root.path().join("linked");
        std::os::unix::fs::symlink(&target, &linked).unwrap();
        let other = b"{\\rtf1\\ansi Another letter.\\par}";
        let made = to_pdf_in(Some(&linked), None, other, Kind::Rtf).unwrap();
        assert!(!made.starts_with(&linked), "{}", made.display());
        assert_eq!(mode(&made), 0o600);
        assert_eq!(mode(made.parent().unwrap()), 0o700);
        assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    }

    #[test]
    fn the_fonts_a_file_asks_for_are_read_from_it() {
        let rtf = br"{\rtf1\ansi{\fonttbl{\f0\froman\fcharset0 Times New Roman;}{\f1\fnil\fcharset128 MS Mincho;}}\f1 x}";
        assert_eq!(
            fonts_asked(rtf, Kind::Rtf),
            ["Times New Roman", "MS Mincho"]
        );
        // Fonts with a metric-compatible stand-in are not reported as substituted.
        assert!(missing_fonts(&["Times New Roman".into()]).is_empty());
    }
}
