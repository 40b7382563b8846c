//! Preparing every page before a number is given, so that a document that cannot be imaged
//! is an exception, not a gap: each imaged document's pages rasterised or set as text with
//! their redactions marked, each native's text checked for anything to redact, and a family
//! with a member that could not be imaged held back whole.

use std::collections::BTreeMap;
use std::path::Path;

use super::collect::glob;
use super::imaging::{self, Hits, Prepared};
use super::types::{BoxRule, Doc, Fate, Images, Pattern, ProductionError, Spec};
use crate::sources::Kind;

/// Every document's pages, ready to be numbered and written.
pub(super) struct Ready {
    /// An imaged document's pages (none for one withheld, native or held back).
    pub(super) pages: Vec<Option<Vec<Prepared>>>,
    /// A native's text, by the document's index.
    pub(super) native_texts: BTreeMap<usize, String>,
    /// The documents held back: not imageable, or in a family with one that is not.
    pub(super) skip: Vec<bool>,
    /// How many times each pattern matched.
    pub(super) counts: Vec<usize>,
}

/// Prepares every document in `work`; what cannot be imaged is added to `exceptions`.
pub(super) fn prepare_all(
    docs: &[Doc],
    fates: &[Fate],
    spec: &Spec,
    work: &Path,
    exceptions: &mut Vec<String>,
) -> Result<Ready, ProductionError> {
    let mut ready = Ready {
        pages: Vec::new(),
        native_texts: BTreeMap::new(),
        skip: vec![false; docs.len()],
        counts: vec![0usize; spec.patterns.len()],
    };
    for (i, d) in docs.iter().enumerate() {
        let mut hits = Hits {
            patterns: &spec.patterns,
            counts: &mut ready.counts,
        };
        match fates[i] {
            Fate::Withheld(_) => ready.pages.push(None),
            Fate::Native => {
                ready.native_texts.insert(i, native_text(d, spec)?);
                ready.pages.push(None);
            }
            Fate::Imaged => {
                let dir = work.join(format!("doc-{i}"));
                match prepare(d, spec, &dir, &mut hits) {
                    Ok(p) => ready.pages.push(Some(p)),
                    Err(e @ ProductionError::Unimageable { .. }) => {
                        exceptions.push(e.to_string());
                        ready.skip[i] = true;
                        ready.pages.push(None);
                    }
                    Err(e) => return Err(e),
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    }
    hold_back_families(docs, fates, &mut ready.skip, exceptions);
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

/// A family with a member that could not be imaged is held back whole: never a family
/// with a hole in it.
fn hold_back_families(
    docs: &[Doc],
    fates: &[Fate],
    skip: &mut [bool],
    exceptions: &mut Vec<String>,
) {
    let bad_families: Vec<usize> = docs
        .iter()
        .zip(skip.iter())
        .filter(|(_, s)| **s)
        .map(|(d, _)| d.family)
        .collect();
    for (i, d) in docs.iter().enumerate() {
        if bad_families.contains(&d.family) && !skip[i] && !matches!(fates[i], Fate::Withheld(_)) {
            exceptions.push(format!(
                "`{}`: held back with its family, which has a document that cannot be imaged",
                d.name
            ));
            skip[i] = true;
        }
    }
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
