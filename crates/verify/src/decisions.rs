//! Reviewers' decisions applied to a verification. Each claim has an id the report shows
//! (`date-3f9a2b41c07e`: its kind and a hash of its words and of the sentence it stands in, so the
//! same sentence gets the same id in every run and every draft). A standing decision on a
//! claim the verifier did not support applies while the claim's sentence and the page it
//! names are unchanged: confirmed, the claim is supported by the reviewer; struck, it stays
//! blocking, for it must come out; waived, it is no claim. Otherwise the decision lapses,
//! and the verification says so and why. Decisions of another matter are never given here.

use serde::Serialize;

use lexrun_base::decision::{Decision, Verdict};

use super::claim::{Claim, Location, Status};
use super::draft::Verification;
use super::evidence::Evidence;

/// What a verification was of, kept beside its report (`review.json`) so that a reviewer's
/// decision can be made on it later, from the command line or the review page: the matter,
/// the run and stage, the text verified, and where each source is on disk.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Context {
    pub matter: String,
    /// The matter's folder: a page a reviewer names must be inside it.
    pub matter_dir: String,
    pub run_id: String,
    pub stage: String,
    /// The text verified.
    pub draft: String,
    /// Each source as the verification names it, and the file on disk it was read from.
    pub sources: Vec<(String, String)>,
    pub prefixes: Vec<String>,
    pub allow_reporters: Vec<String>,
    /// `quotes must match exactly`.
    pub exactly: bool,
    /// The sentences a judge model judged, with its verdicts: a decision on one is made
    /// without asking the model again.
    #[serde(default)]
    pub judged: Vec<Judged>,
    /// Each source's name as decisions record it, where it differs (see
    /// [`Evidence::ledger_names`]).
    #[serde(default)]
    pub ledger_names: Vec<(String, String)>,
    /// The matter as decisions are kept under it (see [`matter_key`]); the matter's name when
    /// empty.
    #[serde(default)]
    pub decision_matter: String,
}

impl Context {
    /// The matter decisions on this verification are kept under.
    pub fn decisions_key(&self) -> &str {
        if self.decision_matter.is_empty() {
            &self.matter
        } else {
            &self.decision_matter
        }
    }
}

/// The matter decisions are kept under: `NAME (CASE)` when the matter's `matter.json` gives
/// a `case_number` or an `id`; otherwise `NAME @ FOLDER`, so that two folders of one name
/// never share decisions. Without a folder, the name as given.
pub fn matter_key(name: &str, dir: Option<&std::path::Path>) -> String {
    let Some(dir) = dir else {
        return name.to_string();
    };
    let id = std::fs::read(dir.join("matter.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            ["case_number", "id"].iter().find_map(|k| {
                v.get(*k)
                    .and_then(|x| x.as_str())
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
            })
        });
    match id {
        Some(id) => format!("{name} ({id})"),
        None => format!(
            "{name} @ {}",
            dir.canonicalize()
                .unwrap_or_else(|_| dir.to_path_buf())
                .display()
        ),
    }
}

/// A proposition as the judge left it.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Judged {
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub status: String,
    pub reason: Option<String>,
    pub source: Option<(String, u32, Option<String>)>,
}

impl Judged {
    pub fn of(o: &super::Outcome) -> Judged {
        Judged {
            text: o.claim.text.clone(),
            start: o.claim.start,
            end: o.claim.end,
            status: o.status.as_str().to_string(),
            reason: o.reason.clone(),
            source: o
                .source
                .as_ref()
                .map(|l| (l.file.clone(), l.page, l.bates.clone())),
        }
    }

    pub fn outcome(&self) -> super::Outcome {
        let status = match self.status.as_str() {
            "supported" => Status::Supported,
            "miscited" => Status::Miscited,
            "unrecognized" => Status::Unrecognized,
            _ => Status::Unsupported,
        };
        super::Outcome {
            claim: Claim {
                kind: super::Kind::Proposition,
                text: self.text.clone(),
                start: self.start,
                end: self.end,
                key: super::Key::Proposition,
            },
            status,
            source: self.source.as_ref().map(|(file, page, bates)| Location {
                file: file.clone(),
                page: *page,
                bates: bates.clone(),
                star: None,
                snippet: String::new(),
                span: (0, 0),
            }),
            reason: self.reason.clone(),
            cited: Vec::new(),
            judgement: None,
        }
    }
}

/// A claim's id and the sentence it stands in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClaimRef {
    pub id: String,
    pub sentence: String,
    pub sentence_hash: String,
}

/// A decision met by this verification: applied to its claim, or lapsed with the reason.
#[derive(Clone, Debug, Serialize)]
pub struct Reviewed {
    /// The claim's id in this draft.
    pub id: String,
    #[serde(skip)]
    pub claim: Claim,
    /// The claim's sentence in this draft.
    #[serde(skip)]
    pub at: ClaimRef,
    pub decision: Decision,
    /// Why the decision no longer applies; `None` when it does.
    pub lapsed: Option<String>,
}

impl Reviewed {
    pub fn applies(&self) -> bool {
        self.lapsed.is_none()
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The hash a sentence is known by: its words, however wrapped.
pub fn sentence_hash(sentence: &str) -> String {
    blake3::hash(one_line(sentence).as_bytes()).to_hex()[..16].to_string()
}

/// The hash a page is known by: its text as the sources read it.
pub fn page_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// The id and sentence of each claim, in the order given. Claims with the same words in the
/// same sentence are told apart by their order (`date-3f9a2b41c07e`, `date-3f9a2b41c07e.2`).
pub fn refs(draft: &str, claims: &[&Claim]) -> Vec<ClaimRef> {
    let keep: Vec<(usize, usize)> = claims
        .iter()
        .filter(|c| c.kind != super::Kind::Proposition)
        .map(|c| (c.start, c.end))
        .collect();
    let sentences = super::sentences::sentences(draft, &keep);
    let mut order: Vec<usize> = (0..claims.len()).collect();
    order.sort_by_key(|&i| (claims[i].start, claims[i].end));
    let mut out = vec![None; claims.len()];
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for i in order {
        let c = claims[i];
        let sentence = sentences
            .iter()
            .find(|s| s.start <= c.start && c.start < s.end.max(s.start + 1))
            .map_or(c.text.as_str(), |s| &draft[s.start..s.end.min(draft.len())]);
        let sentence = one_line(sentence);
        let h = blake3::Hasher::new()
            .update(c.kind.as_str().as_bytes())
            .update(b"\0")
            .update(one_line(&c.text).as_bytes())
            .update(b"\0")
            .update(sentence.as_bytes())
            .finalize()
            .to_hex();
        let base = format!("{}-{}", c.kind.as_str(), &h[..12]);
        let n = seen.entry(base.clone()).or_insert(0);
        *n += 1;
        let id = if *n == 1 { base } else { format!("{base}.{n}") };
        out[i] = Some(ClaimRef {
            id,
            sentence_hash: sentence_hash(&sentence),
            sentence,
        });
    }
    out.into_iter().flatten().collect()
}

/// The outcomes (by their place) a reviewer's standing decision strikes: they block whatever
/// the rule for their kind says.
pub fn struck(v: &Verification) -> Vec<usize> {
    v.reviewed
        .iter()
        .filter(|r| r.applies() && r.decision.verdict == Verdict::Struck)
        .filter_map(|r| v.ids.iter().position(|id| *id == r.id))
        .collect()
}

/// Who decided and when, for a report: `ann on 2024-01-05 14:03 UTC`.
pub fn by(d: &Decision) -> String {
    format!(
        "{} on {}",
        d.reviewer,
        crate::calendar::utc_minute(d.created)
    )
}

/// A page as a reviewer named it: `lease.pdf p. 3 (SMITH000003)`.
pub fn page_name(file: &str, page: u32, bates: Option<&str>) -> String {
    format!(
        "{file} p. {page}{}",
        bates.map_or(String::new(), |b| format!(" ({b})"))
    )
}

/// Marks an outcome struck by `d`: it blocks until its words are out of the draft.
fn strike(o: &mut super::Outcome, d: &Decision, moved: Option<&str>) {
    if o.status == Status::Supported {
        o.status = Status::Unsupported;
        o.reason = None;
        o.source = None;
    }
    let mut notes: Vec<String> = Vec::new();
    notes.extend(moved.map(str::to_string));
    notes.extend(o.reason.take());
    o.reason = Some(format!(
        "struck by {}: take it out of the draft{}",
        by(d),
        if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        }
    ));
}

/// Gives every claim its id and applies the standing decisions of `matter`.
pub fn apply(
    v: &mut Verification,
    draft: &str,
    evidence: &Evidence,
    matter: &str,
    standing: &[Decision],
) {
    // Record cites not checked are decided on like the rest: they join the outcomes here, and
    // those a decision confirms or strikes stay among them.
    let real = v.outcomes.len();
    let unchecked = std::mem::take(&mut v.unchecked);
    v.outcomes
        .extend(unchecked.iter().map(|(c, why)| super::Outcome {
            claim: c.clone(),
            status: Status::Unsupported,
            source: None,
            reason: Some(why.clone()),
            cited: Vec::new(),
            judgement: None,
        }));
    let claims: Vec<&Claim> = v.outcomes.iter().map(|o| &o.claim).collect();
    let refs = refs(draft, &claims);
    let mut decided_unchecked = vec![false; unchecked.len()];
    let standing: Vec<&Decision> = standing
        .iter()
        .filter(|d| d.matter == matter && d.stands())
        .collect();
    // The pages confirmations name, read once.
    let wanted: Vec<(String, u32)> = standing
        .iter()
        .filter_map(|d| {
            d.page
                .as_ref()
                .map(|p| (evidence.evidence_name(&p.file), p.page))
        })
        .collect();
    let texts = if wanted.is_empty() {
        Vec::new()
    } else {
        evidence.page_texts(&wanted)
    };
    let page_now = |file: &str, page: u32| -> Option<&String> {
        wanted
            .iter()
            .position(|(f, p)| *f == evidence.evidence_name(file) && *p == page)
            .and_then(|i| texts[i].as_ref())
    };
    let mut reviewed = Vec::new();
    let mut waived = Vec::new();
    let mut met: std::collections::HashSet<i64> = Default::default();
    for (i, r) in refs.iter().enumerate() {
        let Some(d) = standing.iter().find(|d| d.claim_id == r.id) else {
            continue;
        };
        met.insert(d.seq);
        let o = &mut v.outcomes[i];
        if o.status == Status::Supported && d.verdict != Verdict::Struck {
            // The verifier supports it now: the decision is not needed. A struck claim must
            // come out whatever the sources say.
            continue;
        }
        let lapsed = if d.verdict == Verdict::Struck {
            // The struck words are still here: they must come out, whatever their sentence.
            None
        } else if d.sentence_hash != r.sentence_hash {
            Some("its sentence changed since the decision".to_string())
        } else if d.verdict == Verdict::Confirmed && d.page.is_none() {
            // A confirmation stands on a page; without one there is nothing it stands on.
            Some("it names no page to stand on; confirm it again with --page".to_string())
        } else {
            d.page.as_ref().and_then(|p| {
                let name = page_name(&p.file, p.page, p.bates.as_deref());
                match page_now(&p.file, p.page) {
                    None => Some(format!(
                        "the page it names ({name}) is no longer among the sources"
                    )),
                    Some(t) if page_hash(t) != p.hash => Some(format!(
                        "the page it names ({name}) changed since the decision"
                    )),
                    Some(_) => None,
                }
            })
        };
        if lapsed.is_none() {
            if i >= real {
                decided_unchecked[i - real] = true;
            }
            match d.verdict {
                Verdict::Confirmed => {
                    let p = d.page.as_ref();
                    o.status = Status::Supported;
                    o.source = p.map(|p| Location {
                        file: evidence.evidence_name(&p.file),
                        page: p.page,
                        bates: p.bates.clone(),
                        star: None,
                        snippet: String::new(),
                        span: (0, 0),
                    });
                    o.reason = Some(format!(
                        "confirmed by {}{}",
                        by(d),
                        d.note
                            .as_deref()
                            .map_or(String::new(), |n| format!(": {n}"))
                    ));
                }
                Verdict::Struck => strike(o, d, None),
                Verdict::Waived => waived.push(i),
                Verdict::Withdrawn => {}
            }
        }
        reviewed.push(Reviewed {
            id: r.id.clone(),
            claim: o.claim.clone(),
            at: r.clone(),
            decision: (*d).clone(),
            lapsed,
        });
    }
    // A decision whose claim is still in the draft, in a sentence that changed. A strike
    // moves with its words and keeps blocking; any other decision lapses.
    let mut struck_here: Vec<usize> = Vec::new();
    for d in standing.iter().filter(|d| !met.contains(&d.seq)) {
        let struck = d.verdict == Verdict::Struck;
        let moved = v
            .outcomes
            .iter()
            .zip(&refs)
            .enumerate()
            .find(|(i, (o, _))| {
                (struck || o.status != Status::Supported)
                    && !(struck && struck_here.contains(i))
                    && o.claim.kind.as_str() == d.kind
                    && one_line(&o.claim.text) == one_line(&d.claim)
            });
        if let Some((i, (_, r))) = moved {
            let lapsed = if struck {
                if waived.contains(&i) {
                    continue;
                }
                struck_here.push(i);
                if i >= real {
                    decided_unchecked[i - real] = true;
                }
                strike(
                    &mut v.outcomes[i],
                    d,
                    Some(&format!("moved: its sentence was “{}”", d.sentence)),
                );
                None
            } else {
                Some(format!(
                    "its sentence changed since the decision (it was: “{}”)",
                    d.sentence
                ))
            };
            reviewed.push(Reviewed {
                id: r.id.clone(),
                claim: v.outcomes[i].claim.clone(),
                at: r.clone(),
                decision: (*d).clone(),
                lapsed,
            });
        }
    }
    let ids: Vec<String> = refs.iter().map(|r| r.id.clone()).collect();
    v.refs = refs;
    let outcomes = std::mem::take(&mut v.outcomes);
    let (mut kept, mut kept_ids) = (Vec::new(), Vec::new());
    let mut moved = false;
    for (i, (o, id)) in outcomes.into_iter().zip(ids).enumerate() {
        if waived.contains(&i) {
            continue;
        }
        if i >= real && !decided_unchecked[i - real] {
            // Not decided: still a record cite not checked.
            v.unchecked.push(unchecked[i - real].clone());
            v.unchecked_ids.push(id);
            continue;
        }
        moved |= i >= real;
        kept.push(o);
        kept_ids.push(id);
    }
    if moved {
        let mut both: Vec<(super::Outcome, String)> = kept.into_iter().zip(kept_ids).collect();
        both.sort_by_key(|(o, _)| (o.claim.start, o.claim.kind));
        (kept, kept_ids) = both.into_iter().unzip();
    }
    v.outcomes = kept;
    reviewed.sort_by_key(|r| (r.claim.start, r.claim.end));
    v.ids = kept_ids;
    v.reviewed = reviewed;
}

#[cfg(test)]
mod tests {
    use super::*;
    use lexrun_base::decision::DecisionPage;

    fn ev(page1: &str) -> Evidence {
        let mut ev = Evidence::new(vec!["SMITH".into()]);
        ev.add_pages(
            "lease.txt".into(),
            vec![
                page1.into(),
                "The rent is $900.00 a month.\n\nSMITH000002".into(),
            ],
        );
        ev
    }

    fn decide(v: &Verification, draft: &str, at: usize, verdict: Verdict, page: &str) -> Decision {
        let claims: Vec<&Claim> = v.outcomes.iter().map(|o| &o.claim).collect();
        let r = &refs(draft, &claims)[at];
        let o = &v.outcomes[at];
        Decision {
            seq: at as i64 + 1,
            matter: "smith".into(),
            claim_id: r.id.clone(),
            kind: o.claim.kind.as_str().into(),
            claim: o.claim.text.clone(),
            sentence: r.sentence.clone(),
            sentence_hash: r.sentence_hash.clone(),
            draft_hash: String::new(),
            run_id: String::new(),
            stage: String::new(),
            verdict,
            page: (verdict == Verdict::Confirmed).then(|| DecisionPage {
                file: "lease.txt".into(),
                page: 1,
                bates: Some("SMITH000001".into()),
                hash: page_hash(page),
            }),
            note: None,
            reason: (verdict == Verdict::Waived).then(|| "a defined term".into()),
            reviewer: "ann".into(),
            created: 0,
            superseded_by: None,
        }
    }

    const PAGE: &str = "Moved in on the fifth of January, 2024.\n\nSMITH000001";
    const DRAFT: &str = "The tenant moved in on January 5, 2024. Rent was $950.00.";

    #[test]
    fn a_struck_claim_blocks_even_once_a_source_supports_it() {
        let e = ev(PAGE);
        let v0 = super::super::verify(DRAFT, &e);
        let strike = decide(&v0, DRAFT, 1, Verdict::Struck, PAGE);
        let mut e2 = ev(PAGE);
        e2.add_pages("later.txt".into(), vec!["Rent was $950.00.".into()]);
        let mut v = super::super::verify(DRAFT, &e2);
        assert_eq!(v.outcomes[1].status, Status::Supported);
        apply(&mut v, DRAFT, &e2, "smith", &[strike]);
        assert_eq!(v.outcomes[1].status, Status::Unsupported);
        assert!(v.outcomes[1]
            .reason
            .as_deref()
            .unwrap()
            .starts_with("struck by ann"));
    }

    #[test]
    fn a_strike_follows_its_words_into_an_edited_sentence() {
        let e = ev(PAGE);
        let v0 = super::super::verify(DRAFT, &e);
        let strike = decide(&v0, DRAFT, 1, Verdict::Struck, PAGE);
        let edited = DRAFT.replace("Rent was", "The rent was then");
        // A source now supports it, and the sentence was lightly edited: still struck.
        let mut e2 = ev(PAGE);
        e2.add_pages(
            "later.txt".into(),
            vec!["The rent was then $950.00.".into()],
        );
        let mut v = super::super::verify(&edited, &e2);
        assert_eq!(v.outcomes[1].status, Status::Supported);
        apply(&mut v, &edited, &e2, "smith", std::slice::from_ref(&strike));
        assert_eq!(v.outcomes[1].status, Status::Unsupported);
        let why = v.outcomes[1].reason.as_deref().unwrap();
        assert!(why.starts_with("struck by ann"), "{why}");
        assert!(why.contains("moved"), "{why}");
        assert_eq!(v.reviewed.len(), 1);
        assert!(v.reviewed[0].applies(), "{:?}", v.reviewed);
        assert_eq!(struck(&v), vec![1]);
        // Once the words are out, the strike has nothing left to block.
        let gone = DRAFT.replace(" Rent was $950.00.", "");
        let mut v = super::super::verify(&gone, &e2);
        apply(&mut v, &gone, &e2, "smith", &[strike]);
        assert!(struck(&v).is_empty());
    }

    #[test]
    fn a_confirmation_without_a_page_lapses() {
        let e = ev(PAGE);
        let v0 = super::super::verify(DRAFT, &e);
        let mut confirm = decide(&v0, DRAFT, 0, Verdict::Confirmed, PAGE);
        confirm.page = None;
        let mut v = super::super::verify(DRAFT, &e);
        apply(&mut v, DRAFT, &e, "smith", &[confirm]);
        assert_eq!(v.outcomes[0].status, Status::Unsupported);
        assert!(v.reviewed[0]
            .lapsed
            .as_deref()
            .unwrap()
            .contains("names no page"));
    }

    #[test]
    fn ids_survive_a_rerun_and_change_with_the_sentence() {
        let claims = super::super::claims(DRAFT, &[]);
        let a: Vec<&Claim> = claims.iter().collect();
        let ids = refs(DRAFT, &a);
        assert_eq!(ids, refs(DRAFT, &a));
        assert!(ids[0].id.starts_with("date-"), "{ids:?}");
        assert_eq!(ids[0].id.len(), "date-".len() + 12, "{ids:?}");
        assert_eq!(ids[0].sentence, "The tenant moved in on January 5, 2024.");
        let edited = DRAFT.replace("moved in", "arrived");
        let claims2 = super::super::claims(&edited, &[]);
        let b: Vec<&Claim> = claims2.iter().collect();
        let ids2 = refs(&edited, &b);
        assert_ne!(ids[0].id, ids2[0].id);
        assert_eq!(ids[1].id, ids2[1].id, "the other sentence is unchanged");
    }

    #[test]
    fn confirmed_struck_and_waived_claims_and_their_lapses() {
        let e = ev(PAGE);
        let v0 = super::super::verify(DRAFT, &e);
        assert_eq!(v0.outcomes.len(), 2);
        assert!(v0.outcomes.iter().all(|o| o.status != Status::Supported));
        let confirm = decide(&v0, DRAFT, 0, Verdict::Confirmed, PAGE);
        let strike = decide(&v0, DRAFT, 1, Verdict::Struck, PAGE);

        let mut v = super::super::verify(DRAFT, &e);
        apply(
            &mut v,
            DRAFT,
            &e,
            "smith",
            &[confirm.clone(), strike.clone()],
        );
        assert_eq!(v.outcomes[0].status, Status::Supported);
        assert!(v.outcomes[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("confirmed by ann"));
        assert_eq!(v.outcomes[0].source.as_ref().unwrap().page, 1);
        assert_eq!(v.outcomes[1].status, Status::Unsupported);
        assert!(v.outcomes[1]
            .reason
            .as_deref()
            .unwrap()
            .starts_with("struck by ann"));
        assert_eq!(v.reviewed.len(), 2);
        assert!(v.reviewed.iter().all(Reviewed::applies));

        // Another matter's decisions never apply.
        let mut v = super::super::verify(DRAFT, &e);
        apply(&mut v, DRAFT, &e, "jones", std::slice::from_ref(&confirm));
        assert_eq!(v.outcomes[0].status, Status::Unsupported);
        assert!(v.reviewed.is_empty());

        // The page changed: the confirmation lapses.
        let e2 = ev("Moved in on the fifth of January, 2024, amended.\n\nSMITH000001");
        let mut v = super::super::verify(DRAFT, &e2);
        apply(&mut v, DRAFT, &e2, "smith", std::slice::from_ref(&confirm));
        assert_eq!(v.outcomes[0].status, Status::Unsupported);
        assert!(
            v.reviewed[0]
                .lapsed
                .as_deref()
                .unwrap()
                .contains("changed since"),
            "{:?}",
            v.reviewed
        );

        // The sentence changed: the confirmation lapses, and says what it was.
        let edited = DRAFT.replace("The tenant moved in", "We moved in");
        let mut v = super::super::verify(&edited, &e);
        apply(&mut v, &edited, &e, "smith", std::slice::from_ref(&confirm));
        assert_eq!(v.outcomes[0].status, Status::Unsupported);
        assert!(v.reviewed[0]
            .lapsed
            .as_deref()
            .unwrap()
            .contains("its sentence changed"));

        // Waived: no claim any more.
        let waive = decide(&v0, DRAFT, 1, Verdict::Waived, PAGE);
        let mut v = super::super::verify(DRAFT, &e);
        apply(&mut v, DRAFT, &e, "smith", &[waive]);
        assert_eq!(v.outcomes.len(), 1);
        assert_eq!(v.ids.len(), 1);
        assert_eq!(v.reviewed[0].decision.verdict, Verdict::Waived);
    }
}
