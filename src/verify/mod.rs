//! The verifier: every citation, statute, date, Bates number, quotation and amount in a draft,
//! checked against the evidence, each with its byte span and the page that supports it — or
//! the reason nothing does.
//!
//! Needs only text: `evidence` reads sources (every kind, through `sources`) into pages,
//! `extract` finds claims, `index` looks them up, `report` writes what an attorney reads.

pub mod catalogue;
pub mod cites;
pub mod evidence;
mod exact;
pub mod extract;
mod index;
pub mod injection;
mod needs;
mod normalize;
pub mod pinpoint;
pub mod proposition;
pub mod report;
pub mod sentences;
mod spans;
pub mod taint;
mod wordkeys;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use cites::Allowed;
pub use evidence::{Doc, DocSource, Evidence, SourceFile};
pub use exact::hold_quotes_exactly;
pub use index::{Index, Wanted};
pub use normalize::normalize;

pub use crate::claim_kind::Kind;

/// What a claim asserts, in canonical form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Key {
    Case {
        volume: u32,
        reporter: String,
        page: u32,
        pin: Option<String>,
        year: Option<u16>,
    },
    Statute {
        code: String,
        section: String,
    },
    Date {
        year: i32,
        month: u32,
        day: u32,
    },
    Bates {
        prefix: String,
        number: u64,
    },
    BatesRange {
        prefix: String,
        from: u64,
        to: u64,
    },
    /// A cite to an exhibit (`Ex. B at 2`, `Exhibit 3`), resolved through the binder's slip
    /// sheets or its exhibit index: the exhibit's label and, if given, its pages.
    Exhibit {
        label: String,
        pages: Option<(u32, u32)>,
    },
    Quote {
        text: String,
    },
    Money {
        cents: i64,
    },
    Percent {
        thousandths: i64,
    },
    /// A claim that cannot be checked as written (a short form with nothing to refer to, a
    /// Bates number with an undeclared prefix); always unsupported, with this reason.
    Unresolved(String),
    /// Text shaped like a citation whose reporter no catalogue knows; never supported, with
    /// this reason.
    Unrecognized(String),
    /// A sentence that cites pages: what it says is judged against them
    /// ([`proposition`]), not looked up.
    Proposition,
    /// A record cite: the filing or transcript (squashed: `compl`, `leedecl`, `tr`, `er`)
    /// and the paragraphs, pages or lines cited (`¶9`, `45:12-18`, `2-145`).
    Record {
        document: String,
        pin: String,
    },
}

impl Key {
    /// What every spelling of the same claim shares, whatever its pin cite or year: the
    /// claim's identity for the ledger (`citation:531 US 98`, `date:2024-01-05`).
    pub fn identity(&self, kind: Kind) -> String {
        match self {
            Key::Case {
                volume,
                reporter,
                page,
                ..
            } => format!("{}:{volume} {reporter} {page}", kind.as_str()),
            Key::Statute { code, section } => format!(
                "{}:{code} § {}",
                kind.as_str(),
                section.split('(').next().unwrap_or(section)
            ),
            other => format!("{}:{other}", kind.as_str()),
        }
    }

    /// The same citation at another pin cite (`Id. at 5`, `531 U.S. at 99`).
    pub fn with_pin(&self, pin: Option<String>) -> Key {
        match (self, pin) {
            (
                Key::Case {
                    volume,
                    reporter,
                    page,
                    year,
                    ..
                },
                Some(p),
            ) => Key::Case {
                volume: *volume,
                reporter: reporter.clone(),
                page: *page,
                pin: Some(p),
                year: *year,
            },
            (Key::Record { document, .. }, Some(p)) => Key::Record {
                document: document.clone(),
                pin: p,
            },
            (k, _) => k.clone(),
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Case {
                volume,
                reporter,
                page,
                pin,
                year,
            } => {
                write!(f, "{volume} {reporter} {page}")?;
                if let Some(p) = pin {
                    write!(f, ", {p}")?;
                }
                if let Some(y) = year {
                    write!(f, " ({y})")?;
                }
                Ok(())
            }
            Key::Statute { code, section } => write!(f, "{code} § {section}"),
            Key::Date {
                year,
                month,
                day: 0,
            } => write!(f, "{year:04}-{month:02}"),
            Key::Date { year, month, day } => write!(f, "{year:04}-{month:02}-{day:02}"),
            Key::Bates { prefix, number } => write!(f, "{prefix}{number:06}"),
            Key::BatesRange { prefix, from, to } => write!(f, "{prefix}{from:06}–{prefix}{to:06}"),
            Key::Exhibit { label, pages } => match pages {
                Some((a, b)) if a == b => write!(f, "Exhibit {label} at {a}"),
                Some((a, b)) => write!(f, "Exhibit {label} at {a}-{b}"),
                None => write!(f, "Exhibit {label}"),
            },
            Key::Quote { text } => f.write_str(text),
            Key::Money { cents } => write!(f, "${}.{:02}", cents / 100, cents % 100),
            Key::Percent { thousandths } => {
                let v = *thousandths as f64 / 1000.0;
                write!(f, "{v}%")
            }
            Key::Unresolved(why) | Key::Unrecognized(why) => f.write_str(why),
            Key::Proposition => f.write_str("proposition"),
            Key::Record { document, pin } => write!(f, "{document} {pin}"),
        }
    }
}

/// One checkable statement in a draft.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub kind: Kind,
    /// The claim as written.
    pub text: String,
    /// Byte offsets into the draft.
    pub start: usize,
    pub end: usize,
    pub key: Key,
}

impl Claim {
    /// The claim's identity for the ledger ([`Key::identity`]; a claim that cannot be
    /// checked is known by its words).
    pub fn identity(&self) -> String {
        match &self.key {
            Key::Unresolved(_) | Key::Unrecognized(_) => {
                format!("{}:{}", self.kind.as_str(), self.text.trim())
            }
            k => k.identity(self.kind),
        }
    }

    pub fn new(kind: Kind, source: &str, start: usize, end: usize, key: Key) -> Claim {
        Claim {
            kind,
            text: source[start..end].to_string(),
            start,
            end,
            key,
        }
    }
}

/// Where a claim is supported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Location {
    pub file: String,
    pub page: u32,
    pub bates: Option<String>,
    /// The page of a reported opinion the place is on, by the star markers of the source that
    /// carries it (`*629` in the text: page 629 begins there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub star: Option<u32>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub snippet: String,
    /// Where the match is in the page's normalised text (byte offsets), for a review that
    /// shows the page with the matched words highlighted; empty for a Bates stamp.
    #[serde(skip)]
    pub span: (usize, usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Supported,
    Unsupported,
    /// Shaped like a citation, but in no catalogue: it cannot be checked, so it is never
    /// passed silently.
    Unrecognized,
    /// In the evidence, but not on the page its sentence cites.
    Miscited,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Supported => "supported",
            Status::Unsupported => "unsupported",
            Status::Unrecognized => "unrecognized",
            Status::Miscited => "miscited",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub claim: Claim,
    pub status: Status,
    /// Where the claim is supported; for a miscited claim, where it really is.
    pub source: Option<Location>,
    pub reason: Option<String>,
    /// The pages the claim's sentence cites (empty when it cites none).
    pub cited: Vec<Location>,
    /// For a proposition: the judge's verdict and quotation.
    pub judgement: Option<Judgement>,
}

/// What a judge model said of a proposition, as it said it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Judgement {
    /// `supported`, `contradicted` or `not_found`.
    pub verdict: String,
    /// The verbatim quotation the judge gave from the cited pages.
    pub quote: String,
    pub reason: String,
}

/// Finds every claim in a draft. `prefixes` are the Bates prefixes of the sources.
pub fn claims(draft: &str, prefixes: &[String]) -> Vec<Claim> {
    claims_allowing(draft, prefixes, &Allowed::default())
}

/// [`claims`], accepting reporter abbreviations beyond the catalogue.
pub fn claims_allowing(draft: &str, prefixes: &[String], allowed: &Allowed) -> Vec<Claim> {
    DraftClaims::of(draft, allowed).with_bates(draft, prefixes)
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
        all.extend(
            extract::dates(draft)
                .into_iter()
                .filter(|c| !inside_cite(c)),
        );
        all.extend(
            extract::amounts(draft)
                .into_iter()
                .filter(|c| !inside_cite(c)),
        );
        DraftClaims {
            all,
            exhibits: extract::exhibits(draft),
            quotes: extract::quotes(draft),
        }
    }

    /// Every claim, with the Bates numbers of these prefixes, in draft order.
    fn with_bates(&self, draft: &str, prefixes: &[String]) -> Vec<Claim> {
        let mut all = self.all.clone();
        let dates_and_amounts: Vec<(usize, usize)> = all.iter().map(|c| (c.start, c.end)).collect();
        let mut bates = extract::bates(draft, prefixes, &dates_and_amounts);
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
    /// Record cites (`Compl. ¶ 59`, `Tr. 45:12`) and the `Id.`s that repeat them, with why
    /// they were not checked: the record they cite is not among the sources. Listed, never
    /// counted as supported.
    pub unchecked: Vec<(Claim, String)>,
    /// Every sentence that cites pages, with those pages: what a judge model checks when a
    /// `propositions` rule applies (its verdicts join `outcomes`).
    pub propositions: Vec<proposition::Proposition>,
}

/// Checks every claim of a draft against the evidence. The evidence is read once, streaming,
/// recording only what the draft's claims need; Bates numbers are then classified with the
/// prefixes declared and those found stamped on the pages.
/// Compiles the verifier's patterns now (about 90 ms), so that a later check is quick; a run
/// calls this in the background while its first model calls are under way.
pub fn warm() {
    let sample = "Doe v. Roe, 1 U.S. 1, 2 (2000); 28 U.S.C. § 1332(a); Fed. R. Civ. P. 12(b)(6); \
                  January 5, 2024; 01/05/2024; $1.00; 5%; SMITH000001; \"a quote\"; id. at 2.";
    let mut ev = Evidence::new(vec!["SMITH".into()]);
    ev.add_pages("warm".into(), vec![sample.into()]);
    let _ = verify(sample, &ev);
}

pub fn verify(draft: &str, evidence: &Evidence) -> Verification {
    verify_indexed(draft, evidence).0
}

/// [`verify`], where support that only files which entered the matter after a model wrote
/// the claim give does not count (see [`taint`]).
pub fn verify_with(draft: &str, evidence: &Evidence, taint: &taint::Taint) -> Verification {
    let (mut v, index) = verify_indexed(draft, evidence);
    taint::apply(&mut v, &index, draft, evidence, taint);
    v
}

/// [`verify_with`], where what the ledger knows is asked for only once the evidence has been
/// read (so that `taint` can use what an [`evidence::Observer`] saw of each file); its error
/// stops the check.
pub fn verify_then<E>(
    draft: &str,
    evidence: &Evidence,
    taint: impl FnOnce() -> Result<taint::Taint, E>,
) -> Result<Verification, E> {
    let (mut v, index) = verify_indexed(draft, evidence);
    let t = taint()?;
    taint::apply(&mut v, &index, draft, evidence, &t);
    Ok(v)
}

fn verify_indexed(draft: &str, evidence: &Evidence) -> (Verification, Index) {
    let allowed = &evidence.allowed_reporters;
    // What the draft claims is found once; only its Bates numbers are read again, with the
    // prefixes the evidence is stamped with.
    let found = DraftClaims::of(draft, allowed);
    let mut wanted = Wanted::of(&found.with_bates(draft, &evidence.declared_prefixes));
    wanted.allowed = allowed.clone();
    let index = Index::build(&wanted, evidence);
    let all = found.with_bates(draft, &index.bates_prefixes());
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
    let stamped = !index.bates_prefixes().is_empty();
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
        } else if own {
            document_dates.push(claim);
        } else {
            let mut o = index.check_cited(claim, &cited);
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
    let v = Verification {
        outcomes,
        files: index.files().to_vec(),
        document_dates,
        unchecked,
        propositions,
    };
    (v, index)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_inside_a_citation_belongs_to_the_citation() {
        let c = claims(
            "Doe v. Roe, 123 F.3d 456 (9th Cir. Jan. 5, 1999), decided later.",
            &[],
        );
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].kind, Kind::Citation);
        assert_eq!(c[0].key.to_string(), "123 f3d 456 (1999)");
    }

    #[test]
    fn offsets_are_byte_offsets_into_the_draft() {
        let draft = "Café — paid $5.00 on 1/2/2024 (SMITH000001).";
        for c in claims(draft, &["SMITH".to_string()]) {
            assert_eq!(&draft[c.start..c.end], c.text);
        }
    }
}
