//! Preparing every page before a number is given, so that a document that cannot be imaged
//! is an exception, not a gap: each imaged document's pages rasterised or set as text with
//! their redactions marked, and each native's text checked for anything to redact. A member
//! of a family that cannot be imaged is an exception on its own; the rest of the family is
//! still produced.

use std::collections::BTreeMap;
use std::path::Path;

use super::collect::glob;
use super::imaging::{self, Hits, Prepared};
use super::types::{BoxRule, Doc, Fate, Images, Pattern, ProductionError, Spec};
use crate::sources::Kind;

/// Every document's pages, ready to be numbered and written.
pub(super) struct Ready {
    /// An imaged document's pages (none for one withheld, native or an exception).
    pub(super) pages: Vec<Option<Vec<Prepared>>>,
    /// A native's text, by the document's index.
    pub(super) native_texts: BTreeMap<usize, String>,
    /// Why each exception could not be processed, by the document's index.
    pub(super) problems: Vec<Option<String>>,
    /// How many times each pattern matched.
    pub(super) counts: Vec<usize>,
    /// How many pages were rasterised, by why.
    pub(super) rasterised: BTreeMap<String, usize>,
}

/// Prepares every document in `work`; one that cannot be imaged becomes an exception (its
/// fate changed, its reason in `problems`), and the rest of its family is still produced.
pub(super) fn prepare_all(
    docs: &[Doc],
    fates: &mut [Fate],
    spec: &Spec,
    work: &Path,
) -> Result<Ready, ProductionError> {
    let mut ready = Ready {
        pages: Vec::new(),
        native_texts: BTreeMap::new(),
        problems: docs.iter().map(|d| d.problem.clone()).collect(),
        counts: vec![0usize; spec.patterns.len()],
        rasterised: BTreeMap::new(),
    };
    for (i, d) in docs.iter().enumerate() {
        let mut hits = Hits {
            patterns: &spec.patterns,
            counts: &mut ready.counts,
            rasterised: &mut ready.rasterised,
        };
        match fates[i] {
            Fate::Withheld(_) | Fate::Exception => ready.pages.push(None),
            Fate::Native => {
                ready.native_texts.insert(i, native_text(d, spec)?);
                ready.pages.push(None);
            }
            Fate::Imaged => {
                let dir = work.join(format!("doc-{i}"));
                match prepare(d, spec, &dir, &mut hits) {
                    Ok(p) if !p.is_empty() => ready.pages.push(Some(p)),
                    Ok(_) => {
                        fates[i] = Fate::Exception;
                        ready.problems[i] = Some("it has no pages".into());
                        ready.pages.push(None);
                    }
                    Err(ProductionError::Unimageable { why, .. }) => {
                        fates[i] = Fate::Exception;
                        ready.problems[i] = Some(format!("cannot be imaged: {why}"));
                        ready.pages.push(None);
                    }
                    Err(e) => return Err(e),
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
    Ok(ready)
}

/// A native's text, which must hold nothing to redact: a native cannot be redacted.
fn native_text(d: &Doc, spec: &Spec) -> Result<String, ProductionError> {
    let text = d.texts.join("\n\u{000C}");
    let found: Vec<&Pattern> = spec
        .patterns
        .iter()
        .filter(|p| p.regex.is_match(&text))
        .collect();
    if let Some(p) = found.first() {
        return Err(ProductionError::NativeRedaction {
            document: d.name.clone(),
            what: format!("{} as {}", p.name, p.label()),
        });
    }
    Ok(text)
}

/// Every page of one document, prepared.
fn prepare(
    d: &Doc,
    spec: &Spec,
    work: &Path,
    hits: &mut Hits,
) -> Result<Vec<Prepared>, ProductionError> {
    let boxes: Vec<&BoxRule> = spec
        .boxes
        .iter()
        .filter(|b| glob(&b.file).is_some_and(|g| g.is_match(&d.rel) || g.is_match(&d.name)))
        .filter(|_| !d.attachment || d.kind == Kind::Pdf)
        .collect();
    match d.kind {
        Kind::Pdf | Kind::Png | Kind::Jpeg | Kind::Tiff => {
            let image = d.kind != Kind::Pdf;
            // A TIFF volume is pixels whatever the page was: its pages are redacted in the
            // pixels too, as they are rasterised for it.
            let vector = !image && spec.images == Images::Pdf;
            let file = match &d.bytes {
                Some(b) => {
                    std::fs::create_dir_all(work)
                        .map_err(|e| ProductionError::Io(work.into(), e))?;
                    let p = work.join(format!("embedded.{}", d.kind.extension()));
                    std::fs::write(&p, b).map_err(|e| ProductionError::Io(p.clone(), e))?;
                    p
                }
                None => d.path.clone(),
            };
            imaging::raster_pages(
                &d.name,
                &file,
                (image, vector),
                work,
                (spec.dpi, &spec.lang),
                &d.texts,
                hits,
                &boxes,
            )
        }
        Kind::Heic => Err(ProductionError::Unimageable {
            document: d.name.clone(),
            why: "a HEIC photo: convert it to JPEG or PDF".into(),
        }),
        _ => imaging::text_pages(&d.name, &d.texts, hits, &boxes),
    }
}
