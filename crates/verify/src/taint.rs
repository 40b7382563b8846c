//! Claim taint: support that does not count. A claim lexrun first saw in a model's output
//! (an invented citation, date, amount or quotation) is not proven by a file that entered the
//! matter only afterwards — that file may be the model's own words copied into a note. Such
//! support is set aside: the claim stays unsupported, and the reason names the file and the
//! run and stage that generated the claim. Files admitted on purpose are not late.
//!
//! All of claim taint is here. The ledger (`store`) only records what models wrote and when
//! each file was first seen; this module reads it ([`model_claims`]), decides which files are
//! late for which claims, sets their support aside in a verification ([`apply`], through
//! `verify::verify_with`) and names the files that alone carry such claims at intake
//! ([`at_intake`]); for `lexrun verify` it gathers what the ledger knows of the files given
//! ([`from_ledger`]). The run's intake guard and the CLI call it and decide nothing.

use std::collections::HashMap;

use super::claim::{Claim, Key, Kind, Location, Outcome, Status};
use super::draft::{verify, Verification};
use super::evidence::{Doc, DocSource, Evidence};
use super::index::Index;
use super::index::Wanted;

/// A claim a model wrote, as the ledger gives it back.
#[derive(Clone, Debug)]
pub struct ModelClaim {
    pub kind: Kind,
    pub key: Key,
    /// As the model wrote it.
    pub text: String,
    pub run: String,
    pub stage: String,
    /// When lexrun first saw it (milliseconds since the epoch).
    pub at: i64,
}

impl ModelClaim {
    pub fn identity(&self) -> String {
        Claim {
            kind: self.kind,
            text: self.text.clone(),
            start: 0,
            end: 0,
            key: self.key.clone(),
        }
        .identity()
    }
}

/// What the ledger knows that bears on support.
#[derive(Clone, Debug, Default)]
pub struct Taint {
    pub claims: Vec<ModelClaim>,
    /// Evidence file (as the evidence names it) → when it entered the matter (milliseconds).
    /// A file not listed — admitted on purpose, or not the matter's — is never late.
    pub entered: HashMap<String, i64>,
}

impl Taint {
    fn by_identity(&self) -> HashMap<String, &ModelClaim> {
        let mut m: HashMap<String, &ModelClaim> = HashMap::new();
        for c in &self.claims {
            let e = m.entry(c.identity()).or_insert(c);
            if c.at < e.at {
                *e = c;
            }
        }
        m
    }

    /// The files that entered after `c` was written.
    fn late_for(&self, c: &ModelClaim) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .entered
            .iter()
            .filter(|(_, at)| **at > c.at)
            .map(|(f, _)| f.as_str())
            .collect();
        v.sort_unstable();
        v
    }
}

/// Why the support does not count.
pub fn reason(file: &str, c: &ModelClaim) -> String {
    format!(
        "supported only by {file}, which appeared after lexrun generated this claim in run {}, stage {}",
        c.run, c.stage
    )
}

/// Sets aside, in `v`, support that only late files give.
pub(super) fn apply(
    v: &mut Verification,
    index: &Index,
    draft: &str,
    evidence: &Evidence,
    taint: &Taint,
) {
    if taint.claims.is_empty() || taint.entered.is_empty() {
        return;
    }
    let known = taint.by_identity();
    let files = index.files();
    // Claims found in a late file and perhaps elsewhere too: checked again without the late
    // files, grouped by which files those are.
    let mut again: HashMap<Vec<String>, Vec<(usize, String)>> = HashMap::new();
    for (i, o) in v.outcomes.iter_mut().enumerate() {
        if !matches!(o.status, Status::Supported | Status::Miscited) {
            continue;
        }
        let Some(mc) = known.get(&o.claim.identity()) else {
            continue;
        };
        let late = taint.late_for(mc);
        if late.is_empty() {
            continue;
        }
        let is_late = |f: &str| late.contains(&f);
        let found_in: Option<Vec<&str>> = index.files_with(&o.claim.key).map(|ids| {
            ids.iter()
                .filter_map(|&d| files.get(d).map(|f| f.path.as_str()))
                .collect()
        });
        let shown = o.source.as_ref().map(|l| l.file.clone());
        match found_in {
            Some(found) if found.iter().all(|f| !is_late(f)) => {}
            Some(found) if found.iter().all(|f| is_late(f)) => {
                let file = shown
                    .filter(|f| is_late(f))
                    .or_else(|| found.first().map(|f| f.to_string()))
                    .unwrap_or_default();
                set_aside(o, &file, mc);
            }
            _ if shown.as_deref().is_some_and(|f| !is_late(f)) && o.cited.is_empty() => {}
            _ => {
                let file = shown
                    .filter(|f| is_late(f))
                    .unwrap_or_else(|| late[0].to_string());
                again
                    .entry(late.iter().map(|s| s.to_string()).collect())
                    .or_default()
                    .push((i, file));
            }
        }
    }
    for (late, items) in again {
        let mut older = evidence.clone();
        older.sources.retain(|s| !late.contains(&source_name(s)));
        let w = verify(draft, &older);
        for (i, file) in items {
            let o = &mut v.outcomes[i];
            let redone = w.outcomes.iter().find(|x| {
                (x.claim.start, x.claim.end, x.claim.kind)
                    == (o.claim.start, o.claim.end, o.claim.kind)
            });
            match redone {
                Some(x) if matches!(x.status, Status::Supported | Status::Miscited) => {
                    *o = x.clone();
                }
                _ => {
                    if let Some(mc) = known.get(&o.claim.identity()) {
                        set_aside(o, &file, mc);
                    }
                }
            }
        }
    }
}

fn source_name(s: &DocSource) -> String {
    match s {
        DocSource::File(p) => p.display().to_string(),
        DocSource::Memory(Doc::Pages { path, .. })
        | DocSource::Memory(Doc::Unreadable { path, .. }) => path.clone(),
    }
}

fn set_aside(o: &mut Outcome, file: &str, mc: &ModelClaim) {
    o.status = Status::Unsupported;
    o.reason = Some(reason(file, mc));
    o.source = None::<Location>;
}

/// A file that is the only support of claims models wrote before it entered the matter.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Carrier {
    pub file: String,
    /// The claims it carries, as the models wrote them, each with its run and stage.
    pub claims: Vec<Carried>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Carried {
    pub kind: Kind,
    pub text: String,
    pub run: String,
    pub stage: String,
    /// The reason, as verification would give it.
    pub reason: String,
}

/// The late files that alone support a claim a model wrote before they entered: what the
/// intake guard refuses until a person admits the file or removes it. One pass over the
/// evidence, looking only for the model claims that some file is late for.
pub fn carriers(evidence: &Evidence, taint: &Taint) -> Vec<Carrier> {
    let known = taint.by_identity();
    let wanted: Vec<&ModelClaim> = known
        .values()
        .copied()
        .filter(|c| !taint.late_for(c).is_empty())
        .filter(|c| !matches!(c.key, Key::Unresolved(_) | Key::Unrecognized(_)))
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let claims: Vec<Claim> = wanted
        .iter()
        .map(|c| Claim {
            kind: c.kind,
            text: c.text.clone(),
            start: 0,
            end: 0,
            key: c.key.clone(),
        })
        .collect();
    let mut w = Wanted::of(&claims);
    w.allowed = evidence.allowed_reporters.clone();
    let index = Index::build(&w, evidence);
    let files = index.files();
    let mut by_file: std::collections::BTreeMap<String, Vec<Carried>> = Default::default();
    for (c, claim) in wanted.iter().zip(claims) {
        let late = taint.late_for(c);
        let found: Vec<&str> = match index.files_with(&c.key) {
            Some(ids) => ids
                .iter()
                .filter_map(|&d| files.get(d).map(|f| f.path.as_str()))
                .collect(),
            None => {
                let o = index.check(claim);
                if o.status != Status::Supported {
                    continue;
                }
                o.source
                    .map(|l| {
                        files
                            .iter()
                            .find(|f| f.path == l.file)
                            .map(|f| f.path.as_str())
                    })
                    .into_iter()
                    .flatten()
                    .collect()
            }
        };
        if found.is_empty() || found.iter().any(|f| !late.contains(f)) {
            continue;
        }
        for f in found {
            by_file.entry(f.to_string()).or_default().push(Carried {
                kind: c.kind,
                text: c.text.clone(),
                run: c.run.clone(),
                stage: c.stage.clone(),
                reason: reason(f, c),
            });
        }
    }
    by_file
        .into_iter()
        .map(|(file, claims)| Carrier { file, claims })
        .collect()
}

/// What claim taint needs of the ledger, which the runtime keeps: the claims models wrote and
/// when each file's text was first seen. The verifier reads these facts and decides; it never
/// opens the ledger itself.
pub trait Ledger {
    /// The claims models wrote in a matter (in every matter when `None`), as recorded; none
    /// when the ledger does not answer.
    fn model_claims(&self, matter: Option<&str>) -> Vec<LedgerClaim>;
    /// Whether a person admitted this text (by its text hash) as evidence.
    fn admitted(&self, text_hash: &str) -> bool;
    /// The matters a text was seen in.
    fn matters_seen(&self, text_hash: &str) -> Vec<String>;
    /// When a text was first seen in any matter (milliseconds).
    fn first_seen(&self, text_hash: &str) -> Option<i64>;
}

/// A claim a model wrote, as the ledger recorded it.
pub struct LedgerClaim {
    /// The claim kind's name and its key as JSON, as the report writes them.
    pub kind: String,
    pub key: String,
    pub text: String,
    pub run: String,
    pub stage: String,
    /// How verification judged it when the model wrote it.
    pub status: String,
    /// When it was written (milliseconds).
    pub at: i64,
}

/// The claims models wrote in a matter (in every matter when `None`) that lexrun saw first
/// in their output: a claim verification found in the evidence when the model wrote it came
/// from the evidence, not from the model. A ledger that does not answer gives none.
pub fn model_claims(ledger: &dyn Ledger, matter: Option<&str>) -> Vec<ModelClaim> {
    ledger
        .model_claims(matter)
        .into_iter()
        .filter(|c| c.status != "supported")
        .filter_map(|c| {
            Some(ModelClaim {
                kind: serde_json::from_value(serde_json::Value::String(c.kind)).ok()?,
                key: serde_json::from_str(&c.key).ok()?,
                text: c.text,
                run: c.run,
                stage: c.stage,
                at: c.at,
            })
        })
        .collect()
}

/// A file offered to a run as evidence, as claim taint sees it.
pub struct Offered<'a> {
    /// As the workflow names it.
    pub file: &'a str,
    pub text_hash: &'a str,
    /// Admitted by the workflow: never late.
    pub admitted: bool,
    /// When its text was first seen in the matter (milliseconds).
    pub first_seen: i64,
    pub pages: &'a [String],
}

/// Claim taint at intake: the files of one matter that are the only support of claims models
/// wrote there before the files entered. Files the workflow admits, or a person admitted by
/// content before, are never late.
pub fn at_intake(
    ledger: &dyn Ledger,
    matter: &str,
    files: &[Offered<'_>],
    prefixes: &[String],
) -> Vec<Carrier> {
    let claims = model_claims(ledger, Some(matter));
    if claims.is_empty() {
        return Vec::new();
    }
    let mut ev = Evidence::new(prefixes.to_vec());
    let mut taint = Taint {
        claims,
        entered: HashMap::new(),
    };
    for f in files {
        ev.add_pages(f.file.to_string(), f.pages.to_vec());
        if !f.admitted && !ledger.admitted(f.text_hash) {
            taint.entered.insert(f.file.to_string(), f.first_seen);
        }
    }
    carriers(&ev, &taint)
}

/// What the ledger knows that bears on evidence given to `lexrun verify`: the claims models
/// wrote in the matters these files were seen in, and when each file was first seen (a file
/// lexrun never saw counts as new). `seen` holds the text hash of each file the evidence
/// pass read.
pub fn from_ledger(
    ledger: &dyn Ledger,
    evidence: &Evidence,
    seen: &HashMap<String, String>,
) -> Taint {
    let mut taint = Taint::default();
    let now = lexrun_base::now_ms();
    let mut matters: Vec<String> = Vec::new();
    let mut files = Vec::new();
    for s in &evidence.sources {
        let name = match s {
            DocSource::File(p) => p.display().to_string(),
            DocSource::Memory(Doc::Pages { path, .. }) => path.clone(),
            DocSource::Memory(_) => continue,
        };
        // A file the pass could not read has no text: the hash of nothing.
        let th = seen
            .get(&name)
            .cloned()
            .unwrap_or_else(|| lexrun_base::fingerprint::shingles::text_hash(""));
        for m in ledger.matters_seen(&th) {
            if !matters.contains(&m) {
                matters.push(m);
            }
        }
        files.push((name, th));
    }
    for m in &matters {
        taint.claims.extend(model_claims(ledger, Some(m)));
    }
    if taint.claims.is_empty() {
        return taint;
    }
    for (name, th) in files {
        if ledger.admitted(&th) {
            continue;
        }
        let at = ledger.first_seen(&th).unwrap_or(now);
        taint.entered.insert(name, at);
    }
    taint
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim_of(text: &str, at: i64) -> ModelClaim {
        let c = super::super::claims(text, &[]).remove(0);
        ModelClaim {
            kind: c.kind,
            key: c.key,
            text: c.text,
            run: "run-1".into(),
            stage: "research".into(),
            at,
        }
    }

    fn evidence(files: &[(&str, &str)]) -> Evidence {
        let mut ev = Evidence::new(vec![]);
        for (name, text) in files {
            ev.add_pages(name.to_string(), vec![text.to_string()]);
        }
        ev
    }

    #[test]
    fn support_only_from_a_later_file_does_not_count() {
        let draft = "See Harbor v. Acme, 912 F.3d 118 (9th Cir. 2019), decided on March 3, 2021.";
        let ev = evidence(&[
            ("intake/lease.txt", "The lease began on June 1, 2022."),
            (
                "record/04-note.txt",
                "Harbor v. Acme, 912 F.3d 118 (9th Cir. 2019). Hearing March 3, 2021.",
            ),
        ]);
        let mut taint = Taint {
            claims: vec![claim_of(
                "Harbor v. Acme, 912 F.3d 118 (9th Cir. 2019)",
                100,
            )],
            entered: [
                ("intake/lease.txt".to_string(), 50),
                ("record/04-note.txt".to_string(), 200),
            ]
            .into_iter()
            .collect(),
        };
        let v = verify_with_taint(draft, &ev, &taint);
        let cite = v.iter().find(|o| o.claim.kind == Kind::Citation).unwrap();
        assert_eq!(cite.status, Status::Unsupported);
        assert_eq!(
            cite.reason.as_deref().unwrap(),
            "supported only by record/04-note.txt, which appeared after lexrun generated this claim in run run-1, stage research"
        );
        // The date was never a model's claim: the note supports it.
        let date = v.iter().find(|o| o.claim.kind == Kind::Date).unwrap();
        assert_eq!(date.status, Status::Supported);
        let c = carriers(&ev, &taint);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].file, "record/04-note.txt");
        // A note that was there before the claim was written supports it.
        taint.entered.insert("record/04-note.txt".into(), 90);
        let v = verify_with_taint(draft, &ev, &taint);
        assert!(v.iter().all(|o| o.status == Status::Supported));
        assert!(carriers(&ev, &taint).is_empty());
    }

    #[test]
    fn older_evidence_still_supports_a_claim_a_late_file_repeats() {
        let draft = "The rent was $2,150.00 per month.";
        let ev = evidence(&[
            ("intake/lease.txt", "Monthly rent: $2,150.00."),
            ("record/note.txt", "rent $2,150.00"),
        ]);
        let taint = Taint {
            claims: vec![claim_of("$2,150.00", 100)],
            entered: [
                ("intake/lease.txt".to_string(), 50),
                ("record/note.txt".to_string(), 200),
            ]
            .into_iter()
            .collect(),
        };
        let v = verify_with_taint(draft, &ev, &taint);
        assert_eq!(v[0].status, Status::Supported);
        assert!(carriers(&ev, &taint).is_empty());
    }

    fn verify_with_taint(draft: &str, ev: &Evidence, t: &Taint) -> Vec<Outcome> {
        super::super::verify_with(draft, ev, t).outcomes
    }
}
