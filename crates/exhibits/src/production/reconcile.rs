//! Reconciling a volume: what it came to (`Report`) — every collected item (file, message,
//! attachment, embedded file) produced, withheld or an exception, each exactly once — the
//! redactions burned in, the patterns that matched nothing; and `DATA/reconciliation.md`,
//! which says so in words, level by level.

use std::path::{Path, PathBuf};

use super::types::{io, Doc, Level, ProductionError, Report, Spec};
use super::write::{Place, Written};

/// What was collected, and what became of it.
pub(super) struct Tally<'a> {
    pub(super) docs: &'a [Doc],
    /// How many times each pattern matched.
    pub(super) counts: &'a [usize],
    /// Documents produced again, each said in words.
    pub(super) again: &'a [String],
    /// How many pages were rasterised, by why.
    pub(super) rasterised: &'a std::collections::BTreeMap<String, usize>,
}

/// The volume's report, for the volume to be put at `folder`.
pub(super) fn report(spec: &Spec, folder: PathBuf, w: &Written, t: &Tally) -> Report {
    let unmatched: Vec<String> = spec
        .patterns
        .iter()
        .zip(t.counts)
        .filter(|(_, c)| **c == 0)
        .map(|(p, _)| p.name.clone())
        .collect();
    let mut levels = Vec::new();
    for level in Level::ALL {
        let mut n = [0usize; 5];
        for (d, place) in t.docs.iter().zip(&w.places) {
            if d.level != level {
                continue;
            }
            n[0] += 1;
            match place {
                Some(Place::Produced) => n[1] += 1,
                Some(Place::Withheld) => n[2] += 1,
                Some(Place::Exception) => n[3] += 1,
                None => n[4] += 1,
            }
        }
        if n[0] > 0 {
            levels.push((level.plural().to_string(), n));
        }
    }
    let count = |p: Place| w.places.iter().filter(|x| **x == Some(p)).count();
    // Every item in exactly one place, and one row of the load file for each.
    let balanced = w.places.iter().all(Option::is_some)
        && w.places.len() == t.docs.len()
        && w.rows.len() == t.docs.len();
    Report {
        folder,
        collected: t.docs.len(),
        produced: count(Place::Produced),
        withheld: count(Place::Withheld),
        pages: w.record.last - w.record.first + 1,
        redactions: w.redacted.len(),
        unmatched,
        exceptions: w
            .exceptions
            .iter()
            .map(|(b, d, why)| format!("{b} `{d}`: {why}"))
            .collect(),
        levels,
        balanced,
        again: t.again.to_vec(),
        rasterised: t.rasterised.iter().map(|(w, n)| (w.clone(), *n)).collect(),
        record: w.record.clone(),
    }
}

/// Writes `reconciliation.md` into `data`.
pub(super) fn write(spec: &Spec, data: &Path, r: &Report) -> Result<(), ProductionError> {
    let recon = reconciliation(spec, r);
    let rp = data.join("reconciliation.md");
    crate::atomic::write(&rp, recon.as_bytes()).map_err(io(&rp))
}

fn reconciliation(spec: &Spec, r: &Report) -> String {
    let mut s = format!("# Reconciliation of volume {}\n\n", spec.volume);
    s.push_str(&format!(
        "- collected: {}\n- produced: {} ({} pages, {}–{})\n- withheld: {}\n- exceptions: {}\n- redactions burned in: {}\n\n",
        r.collected,
        r.produced,
        r.pages,
        spec.number(r.record.first),
        spec.number(r.record.last),
        r.withheld,
        r.exceptions.len(),
        r.redactions
    ));
    s.push_str("| level | collected | produced | withheld | exceptions | unaccounted |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|\n");
    for (name, n) in &r.levels {
        s.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} |\n",
            n[0], n[1], n[2], n[3], n[4]
        ));
    }
    s.push('\n');
    let ok = r.balanced && r.produced + r.withheld + r.exceptions.len() == r.collected;
    s.push_str(&format!(
        "produced {} + withheld {} + exceptions {} = collected {}: {}\n",
        r.produced,
        r.withheld,
        r.exceptions.len(),
        r.collected,
        if ok { "balanced" } else { "NOT balanced" }
    ));
    if !r.exceptions.is_empty() {
        s.push_str("\n## Exceptions\n\n");
        for e in &r.exceptions {
            s.push_str(&format!("- {e}\n"));
        }
    }
    if !r.unmatched.is_empty() {
        s.push_str("\n## Redaction patterns that matched nothing\n\n");
        for u in &r.unmatched {
            s.push_str(&format!("- {u}\n"));
        }
    }
    s.push_str("\n## Documents\n\n");
    for d in &r.record.documents {
        s.push_str(&format!(
            "- {}–{} ({} pages): {}\n",
            d.first, d.last, d.pages, d.document
        ));
    }
    let rasterised: usize = r.rasterised.iter().map(|(_, n)| n).sum();
    if spec.images == super::types::Images::Tiff {
        s.push_str("Every page of this TIFF volume is an image.\n\n");
    } else {
        s.push_str(&format!(
            "Pages rasterised: {rasterised} of {}; every other page is produced as itself or set as text, its text kept as text.\n\n",
            r.pages
        ));
    }
    for (why, n) in &r.rasterised {
        s.push_str(&format!("- {n} rasterised: {why}\n"));
    }
    if !r.rasterised.is_empty() {
        s.push('\n');
    }
    for a in &r.again {
        s.push_str(&format!("- warning: {a}\n"));
    }
    for h in &r.record.held {
        s.push_str(&format!("- {} withheld: {}\n", h.bates, h.document));
    }
    s
}
