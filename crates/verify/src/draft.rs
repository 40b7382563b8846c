//! Checking a draft: its claims found, looked up in the index of the evidence, and each
//! given its outcome, with the sentences that cite pages for a judge model.

use crate::cites::Allowed;
use crate::claim::{Claim, Key, Kind, Location, Outcome, Status};
use crate::evidence::{Evidence, SourceFile};
use crate::index::{Index, Wanted};
use crate::{extract, pinpoint, proposition, spans};

/// Finds every claim in a draft. `prefixes` are the Bates prefixes of the sources.
pub fn claims(draft: &str, prefixes: &[String]) -> Vec<Claim> {
    claims_allowing(draft, prefixes, &Allowed::default())
}

/// [`claims`], accepting reporter abbreviations beyond the catalogue.
pub fn claims_allowing(draft: &str, prefixes: &[String], allowed: &Allowed) -> Vec<Claim> {
    DraftClaims::of(draft, allowed).with_bates(draft, prefixes, &[])
}

/// A draft's claims that do not depend on the Bates prefixes (all but its Bates numbers and
/// the exhibits they pin), found once and completed for each set of prefixes.
struct DraftClaims {
    /// Cases, statutes, records, dates and amounts, in that order.
    all: Vec<Claim>,
    exhibits: Vec<Claim>,
    quotes: Vec<Claim>,
}

impl DraftClaims {
    fn of(draft: &str, allowed: &Allowed) -> DraftClaims {
        let cases = extract::citations(draft, allowed);
        // Record cites that a case citation or statute does not already cover.
        let mut records = extract::records(draft);
        {
            let authorities = spans::Spans::new(cases.iter().map(|c| (c.start, c.end)).collect());
            records.retain(|r| !authorities.overlaps(r.start, r.end));
        }
        let earlier: Vec<Claim> = cases.iter().chain(&records).cloned().collect();
        let statutes = extract::statutes_and_ids(draft, &earlier);
        {
            let statute_spans = spans::Spans::new(
                statutes
                    .iter()
                    .filter(|s| s.kind == Kind::Statute)
                    .map(|c| (c.start, c.end))
                    .collect(),
            );
            records.retain(|r| !statute_spans.overlaps(r.start, r.end));
        }
        let cites: Vec<(usize, usize)> = cases
            .iter()
            .chain(&statutes)
            .chain(&records)
            .map(|c| (c.start, c.end))
            .collect();
        let cites = spans::Spans::new(cites);
        let inside_cite = |c: &Claim| cites.contains(c.start, c.end);
        let mut all: Vec<Claim> = Vec::new();
        all.extend(cases.iter().cloned());
        all.extend(statutes.iter().cloned());
        all.extend(records.iter().cloned());
        // A year or date inside a citation is part of the citation, not a date claim.
        let dates: Vec<Claim> = extract::dates(draft)
            .into_iter()
            .filter(|c| !inside_cite(c))
            .collect();
        let amounts: Vec<Claim> = extract::amounts(draft)
            .into_iter()
            .filter(|c| !inside_cite(c))
            .collect();
        let taken: Vec<(usize, usize)> = cases
            .iter()
            .chain(&statutes)
            .chain(&records)
            .chain(&dates)
            .chain(&amounts)
            .map(|c| (c.start, c.end))
            .collect();
        let yearless = extract::yearless_dates(draft, &dates, &taken);
        all.extend(dates);
        all.extend(yearless);
        all.extend(amounts);
        DraftClaims {
            all,
            exhibits: extract::exhibits(draft),
            quotes: extract::quotes(draft),
        }
    }

    /// Every claim, with the Bates numbers of these prefixes, in draft order. Numbers with an
    /// `ignored` prefix that is not a Bates prefix (`BD-1073`, an invoice's) are no claims.
    fn with_bates(&self, draft: &str, prefixes: &[String], ignored: &[String]) -> Vec<Claim> {
        let mut all = self.all.clone();
        let dates_and_amounts: Vec<(usize, usize)> = all.iter().map(|c| (c.start, c.end)).collect();
        let mut bates = extract::bates(draft, prefixes, &dates_and_amounts);
        bates.retain(|b| {
            let prefix: String = b
                .text
                .chars()
                .take_while(char::is_ascii_alphabetic)
                .collect();
            !(matches!(b.key, Key::Unresolved(_))
                && ignored.iter().any(|p| p.eq_ignore_ascii_case(&prefix)))
        });
        let mut exhibits = self.exhibits.clone();
        // An exhibit and the Bates number that pins it (`Ex. C, ACME 000014`, `Ex. 3 at
        // KES-0000123`) are one cite: the Bates number's, written with its exhibit.
        exhibits.retain(|e| {
            if !matches!(e.key, Key::Exhibit { pages: None, .. }) {
                return true;
            }
            let pinned = bates.iter_mut().find(|b| {
                b.start >= e.end && {
                    let between: Vec<&str> = draft[e.end..b.start].split_whitespace().collect();
                    matches!(between.as_slice(), [","] | ["at"] | [",", "at"] | [",at"])
                }
            });
            match pinned {
                Some(b) => {
                    b.start = e.start;
                    b.text = draft[e.start..b.end].to_string();
                    false
                }
                None => true,
            }
        });
        all.extend(bates);
        all.extend(exhibits);
        all.extend(self.quotes.iter().cloned());
        all.sort_by_key(|c| (c.start, c.kind));
        all
    }
}

/// The outcome of checking a draft: one outcome per claim, in draft order, and the sources
/// read (with any that could not be).
pub struct Verification {
    pub outcomes: Vec<Outcome>,
    pub files: Vec<SourceFile>,
    /// The draft's own dates (its execution or jurat), which are not claims about the
    /// evidence.
    pub document_dates: Vec<Claim>,
    /// Record cites (`Compl. ¶ 59`, `Tr. 45:12`) and the `Id.`s that repeat them, and exhibit
    /// cites the sources cannot locate, with why they were not checked: the record or exhibit
    /// they cite is not among the sources. Listed, never counted as supported.
    pub unchecked: Vec<(Claim, String)>,
    /// Every sentence that cites pages, with those pages: what a judge model checks when a
    /// `propositions` rule applies (its verdicts join `outcomes`).
    pub propositions: Vec<proposition::Proposition>,
    /// Each outcome's claim id, when the verification has been given them
    /// ([`super::decisions::apply`]).
    pub ids: Vec<String>,
    /// Each record cite not checked's claim id, likewise.
    pub unchecked_ids: Vec<String>,
    /// Every claim's id and sentence as [`super::decisions::apply`] gave them, waived claims
    /// included: a decision made on this verification names its claim by these.
    pub refs: Vec<super::decisions::ClaimRef>,
    /// The reviewers' decisions met: applied, or lapsed with the reason.
    pub reviewed: Vec<super::decisions::Reviewed>,
}

/// Checks every claim of a draft against the evidence. The evidence is read once, streaming,
/// recording only what the draft's claims need; Bates numbers are then classified with the
/// prefixes declared and those found stamped on the pages.
pub fn verify(draft: &str, evidence: &Evidence) -> Verification {
    verify_indexed(draft, evidence).0
}

pub(super) fn verify_indexed(draft: &str, evidence: &Evidence) -> (Verification, Index) {
    let allowed = &evidence.allowed_reporters;
    // What the draft claims is found once; only its Bates numbers are read again, with the
    // prefixes the evidence is stamped with.
    let found = DraftClaims::of(draft, allowed);
    let ignored = &evidence.ignored_prefixes;
    let mut wanted = Wanted::of(&found.with_bates(draft, &evidence.declared_prefixes, ignored));
    wanted.allowed = allowed.clone();
    let index = Index::build(&wanted, evidence);
    // A prefix the workflow ignores is no Bates prefix, even where a page seems stamped with
    // it (an invoice number at the foot of an email), unless it was declared.
    let prefixes: Vec<String> = index
        .bates_prefixes()
        .into_iter()
        .filter(|p| {
            evidence.declared_prefixes.contains(p)
                || !ignored.iter().any(|i| i.eq_ignore_ascii_case(p))
        })
        .collect();
    let all = found.with_bates(draft, &prefixes, ignored);
    drop(found);
    let own = pinpoint::own_dates(draft, &all);
    let pinpoint::Binding {
        facts: binding,
        reaches,
    } = pinpoint::bind_all_with(draft, &all, &|c| {
        index.is_opinion_cite(&c.key) || index.is_record_cite(&c.key)
    });
    let propositions = reaches
        .iter()
        .map(|r| proposition::Proposition::new(draft, r, &all, &index))
        .collect();
    let cited: Vec<Vec<((usize, u32), Location)>> = binding
        .iter()
        .map(|cites| {
            cites
                .iter()
                .flat_map(|&c| index.cited_pages(&all[c].key))
                .collect()
        })
        .collect();
    // A fact cited only to numbers no source carries (`on January 3, 2024 (RTX 3060)`) is
    // not supported by finding it elsewhere: its cite is the fabrication. Only where the
    // sources carry Bates numbers: of sources not yet stamped, every Bates cite is unsupported
    // on its own, and the facts are checked where they are.
    let stamped = !prefixes.is_empty();
    let invented: Vec<Option<String>> = binding
        .iter()
        .map(|cites| {
            (stamped
                && !cites.is_empty()
                && cites.iter().all(|&c| {
                    all[c].kind == Kind::Bates && matches!(all[c].key, Key::Unresolved(_))
                }))
            .then(|| {
                cites
                    .iter()
                    .map(|&c| format!("`{}`", all[c].text.trim()))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        })
        .collect();
    let mut outcomes = Vec::with_capacity(all.len());
    let mut document_dates = Vec::new();
    let mut unchecked = Vec::new();
    for (((claim, own), cited), invented) in all.into_iter().zip(own).zip(cited).zip(invented) {
        if claim.kind == Kind::Record && index.is_record_cite(&claim.key) {
            // A cite to a filing among the sources: its paragraphs must be the filing's.
            outcomes.push(index.check_record(claim));
        } else if claim.kind == Kind::Record {
            let why = record_unchecked(&claim.key);
            unchecked.push((claim, why));
        } else if let (Kind::Date, Key::Unresolved(why)) = (claim.kind, &claim.key) {
            // A date without a year that nothing before it dates: listed, never silent.
            let why = why.clone();
            unchecked.push((claim, why));
        } else if let Some(why) = index.exhibit_unlocated(&claim.key) {
            // An exhibit the sources neither hold nor show to be missing: listed, unchecked.
            unchecked.push((claim, why));
        } else if own {
            document_dates.push(claim);
        } else {
            let name = full_case_name(draft, &claim);
            let mut o = index.check_cited(claim, &cited);
            if o.status != Status::Unrecognized && matches!(o.claim.key, Key::Case { .. }) {
                index.check_case_behind(&mut o, name.as_deref());
            }
            if let (Some(names), Status::Supported) = (invented, o.status) {
                o.status = Status::Unsupported;
                o.reason = Some(format!(
                    "cited to {names}, which no source carries; cite the page that shows it"
                ));
                o.source = None;
            }
            outcomes.push(o);
        }
    }
    // What each case is cited for: listed, for `lexrun verify` judges no proposition.
    let mut held: Vec<(Claim, String)> = outcomes
        .iter()
        .filter_map(|o| cited_for(draft, &o.claim))
        .collect();
    unchecked.append(&mut held);
    unchecked.sort_by_key(|(c, _)| c.start);
    let v = Verification {
        outcomes,
        files: index.files().to_vec(),
        document_dates,
        unchecked,
        propositions,
        ids: Vec::new(),
        unchecked_ids: Vec::new(),
        refs: Vec::new(),
        reviewed: Vec::new(),
    };
    (v, index)
}

/// Signals of a parenthetical that says what a case holds.
const HOLDINGS: &[&str] = &[
    "holding",
    "finding",
    "concluding",
    "explaining",
    "recognizing",
    "noting",
    "stating",
    "ruling",
    "reasoning",
    "affirming",
    "reversing",
];

/// The proposition a full case citation is cited for, as a parenthetical right after it
/// (`212 F.3d 1039 (7th Cir. 2000) (holding that …)`): a claim about the authority that only
/// a judge model reading it can check, with why it is listed instead.
fn cited_for(draft: &str, claim: &Claim) -> Option<(Claim, String)> {
    if claim.kind != Kind::Citation || !matches!(claim.key, Key::Case { .. }) {
        return None;
    }
    let after = &draft[claim.end..];
    let open = claim.end + (after.len() - after.trim_start().len());
    let rest = &draft[open..];
    let body = rest.strip_prefix('(')?;
    let word: String = body
        .chars()
        .take_while(|c| c.is_alphabetic())
        .flat_map(char::to_lowercase)
        .collect();
    if !HOLDINGS.contains(&word.as_str()) {
        return None;
    }
    // The parenthetical's end, brackets inside it balanced; none within 1,000 bytes: no claim.
    let mut depth = 0usize;
    let mut end = None;
    for (i, c) in rest.char_indices().take(1000) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(open + i + 1);
                    break;
                }
            }
            _ => {}
        }
    }
    let end = end?;
    let cite = claim.text.trim();
    Some((
        Claim::new(Kind::Citation, draft, open, end, Key::Proposition),
        format!(
            "what `{cite}` is cited for is not checked: lexrun finds the case at its page, \
             not what it holds; read the authority to confirm it"
        ),
    ))
}

/// The case name a full citation is written with; `None` for a short form, `Id.`, `supra`
/// or a citation without a name before it.
fn full_case_name(draft: &str, claim: &Claim) -> Option<String> {
    let head = claim.text.split(',').next().unwrap_or("");
    if !claim.text.starts_with(|c: char| c.is_ascii_digit()) || head.contains(" at ") {
        return None;
    }
    crate::names::name_before(draft, claim.start)
}

/// Why a record cite is listed rather than checked.
fn record_unchecked(key: &Key) -> String {
    match key {
        Key::Record { document, .. } if document.is_empty() => {
            "a record cite whose filing the draft does not name; cite the filing and its paragraph"
                .into()
        }
        Key::Record { document, .. } => format!(
            "a cite to the record (`{document}`), which is not among the sources; add it to the \
             sources to check the cite"
        ),
        _ => "not a record cite".into(),
    }
}
