//! The guard at intake: before a run uses a file as evidence, it is checked against
//! everything lexrun ever wrote. A file is refused if the ledger knows its bytes or its text
//! as an output, if it carries lexrun's provenance marker, or if its text overlaps an earlier
//! output's beyond [`OVERLAP`] (word-shingle fingerprints: renamed, re-wrapped, reformatted
//! and lightly edited copies are caught). A person admits a refused file only by saying so in
//! the workflow (`admit "FILE" because "REASON"`), and the ledger records it.

use std::io::Read;

use serde::Serialize;

use crate::store::{shingles, Store};

/// Above this share of shared fingerprints, a source is a copy of an earlier output.
pub const OVERLAP: f64 = 0.25;

#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    pub matter: String,
    /// The file as the workflow names it (relative to the matter).
    pub file: String,
    pub path: String,
    pub raw_hash: String,
    pub text_hash: String,
    /// Why the guard refuses it.
    pub refused: Option<String>,
    /// The workflow's reason for admitting it anyway.
    pub admitted: Option<String>,
    /// Why the file could not be read at all (nothing else was checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

impl Verdict {
    pub fn blocked(&self) -> bool {
        self.unreadable.is_some() || self.refused.is_some() && self.admitted.is_none()
    }

    /// The verdict on a file that could not be read.
    pub fn unreadable(matter: &str, file: &str, path: &std::path::Path, why: String) -> Verdict {
        let raw_hash = std::fs::read(path)
            .map(|b| blake3::hash(&b).to_hex().to_string())
            .unwrap_or_default();
        Verdict {
            matter: matter.to_string(),
            file: file.to_string(),
            path: path.display().to_string(),
            raw_hash,
            text_hash: String::new(),
            refused: None,
            admitted: None,
            unreadable: Some(why),
        }
    }
}

/// The hash of a text's words, lower-cased: the same for a re-wrapped or re-punctuated copy.
pub fn text_hash(text: &str) -> String {
    let mut h = blake3::Hasher::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        h.update(w.to_lowercase().as_bytes());
        h.update(b" ");
    }
    h.finalize().to_hex().to_string()
}

/// Whether a file carries lexrun's provenance: the Markdown marker, a PDF's `LexrunRun`
/// information entry, or a Word document's `lexrun.run` custom property.
pub fn has_marker(bytes: &[u8]) -> bool {
    let find = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    if find(b"lexrun:provenance") || find(b"/LexrunRun") {
        return true;
    }
    if bytes.starts_with(b"PK") {
        if let Ok(mut z) = zip::ZipArchive::new(std::io::Cursor::new(bytes)) {
            if let Ok(mut f) = z.by_name("docProps/custom.xml") {
                let mut s = String::new();
                let _ = f.read_to_string(&mut s);
                return s.contains("name=\"lexrun.run\"");
            }
        }
    }
    false
}

/// Checks one file. `admit` is the workflow's admissions for this matter: (file, reason).
pub fn check(
    store: &Store,
    matter: &str,
    file: &str,
    path: &std::path::Path,
    text: &str,
    admit: &[(String, String)],
) -> Verdict {
    let bytes = std::fs::read(path).unwrap_or_default();
    check_bytes(
        store,
        matter,
        file,
        &path.display().to_string(),
        &bytes,
        text,
        admit,
    )
}

/// Checks one document given by its bytes: a file, or an attachment inside one (`path` is
/// then `letter.eml › invoice.pdf`).
pub fn check_bytes(
    store: &Store,
    matter: &str,
    file: &str,
    path: &str,
    bytes: &[u8],
    text: &str,
    admit: &[(String, String)],
) -> Verdict {
    let raw_hash = blake3::hash(bytes).to_hex().to_string();
    let th = text_hash(text);
    let refused = if let Some(a) = store.artifact_by_hash(&raw_hash, &th) {
        Some(format!(
            "it is lexrun's own {} of stage `{}` (run {}, written to {})",
            if a.kind == "output" { "output" } else { "text" },
            a.stage,
            a.run_id,
            a.path
        ))
    } else if has_marker(bytes) {
        Some("it carries lexrun's provenance marker: lexrun wrote it".into())
    } else {
        let fps = shingles::fingerprints(text);
        match store.overlap(&fps) {
            Some((a, share)) if share >= OVERLAP => Some(format!(
                "{:.0}% of its text matches lexrun's {} of stage `{}` (run {}, {})",
                share * 100.0,
                if a.kind == "output" { "output" } else { "text" },
                a.stage,
                a.run_id,
                a.path
            )),
            _ => None,
        }
    };
    let admitted = refused.as_ref().and_then(|_| {
        admit
            .iter()
            .find(|(f, _)| f == file || std::path::Path::new(path).ends_with(f))
            .map(|(_, r)| r.clone())
    });
    Verdict {
        matter: matter.to_string(),
        file: file.to_string(),
        path: path.to_string(),
        raw_hash,
        text_hash: th,
        refused,
        admitted,
        unreadable: None,
    }
}

/// The refusals, for an error message.
pub fn describe(v: &[Verdict]) -> String {
    let mut s = String::from(
        "refused as evidence: lexrun's own output must never re-enter a run as evidence",
    );
    for x in v.iter().filter(|x| x.blocked()) {
        s.push_str(&format!(
            "\n  {} ({}): {}",
            x.file,
            x.matter,
            x.refused.as_deref().unwrap_or("")
        ));
    }
    s.push_str("\nremove these files from the matter, or admit one on purpose in its `sources` block: `admit \"FILE\" because \"REASON\"`");
    s
}
