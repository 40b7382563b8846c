//! Propositions: a sentence that cites pages must be what those pages say, even when it holds
//! no date, amount or quotation to look up ("The landlord never scheduled a contractor
//! (ALV000005)"). A judge model reads only the cited pages and gives a verdict with a verbatim
//! quotation; lexrun accepts `supported` only when that quotation is on a cited page, so a
//! judge cannot invent support.
//!
//! This module needs only text: which stretches cite which pages, the judge's prompt and JSON
//! schema, reading its answer, and holding the answer to the pages. The call itself is the
//! caller's (a workflow's `verify` block names the judge).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::claim::{Claim, Judgement, Key, Kind, Location, Outcome, Status};
use super::index::Index;
use super::normalize::normalize;
use super::pinpoint::Reach;

/// A quotation must have at least this many words to show support: `the` is on every page.
pub const MIN_QUOTE_WORDS: usize = 3;

/// A stretch of the draft that cites pages, with those pages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proposition {
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// The pages its cites name that some source has, in source order, each once.
    pub cited: Vec<Location>,
    /// Its cites that name no page of the sources, as written.
    pub dangling: Vec<String>,
}

impl Proposition {
    pub(super) fn new(draft: &str, r: &Reach, claims: &[Claim], index: &Index) -> Proposition {
        let mut pages: Vec<((usize, u32), Location)> = Vec::new();
        let mut dangling = Vec::new();
        for &c in &r.cites {
            let found = index.cited_pages(&claims[c].key);
            if found.is_empty() {
                dangling.push(claims[c].text.clone());
            }
            pages.extend(found);
        }
        pages.sort_by_key(|(at, _)| *at);
        pages.dedup_by_key(|(at, _)| *at);
        Proposition {
            start: r.start,
            end: r.end,
            text: draft[r.start..r.end].to_string(),
            cited: pages
                .into_iter()
                .map(|(_, mut l)| {
                    l.snippet.clear();
                    l.span = (0, 0);
                    l
                })
                .collect(),
            dangling,
        }
    }

    /// The proposition as a claim of the report.
    pub fn claim(&self) -> Claim {
        Claim {
            kind: Kind::Proposition,
            text: self.text.clone(),
            start: self.start,
            end: self.end,
            key: Key::Proposition,
        }
    }

    /// The cited pages as a reader names them.
    pub fn pages_named(&self) -> String {
        names(&self.cited)
    }
}

/// Pages by Bates number, else file and page.
pub fn names(pages: &[Location]) -> String {
    pages.iter().map(name).collect::<Vec<_>>().join(", ")
}

fn name(l: &Location) -> String {
    l.bates
        .clone()
        .unwrap_or_else(|| format!("{} page {}", l.file, l.page))
}

/// One call of the judge: a set of cited pages and the propositions citing exactly that set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    pub pages: Vec<Location>,
    /// Indices into the propositions.
    pub members: Vec<usize>,
}

/// The propositions grouped by the set of pages they cite, one batch per distinct set, in
/// draft order of each set's first proposition. Propositions citing no page of the sources
/// are in no batch (see [`uncited`]).
pub fn batches(props: &[Proposition]) -> Vec<Batch> {
    let mut order: Vec<Vec<(String, u32)>> = Vec::new();
    let mut by_set: BTreeMap<Vec<(String, u32)>, Batch> = BTreeMap::new();
    for (i, p) in props.iter().enumerate() {
        if p.cited.is_empty() {
            continue;
        }
        let set: Vec<(String, u32)> = p.cited.iter().map(|l| (l.file.clone(), l.page)).collect();
        by_set
            .entry(set.clone())
            .or_insert_with(|| {
                order.push(set);
                Batch {
                    pages: p.cited.clone(),
                    members: Vec::new(),
                }
            })
            .members
            .push(i);
    }
    order
        .into_iter()
        .filter_map(|k| by_set.remove(&k))
        .collect()
}

/// A proposition whose cites name no page of the sources: nothing to judge it against.
pub fn uncited(p: &Proposition) -> Outcome {
    Outcome {
        claim: p.claim(),
        status: Status::Unsupported,
        source: None,
        reason: Some(format!(
            "it cites {}, which no page of the sources is stamped with, so nothing can support it",
            p.dangling.join(", ")
        )),
        cited: Vec::new(),
        judgement: None,
    }
}

/// A page the judge reads: where it is and its text as extracted.
#[derive(Clone, Debug)]
pub struct Page {
    pub location: Location,
    pub text: String,
}

/// The judge's JSON schema for `n` statements: an object keyed by statement number (`"1"`,
/// `"2"`, …), every key required and no other allowed, so that a server constraining its
/// output to the schema gives exactly one verdict per statement.
pub fn schema(n: usize) -> Value {
    let verdict = json!({
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["supported", "contradicted", "not_found"]},
            "quote": {"type": "string"},
            "reason": {"type": "string"}
        },
        "required": ["verdict", "quote", "reason"],
        "additionalProperties": false
    });
    let keys: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    let properties: serde_json::Map<String, Value> =
        keys.iter().map(|k| (k.clone(), verdict.clone())).collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": keys,
        "additionalProperties": false
    })
}

/// The judge's prompt: the cited pages first (a stable prefix the server's prompt cache
/// reuses), then the statements, numbered from 1, then what to answer.
pub fn prompt(pages: &[Page], statements: &[&str]) -> String {
    let mut s = String::from(
        "You check statements from a legal draft against the evidence pages they cite. Read only these pages.\n\n",
    );
    for (i, p) in pages.iter().enumerate() {
        let l = &p.location;
        s.push_str(&format!(
            "=== Page {} of {}: {} page {}{} ===\n{}\n\n",
            i + 1,
            pages.len(),
            l.file,
            l.page,
            l.bates
                .as_ref()
                .map(|b| format!(", Bates {b}"))
                .unwrap_or_default(),
            p.text.trim_end()
        ));
    }
    s.push_str("=== Statements ===\n");
    for (i, t) in statements.iter().enumerate() {
        s.push_str(&format!("{}. {}\n", i + 1, one_line(t)));
    }
    s.push_str(
        "\nFor each statement give one verdict:\n\
         - \"supported\": the pages say it. Copy into `quote`, word for word, the passage of the pages that says it.\n\
         - \"contradicted\": the pages say otherwise. Copy the passage that contradicts it into `quote`.\n\
         - \"not_found\": the pages do not say it. Leave `quote` empty.\n\
         Say why in `reason`, in one sentence.\n\
         Reply with only a JSON object with one entry per statement, keyed by its number: {\"1\": {\"verdict\": \"supported\", \"quote\": \"…\", \"reason\": \"…\"}, \"2\": …}.\n",
    );
    s
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A verdict as the judge gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub verdict: VerdictKind,
    pub quote: String,
    pub reason: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerdictKind {
    Supported,
    Contradicted,
    NotFound,
}

impl VerdictKind {
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Supported => "supported",
            VerdictKind::Contradicted => "contradicted",
            VerdictKind::NotFound => "not_found",
        }
    }
}

/// Reads the judge's answer for `n` statements: one verdict per statement, in order. `Err`
/// says what is wrong with it, for a corrective retry and then the failure.
pub fn parse(answer: &str, n: usize) -> Result<Vec<Verdict>, String> {
    let t = answer.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|x| x.strip_suffix("```"))
        .unwrap_or(t)
        .trim();
    let v: Value = serde_json::from_str(t).map_err(|e| format!("it is not JSON ({e})"))?;
    let obj = v
        .as_object()
        .ok_or("it is not a JSON object keyed by statement number")?;
    if let Some(k) = obj
        .keys()
        .find(|k| k.parse::<usize>().map_or(true, |i| i == 0 || i > n))
    {
        return Err(format!(
            "it has an entry `{k}`, but the statements are numbered 1 to {n}"
        ));
    }
    (1..=n)
        .map(|i| {
            let item = obj
                .get(&i.to_string())
                .ok_or_else(|| format!("statement {i} has no verdict"))?;
            let verdict = match item.get("verdict").and_then(Value::as_str) {
                Some("supported") => VerdictKind::Supported,
                Some("contradicted") => VerdictKind::Contradicted,
                Some("not_found") => VerdictKind::NotFound,
                Some(other) => {
                    return Err(format!(
                        "statement {i}'s verdict is `{other}`, not supported, contradicted or not_found"
                    ))
                }
                None => return Err(format!("statement {i} has no verdict")),
            };
            let text = |f: &str| {
                item.get(f)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            Ok(Verdict {
                verdict,
                quote: text("quote"),
                reason: text("reason"),
            })
        })
        .collect()
}

/// Text as compared: normalised as every match is, and without case.
fn flat(s: &str) -> String {
    normalize(s).to_lowercase()
}

/// The judge's quotation without the marks and ellipses around it.
fn bare(q: &str) -> &str {
    q.trim()
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '“' | '”' | '‘' | '’' | '…' | '.' | ' '))
}

/// Holds a verdict to the cited pages. `supported` stands only if the quotation is on one of
/// them; `elsewhere` finds a quotation on any page of the evidence, to say where a misplaced
/// one really is.
pub fn ground(
    p: &Proposition,
    v: &Verdict,
    pages: &[Page],
    elsewhere: &dyn Fn(&str) -> Option<Location>,
) -> Outcome {
    let mut o = Outcome {
        claim: p.claim(),
        status: Status::Unsupported,
        source: None,
        reason: None,
        cited: p.cited.clone(),
        judgement: Some(Judgement {
            verdict: v.verdict.as_str().into(),
            quote: v.quote.clone(),
            reason: v.reason.clone(),
        }),
    };
    let quote = bare(&v.quote);
    let said = |why: &str| {
        if v.reason.trim().is_empty() {
            why.to_string()
        } else {
            format!("{why}: {}", one_line(&v.reason))
        }
    };
    match v.verdict {
        VerdictKind::NotFound => {
            o.reason = Some(said(&format!(
                "the judge found nothing on the cited {} that says this",
                plural_pages(p)
            )));
        }
        VerdictKind::Contradicted => {
            let mut why = said(if p.cited.len() == 1 {
                "the cited page contradicts it"
            } else {
                "the cited pages contradict it"
            });
            if !quote.is_empty() {
                why.push_str(&format!(" (\"{}\")", one_line(quote)));
            }
            o.reason = Some(why);
        }
        VerdictKind::Supported => {
            let words = quote.split_whitespace().count();
            let q = flat(quote);
            if words < MIN_QUOTE_WORDS {
                o.reason = Some(format!(
                    "the judge said supported but quoted {}; a quotation of at least {MIN_QUOTE_WORDS} words from a cited page is needed",
                    if words == 0 { "nothing".to_string() } else { format!("only \"{}\"", one_line(quote)) }
                ));
            } else if let Some((page, check)) = on_cited_page(p, pages, &q) {
                match check {
                    Ok(()) => {
                        o.status = Status::Supported;
                        let mut at = page.location.clone();
                        at.snippet = one_line(quote);
                        o.source = Some(at);
                    }
                    Err(why) => o.reason = Some(why),
                }
            } else if let Some(at) = elsewhere(&q) {
                o.reason = Some(format!(
                    "the judge's quotation is on {}, not on the cited {} ({}); cite {} if it says this",
                    name(&at),
                    plural_pages(p),
                    p.pages_named(),
                    name(&at)
                ));
            } else {
                o.reason = Some(format!(
                    "the judge said supported, but its quotation is on none of the cited pages ({}) or any other page of the sources",
                    p.pages_named()
                ));
            }
        }
    }
    o
}

/// The cited page holding the quotation `q` (flat), and whether it shows the statement: it
/// must say most of it, and not in a passage addressed to a model (whatever a page tells the
/// judge, only its evidence counts).
fn on_cited_page<'a>(
    p: &Proposition,
    pages: &'a [Page],
    q: &str,
) -> Option<(&'a Page, Result<(), String>)> {
    use super::injection;
    let mut found = None;
    for pg in pages {
        let text = flat(&pg.text);
        if !text.contains(q) {
            continue;
        }
        let check = if let Some(passage) = injection::passage_addressing_model(&text) {
            Err(format!(
                "the judge's quotation is on {}, which speaks to the model (\"{}\"): a page that gives the judge instructions shows nothing; read it yourself",
                name(&pg.location),
                one_line(passage)
            ))
        } else if injection::share_said(&statement_words(p), q) < injection::MIN_SHARE_SAID {
            Err(format!(
                "the judge said supported, but its quotation (\"{}\") does not say what the statement says",
                one_line(q)
            ))
        } else {
            return Some((pg, Ok(())));
        };
        found.get_or_insert((pg, check));
    }
    found
}

/// The statement as compared with a quotation: flat, without its list number and its cites.
fn statement_words(p: &Proposition) -> String {
    let mut s = flat(&p.text);
    for l in &p.cited {
        if let Some(b) = &l.bates {
            s = s.replace(&flat(b), " ");
        }
    }
    let t = s.trim_start();
    let numbered = t
        .split_once(". ")
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    match numbered {
        Some((_, rest)) => rest.to_string(),
        None => t.to_string(),
    }
}

fn plural_pages(p: &Proposition) -> &'static str {
    if p.cited.len() == 1 {
        "page"
    } else {
        "pages"
    }
}

/// The first page of the evidence holding `flat_quote` (normalised, lower case), with its
/// Bates stamp.
pub fn find_in(evidence: &super::evidence::Evidence, flat_quote: &str) -> Option<Location> {
    evidence.find_page(|file, page, text| {
        flat(text).contains(flat_quote).then(|| Location {
            file: file.to_string(),
            page,
            bates: crate::sources::stamp_of(text),
            star: None,
            snippet: String::new(),
            span: (0, 0),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(bates: &str, page: u32) -> Location {
        Location {
            file: "lease.pdf".into(),
            page,
            bates: Some(bates.into()),
            star: None,
            snippet: String::new(),
            span: (0, 0),
        }
    }

    fn prop(pages: &[Location]) -> Proposition {
        Proposition {
            start: 0,
            end: 10,
            text: "The landlord never scheduled a contractor (SMITH000005).".into(),
            cited: pages.to_vec(),
            dangling: Vec::new(),
        }
    }

    fn page(l: Location, text: &str) -> Page {
        Page {
            location: l,
            text: text.into(),
        }
    }

    fn verdict(v: VerdictKind, quote: &str) -> Verdict {
        Verdict {
            verdict: v,
            quote: quote.into(),
            reason: "because".into(),
        }
    }

    const PAGE5: &str =
        "Maintenance log.\nThe landlord scheduled a con-\ntractor for March 3.\nSMITH000005";

    #[test]
    fn support_stands_only_with_a_quotation_from_a_cited_page() {
        let p = prop(&[loc("SMITH000005", 5)]);
        let pages = [page(loc("SMITH000005", 5), PAGE5)];
        let none = |_: &str| None;
        // On the page, across a hyphenated line break and in other quotation marks.
        let o = ground(
            &p,
            &verdict(
                VerdictKind::Supported,
                "“the landlord scheduled a contractor for March 3”",
            ),
            &pages,
            &none,
        );
        assert_eq!(o.status, Status::Supported, "{o:?}");
        assert_eq!(o.source.unwrap().bates.as_deref(), Some("SMITH000005"));
        // Invented.
        let o = ground(
            &p,
            &verdict(VerdictKind::Supported, "no contractor was ever scheduled"),
            &pages,
            &none,
        );
        assert_eq!(o.status, Status::Unsupported);
        assert!(o.reason.unwrap().contains("on none of the cited pages"));
        // From another page.
        let other = |_: &str| Some(loc("SMITH000009", 9));
        let o = ground(
            &p,
            &verdict(VerdictKind::Supported, "no contractor was ever scheduled"),
            &pages,
            &other,
        );
        assert_eq!(o.status, Status::Unsupported);
        let why = o.reason.unwrap();
        assert!(
            why.contains("is on SMITH000009, not on the cited page (SMITH000005)"),
            "{why}"
        );
        // Too short to show anything.
        let o = ground(&p, &verdict(VerdictKind::Supported, "the"), &pages, &none);
        assert_eq!(o.status, Status::Unsupported);
        assert!(o.reason.unwrap().contains("at least 3 words"));
    }

    #[test]
    fn contradicted_and_not_found_are_unsupported_with_the_judges_words() {
        let p = prop(&[loc("SMITH000005", 5)]);
        let pages = [page(loc("SMITH000005", 5), PAGE5)];
        let o = ground(
            &p,
            &verdict(
                VerdictKind::Contradicted,
                "The landlord scheduled a contractor",
            ),
            &pages,
            &|_| None,
        );
        assert_eq!(o.status, Status::Unsupported);
        let why = o.reason.clone().unwrap();
        assert!(why.starts_with("the cited page contradicts it"), "{why}");
        assert!(
            why.contains("\"The landlord scheduled a contractor\""),
            "{why}"
        );
        assert_eq!(o.judgement.unwrap().verdict, "contradicted");
        let o = ground(&p, &verdict(VerdictKind::NotFound, ""), &pages, &|_| None);
        assert_eq!(o.status, Status::Unsupported);
        assert!(o.reason.unwrap().contains("found nothing"));
    }

    #[test]
    fn answers_are_read_strictly() {
        let ok = r#"{"2":{"verdict":"not_found","quote":"","reason":"r"},"1":{"verdict":"supported","quote":"q w e","reason":"r"}}"#;
        let v = parse(ok, 2).unwrap();
        assert_eq!(v[0].verdict, VerdictKind::Supported);
        assert_eq!(v[1].verdict, VerdictKind::NotFound);
        assert!(parse(&format!("```json\n{ok}\n```"), 2).is_ok());
        for (bad, why) in [
            ("{\"1\": {", "not JSON"),
            ("[1, 2]", "not a JSON object"),
            ("{\"answer\": 1}", "entry `answer`"),
            (
                r#"{"1":{"verdict":"maybe","quote":"","reason":""}}"#,
                "`maybe`",
            ),
            (
                r#"{"3":{"verdict":"supported","quote":"","reason":""}}"#,
                "entry `3`",
            ),
            (
                r#"{"1":{"verdict":"supported","quote":"","reason":""}}"#,
                "statement 2 has no verdict",
            ),
        ] {
            let e = parse(bad, 2).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn one_batch_per_distinct_set_of_pages() {
        let a = loc("SMITH000001", 1);
        let b = loc("SMITH000002", 2);
        let props = vec![
            prop(std::slice::from_ref(&a)),
            prop(&[a.clone(), b.clone()]),
            prop(std::slice::from_ref(&a)),
            prop(&[]),
            prop(&[a, b]),
        ];
        let bs = batches(&props);
        assert_eq!(bs.len(), 2);
        assert_eq!(bs[0].members, vec![0, 2]);
        assert_eq!(bs[1].members, vec![1, 4]);
    }

    #[test]
    fn the_prompt_shows_the_pages_then_the_statements() {
        let pages = [page(loc("SMITH000005", 5), PAGE5)];
        let t = prompt(&pages, &["One.", "Two\nlines."]);
        assert!(t.find("Bates SMITH000005").unwrap() < t.find("1. One.").unwrap());
        assert!(t.contains("2. Two lines."));
        assert_eq!(schema(2)["required"], json!(["1", "2"]));
    }
}
