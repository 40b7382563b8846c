//! Documents a lawyer can file or send: Word (`docx`, written here) and PDF (Word converted by
//! LibreOffice, when it is installed), laid out as a pleading (a caption from the matter's
//! `matter.json`, a signature block and jurat for affidavits), a letter or a memo, an optional verification appendix, and the
//! run's provenance in the document's properties. Needs only text and files; it stands
//! beside `verify` and `exhibits`.

use lexrun_base::{atomic, calendar, escape};

pub mod docx;
pub mod markdown;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The closing of an affidavit: attestation, signature block and jurat (`{{affiant}}`).
pub const AFFIDAVIT_CLOSING: &str = include_str!("../../../stdlib/documents/affidavit-closing.md");

/// Where LibreOffice is: `LEXRUN_SOFFICE`, else `soffice` or `libreoffice` on PATH.
pub fn soffice() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("LEXRUN_SOFFICE") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["soffice", "libreoffice"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Why a document could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("PDF output needs LibreOffice: install Debian's `libreoffice-writer-nogui` (or set LEXRUN_SOFFICE), or declare a .docx output")]
    NoLibreOffice,
    #[error("cannot make a temporary folder: {0}")]
    TempDir(#[source] std::io::Error),
    #[error("cannot run `{}`: {source}", program.display())]
    Run {
        program: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("LibreOffice did not convert `{}`: {}", .0.display(), .1)]
    NotConverted(std::path::PathBuf, String),
    #[error("cannot read `{}`: {source}", path.display())]
    ReadPdf {
        path: std::path::PathBuf,
        #[source]
        source: lopdf::Error,
    },
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Converts a `.docx` to PDF beside `pdf` with LibreOffice in headless mode, then stamps the
/// provenance into the PDF's document information.
pub fn docx_to_pdf(
    docx: &Path,
    pdf: &Path,
    properties: &[(String, String)],
) -> Result<(), DocumentError> {
    let Some(soffice) = soffice() else {
        return Err(DocumentError::NoLibreOffice);
    };
    let work = tempfile::tempdir().map_err(DocumentError::TempDir)?;
    // A private profile: conversions never touch (or wait on) a user's running LibreOffice.
    let profile = format!(
        "-env:UserInstallation=file://{}",
        work.path().join("profile").display()
    );
    let out = Command::new(&soffice)
        .arg(profile)
        .args([
            "--headless",
            "--norestore",
            "--convert-to",
            "pdf",
            "--outdir",
        ])
        .arg(work.path())
        .arg(docx)
        .output()
        .map_err(|source| DocumentError::Run {
            program: soffice.clone(),
            source,
        })?;
    // LibreOffice names its PDF by the whole stem: `a.blocked-draft.docx` → `a.blocked-draft.pdf`.
    let stem = docx.file_stem().unwrap_or_default().to_string_lossy();
    let made = work.path().join(format!("{stem}.pdf"));
    if !made.is_file() {
        return Err(DocumentError::NotConverted(
            docx.to_path_buf(),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    stamp_pdf_info(&made, properties)?;
    crate::atomic::write_with(pdf, |f| {
        std::io::copy(&mut std::fs::File::open(&made)?, f).map(drop)
    })
    .map_err(|source| DocumentError::Write {
        path: pdf.to_path_buf(),
        source,
    })
}

/// Adds `properties` to a PDF's document information dictionary (as `Lexrun…` keys).
pub fn stamp_pdf_info(pdf: &Path, properties: &[(String, String)]) -> Result<(), DocumentError> {
    use lopdf::{Dictionary, Object};
    let mut doc = lopdf::Document::load(pdf).map_err(|source| DocumentError::ReadPdf {
        path: pdf.to_path_buf(),
        source,
    })?;
    let info_id = match doc.trailer.get(b"Info").and_then(Object::as_reference) {
        Ok(id) => id,
        Err(_) => {
            let id = doc.add_object(Dictionary::new());
            doc.trailer.set("Info", id);
            id
        }
    };
    if let Ok(Object::Dictionary(info)) = doc.get_object_mut(info_id) {
        for (k, v) in properties {
            let key: String = k
                .split(['.', '_', '-'])
                .map(|w| {
                    let mut c = w.chars();
                    c.next()
                        .map(|f| f.to_uppercase().chain(c).collect::<String>())
                        .unwrap_or_default()
                })
                .collect();
            info.set(key, Object::string_literal(v.as_str()));
        }
    }
    doc.save(pdf).map_err(|source| DocumentError::Write {
        path: pdf.to_path_buf(),
        source,
    })?;
    Ok(())
}
