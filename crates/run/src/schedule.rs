//! The scheduler: starts every unit whose dependencies (stated by the plan) are done, for
//! every matter at once; skips what a `when`, a stop or a block rules out; records what
//! finished, and what Ctrl-C cut short.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use tokio::task::JoinSet;

use crate::expr;
use crate::plan::workflow::StepKind;
use crate::plan::Unit;
use crate::record::{MatterRecord, Status};
use crate::shared::{Matter, Produced, Shared};
use crate::stage::{run_model_unit, run_tool_unit};
use crate::unit::{base_record, stage_key, Done};
use crate::verification::run_verify_unit;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum State {
    Waiting,
    Running,
    Finished(Status, Option<String>),
}

/// Where every matter stands: each unit's state, the results so far, and the records.
struct Board {
    state: Vec<BTreeMap<Unit, State>>,
    results: Vec<BTreeMap<String, Arc<Produced>>>,
    records: Vec<MatterRecord>,
}

/// What the scheduler does next with a waiting unit.
enum Next {
    /// Some dependency has not finished yet.
    Wait,
    /// Not run: the status, why, and whether its event names the matter.
    Skip(Status, String, bool),
    /// Step `usize` fails before it starts, for the reason given.
    Fail(usize, String),
    /// Everything it needs is there.
    Start,
}

pub(super) async fn schedule(
    sh: &Arc<Shared>,
    matters: &[Arc<Matter>],
) -> (Vec<MatterRecord>, bool) {
    let deps = sh.plan.dependencies();
    let units: Vec<Unit> = deps.keys().copied().collect();
    let mut board = Board::new(matters, &units);
    let mut set: JoinSet<Done> = JoinSet::new();
    let mut running: BTreeMap<tokio::task::Id, (usize, Unit)> = BTreeMap::new();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut cancelled = false;
    loop {
        board.start_ready(sh, matters, &units, &deps, &mut set, &mut running);
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
                        let mut d = Done::new(mi, unit);
                        d.fail(format!("internal error: {e}"));
                        d
                    }
                };
                board.absorb(done);
            }
            _ = async { tokio::select! { _ = &mut ctrl_c => {}, _ = sh.events.stopped() => {} } } => {
                cancelled = true;
                sh.events.say("cancelled: keeping every finished step; stopping the rest");
                set.abort_all();
                while set.join_next().await.is_some() {}
                board.cancel_running(sh, running.values());
                break;
            }
        }
    }
    board.finish(sh, cancelled);
    (board.records, cancelled)
}

impl Board {
    /// Every unit waiting, every matter's record empty, and its sources already results.
    fn new(matters: &[Arc<Matter>], units: &[Unit]) -> Board {
        let state = matters
            .iter()
            .map(|_| units.iter().map(|u| (*u, State::Waiting)).collect())
            .collect();
        let results = matters.iter().map(|m| source_results(m)).collect();
        let records = matters
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
        Board {
            state,
            results,
            records,
        }
    }

    /// Starts what is ready, matter by matter, in plan order (earlier matters first, so a
    /// pool's queue serves them in turn), settling skipped and failed units on the way,
    /// until nothing more changes.
    fn start_ready(
        &mut self,
        sh: &Arc<Shared>,
        matters: &[Arc<Matter>],
        units: &[Unit],
        deps: &BTreeMap<Unit, Vec<Unit>>,
        set: &mut JoinSet<Done>,
        running: &mut BTreeMap<tokio::task::Id, (usize, Unit)>,
    ) {
        let multi = matters.len() > 1;
        let mut progressed = true;
        while progressed {
            progressed = false;
            for (mi, matter) in matters.iter().enumerate() {
                for u in units {
                    if self.state[mi][u] != State::Waiting {
                        continue;
                    }
                    match self.next(sh, mi, *u, &deps[u], multi) {
                        Next::Wait => continue,
                        Next::Skip(st, why, named) => {
                            skip(sh, &mut self.records[mi], *u, st, &why, named, matter);
                            self.state[mi].insert(*u, State::Finished(st, Some(why)));
                        }
                        Next::Fail(i, why) => {
                            let mut r = base_record(sh, i);
                            r.status = Some(Status::Failed);
                            r.why = Some(why.clone());
                            self.records[mi].steps.push(r);
                            self.state[mi].insert(*u, State::Finished(Status::Failed, Some(why)));
                        }
                        Next::Start => {
                            self.state[mi].insert(*u, State::Running);
                            let sh2 = sh.clone();
                            let m = matter.clone();
                            let res = self.results[mi].clone();
                            let unit = *u;
                            let h = set.spawn(async move { run_unit(sh2, mi, m, unit, res).await });
                            running.insert(h.id(), (mi, unit));
                        }
                    }
                    progressed = true;
                }
            }
        }
    }

    /// What to do with waiting unit `u` of matter `mi`: a dependency that did not finish
    /// well skips it, a `when` decides now that its inputs are known, and a ledger that is
    /// gone starts nothing more (the run says why once, at its end).
    fn next(&self, sh: &Shared, mi: usize, u: Unit, deps: &[Unit], multi: bool) -> Next {
        let mut ready = true;
        for d in deps {
            match &self.state[mi][d] {
                State::Finished(Status::Done, _) => {}
                State::Finished(st, why) => return blocked(sh, *d, *st, why.clone(), multi),
                _ => ready = false,
            }
        }
        if !ready {
            return Next::Wait;
        }
        if let Unit::Step(i) = u {
            if let Some(cond) = &sh.plan.steps[i].when {
                let res = &self.results[mi];
                let answer = |s: &str| res.get(s).and_then(|p| p.answer.clone());
                match expr::eval(cond, &answer) {
                    Ok(true) => {}
                    Ok(false) => {
                        let why = format!("`when {cond}` does not hold");
                        return Next::Skip(Status::Skipped, why, false);
                    }
                    Err(e) => return Next::Fail(i, format!("cannot decide `when {cond}`: {e}")),
                }
            }
        }
        if sh.store.as_ref().is_some_and(|s| s.lost().is_some()) {
            let why = "not started: the ledger was lost".to_string();
            return Next::Skip(Status::Skipped, why, multi);
        }
        Next::Start
    }

    /// Takes in what a finished task reports: its results, records and final state.
    fn absorb(&mut self, done: Done) {
        let mi = done.matter;
        for (name, p) in done.results {
            self.results[mi].insert(name, Arc::new(p));
        }
        let rec = &mut self.records[mi];
        rec.steps.extend(done.records);
        rec.verifications.extend(done.verification);
        if done.status == Status::Stopped && rec.stopped_by.is_none() {
            rec.stopped_by = done.why.clone();
        }
        self.state[mi].insert(done.unit, State::Finished(done.status, done.why));
    }

    /// Records the units Ctrl-C cut short as cancelled.
    fn cancel_running<'a>(
        &mut self,
        sh: &Shared,
        running: impl Iterator<Item = &'a (usize, Unit)>,
    ) {
        for (mi, unit) in running {
            if let Unit::Step(i) = unit {
                let mut r = base_record(sh, *i);
                r.status = Some(Status::Cancelled);
                r.why = Some("cancelled by the user".into());
                self.records[*mi].steps.push(r);
            }
            self.state[*mi].insert(*unit, State::Finished(Status::Cancelled, None));
        }
    }

    /// Completes every matter's record: steps never reached, the matter's status, and
    /// steps and verifications in plan order, then round, the same for every run.
    fn finish(&mut self, sh: &Shared, cancelled: bool) {
        for (mi, rec) in self.records.iter_mut().enumerate() {
            // Steps never reached (cancelled runs) are recorded as such.
            for (u, st) in &self.state[mi] {
                if let (State::Waiting, Unit::Step(i)) = (st, u) {
                    let mut r = base_record(sh, *i);
                    r.status = Some(Status::Cancelled);
                    r.why = Some("not started".into());
                    rec.steps.push(r);
                }
            }
            rec.status = matter_status(rec, cancelled);
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
    }
}

/// A matter's sources as results from the start: files on disk, for the tools
/// (attachments reach them inside their file), and the pages read from them.
fn source_results(m: &Matter) -> BTreeMap<String, Arc<Produced>> {
    let mut results = BTreeMap::new();
    for (name, files) in &m.evidence {
        let p = Produced {
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
        results.insert(name.clone(), Arc::new(p));
    }
    results
}

/// A unit whose dependency `d` finished with `st`: stopped if the dependency stopped the
/// matter, otherwise skipped, with why.
fn blocked(sh: &Shared, d: Unit, st: Status, why: Option<String>, multi: bool) -> Next {
    let name = unit_name(sh, d);
    let why = match st {
        Status::Stopped => why.unwrap_or_else(|| format!("stopped by `{name}`")),
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
    Next::Skip(st, why, multi)
}

/// A matter's status from its steps: any failure, then any block, then a cancelled run,
/// then an incomplete answer, then a stop; otherwise done.
fn matter_status(rec: &MatterRecord, cancelled: bool) -> Status {
    let any = |st: Status| rec.steps.iter().any(|s| s.status == Some(st));
    if any(Status::Failed) {
        Status::Failed
    } else if any(Status::Blocked) {
        Status::Blocked
    } else if cancelled {
        Status::Cancelled
    } else if !rec.incomplete_steps().is_empty() {
        Status::Incomplete
    } else if rec.stopped_by.is_some() {
        Status::Stopped
    } else {
        Status::Done
    }
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
    let mut done = Done::new(mi, unit);
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
