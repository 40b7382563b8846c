//! Reviewers' decisions as `lexrun audit` lists them, and exported for a firm's records as
//! JSON or CSV: every decision on the matters a run worked on, superseded ones included.

use crate::store::{Decision, Store, StoreError};
use crate::verify::decisions::{by, page_name};

/// The decisions of the run's matters (`matters`, as the run's records name them), and those
/// recorded on the run's own reports, in the order they were made.
pub(super) fn of_run(
    st: &Store,
    run: &str,
    mut matters: Vec<String>,
) -> Result<Vec<Decision>, StoreError> {
    matters.sort();
    matters.dedup();
    let mut out: Vec<Decision> = st.run_decisions(run)?;
    for m in &matters {
        for d in st.decisions(m)? {
            if !out.iter().any(|x| x.seq == d.seq && x.matter == d.matter) {
                out.push(d);
            }
        }
    }
    out.sort_by_key(|d| (d.created, d.seq));
    Ok(out)
}

/// One line a decision, as `lexrun audit` prints them.
pub(super) fn text(ds: &[Decision]) -> String {
    let mut out = String::new();
    for d in ds {
        let what = match (&d.page, &d.reason) {
            (Some(p), _) => format!(
                "{} by {}",
                d.verdict.as_str(),
                page_name(&p.file, p.page, p.bates.as_deref())
            ),
            (None, Some(r)) => format!("{} ({r})", d.verdict.as_str()),
            _ => d.verdict.as_str().to_string(),
        };
        out.push_str(&format!(
            "  #{} {} “{}” {what}, by {}, matter {}{}{}{}\n",
            d.seq,
            d.claim_id,
            d.claim,
            by(d),
            d.matter,
            if d.run_id.is_empty() {
                String::new()
            } else {
                format!(", run {} stage {}", d.run_id, d.stage)
            },
            d.note
                .as_deref()
                .map(|n| format!(" — note: {n}"))
                .unwrap_or_default(),
            d.superseded_by
                .map(|s| format!(" [superseded by #{s}]"))
                .unwrap_or_default()
        ));
    }
    out
}

/// The decisions as CSV, one row each, with a header.
pub(super) fn csv(ds: &[Decision]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "seq",
        "matter",
        "claim_id",
        "kind",
        "claim",
        "sentence",
        "decision",
        "file",
        "page",
        "bates",
        "page_hash",
        "note",
        "reason",
        "reviewer",
        "decided_at_utc",
        "decided_at_ms",
        "run_id",
        "stage",
        "draft_hash",
        "superseded_by",
    ]);
    for d in ds {
        let p = d.page.as_ref();
        let _ = w.write_record(
            [
                d.seq.to_string(),
                d.matter.clone(),
                d.claim_id.clone(),
                d.kind.clone(),
                d.claim.clone(),
                d.sentence.clone(),
                d.verdict.as_str().to_string(),
                p.map(|p| p.file.clone()).unwrap_or_default(),
                p.map(|p| p.page.to_string()).unwrap_or_default(),
                p.and_then(|p| p.bates.clone()).unwrap_or_default(),
                p.map(|p| p.hash.clone()).unwrap_or_default(),
                d.note.clone().unwrap_or_default(),
                d.reason.clone().unwrap_or_default(),
                d.reviewer.clone(),
                crate::calendar::utc_minute(d.created),
                d.created.to_string(),
                d.run_id.clone(),
                d.stage.clone(),
                d.draft_hash.clone(),
                d.superseded_by.map(|s| s.to_string()).unwrap_or_default(),
            ]
            .map(|cell| spreadsheet_safe(&cell)),
        );
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// A cell a spreadsheet will not take for a formula: one beginning with `=`, `+`, `-`, `@`, a
/// tab or a carriage return is prefixed with `'`.
fn spreadsheet_safe(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Verdict;

    #[test]
    fn a_cell_a_spreadsheet_would_run_is_quoted() {
        let d = Decision {
            seq: 1,
            matter: "smith".into(),
            claim_id: "date-3f9a2b41c07e".into(),
            kind: "date".into(),
            claim: "March 3, 2023".into(),
            sentence: "Paid on March 3, 2023.".into(),
            sentence_hash: "s".into(),
            draft_hash: "d".into(),
            run_id: "r1".into(),
            stage: "draft".into(),
            verdict: Verdict::Waived,
            page: None,
            note: Some("=HYPERLINK(\"http://x\")".into()),
            reason: Some("@SUM(A1)".into()),
            reviewer: "-ann".into(),
            created: 0,
            superseded_by: None,
        };
        let out = csv(&[d]);
        let row = out.lines().nth(1).unwrap();
        assert!(row.contains("\"'=HYPERLINK(\"\"http://x\"\")\""), "{row}");
        assert!(row.contains(",'@SUM(A1),'-ann,"), "{row}");
        assert!(
            row.contains(",Paid on March 3, 2023.,") || row.contains("\"Paid on March 3, 2023.\""),
            "{row}"
        );
    }
}
