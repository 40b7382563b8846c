//! Verification of a stage's text against the evidence, with its policies: `block` stops
//! unsupported content, `revise` sends it back, `flag` lets it through with the report.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;

use crate::answer::flatten_answer;
use crate::call::stage_call;
use crate::claim_kind::{Decision, Kind as ClaimKind, Must};
use crate::judge;
use crate::plan::workflow::{Policy, StepKind, Verify};
use crate::record::{Status, VerifyRecord};
use crate::shared::{Matter, Produced, Shared};
use crate::unit::{base_record, stage_key, Done};
use crate::verify;

/// Verification of a stage's text, with its policies: each round reads the text, checks it
/// (and judges its propositions), writes the reports, and decides.
pub(super) async fn run_verify_unit(
    sh: &Arc<Shared>,
    m: &Arc<Matter>,
    vi: usize,
    results: &BTreeMap<String, Arc<Produced>>,
    done: &mut Done,
) {
    let v: Verify = sh.plan.verify[vi].item.clone();
    let Some(stage_idx) = sh.plan.steps.iter().position(|s| s.name == v.stage) else {
        return;
    };
    let mut results = results.clone();
    let key = stage_key(sh.multi, &m.name, &format!("verify {}", v.stage));
    let mut round = 1;
    loop {
        let Some(text) = results.get(&v.stage).and_then(|p| verified_text(p)) else {
            return;
        };
        let ev = evidence(sh, m, &v, &results);
        let name = format!("{} (stage `{}`)", m.name, v.stage);
        let Some((outcome, page)) = check(sh, m, &v, stage_idx, round, &text, ev, done).await
        else {
            return;
        };
        // The verdict on each claim the model wrote, so that the ledger knows which of
        // them were invented.
        if let Some(store) = &sh.store {
            let verdicts: Vec<(String, String)> = outcome
                .outcomes
                .iter()
                .map(|o| (o.claim.identity(), o.status.as_str().to_string()))
                .collect();
            let _ = store.mark_claims(&m.name, &sh.run_id, &v.stage, &verdicts);
        }
        let sorted = Sorted::of(&v, &outcome);
        let decision = sorted.decision(round <= v.max_rounds);
        let (checked, unsupported) = (outcome.outcomes.len(), sorted.unsupported());
        let note = match decision {
            Decision::Passed => crate::incomplete::thin_pass(&text, checked),
            _ => None,
        };
        let report = write_reports(
            sh,
            m,
            &v,
            round,
            &name,
            &text,
            &outcome,
            page,
            note.as_deref(),
        );
        if let Some(n) = &note {
            sh.events.warn(&key, n);
        }
        done.verification.push(VerifyRecord {
            stage: v.stage.clone(),
            round,
            claims: checked,
            unsupported,
            decision,
            report: report.display().to_string(),
            note,
        });
        let line = format!("{checked} claims, {unsupported} unsupported: {decision}");
        let detail = json!({"matter": m.name, "report": report.display().to_string()});
        match decision {
            Decision::Revised => {
                sh.events.note(&key, &line);
                let fb = feedback(&sorted.revising);
                round += 1;
                let Some(p) =
                    done.call(stage_call(sh, m, stage_idx, &results, round, Some(fb)).await)
                else {
                    return;
                };
                done.replace(&mut results, &v.stage, p);
            }
            Decision::Blocked => {
                let why = format!(
                    "verification blocked `{}`: {unsupported} unsupported claim{} (report: {})",
                    v.stage,
                    if unsupported == 1 { "" } else { "s" },
                    report.display()
                );
                sh.events.stage_finished(&key, "blocked", &line, detail);
                let mut r = base_record(sh, stage_idx);
                r.name = format!("verify {}", v.stage);
                r.kind = "verify".into();
                r.status = Some(Status::Blocked);
                r.why = Some(why.clone());
                r.summary = line;
                r.outputs = vec![report.display().to_string()];
                done.records.push(r);
                done.status = Status::Blocked;
                done.why = Some(why);
                return;
            }
            Decision::Passed | Decision::Flagged => {
                sh.events
                    .stage_finished(&key, decision.as_str(), &line, detail);
                return;
            }
        }
    }
}

/// The text a verification reads. A structured answer is checked value by value, not as JSON
/// text (whose quotation marks would read as quotations).
fn verified_text(p: &Produced) -> Option<String> {
    match (&p.answer, &p.text) {
        (Some(a), _) => Some(flatten_answer(a)),
        (None, Some(t)) => Some(t.clone()),
        (None, None) => None,
    }
}

/// The evidence a block checks against: its sources' pages, or what tool steps read from them.
fn evidence(
    sh: &Shared,
    m: &Matter,
    v: &Verify,
    results: &BTreeMap<String, Arc<Produced>>,
) -> verify::Evidence {
    let mut ev = verify::Evidence::new(sh.prefixes.clone());
    ev.allowed_reporters = verify::Allowed::new(&v.allow_reporters);
    ev.ignored_prefixes = v.ignore_prefixes.clone();
    for a in &v.against {
        if let Some(files) = m.evidence.get(a) {
            for f in files {
                ev.add_pages(f.path.clone(), f.pages.clone());
            }
        } else if let Some(p) = results.get(a) {
            for (f, pages) in &p.pages {
                ev.add_pages(f.clone(), pages.clone());
            }
            if p.pages.is_empty() {
                for f in &p.files {
                    let _ = ev.add_path(f);
                }
            }
        }
    }
    ev
}

/// Checks the text (off the scheduler's threads), judges its propositions when the block
/// holds them, and makes the review page from the same evidence. `None` when the run fails:
/// `done` says why.
#[allow(clippy::too_many_arguments)]
async fn check(
    sh: &Arc<Shared>,
    m: &Arc<Matter>,
    v: &Verify,
    stage_idx: usize,
    round: u32,
    text: &str,
    ev: verify::Evidence,
    done: &mut Done,
) -> Option<(verify::Verification, String)> {
    let exactly = v
        .rules
        .iter()
        .any(|r| r.claims == ClaimKind::Quote && r.must == Must::MatchExactly);
    let t = text.to_string();
    let checked = tokio::task::spawn_blocking(move || {
        let mut outcome = verify::verify(&t, &ev);
        if exactly {
            verify::hold_quotes_exactly(&mut outcome.outcomes, &ev);
        }
        (outcome, ev)
    })
    .await;
    let Ok((mut outcome, ev)) = checked else {
        done.fail("the verifier stopped unexpectedly");
        return None;
    };
    let judged = v.judge.is_some() && v.rules.iter().any(|r| r.claims == ClaimKind::Proposition);
    if judged && !outcome.propositions.is_empty() {
        let model = v.judge.clone().unwrap_or_default();
        let step = judge::JudgedStep {
            stage_idx,
            stage: &v.stage,
            model: &model,
            round,
        };
        let (r, judged) = judge::judge_step(sh, m, step, &ev, &outcome.propositions).await;
        let why = r.why.clone();
        done.records.push(r);
        let Some(j) = judged else {
            done.fail(why.unwrap_or_else(|| "the judge failed".into()));
            return None;
        };
        outcome.outcomes.extend(j);
        outcome
            .outcomes
            .sort_by_key(|o| (o.claim.start, o.claim.kind));
    }
    // The reviewers' standing decisions on this matter's claims.
    if let Some(store) = &sh.store {
        let key = verify::decisions::matter_key(&m.name, Some(&m.dir));
        match store.standing_decisions(&key) {
            Ok(standing) => {
                verify::decisions::apply(&mut outcome, text, &ev, &key, &standing);
            }
            Err(e) => {
                done.fail(format!(
                    "the reviewers' decisions could not be read from the ledger: {e}"
                ));
                return None;
            }
        }
    }
    let (title, draft) = (
        format!("{} (stage `{}`)", m.name, v.stage),
        text.to_string(),
    );
    let provenance = review_provenance(sh, m, stage_idx, round);
    let made = tokio::task::spawn_blocking(move || {
        let page = crate::review::page(&crate::review::Review {
            title: &title,
            draft: &draft,
            outcomes: &outcome.outcomes,
            files: &outcome.files,
            evidence: &ev,
            provenance,
            images: true,
            ids: &outcome.ids,
        });
        (outcome, page)
    })
    .await;
    match made {
        Ok(x) => Some(x),
        Err(_) => {
            done.fail("the review page could not be made");
            None
        }
    }
}

/// The claims that failed, by the policy of the rule that covers their kind.
struct Sorted<'a> {
    blocking: Vec<&'a verify::Outcome>,
    revising: Vec<&'a verify::Outcome>,
    flagged: usize,
}

impl<'a> Sorted<'a> {
    fn of(v: &Verify, checked: &'a verify::Verification) -> Sorted<'a> {
        let mut s = Sorted {
            blocking: Vec::new(),
            revising: Vec::new(),
            flagged: 0,
        };
        // A claim a reviewer struck must come out, whatever its rule's policy.
        let struck = verify::decisions::struck(checked);
        // Unrecognised citations fall under the citations rule like unsupported ones.
        for (i, o) in checked
            .outcomes
            .iter()
            .enumerate()
            .filter(|(_, o)| o.status != verify::Status::Supported)
        {
            if struck.contains(&i) {
                s.blocking.push(o);
                continue;
            }
            let Some(rule) = v.rules.iter().find(|r| r.claims == o.claim.kind) else {
                continue;
            };
            match rule.policy {
                Policy::Block => s.blocking.push(o),
                Policy::Revise => s.revising.push(o),
                Policy::Flag => s.flagged += 1,
            }
        }
        s
    }

    fn unsupported(&self) -> usize {
        self.blocking.len() + self.revising.len() + self.flagged
    }

    /// What the round decides; `rounds_left` when another revision may be asked for.
    fn decision(&self, rounds_left: bool) -> Decision {
        if !self.blocking.is_empty() {
            Decision::Blocked
        } else if !self.revising.is_empty() {
            match rounds_left {
                true => Decision::Revised,
                false => Decision::Blocked,
            }
        } else if self.flagged > 0 {
            Decision::Flagged
        } else {
            Decision::Passed
        }
    }
}

/// `report.md`, `.html` (the review page) and `.json` of one round, with the `note` on the
/// decision at the end of the Markdown; returns the Markdown's path.
#[allow(clippy::too_many_arguments)]
fn write_reports(
    sh: &Shared,
    m: &Matter,
    v: &Verify,
    round: u32,
    name: &str,
    text: &str,
    outcome: &verify::Verification,
    page: String,
    note: Option<&str>,
) -> PathBuf {
    let dir = m.run_dir.join(format!("verify-{}", v.stage));
    let _ = crate::atomic::private_dir(&dir);
    let report = if round > 1 {
        dir.join(format!("report-round-{round}.md"))
    } else {
        dir.join("report.md")
    };
    let mut md = verify::report::markdown(name, text, outcome);
    if let Some(n) = note {
        md.push_str(&format!("\n**Note:** {n}.\n"));
    }
    let _ = crate::atomic::write_private(&report, md);
    let _ = crate::atomic::write_private(report.with_extension("html"), page);
    let _ =
        crate::atomic::write_private(report.with_extension("json"), verify::report::json(outcome));
    let _ = crate::atomic::write_private(
        dir.join("review.json"),
        serde_json::to_vec_pretty(&review_context(sh, m, v, text, outcome)).unwrap_or_default(),
    );
    report
}

/// What `lexrun decide` and `lexrun review` need to decide on this verification's claims.
fn review_context(
    sh: &Shared,
    m: &Matter,
    v: &Verify,
    text: &str,
    outcome: &verify::Verification,
) -> verify::decisions::Context {
    let mut sources = Vec::new();
    for a in &v.against {
        for f in m.evidence.get(a).into_iter().flatten() {
            let disk = [std::path::PathBuf::from(&f.path), m.dir.join(&f.path)]
                .into_iter()
                .find(|p| p.is_file())
                .and_then(|p| p.canonicalize().ok());
            if let Some(disk) = disk {
                sources.push((f.path.clone(), disk.display().to_string()));
            }
        }
    }
    verify::decisions::Context {
        matter: m.name.clone(),
        matter_dir: m
            .dir
            .canonicalize()
            .unwrap_or_else(|_| m.dir.clone())
            .display()
            .to_string(),
        run_id: sh.run_id.clone(),
        stage: v.stage.clone(),
        draft: text.to_string(),
        sources,
        prefixes: sh.prefixes.clone(),
        allow_reporters: v.allow_reporters.clone(),
        exactly: v
            .rules
            .iter()
            .any(|r| r.claims == ClaimKind::Quote && r.must == Must::MatchExactly),
        judged: outcome
            .outcomes
            .iter()
            .filter(|o| o.claim.kind == ClaimKind::Proposition)
            .map(verify::decisions::Judged::of)
            .collect(),
        ledger_names: Vec::new(),
        decision_matter: verify::decisions::matter_key(&m.name, Some(&m.dir)),
    }
}

/// What a revision is told: each unsupported claim, with why.
fn feedback(revising: &[&verify::Outcome]) -> String {
    let mut fb = String::from(
        "These statements are not supported by the evidence. Remove each one or correct it from the record:\n",
    );
    for o in revising {
        fb.push_str(&format!(
            "- {} `{}`{}\n",
            o.claim.kind.as_str(),
            o.claim.text,
            o.reason
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        ));
    }
    fb
}

/// The provenance a stage's review page shows and carries.
fn review_provenance(
    sh: &Shared,
    m: &Matter,
    stage_idx: usize,
    round: u32,
) -> Vec<(String, String)> {
    let step = &sh.plan.steps[stage_idx].item;
    let model = match &step.kind {
        StepKind::Model(ms) => ms.model.clone(),
        StepKind::Tool(_) => "none (a tool step)".into(),
    };
    vec![
        ("run".into(), sh.run_id.clone()),
        ("matter".into(), m.name.clone()),
        ("stage".into(), step.name.clone()),
        ("round".into(), round.to_string()),
        ("model".into(), model),
        ("plan hash".into(), sh.plan.hash.clone()),
    ]
}
