//! The guard at intake: before a run uses a file as evidence, it is checked against
//! everything lexrun ever wrote. A file is refused if the ledger knows its bytes or its text
//! as an output, if it carries lexrun's provenance marker, or if its text overlaps an earlier
//! output's on enough evidence ([`refuses`]: word-shingle fingerprints of folded text, so
//! renamed, re-wrapped, reformatted, lightly edited and look-alike copies are caught). It is
//! also refused if it entered the matter after a model wrote a claim and is that claim's only
//! support (claim taint: an invented citation copied into a note). A person admits a refused
//! file only by saying so in the workflow (`admit "FILE" because "REASON"`), and the ledger
//! records it.

use std::io::Read;

use serde::Serialize;

use crate::store::{shingles, Store};
use crate::verify::taint::{self, Carried};

/// At this share of an output's fingerprints found in a file, the file is a copy of it
/// (a 30% word edit keeps about a third of the three-word runs, an excerpt of 30% of a text
/// that much of it)…
pub const OVERLAP: f64 = 0.15;
/// …provided they share at least this many fingerprints…
pub const MIN_SHARED: usize = 5;
/// …of an output with at least this many of its own: a short stage text (a gate's JSON
/// answer has a handful) cannot refuse a genuine letter that repeats one of its phrases.
pub const MIN_OUTPUT: usize = 16;
/// A file that is mostly one output, and holds most of it, is a copy however short.
pub const MOSTLY: f64 = 0.5;

/// Whether sharing `shared` fingerprints with an output of `output` fingerprints makes a file
/// of `file` fingerprints a copy of it.
pub fn refuses(shared: usize, file: usize, output: usize) -> bool {
    let of_output = shared as f64 / output.max(1) as f64;
    let of_file = shared as f64 / file.max(1) as f64;
    (output >= MIN_OUTPUT && shared >= MIN_SHARED && of_output >= OVERLAP)
        || (of_output >= MOSTLY && of_file >= MOSTLY)
}

/// [`refuses`] for a ledger that holds fingerprints from before text was folded (format 1),
/// which were recorded with those of the evidence the outputs quote: a source those outputs
/// quoted shares them, so the bar is the one those ledgers were made for (a quarter of an
/// output, twelve fingerprints; most of each other).
pub fn refuses_legacy(shared: usize, file: usize, output: usize) -> bool {
    let of_output = shared as f64 / output.max(1) as f64;
    let of_file = shared as f64 / file.max(1) as f64;
    (shared >= 12 && of_output >= 0.25) || (of_output >= 0.6 && of_file >= 0.6)
}

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
    /// Claims models wrote before this file entered the matter, which it alone supports.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub carries: Vec<Carried>,
    /// When the file (its text) was first seen in the matter, in milliseconds.
    #[serde(skip)]
    pub first_seen: i64,
    /// Why the file could not be read at all (nothing else was checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// Why the guard could not check it: the ledger did not answer. Such a file is held
    /// back like a refused one, since nobody can say lexrun did not write it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unchecked: Option<String>,
    /// Why this part of a file (an email's attachment) could not be read: it is left out of
    /// the evidence, and the rest of the file is still read. Blocks nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable_part: Option<String>,
}

impl Verdict {
    pub fn blocked(&self) -> bool {
        self.unreadable.is_some()
            || self.unchecked.is_some()
            || (self.refused.is_some() || !self.carries.is_empty()) && self.admitted.is_none()
    }

    /// Why the guard refuses it: a copy of an output, or the carrier of model claims.
    pub fn why(&self) -> Option<String> {
        if let Some(u) = &self.unchecked {
            return Some(format!(
                "it could not be checked against lexrun's outputs: {u}"
            ));
        }
        if let Some(r) = &self.refused {
            return Some(r.clone());
        }
        if self.carries.is_empty() {
            return None;
        }
        let list: Vec<String> = self
            .carries
            .iter()
            .map(|c| {
                format!(
                    "{} `{}` (run {}, stage {})",
                    c.kind.as_str(),
                    c.text.trim(),
                    c.run,
                    c.stage
                )
            })
            .collect();
        Some(format!(
            "it appeared after lexrun generated, and is the only support of, {}",
            list.join("; ")
        ))
    }

    /// The verdict on a part of a file that could not be read (the file's other parts have
    /// verdicts of their own).
    pub fn unreadable_part(
        matter: &str,
        part: &str,
        path: &std::path::Path,
        why: String,
    ) -> Verdict {
        Verdict {
            matter: matter.to_string(),
            file: part.to_string(),
            path: path.display().to_string(),
            raw_hash: String::new(),
            text_hash: String::new(),
            refused: None,
            admitted: None,
            unreadable: None,
            unchecked: None,
            unreadable_part: Some(why),
            carries: Vec::new(),
            first_seen: 0,
        }
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
            unchecked: None,
            unreadable_part: None,
            carries: Vec::new(),
            first_seen: 0,
        }
    }
}

/// The hash of a text's folded words (`store::shingles::folded_words`): the same for a
/// re-wrapped, re-punctuated or disguised copy.
pub fn text_hash(text: &str) -> String {
    crate::store::shingles::text_hash(text)
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

/// Checks one file against everything lexrun wrote, and notes it as seen in the matter.
/// `admit` is the workflow's admissions for this matter: (file, reason); a file it names is
/// admitted whatever the guard finds, and is never late for claim taint.
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
    let legacy = store.has_legacy_fingerprints();
    let legacy_th = legacy.then(|| shingles::legacy_text_hash(text));
    let mut texts = vec![th.as_str()];
    texts.extend(legacy_th.as_deref());
    let what = |a: &crate::store::Artifact| {
        if a.kind == "output" {
            "output"
        } else {
            "text"
        }
    };
    let mut unchecked = None;
    let by_hash = store
        .artifact_by_hash(&raw_hash, &texts)
        .unwrap_or_else(|e| {
            unchecked = Some(e.to_string());
            None
        });
    let refused = if unchecked.is_some() {
        None
    } else if let Some(a) = by_hash {
        Some(format!(
            "it is lexrun's own {} of stage `{}` (run {}, written to {})",
            what(&a),
            a.stage,
            a.run_id,
            a.path
        ))
    } else if has_marker(bytes) {
        Some("it carries lexrun's provenance marker: lexrun wrote it".into())
    } else {
        let mut fps = shingles::fingerprints(text);
        if legacy {
            fps.extend(shingles::legacy_fingerprints(text));
            fps.sort_unstable();
            fps.dedup();
        }
        let n = fps.len();
        let rule = if legacy { refuses_legacy } else { refuses };
        let rank = |shared: usize, total: usize| {
            rule(shared, n, total).then_some(shared as f64 / total.max(1) as f64)
        };
        match store.overlap(&fps, rank).unwrap_or_else(|e| {
            unchecked = Some(e.to_string());
            None
        }) {
            Some(o) if rule(o.shared, n, o.total) => Some(format!(
                "{:.0}% of its text matches lexrun's {} of stage `{}` (run {}, {}), covering {:.0}% of that {} ({} shared fingerprints)",
                o.shared as f64 / n.max(1) as f64 * 100.0,
                what(&o.artifact),
                o.artifact.stage,
                o.artifact.run_id,
                o.artifact.path,
                o.of_output() * 100.0,
                what(&o.artifact),
                o.shared
            )),
            _ => None,
        }
    };
    let first_seen = store
        .see(matter, &th, &raw_hash, file)
        .unwrap_or_else(|_| crate::store::now() * 1000);
    let mut v = Verdict {
        matter: matter.to_string(),
        file: file.to_string(),
        path: path.to_string(),
        raw_hash,
        text_hash: th,
        refused,
        admitted: None,
        carries: Vec::new(),
        first_seen,
        unreadable: None,
        unchecked,
        unreadable_part: None,
    };
    v.admitted = admission(&v, std::path::Path::new(path), admit);
    v
}

fn admission(v: &Verdict, path: &std::path::Path, admit: &[(String, String)]) -> Option<String> {
    admit
        .iter()
        .find(|(f, _)| *f == v.file || path.ends_with(f))
        .map(|(_, r)| r.clone())
}

/// Claim taint at intake: marks each file of one matter (`verdicts`, with the text of each
/// page in `pages`) that is the only support of claims models wrote before it entered
/// (`verify::taint` decides which).
pub fn check_taint(
    store: &Store,
    matter: &str,
    verdicts: &mut [Verdict],
    pages: &[Vec<String>],
    prefixes: &[String],
) {
    let offered: Vec<taint::Offered<'_>> = verdicts
        .iter()
        .zip(pages)
        .map(|(v, p)| taint::Offered {
            file: &v.file,
            text_hash: &v.text_hash,
            admitted: v.admitted.is_some(),
            first_seen: v.first_seen,
            pages: p,
        })
        .collect();
    let ledger = crate::taint_ledger::LedgerFacts(store);
    let carriers = taint::at_intake(&ledger, matter, &offered, prefixes);
    for c in carriers {
        if let Some(v) = verdicts.iter_mut().find(|v| v.file == c.file) {
            v.carries = c.claims;
        }
    }
}

/// The refusals, for an error message.
pub fn describe(v: &[Verdict]) -> String {
    let mut s = String::from(
        "refused as evidence: lexrun's own output, and claims a model invented, must never re-enter a run as evidence",
    );
    for x in v.iter().filter(|x| x.blocked()) {
        s.push_str(&format!(
            "\n  {} ({}): {}",
            x.file,
            x.matter,
            x.why().unwrap_or_default()
        ));
    }
    if v.iter().any(|x| x.unchecked.is_some()) {
        s.push_str("\nthe ledger did not answer, so the guard could not check every file and nothing was run; run again once the ledger answers");
    }
    if v.iter().any(|x| x.blocked() && x.unchecked.is_none()) {
        s.push_str("\nremove these files from the matter, or admit one on purpose in its `sources` block: `admit \"FILE\" because \"REASON\"`");
    }
    s
}
