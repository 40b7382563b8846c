//! Office files lexrun does not parse itself (`.doc`, `.odt`, `.rtf`) are turned into PDF by
//! LibreOffice (`soffice`, Debian `libreoffice-writer-nogui`) and read from that PDF's text
//! layer, so their pages are the pages LibreOffice prints, the same pages `lexrun bates`
//! stamps. The same conversion makes PDFs of Word files and of the HTML lexrun renders for
//! emails and sheets. Converted PDFs are cached by the source's blake3, like extracted text.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{image, limits, scan, Kind, Options, PageText, SourceError};

/// The pages of a `.doc`, `.odt` or `.rtf`: LibreOffice's PDF of it, read as a PDF.
pub fn pages(
    path: Option<&Path>,
    bytes: &[u8],
    kind: Kind,
    opts: &Options,
) -> Result<Vec<PageText>, SourceError> {
    let pdf = to_pdf(path, bytes, kind)?;
    let mut pages = scan::pages(&pdf, &opts.scan)?;
    for p in &mut pages {
        p.from = "libreoffice".into();
    }
    Ok(pages)
}

/// Where converted PDFs are kept: beside the text cache.
fn cache_dir() -> Option<PathBuf> {
    scan::default_cache().map(|d| d.with_file_name("pdf"))
}

/// A PDF of `bytes` (of `kind`) made by LibreOffice: the cached one when there is one.
pub fn to_pdf(path: Option<&Path>, bytes: &[u8], kind: Kind) -> Result<PathBuf, SourceError> {
    let hash = blake3::hash(bytes).to_hex().to_string();
    let cached = cache_dir().map(|d| d.join(format!("{hash}.pdf")));
    if let Some(c) = &cached {
        // A damaged entry is converted again, never used.
        if std::fs::read(c).is_ok_and(|b| lopdf::Document::load_mem(&b).is_ok()) {
            return Ok(c.clone());
        }
    }
    let soffice = scan::tool("soffice", "LEXRUN_SOFFICE").ok_or(limits::ToolError::Missing {
        tool: "soffice",
        package: "libreoffice-writer-nogui",
        what: kind.describe(),
    })?;
    let work = tempfile::tempdir().map_err(SourceError::Io)?;
    let made = image::on_disk(path, bytes, kind.extension(), |input| {
        convert(&soffice, input, work.path(), kind)
    })?;
    let Some(c) = cached else {
        // No cache: the PDF is kept in a folder that lives as long as the process.
        let keep = tempfile::Builder::new()
            .prefix("lexrun-pdf")
            .tempdir()
            .map_err(SourceError::Io)?
            .keep();
        let dest = keep.join(format!("{hash}.pdf"));
        std::fs::rename(&made, &dest).map_err(SourceError::Io)?;
        return Ok(dest);
    };
    if let Some(d) = c.parent() {
        std::fs::create_dir_all(d).map_err(SourceError::Io)?;
    }
    let pdf = std::fs::read(&made).map_err(SourceError::Io)?;
    crate::atomic::write(&c, &pdf).map_err(SourceError::Io)?;
    Ok(c)
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
