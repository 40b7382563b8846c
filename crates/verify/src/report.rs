//! The verification report: what a supervising attorney reads before signing. Unsupported
//! claims first, each with its reason; then every supported claim with the file, page and
//! Bates number that supports it.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::claim::{Kind, Location, Outcome, Status};
use super::decisions::{self, Reviewed};
use super::draft::Verification;
use super::evidence::SourceFile;
use lexrun_base::decision::Verdict;

/// One claim as the report holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportClaim {
    /// The claim's id, for `lexrun decide`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub kind: Kind,
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub status: Status,
    #[serde(default)]
    pub source: Option<Location>,
    #[serde(default)]
    pub reason: Option<String>,
    /// The pages the claim's sentence cites, for a miscited claim.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cited: Vec<Location>,
    /// A proposition's verdict (`supported`, `contradicted`, `not_found`) as the judge gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// A proposition's quotation as the judge gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

/// The verification report, `report.json`: written by [`json`] and read back as itself by
/// whatever renders it (the documents' appendix, a blocked draft).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub claims: Vec<ReportClaim>,
    pub supported: usize,
    pub unsupported: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unrecognized: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub miscited: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable_sources: Vec<UnreadableSource>,
    /// The draft's own dates (execution, jurat): not claims about the evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub document_dates: Vec<DocumentDate>,
    /// Record cites not checked (their record is not among the sources): listed, never
    /// supported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked_record_cites: Vec<UncheckedCite>,
    /// The reviewers' decisions met: applied, or lapsed with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<ReportDecision>,
}

impl Report {
    /// The decisions that confirmed a claim by hand and apply.
    pub fn confirmed_by_hand(&self) -> impl Iterator<Item = &ReportDecision> {
        self.decisions
            .iter()
            .filter(|d| d.applies && d.decision == Verdict::Confirmed)
    }
}

/// A reviewer's decision the verification met.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportDecision {
    pub id: String,
    pub kind: String,
    pub text: String,
    pub decision: Verdict,
    pub reviewer: String,
    /// When, in milliseconds since the epoch.
    pub created: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<lexrun_base::decision::DecisionPage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub applies: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lapsed: Option<String>,
}

/// A record cite whose record is not among the sources.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UncheckedCite {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub record: String,
    pub reason: String,
}

/// One of the draft's own dates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DocumentDate {
    pub text: String,
    pub start: usize,
    pub end: usize,
}

/// A source that could not be read, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnreadableSource {
    pub file: String,
    pub problem: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn count(outcomes: &[Outcome], status: Status) -> usize {
    outcomes.iter().filter(|o| o.status == status).count()
}

/// Supported, and not supported (unsupported or unrecognised).
fn counts(outcomes: &[Outcome]) -> (usize, usize) {
    let s = count(outcomes, Status::Supported);
    (s, outcomes.len() - s)
}

/// The report of a verification.
pub fn report(v: &Verification) -> Report {
    let (outcomes, files, document_dates) = (&v.outcomes, &v.files, &v.document_dates);
    let (supported, unrecognized) = (
        count(outcomes, Status::Supported),
        count(outcomes, Status::Unrecognized),
    );
    let unsupported = count(outcomes, Status::Unsupported);
    Report {
        claims: outcomes
            .iter()
            .enumerate()
            .map(|(i, o)| ReportClaim {
                id: v.ids.get(i).cloned(),
                kind: o.claim.kind,
                text: o.claim.text.clone(),
                start: o.claim.start,
                end: o.claim.end,
                status: o.status,
                source: o.source.clone(),
                reason: o.reason.clone(),
                cited: o.cited.clone(),
                verdict: o.judgement.as_ref().map(|j| j.verdict.clone()),
                quote: o.judgement.as_ref().map(|j| j.quote.clone()),
            })
            .collect(),
        supported,
        unsupported,
        unrecognized,
        miscited: count(outcomes, Status::Miscited),
        unreadable_sources: files
            .iter()
            .filter_map(|f| {
                f.problem.as_ref().map(|p| UnreadableSource {
                    file: f.path.clone(),
                    problem: p.clone(),
                })
            })
            .collect(),
        document_dates: document_dates
            .iter()
            .map(|c| DocumentDate {
                text: c.text.clone(),
                start: c.start,
                end: c.end,
            })
            .collect(),
        unchecked_record_cites: v
            .unchecked
            .iter()
            .enumerate()
            .map(|(i, (c, why))| UncheckedCite {
                id: v.unchecked_ids.get(i).cloned(),
                text: c.text.clone(),
                start: c.start,
                end: c.end,
                record: c.key.to_string().trim().to_string(),
                reason: why.to_string(),
            })
            .collect(),
        decisions: v
            .reviewed
            .iter()
            .map(|r| ReportDecision {
                id: r.id.clone(),
                kind: r.decision.kind.clone(),
                text: r.decision.claim.clone(),
                decision: r.decision.verdict,
                reviewer: r.decision.reviewer.clone(),
                created: r.decision.created,
                page: r.decision.page.clone(),
                note: r.decision.note.clone(),
                reason: r.decision.reason.clone(),
                applies: r.applies(),
                lapsed: r.lapsed.clone(),
            })
            .collect(),
    }
}

/// Exactly one JSON object, in draft order; offsets are byte offsets into the draft.
pub fn json(v: &Verification) -> String {
    serde_json::to_string(&report(v)).unwrap_or_else(|_| "{}".into())
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn md_escape(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}

/// Line numbers of byte offsets, from the draft's line starts found once: a report on a large
/// draft stays linear in its size.
struct Lines(Vec<usize>);

impl Lines {
    fn of(draft: &str) -> Lines {
        Lines(memchr::memchr_iter(b'\n', draft.as_bytes()).collect())
    }

    fn at(&self, offset: usize) -> usize {
        self.0.partition_point(|&nl| nl < offset) + 1
    }
}

/// A section listing the claims of one status with the reason for each.
fn reasons_table(s: &mut String, title: &str, v: &Verification, status: Status, lines: &Lines) {
    let _ = writeln!(s, "## {title}\n");
    let (head, rule) = id_head(v);
    let _ = writeln!(
        s,
        "| {head}line | kind | claim | why |\n|{rule}---|---|---|---|"
    );
    for (i, o) in v
        .outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.status == status)
    {
        let _ = writeln!(
            s,
            "| {}{} | {} | {} | {} |",
            id_cell(v, i),
            lines.at(o.claim.start),
            o.claim.kind.as_str(),
            md_escape(&o.claim.text),
            md_escape(o.reason.as_deref().unwrap_or(""))
        );
    }
    s.push('\n');
}

/// Every judged sentence with the judge's verdict, the quotation, and what lexrun made of it.
fn propositions_table(s: &mut String, outcomes: &[Outcome], lines: &Lines) {
    let judged: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.claim.kind == Kind::Proposition)
        .collect();
    if judged.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "## Propositions (each sentence judged against the pages it cites)\n"
    );
    let _ = writeln!(
        s,
        "| line | sentence | cited | judge | quotation | status |\n|---|---|---|---|---|---|"
    );
    for o in judged {
        let (verdict, quote) = o.judgement.as_ref().map_or(("not judged", ""), |j| {
            (j.verdict.as_str(), j.quote.as_str())
        });
        let status = match (&o.status, &o.source) {
            (Status::Supported, Some(l)) => format!(
                "supported: quoted from {}",
                l.bates
                    .clone()
                    .unwrap_or_else(|| format!("{} p. {}", l.file, l.page))
            ),
            _ => format!(
                "{}: {}",
                o.status.as_str(),
                o.reason.as_deref().unwrap_or_default()
            ),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {verdict} | {} | {} |",
            lines.at(o.claim.start),
            md_escape(&o.claim.text),
            md_escape(&super::proposition::names(&o.cited)),
            if quote.trim().is_empty() {
                String::new()
            } else {
                format!("“{}”", md_escape(quote))
            },
            md_escape(&status)
        );
    }
    s.push('\n');
}

/// Markdown, unsupported claims first.
pub fn markdown(draft_name: &str, draft: &str, v: &Verification) -> String {
    let (outcomes, files) = (&v.outcomes, &v.files);
    let lines = Lines::of(draft);
    let (supported, not_supported) = counts(outcomes);
    let unrecognized = count(outcomes, Status::Unrecognized);
    let miscited = count(outcomes, Status::Miscited);
    let unsupported = not_supported - unrecognized - miscited;
    let mut s = String::new();
    let _ = writeln!(s, "# Verification of {draft_name}\n");
    let by_hand = confirmed_by_hand(v).count();
    let verdict = if not_supported == 0 && files.iter().all(|f| f.problem.is_none()) {
        if by_hand > 0 {
            "Every claim is supported, by the sources or by a reviewer."
        } else {
            "Every claim is supported by the sources."
        }
    } else {
        "**Not ready to sign:** the claims below are not supported by the sources."
    };
    let mut also = String::new();
    if by_hand > 0 {
        also.push_str(&format!(" ({by_hand} confirmed by a reviewer)"));
    }
    let also_supported = std::mem::take(&mut also);
    if miscited > 0 {
        also.push_str(&format!(", {miscited} miscited"));
    }
    if unrecognized > 0 {
        also.push_str(&format!(", {unrecognized} unrecognized"));
    }
    let _ = writeln!(
        s,
        "{} claims checked: {supported} supported{also_supported}, {unsupported} unsupported{also}. {verdict}\n",
        outcomes.len()
    );
    unread_sources(&mut s, files);
    if unsupported > 0 {
        reasons_table(&mut s, "Unsupported", v, Status::Unsupported, &lines);
    }
    if miscited > 0 {
        miscited_table(&mut s, v, &lines);
    }
    if unrecognized > 0 {
        reasons_table(
            &mut s,
            "Unrecognized (could not be checked)",
            v,
            Status::Unrecognized,
            &lines,
        );
    }
    propositions_table(&mut s, outcomes, &lines);
    not_checked(&mut s, v, &lines);
    decisions_tables(&mut s, v, &lines);
    if supported > confirmed_by_hand(v).count() {
        supported_table(&mut s, v, &lines);
    }
    s
}

/// The id column's header and rule, when the claims have ids.
fn id_head(v: &Verification) -> (&'static str, &'static str) {
    if v.ids.is_empty() {
        ("", "")
    } else {
        ("id | ", "---|")
    }
}

fn id_cell(v: &Verification, i: usize) -> String {
    v.ids
        .get(i)
        .map_or(String::new(), |id| format!("`{id}` | "))
}

/// The decisions that make claims supported by a reviewer.
fn confirmed_by_hand(v: &Verification) -> impl Iterator<Item = &Reviewed> {
    v.reviewed
        .iter()
        .filter(|r| r.applies() && r.decision.verdict == Verdict::Confirmed)
}

/// The claims reviewers confirmed by hand, and every other decision met, applied or lapsed.
fn decisions_tables(s: &mut String, v: &Verification, lines: &Lines) {
    let confirmed: Vec<&Reviewed> = confirmed_by_hand(v).collect();
    if !confirmed.is_empty() {
        let _ = writeln!(s, "## Confirmed by a reviewer\n");
        let _ = writeln!(
            s,
            "| id | line | kind | claim | page | by | note |\n|---|---|---|---|---|---|---|"
        );
        for r in confirmed {
            let d = &r.decision;
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} | {} | {} |",
                r.id,
                lines.at(r.claim.start),
                d.kind,
                md_escape(&r.claim.text),
                md_escape(&d.page.as_ref().map_or(String::new(), |p| {
                    decisions::page_name(&p.file, p.page, p.bates.as_deref())
                })),
                md_escape(&decisions::by(d)),
                md_escape(d.note.as_deref().unwrap_or(""))
            );
        }
        s.push('\n');
    }
    let others: Vec<&Reviewed> = v
        .reviewed
        .iter()
        .filter(|r| !(r.applies() && r.decision.verdict == Verdict::Confirmed))
        .collect();
    if others.is_empty() {
        return;
    }
    let _ = writeln!(s, "## Other decisions\n");
    let _ = writeln!(
        s,
        "| id | line | kind | claim | decision | by | stands? |\n|---|---|---|---|---|---|---|"
    );
    for r in others {
        let d = &r.decision;
        let what = match (d.verdict, d.reason.as_deref()) {
            (Verdict::Waived, Some(why)) => format!("waived: {why}"),
            (verdict, _) => verdict.as_str().to_string(),
        };
        let stands = match (&r.lapsed, d.verdict) {
            (Some(why), _) => format!("lapsed: {why}"),
            (None, Verdict::Struck) => "applies: blocking until it is taken out".into(),
            (None, Verdict::Waived) => "applies: not a claim".into(),
            (None, _) => "applies".into(),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} | {} |",
            r.id,
            lines.at(r.claim.start),
            d.kind,
            md_escape(&r.claim.text),
            md_escape(&what),
            md_escape(&decisions::by(d)),
            md_escape(&stands)
        );
    }
    s.push('\n');
}

/// The sources that could not be read, and the pages with no text.
fn unread_sources(s: &mut String, files: &[SourceFile]) {
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
}

/// The claims found in the evidence, but not on the page cited, with where they are.
fn miscited_table(s: &mut String, v: &Verification, lines: &Lines) {
    let _ = writeln!(
        s,
        "## Miscited (in the evidence, but not on the page cited)\n"
    );
    let (head, rule) = id_head(v);
    let _ = writeln!(
        s,
        "| {head}line | kind | claim | cited | found on | fix |\n|{rule}---|---|---|---|---|---|"
    );
    for (i, o) in v
        .outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.status == Status::Miscited)
    {
        let place = |l: &Location| {
            format!(
                "{} p. {}{}{}",
                l.file,
                l.page,
                l.star.map_or(String::new(), |n| format!(", at *{n}")),
                l.bates
                    .as_ref()
                    .map_or(String::new(), |b| format!(" ({b})"))
            )
        };
        let cited: Vec<String> = o.cited.iter().map(place).collect();
        let _ = writeln!(
            s,
            "| {}{} | {} | {} | {} | {} | {} |",
            id_cell(v, i),
            lines.at(o.claim.start),
            o.claim.kind.as_str(),
            md_escape(&o.claim.text),
            md_escape(&cited.join("; ")),
            md_escape(&o.source.as_ref().map(place).unwrap_or_default()),
            md_escape(
                o.reason
                    .as_deref()
                    .and_then(|r| r.rsplit("; ").next())
                    .unwrap_or("")
            )
        );
    }
    s.push('\n');
}

/// The document's own dates, and the record cites whose record is not among the sources.
fn not_checked(s: &mut String, v: &Verification, lines: &Lines) {
    let own: Vec<String> = v
        .document_dates
        .iter()
        .map(|c| format!("{} (line {})", one_line(&c.text), lines.at(c.start)))
        .collect();
    if !own.is_empty() {
        let _ = writeln!(
            s,
            "Dates of the document itself, not checked against the evidence: {}\n",
            own.join("; ")
        );
    }
    let record: Vec<String> = v
        .unchecked
        .iter()
        .enumerate()
        .filter(|(_, (c, _))| c.kind == crate::claim_kind::Kind::Record)
        .map(|(i, (c, _))| {
            format!(
                "{} (line {}{})",
                one_line(&c.text),
                lines.at(c.start),
                v.unchecked_ids
                    .get(i)
                    .map_or(String::new(), |id| format!(", `{id}`"))
            )
        })
        .collect();
    // Exhibits the sources cannot locate, dates without a year: each with why.
    let others: Vec<String> = v
        .unchecked
        .iter()
        .filter(|(c, _)| c.kind != crate::claim_kind::Kind::Record)
        .map(|(c, why)| format!("{} (line {}): {why}", one_line(&c.text), lines.at(c.start)))
        .collect();
    if !others.is_empty() {
        let _ = writeln!(s, "Not checked: {}\n", others.join("; "));
    }
    if !record.is_empty() {
        let _ = writeln!(
            s,
            "Record cites not checked (the record they cite is not among the sources; add it to \
             check them): {}\n",
            record.join("; ")
        );
    }
}

/// The supported claims, with the page that supports each.
fn supported_table(s: &mut String, v: &Verification, lines: &Lines) {
    let by_hand: Vec<&str> = confirmed_by_hand(v).map(|r| r.id.as_str()).collect();
    let _ = writeln!(s, "## Supported\n");
    let _ = writeln!(
        s,
        "| line | kind | claim | source | page | Bates |\n|---|---|---|---|---|---|"
    );
    for (_, o) in v.outcomes.iter().enumerate().filter(|(i, o)| {
        o.status == Status::Supported
            && !v
                .ids
                .get(*i)
                .is_some_and(|id| by_hand.contains(&id.as_str()))
    }) {
        let (file, page, bates) =
            o.source
                .as_ref()
                .map_or((String::new(), String::new(), String::new()), |l| {
                    (
                        l.file.clone(),
                        match l.star {
                            Some(n) => format!("{} (at *{n})", l.page),
                            None => l.page.to_string(),
                        },
                        l.bates.clone().unwrap_or_default(),
                    )
                });
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {page} | {bates} |",
            lines.at(o.claim.start),
            o.claim.kind.as_str(),
            md_escape(&o.claim.text),
            md_escape(&file)
        );
    }
}
#[cfg(test)]
mod tests {
    use super::Lines;

    #[test]
    fn line_numbers_of_offsets() {
        let t = "a\nbb\n\nccc";
        let l = Lines::of(t);
        assert_eq!(
            [0, 1, 2, 4, 5, 6, 9].map(|o| l.at(o)),
            [1, 1, 2, 2, 3, 4, 4]
        );
    }
}
