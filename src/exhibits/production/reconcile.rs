//! Reconciling a volume: what it came to (`Report`) — produced + withheld + exceptions =
//! collected, the redactions burned in, the patterns that matched nothing — and
//! `DATA/reconciliation.md`, which says so in words.

use std::path::{Path, PathBuf};

use super::types::{io, ProductionError, Report, Spec};
use super::write::Written;

/// What was collected, and what became of it.
pub(super) struct Tally<'a> {
    pub(super) collected: usize,
    pub(super) withheld: usize,
    pub(super) exceptions: &'a [String],
    /// How many times each pattern matched.
    pub(super) counts: &'a [usize],
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
    Report {
        folder,
        collected: t.collected,
        produced: w.record.documents.len(),
        withheld: t.withheld,
        pages: w.record.last - w.record.first + 1,
        redactions: w.redacted.len(),
        unmatched,
        exceptions: t.exceptions.to_vec(),
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
    let ok = r.produced + r.withheld + r.exceptions.len() == r.collected;
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
    for w in &r.record.withheld {
        s.push_str(&format!("- withheld: {w}\n"));
    }
    s
}
