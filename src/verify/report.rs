//! The verification report: what a supervising attorney reads before signing. Unsupported
//! claims first, each with its reason; then every supported claim with the file, page and
//! Bates number that supports it.

use std::fmt::Write;

use serde::Serialize;

use super::evidence::SourceFile;
use super::{Outcome, Status};

#[derive(Serialize)]
struct JsonClaim<'a> {
    kind: &'static str,
    text: &'a str,
    start: usize,
    end: usize,
    status: Status,
    source: Option<&'a super::Location>,
    reason: Option<&'a str>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    claims: Vec<JsonClaim<'a>>,
    supported: usize,
    unsupported: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unreadable_sources: Vec<Unreadable<'a>>,
}

#[derive(Serialize)]
struct Unreadable<'a> {
    file: &'a str,
    problem: &'a str,
}

fn counts(outcomes: &[Outcome]) -> (usize, usize) {
    let s = outcomes
        .iter()
        .filter(|o| o.status == Status::Supported)
        .count();
    (s, outcomes.len() - s)
}

/// Exactly one JSON object, in draft order; offsets are byte offsets into the draft.
pub fn json(outcomes: &[Outcome], files: &[SourceFile]) -> String {
    let (supported, unsupported) = counts(outcomes);
    let r = JsonReport {
        claims: outcomes
            .iter()
            .map(|o| JsonClaim {
                kind: o.claim.kind.as_str(),
                text: &o.claim.text,
                start: o.claim.start,
                end: o.claim.end,
                status: o.status,
                source: o.source.as_ref(),
                reason: o.reason.as_deref(),
            })
            .collect(),
        supported,
        unsupported,
        unreadable_sources: files
            .iter()
            .filter_map(|f| {
                f.problem.as_deref().map(|p| Unreadable {
                    file: &f.path,
                    problem: p,
                })
            })
            .collect(),
    };
    serde_json::to_string(&r).unwrap_or_else(|_| "{}".into())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn md_escape(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}

fn line_of(draft: &str, at: usize) -> usize {
    draft[..at.min(draft.len())].matches('\n').count() + 1
}

/// Markdown, unsupported claims first.
pub fn markdown(
    draft_name: &str,
    draft: &str,
    outcomes: &[Outcome],
    files: &[SourceFile],
) -> String {
    let (supported, unsupported) = counts(outcomes);
    let mut s = String::new();
    let _ = writeln!(s, "# Verification of {draft_name}\n");
    let verdict = if unsupported == 0 && files.iter().all(|f| f.problem.is_none()) {
        "Every claim is supported by the sources."
    } else {
        "**Not ready to sign:** the claims below are not supported by the sources."
    };
    let _ = writeln!(
        s,
        "{} claims checked: {supported} supported, {unsupported} unsupported. {verdict}\n",
        outcomes.len()
    );
    let bad: Vec<&SourceFile> = files.iter().filter(|f| f.problem.is_some()).collect();
    if !bad.is_empty() {
        let _ = writeln!(s, "## Sources that could not be read\n");
        for f in bad {
            let _ = writeln!(s, "- `{}`: {}", f.path, f.problem.as_deref().unwrap_or(""));
        }
        let _ = writeln!(
            s,
            "\nNothing these files might support counts as supported.\n"
        );
    }
    let empty: Vec<String> = files
        .iter()
        .filter(|f| !f.empty_pages.is_empty())
        .map(|f| {
            format!(
                "`{}` page{} {}",
                f.path,
                if f.empty_pages.len() == 1 { "" } else { "s" },
                f.empty_pages
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    if !empty.is_empty() {
        let _ = writeln!(
            s,
            "Pages with no text (not searched; OCR them first): {}\n",
            empty.join("; ")
        );
    }
    if unsupported > 0 {
        let _ = writeln!(s, "## Unsupported\n");
        let _ = writeln!(s, "| line | kind | claim | why |\n|---|---|---|---|");
        for o in outcomes.iter().filter(|o| o.status == Status::Unsupported) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                line_of(draft, o.claim.start),
                o.claim.kind.as_str(),
                md_escape(&o.claim.text),
                md_escape(o.reason.as_deref().unwrap_or(""))
            );
        }
        s.push('\n');
    }
    if supported > 0 {
        let _ = writeln!(s, "## Supported\n");
        let _ = writeln!(
            s,
            "| line | kind | claim | source | page | Bates |\n|---|---|---|---|---|---|"
        );
        for o in outcomes.iter().filter(|o| o.status == Status::Supported) {
            let (file, page, bates) =
                o.source
                    .as_ref()
                    .map_or((String::new(), String::new(), String::new()), |l| {
                        (
                            l.file.clone(),
                            l.page.to_string(),
                            l.bates.clone().unwrap_or_default(),
                        )
                    });
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {page} | {bates} |",
                line_of(draft, o.claim.start),
                o.claim.kind.as_str(),
                md_escape(&o.claim.text),
                md_escape(&file)
            );
        }
    }
    s
}
