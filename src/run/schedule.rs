//! The scheduler: starts every unit whose dependencies (stated by the plan) are done, for
//! every matter at once; skips what a `when`, a stop or a block rules out; records what
//! finished, and what Ctrl-C cut short.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tokio::task::JoinSet;

use crate::plan::workflow::StepKind;
use crate::plan::Unit;
use crate::run::expr;
use crate::run::record::{MatterRecord, Status};
use crate::run::shared::{Matter, Produced, Shared};
use crate::run::stage::{run_model_unit, run_tool_unit};
use crate::run::unit::{base_record, stage_key, Done};
use crate::run::verification::run_verify_unit;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum State {
    Waiting,
    Running,
    Finished(Status, Option<String>),
}

pub(super) async fn schedule(
    sh: &Arc<Shared>,
    matters: &[Arc<Matter>],
) -> (Vec<MatterRecord>, bool) {
    let deps = sh.plan.dependencies();
    let units: Vec<Unit> = deps.keys().copied().collect();
    let mut state: Vec<BTreeMap<Unit, State>> = matters
        .iter()
        .map(|_| units.iter().map(|u| (*u, State::Waiting)).collect())
        .collect();
    let mut results: Vec<BTreeMap<String, Arc<Produced>>> =
        matters.iter().map(|_| BTreeMap::new()).collect();
    let mut records: Vec<MatterRecord> = matters
        .iter()
        .map(|m| MatterRecord {
            name: m.name.clone(),
            dir: m.dir.display().to_string(),
            status: Status::Done,
            stopped_by: None,
            steps: Vec::new(),
            verifications: Vec::new(),
            outputs: Vec::new(),
        })
        .collect();
    // Sources are results from the start.
    for (mi, m) in matters.iter().enumerate() {
        for (name, files) in &m.evidence {
            let p = Produced {
                // Files on disk, for the tools; attachments reach them inside their file.
                files: files
                    .iter()
                    .filter(|f| f.embedded.is_none())
                    .map(|f| PathBuf::from(&f.path))
                    .collect(),
                pages: files
                    .iter()
                    .filter(|f| !f.pages.is_empty())
                    .map(|f| (f.path.clone(), f.pages.clone()))
                    .collect(),
                ..Produced::default()
            };
            results[mi].insert(name.clone(), Arc::new(p));
        }
    }
    let mut set: JoinSet<Done> = JoinSet::new();
    let mut running: BTreeMap<tokio::task::Id, (usize, Unit)> = BTreeMap::new();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut cancelled = false;
    loop {
        // Start what is ready, matter by matter, in plan order: earlier matters first, so a
        // pool's queue serves them in turn.
        let mut progressed = true;
        while progressed {
            progressed = false;
            for mi in 0..matters.len() {
                for u in &units {
                    if state[mi][u] != State::Waiting {
                        continue;
                    }
                    let mut ready = true;
                    let mut blocked_by = None;
                    for d in &deps[u] {
                        match &state[mi][d] {
                            State::Finished(Status::Done, _) => {}
                            State::Finished(st, why) => {
                                blocked_by = Some((*d, *st, why.clone()));
                                break;
                            }
                            _ => ready = false,
                        }
                    }
                    if let Some((d, st, why)) = blocked_by {
                        let name = unit_name(sh, d);
                        let why = match st {
                            Status::Stopped => {
                                why.unwrap_or_else(|| format!("stopped by `{name}`"))
                            }
                            Status::Skipped => format!("`{name}` was skipped"),
                            Status::Blocked => format!("`{name}` was blocked by verification"),
                            Status::Cancelled => "cancelled".into(),
                            _ => format!("`{name}` did not finish"),
                        };
                        let st = if st == Status::Stopped {
                            Status::Stopped
                        } else {
                            Status::Skipped
                        };
                        skip(
                            sh,
                            &mut records[mi],
                            *u,
                            st,
                            &why,
                            matters.len() > 1,
                            &matters[mi],
                        );
                        state[mi].insert(*u, State::Finished(st, Some(why)));
                        progressed = true;
                        continue;
                    }
                    if !ready {
                        continue;
                    }
                    // `when` decides now that its inputs are known.
                    if let Unit::Step(i) = u {
                        let step = &sh.plan.steps[*i];
                        if let Some(cond) = &step.when {
                            let res = &results[mi];
                            let answer = |s: &str| res.get(s).and_then(|p| p.answer.clone());
                            match expr::eval(cond, &answer) {
                                Ok(true) => {}
                                Ok(false) => {
                                    let why = format!("`when {cond}` does not hold");
                                    skip(
                                        sh,
                                        &mut records[mi],
                                        *u,
                                        Status::Skipped,
                                        &why,
                                        false,
                                        &matters[mi],
                                    );
                                    state[mi]
                                        .insert(*u, State::Finished(Status::Skipped, Some(why)));
                                    progressed = true;
                                    continue;
                                }
                                Err(e) => {
                                    let why = format!("cannot decide `when {cond}`: {e}");
                                    let mut r = base_record(sh, *i);
                                    r.status = Some(Status::Failed);
                                    r.why = Some(why.clone());
                                    records[mi].steps.push(r);
                                    state[mi]
                                        .insert(*u, State::Finished(Status::Failed, Some(why)));
                                    progressed = true;
                                    continue;
                                }
                            }
                        }
                    }
                    // A ledger that is gone: nothing more is started, and the run says why
                    // once, at its end.
                    if sh.store.as_ref().is_some_and(|s| s.lost().is_some()) {
                        let why = "not started: the ledger was lost".to_string();
                        skip(
                            sh,
                            &mut records[mi],
                            *u,
                            Status::Skipped,
                            &why,
                            matters.len() > 1,
                            &matters[mi],
                        );
                        state[mi].insert(*u, State::Finished(Status::Skipped, Some(why)));
                        progressed = true;
                        continue;
                    }
                    state[mi].insert(*u, State::Running);
                    progressed = true;
                    let sh2 = sh.clone();
                    let m = matters[mi].clone();
                    let res = results[mi].clone();
                    let unit = *u;
                    let h = set.spawn(async move { run_unit(sh2, mi, m, unit, res).await });
                    running.insert(h.id(), (mi, unit));
                }
            }
        }
        if set.is_empty() {
            break;
        }
        tokio::select! {
            joined = set.join_next_with_id() => {
                let Some(joined) = joined else { break };
                let done = match joined {
                    Ok((id, d)) => {
                        running.remove(&id);
                        d
                    }
                    Err(e) => {
                        // A task that panicked: record it against its unit, keep the rest.
                        let Some((mi, unit)) = running.remove(&e.id()) else { continue };
                        Done {
                            matter: mi,
                            unit,
                            status: Status::Failed,
                            why: Some(format!("internal error: {e}")),
                            results: Vec::new(),
                            records: Vec::new(),
                            verification: Vec::new(),
                        }
                    }
                };
                let mi = done.matter;
                for (name, p) in done.results {
                    results[mi].insert(name, Arc::new(p));
                }
                records[mi].steps.extend(done.records);
                records[mi].verifications.extend(done.verification);
                if done.status == Status::Stopped && records[mi].stopped_by.is_none() {
                    records[mi].stopped_by = done.why.clone();
                }
                state[mi].insert(done.unit, State::Finished(done.status, done.why));
            }
            _ = &mut ctrl_c => {
                cancelled = true;
                sh.events.say("cancelled: keeping every finished step; stopping the rest");
                set.abort_all();
                while set.join_next().await.is_some() {}
                for (mi, unit) in running.values() {
                    if let Unit::Step(i) = unit {
                        let mut r = base_record(sh, *i);
                        r.status = Some(Status::Cancelled);
                        r.why = Some("cancelled by the user".into());
                        records[*mi].steps.push(r);
                    }
                    state[*mi].insert(*unit, State::Finished(Status::Cancelled, None));
                }
                break;
            }
        }
    }
    for (mi, rec) in records.iter_mut().enumerate() {
        // Steps never reached (cancelled runs) are recorded as such.
        for (u, st) in &state[mi] {
            if let (State::Waiting, Unit::Step(i)) = (st, u) {
                let mut r = base_record(sh, *i);
                r.status = Some(Status::Cancelled);
                r.why = Some("not started".into());
                rec.steps.push(r);
            }
        }
        rec.status = if rec
            .steps
            .iter()
            .any(|s| matches!(s.status, Some(Status::Failed)))
        {
            Status::Failed
        } else if rec
            .steps
            .iter()
            .any(|s| matches!(s.status, Some(Status::Blocked)))
        {
            Status::Blocked
        } else if cancelled {
            Status::Cancelled
        } else if rec.stopped_by.is_some() {
            Status::Stopped
        } else {
            Status::Done
        };
        let order: BTreeMap<&str, usize> = sh
            .plan
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let vorder = |stage: &str| sh.plan.verify.iter().position(|v| v.stage == stage);
        rec.verifications
            .sort_by_key(|v| (vorder(&v.stage), v.round));
        // Plan order, then round: the same for every run, whatever ran first.
        rec.steps.sort_by_key(|s| {
            let base = s.name.strip_prefix("verify ").unwrap_or(&s.name);
            (order.get(base).copied(), s.round, s.kind == "verify")
        });
    }
    (records, cancelled)
}

pub(super) fn unit_name(sh: &Shared, u: Unit) -> String {
    match u {
        Unit::Step(i) => sh.plan.steps[i].name.clone(),
        Unit::Verify(i) => format!("verify {}", sh.plan.verify[i].stage),
    }
}

pub(super) fn skip(
    sh: &Shared,
    rec: &mut MatterRecord,
    u: Unit,
    st: Status,
    why: &str,
    multi: bool,
    m: &Matter,
) {
    if let Unit::Step(i) = u {
        let mut r = base_record(sh, i);
        r.status = Some(if st == Status::Stopped {
            Status::Skipped
        } else {
            st
        });
        r.why = Some(why.to_string());
        r.summary = format!("skipped: {why}");
        let key = stage_key(multi, &m.name, &r.name);
        sh.events
            .stage_finished(&key, "skipped", why, json!({"matter": m.name}));
        rec.steps.push(r);
    }
}

pub(super) async fn run_unit(
    sh: Arc<Shared>,
    mi: usize,
    m: Arc<Matter>,
    unit: Unit,
    results: BTreeMap<String, Arc<Produced>>,
) -> Done {
    let mut done = Done {
        matter: mi,
        unit,
        status: Status::Done,
        why: None,
        results: Vec::new(),
        records: Vec::new(),
        verification: Vec::new(),
    };
    match unit {
        Unit::Step(i) => {
            let step = sh.plan.steps[i].clone();
            match &step.kind {
                StepKind::Tool(_) => run_tool_unit(&sh, &m, i, &results, &mut done).await,
                StepKind::Model(ms) => {
                    run_model_unit(&sh, &m, i, ms, &results, &mut done).await;
                }
            }
        }
        Unit::Verify(v) => run_verify_unit(&sh, &m, v, &results, &mut done).await,
    }
    done
}
