//! A step's execution: a tool stage on the CPU, or a model stage — one call, or a
//! reviewer's revise loop around its target — with the variables its template sees.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use crate::call::stage_call;
use crate::plan::workflow::{ModelStage, OptionValue, Step, StepKind, ToolStage};
use crate::record::Status;
use crate::shared::{Matter, Produced, Shared};
use crate::unit::{base_record, stage_key, Done};
use crate::{expr, judge, production, tools};

pub(super) async fn run_tool_unit(
    sh: &Arc<Shared>,
    m: &Arc<Matter>,
    i: usize,
    results: &BTreeMap<String, Arc<Produced>>,
    done: &mut Done,
) {
    let step = sh.plan.steps[i].item.clone();
    let StepKind::Tool(tool) = step.kind.clone() else {
        return;
    };
    let mut rec = base_record(sh, i);
    let started = Instant::now();
    let key = stage_key(sh.multi, &m.name, &step.name);
    sh.events.stage_started(&key, "cpu", &tool.tool, 1);
    let inputs: Vec<PathBuf> = step
        .reads
        .iter()
        .flat_map(|r| results.get(r).map(|p| p.files.clone()).unwrap_or_default())
        .collect();
    let dir = m.run_dir.join(&step.name);
    let (sh2, m2, res) = (sh.clone(), m.clone(), results.clone());
    let ins = inputs.clone();
    let judge = match tool.options.get("judge") {
        Some(OptionValue::Text(j)) if tool.tool == "verify-draft" => Some(j.clone()),
        _ => None,
    };
    let ran = match judge {
        Some(model) => judged_draft(sh, m, i, &step, &tool, &model, results, done).await,
        None => tokio::task::spawn_blocking(move || match &tool.production {
            Some(p) => {
                let ledger = sh2.store.as_deref().map(|st| (st, sh2.run_id.as_str()));
                production::run(p, &ins, &m2.dir, &m2.out_dir, ledger).map_err(|e| e.to_string())
            }
            None => {
                let place = tools::Place {
                    matter: &m2.dir,
                    library: &sh2.library,
                };
                tools::run(&step, &tool, &ins, &dir, &place, &sh2.bates_of, &res)
                    .map_err(|e| e.to_string())
            }
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r),
    };
    rec.duration_ms = started.elapsed().as_millis() as u64;
    rec.inputs = inputs.iter().map(|p| p.display().to_string()).collect();
    match ran {
        Ok((p, summary)) => {
            rec.outputs = p
                .files
                .iter()
                .chain(p.primary.values())
                .map(|p| p.display().to_string())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            rec.status = Some(Status::Done);
            rec.summary = summary.clone();
            sh.events.stage_finished(
                &key,
                "done",
                &format!("{summary} ({} ms)", rec.duration_ms),
                json!({"matter": m.name, "summary": summary}),
            );
            done.results.push((rec.name.clone(), p));
        }
        Err(why) => {
            rec.status = Some(Status::Failed);
            rec.why = Some(why.clone());
            rec.summary = format!("failed: {why}");
            sh.events
                .stage_finished(&key, "failed", &why, json!({"matter": m.name, "why": why}));
            done.fail(why);
        }
    }
    done.records.push(rec);
}

/// A `verify-draft` tool with a `judge`: the draft checked, its sentences that cite pages
/// judged by the model (a step `judge TOOL` of its own), then the reports written.
#[allow(clippy::too_many_arguments)]
async fn judged_draft(
    sh: &Arc<Shared>,
    m: &Arc<Matter>,
    i: usize,
    step: &Step,
    tool: &ToolStage,
    model: &str,
    results: &BTreeMap<String, Arc<Produced>>,
    done: &mut Done,
) -> Result<(Produced, String), String> {
    let (s2, t2, m2, sh2, res) = (
        step.clone(),
        tool.clone(),
        m.clone(),
        sh.clone(),
        results.clone(),
    );
    let mut checked = tokio::task::spawn_blocking(move || {
        let place = tools::Place {
            matter: &m2.dir,
            library: &sh2.library,
        };
        tools::draft_check(&s2, &t2, &place, &res)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    let props = std::mem::take(&mut checked.verification.propositions);
    if !props.is_empty() {
        let judged = judge::JudgedStep {
            stage_idx: i,
            stage: &step.name,
            model,
            round: 1,
        };
        let (r, outcomes) = judge::judge_step(sh, m, judged, &checked.evidence, &props).await;
        let why = r.why.clone();
        done.records.push(r);
        let Some(outcomes) = outcomes else {
            return Err(why.unwrap_or_else(|| "the judge failed".into()));
        };
        let v = &mut checked.verification;
        v.outcomes.extend(outcomes);
        v.outcomes.sort_by_key(|o| (o.claim.start, o.claim.kind));
        checked.judge = Some(model.to_string());
    }
    checked.verification.propositions = props;
    let (s2, dir) = (step.clone(), m.run_dir.join(&step.name));
    tokio::task::spawn_blocking(move || tools::draft_reports(&s2, &dir, &checked))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

/// A model stage: one call, or a reviewer's revise loop around its target.
pub(super) async fn run_model_unit(
    sh: &Arc<Shared>,
    m: &Arc<Matter>,
    i: usize,
    ms: &ModelStage,
    results: &BTreeMap<String, Arc<Produced>>,
    done: &mut Done,
) {
    let step = &sh.plan.steps[i];
    let mut results = results.clone();
    let Some(mut out) = done.call(stage_call(sh, m, i, &results, 1, None).await) else {
        return;
    };
    // The revise loop: target and reviewer take turns until the reviewer is satisfied.
    if let Some(rev) = &ms.revise {
        let target = sh.plan.steps.iter().position(|s| s.name == rev.target);
        let mut round = 1;
        loop {
            let answer = out.answer.clone();
            let me = step.name.clone();
            let holds = expr::eval(&rev.until, &|s: &str| {
                if s == me {
                    answer.clone()
                } else {
                    results.get(s).and_then(|p| p.answer.clone())
                }
            });
            match holds {
                Ok(true) => break,
                Ok(false) if round <= rev.max_rounds => {}
                Ok(false) => {
                    sh.events.warn(
                        &stage_key(sh.multi, &m.name, &step.name),
                        &format!(
                            "`{}` still does not hold after {} rounds of revision; going on with the last version",
                            rev.until, rev.max_rounds
                        ),
                    );
                    if let Some(r) = done.records.last_mut() {
                        r.warnings.push(format!(
                            "`{}` did not hold after {} revise rounds",
                            rev.until, rev.max_rounds
                        ));
                    }
                    // The reviewer never passed the last version: what is made of it is not
                    // final. Its latest revision (or, with no round of revision, the review
                    // itself) is incomplete, so its documents are written only as marked drafts.
                    let why = format!(
                        "its review `{}` never passed it: `{}` still objected after {} rounds of revision",
                        rev.until, step.name, rev.max_rounds
                    );
                    let latest = done
                        .records
                        .iter()
                        .rposition(|r| r.name == rev.target)
                        .or_else(|| done.records.len().checked_sub(1));
                    if let Some(r) = latest.and_then(|k| done.records.get_mut(k)) {
                        if r.status != Some(Status::Incomplete) {
                            r.status = Some(Status::Incomplete);
                            r.why = Some(why);
                        }
                    }
                    break;
                }
                Err(e) => {
                    done.fail_step(format!("cannot decide `until {}`: {e}", rev.until));
                    return;
                }
            }
            let Some(t) = target else { break };
            round += 1;
            let feedback = feedback_of(&out);
            let Some(p) = done.call(stage_call(sh, m, t, &results, round, Some(feedback)).await)
            else {
                return;
            };
            done.replace(&mut results, &rev.target, p);
            let Some(p) = done.call(stage_call(sh, m, i, &results, round, None).await) else {
                return;
            };
            out = p;
        }
    }
    // `stop when`: this stage finished, and everything downstream is skipped.
    if let Some(cond) = &ms.stop_when {
        let answer = out.answer.clone();
        match expr::eval(cond, &|s: &str| {
            if s == step.name {
                answer.clone()
            } else {
                results.get(s).and_then(|p| p.answer.clone())
            }
        }) {
            Ok(true) => {
                let reason = out
                    .answer
                    .as_ref()
                    .and_then(|a| a.get("reason"))
                    .and_then(|r| r.as_str())
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                done.status = Status::Stopped;
                done.why = Some(format!(
                    "`{}` stopped the workflow (`stop when {cond}`){reason}",
                    step.name
                ));
                if let Some(r) = done.records.last_mut() {
                    r.status = Some(Status::Stopped);
                    r.why = done.why.clone();
                }
            }
            Ok(false) => {}
            Err(e) => done.fail_step(format!("cannot decide `stop when {cond}`: {e}")),
        }
    }
    done.results.push((step.name.clone(), out));
}

/// A reviewer's answer as revision feedback: its lists as bullets, its text as is.
pub(super) fn feedback_of(p: &Produced) -> String {
    let Some(Value::Object(a)) = &p.answer else {
        return p.text.clone().unwrap_or_default();
    };
    let mut out = String::new();
    for (k, v) in a {
        match v {
            Value::Array(items) if !items.is_empty() => {
                out.push_str(&format!("{k}:\n"));
                for it in items {
                    match it.as_str() {
                        Some(s) => out.push_str(&format!("- {s}\n")),
                        None => out.push_str(&format!("- {it}\n")),
                    }
                }
            }
            Value::String(s) if !s.trim().is_empty() => out.push_str(&format!("{k}: {s}\n")),
            _ => {}
        }
    }
    if out.is_empty() {
        out = serde_json::to_string_pretty(a).unwrap_or_default();
    }
    out
}
