//! A draft its verification blocked, as a document a person can read and nobody can mistake
//! for a filing copy: written beside the declared output under its own name, each claim that
//! blocked it removed from the text and marked where it stood, a notice above everything and a
//! mark on every page, no signature block or jurat, and the verification appendix saying what
//! the model wrote there and why it was blocked.

use std::path::{Path, PathBuf};

use crate::verify::report::ReportClaim;
use crate::verify::Status as ClaimStatus;

use crate::claim_kind::Kind as ClaimKind;
use crate::plan::workflow::{Policy, Verify};

/// The mark on every page of a blocked draft, and in its title.
pub(super) const BLOCKED_MARK: &str = "BLOCKED DRAFT — NOT FOR FILING";

/// Where the blocked draft of `dest` goes: beside it, never at its path
/// (`declaration.docx` → `declaration.blocked-draft.docx`), so that nothing that collects the
/// filing copy from its declared path ever picks up a blocked draft.
pub(super) fn blocked_path(dest: &Path) -> PathBuf {
    draft_path(dest, "blocked-draft")
}

/// Where a draft of `dest` of the given kind goes: beside it, never at its path
/// (`letter.docx` → `letter.incomplete-draft.docx`).
pub(super) fn draft_path(dest: &Path, kind: &str) -> PathBuf {
    let stem = dest.file_stem().unwrap_or_default().to_string_lossy();
    let name = match dest.extension() {
        Some(ext) => format!("{stem}.{kind}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{kind}"),
    };
    dest.with_file_name(name)
}

/// The mark on every page of an incomplete draft, and in its title.
pub(super) const INCOMPLETE_MARK: &str = "INCOMPLETE DRAFT — NOT FOR FILING";

/// The notice at the top of an incomplete draft's document: what is unfinished and why.
pub(super) fn incomplete_notice(
    matter: &str,
    run_id: &str,
    why: &str,
    declared: &str,
) -> crate::document::docx::Notice {
    crate::document::docx::Notice {
        mark: INCOMPLETE_MARK.into(),
        lines: vec![
            "Incomplete draft — not for filing or signature".into(),
            format!("This draft is not finished (matter {matter}, run {run_id}): {why}."),
            format!(
                "Finish the text (or run the workflow again once the model's answer is whole): only a finished draft is written as {declared}, with no such notice."
            ),
        ],
    }
}

/// The notice at the top of an incomplete draft in Markdown or text.
pub(super) fn incomplete_banner(why: &str) -> String {
    format!("> **{INCOMPLETE_MARK}**: {why}.\n\n")
}

/// The rows of `claims` (a deciding round's `report.json`) that blocked the draft: not
/// supported, under a rule of `v` whose policy is `block` or `revise` (a `flag` rule lets its
/// claims out with the report, in a passing document too).
pub(super) fn blocking(v: &Verify, claims: &[ReportClaim]) -> Vec<usize> {
    claims
        .iter()
        .enumerate()
        .filter(|(_, c)| c.status != ClaimStatus::Supported)
        .filter(|(_, c)| {
            v.rules
                .iter()
                .any(|r| r.claims == c.kind && r.policy != Policy::Flag)
        })
        .map(|(i, _)| i)
        .collect()
}

/// What a removed claim was, in a few words: `unsupported date`, `miscited amount`, `sentence
/// the cited pages do not support`.
fn what(c: &ReportClaim) -> String {
    match c.kind {
        ClaimKind::Proposition => "sentence the cited pages do not support".into(),
        k => format!("{} {}", c.status.as_str(), k.as_str()),
    }
}

/// `text` with each claim of `rows` (indexes into `claims`, whose `start`/`end` are byte
/// offsets into `text`) replaced by a bold marker naming its row of the appendix, counted from
/// 1: `[removed: unsupported date — appendix no. 2]`. Claims whose spans overlap (a date inside
/// a sentence the judge rejected) go in one marker. `None` when a claim's span does not hold
/// the text the report names — the report is of another text — for then the claims cannot all
/// be removed, and no blocked draft is better than one that still carries them.
pub(super) fn strike(text: &str, claims: &[ReportClaim], rows: &[usize]) -> Option<String> {
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    for &i in rows {
        let c = &claims[i];
        let (start, end) = (c.start, c.end);
        let said = text.get(start..end)?;
        let proposition = c.kind == ClaimKind::Proposition;
        // A proposition's text is its sentence; other claims name exactly what they span.
        if !proposition && said != c.text {
            return None;
        }
        if proposition && said.trim().is_empty() {
            return None;
        }
        // A claim read out of a longer token (`$1.80` of `$1.800`) takes the whole token
        // with it: no fragment of what was removed stays behind.
        let (start, end) = if proposition {
            (start, end)
        } else {
            let before = text[..start]
                .char_indices()
                .rev()
                .take_while(|(_, ch)| ch.is_alphanumeric())
                .last()
                .map_or(start, |(at, _)| at);
            let after = text[end..]
                .char_indices()
                .find(|(_, ch)| !ch.is_alphanumeric())
                .map_or(text.len(), |(at, _)| end + at);
            (before, after)
        };
        spans.push((start, end, i));
    }
    spans.sort();
    // Overlapping spans merged: (start, end, rows).
    let mut merged: Vec<(usize, usize, Vec<usize>)> = Vec::new();
    for (s, e, i) in spans {
        match merged.last_mut() {
            Some(last) if s < last.1 => {
                last.1 = last.1.max(e);
                last.2.push(i);
            }
            _ => merged.push((s, e, vec![i])),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (s, e, ids) in merged {
        out.push_str(&text[at..s]);
        let mut kinds: Vec<String> = ids.iter().map(|&i| what(&claims[i])).collect();
        kinds.dedup();
        let nos: Vec<String> = ids.iter().map(|i| (i + 1).to_string()).collect();
        out.push_str(&format!(
            "**[removed: {} — appendix no{} {}]**",
            kinds.join(", "),
            if nos.len() == 1 { "." } else { "s." },
            nos.join(", ")
        ));
        at = e;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// The notice at the top of a blocked draft.
pub(super) fn notice(
    matter: &str,
    run_id: &str,
    removed: usize,
    declared: &str,
) -> crate::document::docx::Notice {
    crate::document::docx::Notice {
        mark: BLOCKED_MARK.into(),
        lines: vec![
            "Blocked draft — not for filing or signature".into(),
            format!(
                "lexrun's verification blocked this draft (matter {matter}, run {run_id}): {removed} claim{} in it {} not supported by the matter's sources. Each is removed from the text below and marked there in bold as [removed: … — appendix no. N]; the verification appendix at the end lists what the model wrote there and why it was blocked.",
                if removed == 1 { "" } else { "s" },
                if removed == 1 { "is" } else { "are" },
            ),
            format!(
                "Correct the draft from the record and run the workflow again: only a draft the verifier lets out is written as {declared}, with no such notice."
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A claim of `text`, found in `draft`.
    fn claim(kind: &str, text: &str, draft: &str, status: &str) -> ReportClaim {
        let start = draft.find(text).unwrap();
        serde_json::from_value(json!({"kind": kind, "text": text, "start": start, "end": start + text.len(), "status": status})).unwrap()
    }

    #[test]
    fn a_blocked_draft_goes_beside_the_declared_output() {
        assert_eq!(
            blocked_path(Path::new("out/declaration.docx")),
            Path::new("out/declaration.blocked-draft.docx")
        );
        assert_eq!(
            blocked_path(Path::new("out/brief")),
            Path::new("out/brief.blocked-draft")
        );
    }

    #[test]
    fn each_blocking_claim_is_replaced_by_its_appendix_number() {
        let text = "I paid $1,800.00 on March 3, 2025. The landlord kept $9,000.00 on May 1, 2031.";
        let claims = vec![
            claim("amount", "$1,800.00", text, "supported"),
            claim("date", "March 3, 2025", text, "supported"),
            claim("amount", "$9,000.00", text, "unsupported"),
            claim("date", "May 1, 2031", text, "unsupported"),
        ];
        let out = strike(text, &claims, &[2, 3]).unwrap();
        assert_eq!(
            out,
            "I paid $1,800.00 on March 3, 2025. The landlord kept **[removed: unsupported amount — appendix no. 3]** on **[removed: unsupported date — appendix no. 4]**."
        );
        assert!(!out.contains("9,000") && !out.contains("2031"));
    }

    #[test]
    fn a_claim_read_out_of_a_longer_number_takes_the_number_with_it() {
        let text = "A deposit of $1.800 was paid.";
        let claims = vec![claim("amount", "$1.80", text, "unsupported")];
        assert_eq!(
            strike(text, &claims, &[0]).unwrap(),
            "A deposit of **[removed: unsupported amount — appendix no. 1]** was paid."
        );
    }

    #[test]
    fn overlapping_claims_are_removed_together() {
        let text = "Rent was due on May 1, 2031 (OKAFOR000002). Next.";
        let sentence = "Rent was due on May 1, 2031 (OKAFOR000002).";
        let claims = vec![
            claim("proposition", sentence, text, "unsupported"),
            claim("date", "May 1, 2031", text, "unsupported"),
        ];
        let out = strike(text, &claims, &[0, 1]).unwrap();
        assert_eq!(
            out,
            "**[removed: sentence the cited pages do not support, unsupported date — appendix nos. 1, 2]** Next."
        );
    }

    #[test]
    fn a_report_of_another_text_writes_no_blocked_draft() {
        let claims = vec![claim(
            "date",
            "May 1, 2031",
            "Due May 1, 2031.",
            "unsupported",
        )];
        assert_eq!(strike("Due June 2, 2030.", &claims, &[0]), None);
        // Out of bounds, or inside a character.
        assert_eq!(strike("Due", &claims, &[0]), None);
        let split: Vec<ReportClaim> = vec![serde_json::from_value(
            json!({"kind": "date", "text": "é", "start": 1, "end": 2, "status": "unsupported"}),
        )
        .unwrap()];
        assert_eq!(strike("é", &split, &[0]), None);
    }
}
