//! Running a plan over one or more matters, against the firm's model servers.
//!
//! The scheduler (tokio) starts every step whose inputs are ready, for every matter at once;
//! each pool serves `slots` calls at a time, so with several matters each board works on a
//! different matter while the others wait their turn. Model stages go through [`backend`];
//! tool stages run on the CPU (`tools`). `when` skips a step, `stop when` halts everything
//! downstream of its stage (exit 3), `revise T until …` loops the target and its reviewer, and
//! each `verify` block checks its stage's text against the evidence before anything reads it:
//! `block` stops unsupported content, `revise` sends it back with the unsupported claims,
//! `flag` lets it through with the report.
//!
//! Every run writes `<out>/<run-id>/` (with a folder per matter when there are several): per
//! step its rendered prompt, its output and answer; `run.json` (per step: model identity,
//! tokens, cache, speeds, durations, retries, plan node hash) and `report.md`. Declared
//! `output`s are written to `<out>/` (`<out>/<matter>/` with several matters). Every finished
//! step is on disk the moment it finishes: a failure or Ctrl-C later loses nothing.

pub mod backend;
pub mod cassette;
pub mod events;
mod expr;
pub mod intake;
pub mod prompt;
pub mod schema;
mod tools;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use globset::{GlobBuilder, GlobSetBuilder};
use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::{OnceCell, Semaphore};
use tokio::task::JoinSet;

use crate::check::model::{
    Bates, Model, ModelStage, Policy, Pool, Step, StepKind, Verify, Weights,
};
use crate::plan::Plan;
use crate::verify;
use backend::{Backend, Identity, Limits, Timings};
use events::Events;
use prompt::EvidenceFile;

/// Errors that stop a run before it starts: exit 2.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the matter folder `{0}` does not exist; give one with --matter DIR")]
    NoMatter(String),
    #[error("sources `{0}` match no files in `{1}`")]
    NoFiles(String, String),
    #[error("cannot write `{0}`: {1}")]
    Write(String, String),
    #[error("cannot read the evidence: {0}")]
    Evidence(String),
    #[error("--endpoint {0}: the workflow has no pool `{0}`; its pools: {1}")]
    UnknownPool(String, String),
    #[error("pool `{0}`: {1}")]
    Endpoint(String, String),
    #[error("{0}")]
    Cassette(#[from] cassette::CassetteError),
    #[error("cannot write the cassette `{0}`: {1}")]
    CassetteWrite(String, String),
    #[error("{0}")]
    Store(#[from] crate::store::StoreError),
    /// Sources that are lexrun's own outputs: the run does not start (exit 1).
    #[error("{}", intake::describe(.0))]
    Refused(Vec<intake::Verdict>),
}

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Matter folders; empty means the workflow's `matter`, else its own folder.
    pub matters: Vec<PathBuf>,
    pub out: PathBuf,
    /// Pool name → server URL, replacing the pool's declared endpoint.
    pub endpoints: BTreeMap<String, String>,
    pub limits: Limits,
    pub events: events::Mode,
    /// Record to, or replay from, a cassette.
    pub cassette: Option<(PathBuf, cassette::Mode)>,
    /// The store (cache and ledger); `None` runs without one.
    pub store: Option<PathBuf>,
    /// Answer model stages from the cache when their key is there.
    pub cache: bool,
    /// Stages whose cached answers are ignored.
    pub refresh: Vec<String>,
}

/// How a step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Done,
    /// Done, and its `stop when` held: everything downstream is skipped.
    Stopped,
    Skipped,
    Failed,
    /// Verification found unsupported content under a `block` policy.
    Blocked,
    Cancelled,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct StepRecord {
    pub name: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The model as the server identified it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    pub node_hash: String,
    pub round: u32,
    pub status: Option<Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Prompt tokens counted before sending (by the server's tokenizer when it has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub waited_for_load_ms: u64,
    /// Milliseconds from the start of the run.
    pub started_ms: u64,
    pub duration_ms: u64,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub summary: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Answered from lexrun's cache: no model was called.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

/// Bumped when the meaning of a cache key's components changes.
pub const CACHE_FORMAT: u32 = 1;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Serialize)]
pub struct VerifyRecord {
    pub stage: String,
    pub round: u32,
    pub claims: usize,
    pub unsupported: usize,
    /// `passed`, `flagged`, `revised` or `blocked`.
    pub decision: String,
    pub report: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct OutputRecord {
    pub path: String,
    pub from: String,
    /// `written`, or why not.
    pub status: String,
    /// Not written though its stage ran (a write error, a missing tool): the run failed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct MatterRecord {
    pub name: String,
    pub dir: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    pub steps: Vec<StepRecord>,
    pub verifications: Vec<VerifyRecord>,
    pub outputs: Vec<OutputRecord>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    pub workflow: String,
    pub plan_hash: String,
    pub run_id: String,
    pub duration_ms: u64,
    pub cancelled: bool,
    pub matters: Vec<MatterRecord>,
}

impl RunRecord {
    /// 0: every output produced; 1: a step failed or was blocked; 3: a gate stopped the
    /// workflow by design; 130: cancelled.
    pub fn exit_code(&self) -> u8 {
        if self.cancelled {
            return 130;
        }
        let all = || self.matters.iter().flat_map(|m| &m.steps);
        let missing = self
            .matters
            .iter()
            .flat_map(|m| &m.outputs)
            .any(|o| o.missing);
        if missing || all().any(|s| matches!(s.status, Some(Status::Failed | Status::Blocked))) {
            1
        } else if self.matters.iter().any(|m| m.stopped_by.is_some()) {
            3
        } else {
            0
        }
    }
}

/// What one step left for later steps.
#[derive(Default, Clone, Debug)]
pub struct Produced {
    files: Vec<PathBuf>,
    /// Text per page (file, pages), when the step extracted it.
    pages: Vec<(String, Vec<String>)>,
    /// The file a declared `output` of each extension copies.
    primary: BTreeMap<String, PathBuf>,
    /// A model stage's text.
    text: Option<String>,
    /// A model stage's parsed answer, when it declares `returns`.
    answer: Option<Value>,
}

/// Files under `matter` matching `patterns`, sorted, outside lexrun's own folders.
fn matching(matter: &Path, patterns: &[String]) -> Vec<PathBuf> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        if let Ok(g) = GlobBuilder::new(p).literal_separator(true).build() {
            set.add(g);
        }
    }
    let Ok(set) = set.build() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![matter.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != ".lexrun" && name != "out" && !name.starts_with('.') {
                    stack.push(p);
                }
            } else if let Ok(rel) = p.strip_prefix(matter) {
                if set.is_match(rel) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

/// A unit of scheduling: a step, or the verification of a stage's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Step(usize),
    Verify(usize),
}

#[derive(Clone, Debug, PartialEq)]
enum State {
    Waiting,
    Running,
    Finished(Status, Option<String>),
}

/// One matter in flight.
struct Matter {
    name: String,
    dir: PathBuf,
    run_dir: PathBuf,
    out_dir: PathBuf,
    /// Source name → its files with text per page (read once, shared by every stage).
    evidence: BTreeMap<String, Vec<EvidenceFile>>,
    /// Fingerprints of all the matter's evidence: what an output quotes is not its own.
    evidence_fps: std::collections::HashSet<u64>,
}

/// What every task shares.
struct Shared {
    plan: Plan,
    limits: Limits,
    events: Arc<Events>,
    started: Instant,
    pools: BTreeMap<String, Arc<PoolRt>>,
    bates_of: BTreeMap<String, Bates>,
    prefixes: Vec<String>,
    reviewer_of: BTreeMap<String, String>,
    multi: bool,
    run_id: String,
    store: Option<Arc<crate::store::Store>>,
    cache: bool,
    refresh: Vec<String>,
}

struct PoolRt {
    pool: Pool,
    endpoint: String,
    backend: Box<dyn Backend>,
    slots: Arc<Semaphore>,
    /// Identity per model, asked once.
    identity: BTreeMap<String, OnceCell<Result<Identity, String>>>,
}

/// Runs a plan; returns the record (also written as `run.json`).
pub async fn run(plan: &Plan, workflow_dir: &Path, opts: &Options) -> Result<RunRecord, RunError> {
    let started = Instant::now();
    let events = Events::new(opts.events);
    // Endpoints and backends.
    for name in opts.endpoints.keys() {
        if !plan.pools.iter().any(|p| &p.name == name) {
            let all: Vec<&str> = plan.pools.iter().map(|p| p.name.as_str()).collect();
            return Err(RunError::UnknownPool(name.clone(), all.join(", ")));
        }
    }
    let tape = match &opts.cassette {
        Some((path, mode)) => Some(Arc::new(cassette::Cassette::open(path, *mode)?)),
        None => None,
    };
    let mut pools = BTreeMap::new();
    for p in &plan.pools {
        let endpoint = opts.endpoints.get(&p.name).unwrap_or(&p.endpoint).clone();
        let mut backend = backend::connect(p.server, &endpoint, &opts.limits)
            .map_err(|e| RunError::Endpoint(p.name.clone(), e))?;
        if let Some(tape) = &tape {
            backend = Box::new(cassette::Taped {
                inner: backend,
                cassette: tape.clone(),
                pool: p.name.clone(),
                server: p.server,
            });
        }
        let identity = plan
            .models
            .iter()
            .filter(|m| m.pool == p.name)
            .map(|m| (m.name.clone(), OnceCell::new()))
            .collect();
        pools.insert(
            p.name.clone(),
            Arc::new(PoolRt {
                pool: p.item.clone(),
                endpoint,
                backend,
                slots: Arc::new(Semaphore::new(p.slots.max(1) as usize)),
                identity,
            }),
        );
    }
    let bates_of: BTreeMap<String, Bates> = plan
        .sources
        .iter()
        .filter_map(|s| s.bates.clone().map(|b| (s.name.clone(), b)))
        .collect();
    let mut prefixes: Vec<String> = bates_of.values().map(|b| b.prefix.clone()).collect();
    prefixes.sort();
    prefixes.dedup();
    let reviewer_of = plan
        .steps
        .iter()
        .filter_map(|s| match &s.kind {
            StepKind::Model(m) => m
                .revise
                .as_ref()
                .map(|r| (r.target.clone(), s.name.clone())),
            StepKind::Tool(_) => None,
        })
        .collect();

    // Matters, their folders and their evidence.
    let dirs = matter_dirs(plan, workflow_dir, &opts.matters);
    let multi = dirs.len() > 1;
    let run_id = new_run_id(&opts.out);
    let store = match &opts.store {
        Some(dir) => Some(Arc::new(crate::store::Store::open(dir)?)),
        None => None,
    };
    let run_root = opts.out.join(&run_id);
    let werr =
        |p: &Path, e: std::io::Error| RunError::Write(p.display().to_string(), e.to_string());
    let mut matters = Vec::new();
    let mut names = BTreeSet::new();
    let mut verdicts: Vec<intake::Verdict> = Vec::new();
    for dir in &dirs {
        if !dir.is_dir() {
            return Err(RunError::NoMatter(dir.display().to_string()));
        }
        let mut name = matter_name(dir);
        let base = name.clone();
        let mut n = 1;
        while !names.insert(name.clone()) {
            n += 1;
            name = format!("{base}-{n}");
        }
        let (run_dir, out_dir) = if multi {
            (run_root.join(&name), opts.out.join(&name))
        } else {
            (run_root.clone(), opts.out.clone())
        };
        std::fs::create_dir_all(&run_dir).map_err(|e| werr(&run_dir, e))?;
        let mut evidence = BTreeMap::new();
        for s in &plan.sources {
            let files = matching(dir, &s.files);
            if files.is_empty() {
                return Err(RunError::NoFiles(s.name.clone(), dir.display().to_string()));
            }
            let needed = plan
                .steps
                .iter()
                .any(|st| matches!(st.kind, StepKind::Model(_)) && st.reads.contains(&s.name))
                || plan.verify.iter().any(|v| v.against.contains(&s.name))
                // The intake guard reads every source.
                || store.is_some();
            let mut list = Vec::new();
            for f in files {
                let pages = if needed {
                    prompt::read_pages(&f).map_err(RunError::Evidence)?
                } else {
                    Vec::new()
                };
                list.push(EvidenceFile {
                    source: s.name.clone(),
                    shown: f.strip_prefix(dir).unwrap_or(&f).display().to_string(),
                    path: f.display().to_string(),
                    pages,
                });
            }
            evidence.insert(s.name.clone(), list);
        }
        if let Some(store) = &store {
            for s in &plan.sources {
                let admit: Vec<(String, String)> = s
                    .admit
                    .iter()
                    .map(|a| (a.file.clone(), a.reason.clone()))
                    .collect();
                for f in evidence.get(&s.name).into_iter().flatten() {
                    let text = f.pages.join("\n");
                    verdicts.push(intake::check(
                        store,
                        &name,
                        &f.shown,
                        Path::new(&f.path),
                        &text,
                        &admit,
                    ));
                }
            }
        }
        let evidence_fps = if store.is_some() {
            evidence
                .values()
                .flatten()
                .flat_map(|f| crate::store::shingles::fingerprints(&f.pages.join("\n")))
                .collect()
        } else {
            Default::default()
        };
        matters.push(Arc::new(Matter {
            name,
            dir: dir.clone(),
            run_dir,
            out_dir,
            evidence,
            evidence_fps,
        }));
    }

    if verdicts.iter().any(intake::Verdict::blocked) {
        return Err(RunError::Refused(verdicts));
    }
    if let Some(store) = &store {
        store.begin_run(&run_id, &plan.workflow.name, &plan.hash)?;
        for v in &verdicts {
            store.add_source(
                &run_id,
                &v.matter,
                &v.path,
                &v.raw_hash,
                &v.text_hash,
                v.admitted.as_deref(),
            )?;
            if let (Some(reason), Some(why)) = (&v.admitted, &v.refused) {
                store.add_admission(&run_id, &v.path, reason, why)?;
                events.warn(
                    &v.file,
                    &format!("admitted by the workflow although {why}: {reason}"),
                );
            }
        }
    }
    let shared = Arc::new(Shared {
        plan: plan.clone(),
        limits: opts.limits.clone(),
        events: events.clone(),
        started,
        pools,
        bates_of,
        prefixes,
        reviewer_of,
        multi,
        run_id: run_id.clone(),
        store: store.clone(),
        cache: opts.cache,
        refresh: opts.refresh.clone(),
    });
    events.say(&format!(
        "run {run_id} of {}: {} step{} over {} matter{}",
        plan.workflow.name,
        plan.steps.len(),
        if plan.steps.len() == 1 { "" } else { "s" },
        matters.len(),
        if matters.len() == 1 { "" } else { "s" },
    ));
    if !plan.verify.is_empty() {
        // The verifier's patterns compile while the first model calls are under way.
        // On its own thread at the lowest priority, so it never slows a local server.
        std::thread::spawn(|| {
            // SAFETY: setpriority on the calling thread (who = 0) has no memory effects.
            unsafe {
                libc::setpriority(libc::PRIO_PROCESS, 0, 19);
            }
            verify::warm();
        });
    }
    let (records, cancelled) = schedule(&shared, &matters).await;
    if let Some(tape) = &tape {
        // Saved even when steps failed: what was recorded is not lost.
        tape.save(None)
            .map_err(|e| RunError::CassetteWrite(tape.path.display().to_string(), e.to_string()))?;
    }

    let mut record = RunRecord {
        workflow: plan.workflow.name.clone(),
        plan_hash: plan.hash.clone(),
        run_id: run_id.clone(),
        duration_ms: started.elapsed().as_millis() as u64,
        cancelled,
        matters: records,
    };
    for (m, rec) in matters.iter().zip(record.matters.iter_mut()) {
        write_outputs(&shared, m, rec);
        let md = report_markdown(&record_header(plan, &run_id), rec);
        let path = m.run_dir.join("report.md");
        std::fs::write(&path, md).map_err(|e| werr(&path, e))?;
    }
    let index = run_root.join("review.html");
    std::fs::write(
        &index,
        review_index(plan, &run_id, &run_root, &record.matters),
    )
    .map_err(|e| werr(&index, e))?;
    if let Some(store) = &store {
        let status = match record.exit_code() {
            0 => "done",
            3 => "stopped",
            130 => "cancelled",
            _ => "failed",
        };
        store.finish_run(&run_id, status)?;
    }
    let rj = run_root.join("run.json");
    std::fs::write(&rj, serde_json::to_vec_pretty(&record).unwrap_or_default())
        .map_err(|e| werr(&rj, e))?;
    events.run_finished(
        json!({"run_id": run_id, "exit": record.exit_code(), "record": rj.display().to_string()}),
    );
    Ok(record)
}

/// The matter folders: those given, else the workflow's `matter`, else its own folder.
fn matter_dirs(plan: &Plan, workflow_dir: &Path, given: &[PathBuf]) -> Vec<PathBuf> {
    if !given.is_empty() {
        return given.to_vec();
    }
    vec![match &plan.workflow.matter {
        Some(m) => workflow_dir.join(m),
        None => workflow_dir.to_path_buf(),
    }]
}

/// A matter's name: its folder's name.
fn matter_name(dir: &Path) -> String {
    dir.canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "matter".into())
}

/// The intake guard alone (`lexrun sources`): every source file of every matter, admitted or
/// refused, without running anything.
pub fn check_sources(
    plan: &Plan,
    workflow_dir: &Path,
    matters: &[PathBuf],
    store: &crate::store::Store,
) -> Result<Vec<intake::Verdict>, RunError> {
    let dirs = matter_dirs(plan, workflow_dir, matters);
    let mut out = Vec::new();
    for dir in &dirs {
        if !dir.is_dir() {
            return Err(RunError::NoMatter(dir.display().to_string()));
        }
        let name = matter_name(dir);
        for s in &plan.sources {
            let admit: Vec<(String, String)> = s
                .admit
                .iter()
                .map(|a| (a.file.clone(), a.reason.clone()))
                .collect();
            for f in matching(dir, &s.files) {
                let text = prompt::read_pages(&f)
                    .map_err(RunError::Evidence)?
                    .join("\n");
                let shown = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
                out.push(intake::check(store, &name, &shown, &f, &text, &admit));
            }
        }
    }
    Ok(out)
}

fn record_header(plan: &Plan, run_id: &str) -> String {
    format!(
        "# Run {run_id} of `{}`\n\n{}\n",
        plan.workflow.name, plan.workflow.description
    )
}

/// A run id unique across processes sharing a store: the time, and a few hex digits from
/// the clock's nanoseconds and the process id.
fn new_run_id(out: &Path) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let salt = blake3::hash(format!("{}-{}", now.as_nanos(), std::process::id()).as_bytes());
    let mut run_id = format!("run-{}-{}", now.as_secs(), &salt.to_hex()[..6]);
    let mut n = 1;
    while out.join(&run_id).exists() {
        n += 1;
        run_id = format!("run-{}-{}{n}", now.as_secs(), &salt.to_hex()[..6]);
    }
    run_id
}

/// The units a unit waits for.
fn dependencies(sh: &Shared) -> BTreeMap<Unit, Vec<Unit>> {
    let plan = &sh.plan;
    let index: BTreeMap<&str, usize> = plan
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let verifies_of = |stage: &str| -> Vec<usize> {
        plan.verify
            .iter()
            .enumerate()
            .filter(|(_, v)| v.stage == stage)
            .map(|(i, _)| i)
            .collect()
    };
    let mut deps = BTreeMap::new();
    for (i, s) in plan.steps.iter().enumerate() {
        let mut d = BTreeSet::new();
        for name in s.after.iter().chain(&s.reads) {
            let Some(&j) = index.get(name.as_str()) else {
                continue;
            };
            d.insert(Unit::Step(j));
            let reviewer = sh.reviewer_of.get(name);
            if reviewer == Some(&s.name) {
                // The reviewer reads each version of its target before it is verified.
                continue;
            }
            if let Some(r) = reviewer.and_then(|r| index.get(r.as_str())) {
                d.insert(Unit::Step(*r));
            }
            for v in verifies_of(name) {
                d.insert(Unit::Verify(v));
            }
        }
        deps.insert(Unit::Step(i), d.into_iter().collect());
    }
    for (i, v) in plan.verify.iter().enumerate() {
        let mut d = Vec::new();
        if let Some(&j) = index.get(v.stage.as_str()) {
            d.push(Unit::Step(j));
        }
        if let Some(r) = sh
            .reviewer_of
            .get(&v.stage)
            .and_then(|r| index.get(r.as_str()))
        {
            d.push(Unit::Step(*r));
        }
        deps.insert(Unit::Verify(i), d);
    }
    deps
}

/// What a finished task reports.
struct Done {
    matter: usize,
    unit: Unit,
    status: Status,
    why: Option<String>,
    /// New results by step name (a revise loop updates its target too).
    results: Vec<(String, Produced)>,
    records: Vec<StepRecord>,
    verification: Vec<VerifyRecord>,
}

impl Done {
    /// Records one model call: its record, and its text on success; a failure fails the unit.
    fn call(&mut self, r: Result<(Produced, StepRecord), Box<StepRecord>>) -> Option<Produced> {
        match r {
            Ok((p, rec)) => {
                self.records.push(rec);
                Some(p)
            }
            Err(rec) => {
                self.status = Status::Failed;
                self.why = rec.why.clone();
                self.records.push(*rec);
                None
            }
        }
    }

    /// A new version of `stage` (a revision): later rounds and steps read it.
    fn replace(&mut self, results: &mut BTreeMap<String, Arc<Produced>>, stage: &str, p: Produced) {
        results.insert(stage.to_string(), Arc::new(p.clone()));
        self.results.push((stage.to_string(), p));
    }
}

async fn schedule(sh: &Arc<Shared>, matters: &[Arc<Matter>]) -> (Vec<MatterRecord>, bool) {
    let deps = dependencies(sh);
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
                files: files.iter().map(|f| PathBuf::from(&f.path)).collect(),
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

fn unit_name(sh: &Shared, u: Unit) -> String {
    match u {
        Unit::Step(i) => sh.plan.steps[i].name.clone(),
        Unit::Verify(i) => format!("verify {}", sh.plan.verify[i].stage),
    }
}

fn base_record(sh: &Shared, i: usize) -> StepRecord {
    let step = &sh.plan.steps[i];
    let (kind, tool, pool, model) = match &step.kind {
        StepKind::Model(m) => {
            let pool = sh
                .plan
                .models
                .iter()
                .find(|x| x.name == m.model)
                .map(|x| x.pool.clone());
            ("model", None, pool, Some(m.model.clone()))
        }
        StepKind::Tool(t) => ("tool", Some(t.tool.clone()), None, None),
    };
    StepRecord {
        name: step.name.clone(),
        kind: kind.into(),
        tool,
        pool,
        model,
        node_hash: step.hash.clone(),
        round: 1,
        started_ms: sh.started.elapsed().as_millis() as u64,
        ..StepRecord::default()
    }
}

fn skip(
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

fn stage_key(multi: bool, matter: &str, stage: &str) -> String {
    if multi {
        format!("{matter}/{stage}")
    } else {
        stage.to_string()
    }
}

async fn run_unit(
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

async fn run_tool_unit(
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
    let joined = tokio::task::spawn_blocking(move || {
        tools::run(&step, &tool, &ins, &dir, &m2.dir, &sh2.bates_of, &res)
    })
    .await;
    rec.duration_ms = started.elapsed().as_millis() as u64;
    rec.inputs = inputs.iter().map(|p| p.display().to_string()).collect();
    match joined.map_err(|e| e.to_string()).and_then(|r| r) {
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
            done.status = Status::Failed;
            done.why = Some(why);
        }
    }
    done.records.push(rec);
}

/// A model stage: one call, or a reviewer's revise loop around its target.
async fn run_model_unit(
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
                    break;
                }
                Err(e) => {
                    done.status = Status::Failed;
                    done.why = Some(format!("cannot decide `until {}`: {e}", rev.until));
                    if let Some(r) = done.records.last_mut() {
                        r.status = Some(Status::Failed);
                        r.why = done.why.clone();
                    }
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
            Err(e) => {
                done.status = Status::Failed;
                done.why = Some(format!("cannot decide `stop when {cond}`: {e}"));
            }
        }
    }
    done.results.push((step.name.clone(), out));
}

/// A reviewer's answer as revision feedback: its lists as bullets, its text as is.
fn feedback_of(p: &Produced) -> String {
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

/// The variables of a stage's template.
fn template_vars(
    sh: &Shared,
    m: &Matter,
    step: &Step,
    ms: &ModelStage,
    results: &BTreeMap<String, Arc<Produced>>,
    round: u32,
    feedback: Option<&str>,
) -> Value {
    let plan = &sh.plan;
    let mut v = prompt::base_vars(
        (&plan.workflow.name, &plan.workflow.description),
        (&m.name, &m.dir.display().to_string()),
        &step.name,
    );
    let mut evidence = String::new();
    let mut sources = serde_json::Map::new();
    let mut inputs = Vec::new();
    for r in &step.reads {
        let packet = if let Some(files) = m.evidence.get(r) {
            Some(prompt::packet(files))
        } else if plan.steps.iter().any(|s| &s.name == r && s.evidence) {
            results.get(r).map(|p| evidence_packet(r, p))
        } else {
            None
        };
        if let Some(packet) = packet {
            evidence.push_str(&packet);
            sources.insert(r.clone(), json!(packet));
            continue;
        }
        if let Some(p) = results.get(r) {
            let text = p.text.clone().unwrap_or_default();
            inputs.push(json!({"name": r, "text": text}));
            v[r.as_str()] = p.answer.clone().unwrap_or_else(|| json!(text));
        }
    }
    v["evidence"] = json!(evidence);
    v["sources"] = Value::Object(sources);
    v["inputs"] = json!(inputs);
    if let Some(rev) = &ms.revise {
        if let Some(p) = results.get(&rev.target) {
            v["reviewed"] = json!(p.text.clone().unwrap_or_default());
        }
    }
    if let Some(fields) = &ms.returns {
        v["schema"] =
            json!(serde_json::to_string_pretty(&schema::schema(fields)).unwrap_or_default());
    }
    if let Some(f) = feedback {
        v["revision"] = json!({"round": round, "feedback": f});
    }
    v
}

/// An evidence tool's output (OCR text, a stamped set) as a packet.
fn evidence_packet(name: &str, p: &Produced) -> String {
    let files: Vec<EvidenceFile> = if p.pages.is_empty() {
        p.files
            .iter()
            .map(|f| EvidenceFile {
                source: name.to_string(),
                shown: f
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path: f.display().to_string(),
                pages: prompt::read_pages(f).unwrap_or_default(),
            })
            .collect()
    } else {
        p.pages
            .iter()
            .map(|(f, pages)| EvidenceFile {
                source: name.to_string(),
                shown: Path::new(f)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                path: f.clone(),
                pages: pages.clone(),
            })
            .collect()
    };
    prompt::packet(&files)
}

fn model_of<'a>(sh: &'a Shared, name: &str) -> Option<&'a Model> {
    sh.plan
        .models
        .iter()
        .find(|m| m.name == name)
        .map(|n| &n.item)
}

/// Renders, counts, sends and checks one call of a model stage; writes its files.
async fn stage_call(
    sh: &Arc<Shared>,
    m: &Arc<Matter>,
    i: usize,
    results: &BTreeMap<String, Arc<Produced>>,
    round: u32,
    feedback: Option<String>,
) -> Result<(Produced, StepRecord), Box<StepRecord>> {
    let step = &sh.plan.steps[i];
    let StepKind::Model(ms) = &step.kind else {
        return Err(Box::new(base_record(sh, i)));
    };
    let mut rec = base_record(sh, i);
    rec.round = round;
    let started = Instant::now();
    let key = stage_key(sh.multi, &m.name, &step.name);
    let fail = |mut rec: StepRecord, why: String| {
        sh.events
            .stage_finished(&key, "failed", &why, json!({"matter": m.name, "why": why}));
        rec.status = Some(Status::Failed);
        rec.summary = format!("failed: {why}");
        rec.why = Some(why);
        rec.duration_ms = started.elapsed().as_millis() as u64;
        Err(Box::new(rec))
    };
    let Some(model) = model_of(sh, &ms.model) else {
        return fail(rec, format!("model `{}` is not in the plan", ms.model));
    };
    let Some(pool) = sh.pools.get(&model.pool) else {
        return fail(rec, format!("pool `{}` is not in the plan", model.pool));
    };
    let dir = if round > 1 {
        m.run_dir.join(&step.name).join(format!("round-{round}"))
    } else {
        m.run_dir.join(&step.name)
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return fail(rec, format!("cannot create `{}`: {e}", dir.display()));
    }
    rec.inputs = step.reads.clone();

    // The prompt.
    let vars = template_vars(sh, m, step, ms, results, round, feedback.as_deref());
    let mut text = match prompt::render(&ms.prompt.text, &vars) {
        Ok(t) => t,
        Err(e) => {
            return fail(
                rec,
                format!("cannot render the prompt ({}): {e}", ms.prompt.origin),
            )
        }
    };
    // A revision round of a stage whose template has no place for feedback still gets it.
    if let Some(f) = &feedback {
        if !ms.prompt.text.contains("revision") {
            text.push_str(&format!(
                "\n\nThis is revision {round}. A reviewer found these problems in the previous version; fix every one:\n{f}\n"
            ));
        }
    }
    let prompt_file = dir.join("prompt.md");
    if let Err(e) = std::fs::write(&prompt_file, &text) {
        return fail(
            rec,
            format!("cannot write `{}`: {e}", prompt_file.display()),
        );
    }

    // The server: ready, and serving what it should.
    let on_note = {
        let ev = sh.events.clone();
        let key = key.clone();
        move |n: String| ev.note(&key, &n)
    };
    let ident = match pool.identity.get(&model.name) {
        Some(cell) => cell
            .get_or_init(|| async {
                backend::wait_ready(pool.backend.as_ref(), &sh.limits, &on_note).await;
                let served = served_name(model);
                let mut tries = 0;
                loop {
                    match pool.backend.identity(&served).await {
                        Ok(id) => return Ok(id),
                        Err(e) if e.retryable() && tries < sh.limits.retries => {
                            tries += 1;
                            tokio::time::sleep(sh.limits.backoff * tries).await;
                        }
                        Err(e) => {
                            return Err(format!(
                                "{} server for pool `{}` at {}: {e}{}",
                                pool.pool.server.as_str(),
                                pool.pool.name,
                                pool.endpoint,
                                hint(&e)
                            ))
                        }
                    }
                }
            })
            .await
            .clone(),
        None => Ok(Identity::default()),
    };
    let ident = match ident {
        Ok(i) => i,
        Err(e) => return fail(rec, e),
    };
    rec.identity = Some(ident.model.clone()).filter(|s| !s.is_empty());
    if let (Weights::Gguf { path, .. }, false) = (&model.weights, ident.model.is_empty()) {
        let want = Path::new(path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        if let Some(want) = want {
            if !ident.model.ends_with(&want) {
                rec.warnings.push(format!(
                    "the server serves `{}`, not the declared `{path}`",
                    ident.model
                ));
            }
        }
    }

    // Count before sending: a prompt over the context is an error, never truncated.
    let ctx = ident.n_ctx.map_or(model.ctx, |n| n.min(model.ctx));
    // No tokenizer makes more tokens than bytes (plus a few specials), so a prompt that fits
    // by bytes needs no count; the server's timings give the exact figure afterwards.
    let reserve = ms.sampling.get("max_tokens").map_or(0, |n| *n as u64);
    let fits_by_bytes = text.len() as u64 + 64 + reserve <= ctx;
    let (tokens, counted) = if fits_by_bytes {
        (None, "")
    } else {
        match pool.backend.count_tokens(&text).await {
            Ok(Some(n)) => (Some(n), "counted"),
            _ => (Some((text.len() as u64).div_ceil(4)), "estimated"),
        }
    };
    rec.prompt_tokens = tokens;
    let tokens = tokens.unwrap_or(0);
    if tokens + reserve > ctx {
        return fail(
            rec,
            format!(
                "the prompt is {tokens} tokens ({counted}){} but model `{}` has a context of {ctx} tokens{}; read fewer sources in this stage, or raise the model's `ctx`",
                if reserve > 0 { format!(" + {reserve} for the answer") } else { String::new() },
                model.name,
                match ident.n_ctx {
                    Some(n) if n < model.ctx => format!(" (the server gives each slot {n})"),
                    _ => String::new(),
                }
            ),
        );
    }

    // The call.
    let slot = ident.slots.filter(|n| *n > 0).map(|n| {
        let idx = sh
            .plan
            .models
            .iter()
            .filter(|x| x.pool == model.pool)
            .position(|x| x.name == model.name)
            .unwrap_or(0) as u32;
        idx % n
    });
    let mut call = backend::Call {
        stage: step.name.clone(),
        model: served_name(model),
        prompt: text.clone(),
        schema: ms.returns.as_ref().map(|f| schema::schema(f)),
        sampling: ms.sampling.clone(),
        num_ctx: model.ctx,
        slot,
        timeout: Duration::from_millis(ms.timeout_ms.unwrap_or(30 * 60 * 1000)),
    };
    // The cache: the same plan node, model, sampling, prompt and inputs give the same answer.
    let components = json!({
        "format": CACHE_FORMAT,
        "node": step.hash,
        "model_identity": ident.model,
        "sampling": ms.sampling,
        "schema": call.schema,
        "prompt": sh.store.as_ref().and_then(|s| s.put(text.as_bytes()).ok()).unwrap_or_else(|| blake3::hash(text.as_bytes()).to_hex().to_string()),
        "inputs": step.reads.iter().map(|r| (r.clone(), results.get(r).and_then(|p| p.text.as_ref()).map(|t| blake3::hash(t.as_bytes()).to_hex().to_string()))).collect::<BTreeMap<_, _>>(),
        "round": round,
    });
    let cache_key = blake3::hash(components.to_string().as_bytes())
        .to_hex()
        .to_string();
    let use_cache = sh.cache && !sh.refresh.contains(&step.name);
    let hit = match (&sh.store, use_cache) {
        (Some(store), true) => store.cache_get(&cache_key).and_then(|e| {
            let bytes = store.get(&e.text_hash)?;
            let text = String::from_utf8(bytes).ok()?;
            let answer = match &ms.returns {
                Some(fields) => Some(schema::validate(&text, fields).ok()?),
                None => None,
            };
            let timings: backend::Timings = serde_json::from_value(e.timings).unwrap_or_default();
            Some((
                backend::Reply {
                    text,
                    timings,
                    finish: Some("stop".into()),
                },
                answer,
            ))
        }),
        _ => None,
    };
    if let Some(store) = &sh.store {
        let _ = store.record_key(
            &sh.run_id,
            &sh.plan.workflow.name,
            &m.name,
            &step.name,
            round,
            &cache_key,
            &components,
            hit.is_some(),
        );
        for w in store
            .warnings
            .lock()
            .map(|mut w| std::mem::take(&mut *w))
            .unwrap_or_default()
        {
            sh.events.warn(&key, &w);
            rec.warnings.push(w);
        }
    }
    tracing::debug!(stage = %step.name, round, key = %cache_key, hit = hit.is_some(), "cache");
    let (reply, answer) = if let Some(h) = hit {
        rec.cached = true;
        rec.started_ms = sh.started.elapsed().as_millis() as u64;
        h
    } else {
        let permit = pool.slots.clone().acquire_owned().await;
        let began = Instant::now();
        rec.started_ms = sh.started.elapsed().as_millis() as u64;
        sh.events
            .stage_started(&key, &pool.pool.name, &model.name, round);
        let tokens_so_far = AtomicU64::new(0);
        let on_token = |n: u64| {
            let last = tokens_so_far.swap(n, Ordering::Relaxed);
            if n / 8 != last / 8 {
                sh.events
                    .tokens(&key, &pool.pool.name, &model.name, n, began);
            }
        };
        let mut corrected = false;
        let (reply, answer) = loop {
            let (reply, attempts) = match backend::call(
                pool.backend.as_ref(),
                &call,
                &sh.limits,
                &on_token,
                &on_note,
            )
            .await
            {
                Ok(x) => x,
                Err((backend::CallError::NotRecorded(msg), _)) => {
                    drop(permit);
                    return fail(rec, msg);
                }
                Err((e, attempts)) => {
                    rec.retries.extend(attempts.retries);
                    rec.waited_for_load_ms += attempts.waited_for_load_ms;
                    drop(permit);
                    return fail(
                        rec,
                        format!(
                            "{} server for pool `{}` at {}: {e}{}",
                            pool.pool.server.as_str(),
                            pool.pool.name,
                            pool.endpoint,
                            hint(&e)
                        ),
                    );
                }
            };
            rec.retries.extend(attempts.retries);
            rec.waited_for_load_ms += attempts.waited_for_load_ms;
            let Some(fields) = &ms.returns else {
                break (reply, None);
            };
            match schema::validate(&reply.text, fields) {
                Ok(v) => break (reply, Some(v)),
                Err(e) if !corrected => {
                    corrected = true;
                    on_note(format!(
                        "the answer does not match `returns` ({e}); asking once more"
                    ));
                    rec.retries.push(format!("answer rejected: {e}"));
                    call.prompt = format!(
                    "{text}\n\nYour previous answer was rejected: {e}.\nReply again with only a JSON object that matches the schema."
                );
                }
                Err(e) => {
                    drop(permit);
                    let _ = std::fs::write(dir.join("rejected-answer.txt"), &reply.text);
                    return fail(
                    rec,
                    format!(
                        "the answer does not match `returns` after a corrective retry: {e} (the answer is in {})",
                        dir.join("rejected-answer.txt").display()
                    ),
                );
                }
            }
        };
        drop(permit);
        rec.duration_ms = began.elapsed().as_millis() as u64;
        if let Some(store) = &sh.store {
            if let Ok(h) = store.put(reply.text.as_bytes()) {
                let _ = store.cache_put(&crate::store::CacheEntry {
                    key: cache_key.clone(),
                    stage: step.name.clone(),
                    text_hash: h,
                    timings: serde_json::to_value(&reply.timings).unwrap_or_default(),
                    identity: ident.model.clone(),
                    created: crate::store::now(),
                });
            }
        }
        (reply, answer)
    };
    let t = &reply.timings;
    if let Some(floor) = model.min_decode {
        if t.predicted_n >= 8 && t.predicted_per_second > 0.0 && t.predicted_per_second < floor {
            let w = format!(
                "decoded at {:.1} tok/s, under the model's min_decode of {floor} tok/s",
                t.predicted_per_second
            );
            sh.events.warn(&key, &w);
            rec.warnings.push(w);
        }
    }
    if reply.finish.as_deref() == Some("length") {
        let w = format!(
            "the answer stopped at the token limit ({} tokens); it may be cut short",
            t.predicted_n
        );
        sh.events.warn(&key, &w);
        rec.warnings.push(w);
    }
    let mut p = Produced {
        text: Some(reply.text.clone()),
        answer: answer.clone(),
        ..Produced::default()
    };
    let out_md = dir.join("output.md");
    if let Err(e) = std::fs::write(&out_md, &reply.text) {
        return fail(rec, format!("cannot write `{}`: {e}", out_md.display()));
    }
    p.files.push(out_md.clone());
    p.primary.insert("md".into(), out_md.clone());
    p.primary.insert("txt".into(), out_md.clone());
    if let Some(a) = &answer {
        let aj = dir.join("answer.json");
        let _ = std::fs::write(&aj, serde_json::to_vec_pretty(a).unwrap_or_default());
        p.primary.insert("json".into(), aj.clone());
        p.files.push(aj);
    } else {
        p.primary.insert("json".into(), out_md.clone());
    }
    rec.outputs = vec![prompt_file.display().to_string()]
        .into_iter()
        .chain(p.files.iter().map(|f| f.display().to_string()))
        .collect();
    if let Some(store) = &sh.store {
        let h = blake3::hash(reply.text.as_bytes()).to_hex().to_string();
        let _ = store.add_artifact(
            &crate::store::Artifact {
                hash: h.clone(),
                text_hash: intake::text_hash(&reply.text),
                run_id: sh.run_id.clone(),
                matter: m.name.clone(),
                stage: step.name.clone(),
                round,
                kind: "stage".into(),
                path: out_md.display().to_string(),
                model: ident.model.clone(),
                inputs: components["inputs"].clone(),
                plan_hash: sh.plan.hash.clone(),
                node_hash: step.hash.clone(),
                created: crate::store::now(),
            },
            &reply.text,
            &m.evidence_fps,
        );
    }
    rec.status = Some(Status::Done);
    rec.summary = format!(
        "{}{} prompt tokens ({} from cache), {} generated at {:.1} tok/s",
        if rec.cached {
            "from lexrun's cache: "
        } else {
            ""
        },
        t.prompt_n + t.cache_n,
        t.cache_n,
        t.predicted_n,
        t.predicted_per_second
    );
    rec.timings = Some(reply.timings.clone());
    if rec.prompt_tokens.is_none() && t.prompt_n + t.cache_n > 0 {
        rec.prompt_tokens = Some(t.prompt_n + t.cache_n);
    }
    sh.events.stage_finished(
        &key,
        "done",
        &format!("{} ({:.1} s)", rec.summary, rec.duration_ms as f64 / 1000.0),
        json!({"matter": m.name, "round": round, "timings": reply.timings, "prompt_tokens": rec.prompt_tokens}),
    );
    Ok((p, rec))
}

fn hint(e: &backend::CallError) -> &'static str {
    match e {
        backend::CallError::Refused(_) => {
            "; is the server running? Start it, or point the pool elsewhere with --endpoint POOL=URL"
        }
        backend::CallError::Hang(_) => "; the server stopped sending; check its log",
        _ => "",
    }
}

fn served_name(model: &Model) -> String {
    match &model.weights {
        Weights::Tag { tag } => tag.clone(),
        Weights::Gguf { .. } => model.name.clone(),
    }
}

/// Verification of a stage's text, with its policies.
async fn run_verify_unit(
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
        let Some(produced) = results.get(&v.stage) else {
            return;
        };
        // A structured answer is checked value by value, not as JSON text (whose quotation
        // marks would read as quotations).
        let text = match (&produced.answer, &produced.text) {
            (Some(a), _) => flatten_answer(a),
            (None, Some(t)) => t.clone(),
            (None, None) => return,
        };
        let mut ev = verify::Evidence::new(sh.prefixes.clone());
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
        let t2 = text.clone();
        let name = format!("{} (stage `{}`)", m.name, v.stage);
        let review = review_provenance(sh, m, stage_idx, round);
        let (t3, name2) = (text.clone(), name.clone());
        // The review page reads the pages it shows from the same evidence, so it is made here.
        let outcome = tokio::task::spawn_blocking(move || {
            let outcome = verify::verify(&t2, &ev);
            let page = crate::review::page(&crate::review::Review {
                title: &name2,
                draft: &t3,
                outcomes: &outcome.outcomes,
                files: &outcome.files,
                evidence: &ev,
                provenance: review,
                images: true,
            });
            (outcome, page)
        })
        .await;
        let Ok((outcome, page)) = outcome else {
            done.status = Status::Failed;
            done.why = Some("the verifier stopped unexpectedly".into());
            return;
        };
        // Which unsupported claims each policy covers.
        let mut blocking = Vec::new();
        let mut revising = Vec::new();
        let mut flagged = 0;
        for o in &outcome.outcomes {
            if o.status != verify::Status::Unsupported {
                continue;
            }
            let kind = o.claim.kind.as_str();
            let Some(rule) = v
                .rules
                .iter()
                .find(|r| r.claims == kind || r.claims == format!("{kind}s"))
            else {
                continue;
            };
            match rule.policy {
                Policy::Block => blocking.push(o),
                Policy::Revise => revising.push(o),
                Policy::Flag => flagged += 1,
            }
        }
        let checked = outcome.outcomes.len();
        let unsupported = blocking.len() + revising.len() + flagged;
        let dir = m.run_dir.join(format!("verify-{}", v.stage));
        let _ = std::fs::create_dir_all(&dir);
        let report = if round > 1 {
            dir.join(format!("report-round-{round}.md"))
        } else {
            dir.join("report.md")
        };
        let _ = std::fs::write(
            &report,
            verify::report::markdown(&name, &text, &outcome.outcomes, &outcome.files),
        );
        let _ = std::fs::write(report.with_extension("html"), page);
        let _ = std::fs::write(
            report.with_extension("json"),
            verify::report::json(&outcome.outcomes, &outcome.files),
        );
        let can_revise = !revising.is_empty() && round <= v.max_rounds;
        let decision = if !blocking.is_empty() {
            "blocked"
        } else if can_revise {
            "revised"
        } else if !revising.is_empty() {
            "blocked"
        } else if flagged > 0 {
            "flagged"
        } else {
            "passed"
        };
        done.verification.push(VerifyRecord {
            stage: v.stage.clone(),
            round,
            claims: checked,
            unsupported,
            decision: decision.into(),
            report: report.display().to_string(),
        });
        let line = format!("{checked} claims, {unsupported} unsupported: {decision}");
        match decision {
            "revised" => {
                sh.events.note(&key, &line);
                let mut fb = String::from(
                    "These statements are not supported by the evidence. Remove each one or correct it from the record:\n",
                );
                for o in &revising {
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
                round += 1;
                let Some(p) =
                    done.call(stage_call(sh, m, stage_idx, &results, round, Some(fb)).await)
                else {
                    return;
                };
                done.replace(&mut results, &v.stage, p);
            }
            "blocked" => {
                let why = format!(
                    "verification blocked `{}`: {unsupported} unsupported claim{} (report: {})",
                    v.stage,
                    if unsupported == 1 { "" } else { "s" },
                    report.display()
                );
                sh.events.stage_finished(
                    &key,
                    "blocked",
                    &line,
                    json!({"matter": m.name, "report": report.display().to_string()}),
                );
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
            _ => {
                sh.events.stage_finished(
                    &key,
                    if decision == "flagged" {
                        "flagged"
                    } else {
                        "passed"
                    },
                    &line,
                    json!({"matter": m.name, "report": report.display().to_string()}),
                );
                return;
            }
        }
    }
}

/// A structured answer as lines a verifier reads: `field: value`, one per value, strings
/// unquoted; a number under a money-like key (amount, total, price, paid, due, balance) is
/// written as dollars so that the amount rules apply to it.
fn flatten_answer(v: &Value) -> String {
    fn walk(v: &Value, key: &str, out: &mut String) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    walk(x, k, out);
                }
            }
            Value::Array(a) => {
                for x in a {
                    walk(x, key, out);
                }
            }
            Value::String(s) => out.push_str(&format!("{key}: {s}\n")),
            Value::Number(n) => {
                let money = [
                    "amount", "total", "price", "paid", "due", "balance", "fee", "rent",
                ]
                .iter()
                .any(|w| key.to_ascii_lowercase().contains(w));
                match (money, n.as_f64()) {
                    (true, Some(x)) => out.push_str(&format!("{key}: {}\n", dollars(x))),
                    _ => out.push_str(&format!("{key}: {n}\n")),
                }
            }
            Value::Bool(b) => out.push_str(&format!("{key}: {b}\n")),
            Value::Null => {}
        }
    }
    let mut out = String::new();
    walk(v, "answer", &mut out);
    out
}

fn dollars(x: f64) -> String {
    let cents = (x.abs() * 100.0).round() as u64;
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!(
        "{}${grouped}.{:02}",
        if x < 0.0 { "-" } else { "" },
        cents % 100
    )
}

/// Writes the declared outputs of one matter, atomically; notes what was not written and why.
fn write_outputs(sh: &Shared, m: &Matter, rec: &mut MatterRecord) {
    let status_of = |stage: &str| {
        rec.steps
            .iter()
            .rev()
            .find(|s| s.name == stage)
            .and_then(|s| s.status)
    };
    let blocked = |stage: &str| {
        rec.steps
            .iter()
            .any(|s| s.name == format!("verify {stage}") && s.status == Some(Status::Blocked))
    };
    let mut written = Vec::new();
    for o in &sh.plan.outputs {
        let dest = m.out_dir.join(&o.path);
        let (status, missing) = if blocked(&o.from) {
            ("not written: verification blocked it".to_string(), false)
        } else {
            match status_of(&o.from) {
                Some(Status::Done | Status::Stopped) => {
                    match write_output(sh, m, rec, &o.from, &o.format, o.appendix.as_deref(), &dest)
                        .and_then(|()| register_output(sh, m, rec, &o.from, &o.format, &dest))
                    {
                        Ok(()) => ("written".to_string(), false),
                        Err(e) => (format!("not written: {e}"), true),
                    }
                }
                Some(st) => (
                    format!("not written: `{}` is {}", o.from, status_word(st)),
                    false,
                ),
                None => (format!("not written: `{}` did not run", o.from), false),
            }
        };
        written.push(OutputRecord {
            path: dest.display().to_string(),
            from: o.from.clone(),
            status,
            missing,
        });
    }
    for w in &written {
        sh.events.say(&format!(
            "  {} {}",
            if w.status == "written" {
                "wrote"
            } else {
                "     "
            },
            match w.status.as_str() {
                "written" => w.path.clone(),
                s => format!("{} — {s}", w.path),
            }
        ));
    }
    rec.outputs = written;
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Done => "done",
        Status::Stopped => "stopped",
        Status::Skipped => "skipped",
        Status::Failed => "failed",
        Status::Blocked => "blocked",
        Status::Cancelled => "cancelled",
    }
}

fn write_output(
    sh: &Shared,
    m: &Matter,
    rec: &MatterRecord,
    from: &str,
    format: &str,
    appendix: Option<&str>,
    dest: &Path,
) -> Result<(), String> {
    // The latest file of that step, by extension.
    let step = rec
        .steps
        .iter()
        .rev()
        .find(|s| s.name == from && matches!(s.status, Some(Status::Done | Status::Stopped)))
        .ok_or_else(|| format!("`{from}` produced nothing"))?;
    let pick = |ext: &str| {
        step.outputs
            .iter()
            .rev()
            .find(|f| {
                let name = Path::new(f)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match ext {
                    "json" => {
                        name == "answer.json" || (step.kind == "tool" && name.ends_with(".json"))
                    }
                    "md" | "txt" => {
                        name == "output.md" || (step.kind == "tool" && name.ends_with(".md"))
                    }
                    other => name.ends_with(&format!(".{other}")),
                }
            })
            .cloned()
    };
    if step.kind == "model" && matches!(format, "docx" | "pdf") {
        let md = pick("md").ok_or_else(|| format!("`{from}` produces no text to lay out"))?;
        return write_document(sh, m, step, &md, format, appendix, dest);
    }
    let src = pick(format)
        .or_else(|| if format == "json" { pick("md") } else { None })
        .ok_or_else(|| format!("`{from}` produces no .{format} file"))?;
    let mut bytes = std::fs::read(&src).map_err(|e| format!("cannot read `{src}`: {e}"))?;
    if appendix == Some("verification") && matches!(format, "md" | "txt") {
        let report = m.run_dir.join(format!("verify-{from}")).join("report.md");
        if let Ok(r) = std::fs::read(&report) {
            bytes.extend_from_slice(b"\n\n---\n\n");
            bytes.extend_from_slice(&r);
        }
    }
    if let Some(d) = dest.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create `{}`: {e}", d.display()))?;
    }
    let tmp = dest.with_extension(format!("{format}.partial"));
    std::fs::write(&tmp, &bytes).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    std::fs::rename(&tmp, dest).map_err(|e| format!("cannot write `{}`: {e}", dest.display()))?;
    Ok(())
}

/// Marks a written output as lexrun's: a provenance comment at the end of Markdown and text,
/// a `.provenance.json` manifest beside every output, and an artifact in the ledger with the
/// fingerprints of its text, so the intake guard recognises it wherever it is copied.
fn register_output(
    sh: &Shared,
    m: &Matter,
    rec: &MatterRecord,
    from: &str,
    format: &str,
    dest: &Path,
) -> Result<(), String> {
    let Some(step) = rec
        .steps
        .iter()
        .rev()
        .find(|s| s.name == from && matches!(s.status, Some(Status::Done | Status::Stopped)))
    else {
        return Ok(());
    };
    let werr = |e: std::io::Error| format!("cannot write `{}`: {e}", dest.display());
    let stage_text = step
        .outputs
        .iter()
        .find(|f| f.ends_with("output.md"))
        .and_then(|f| std::fs::read_to_string(f).ok());
    let props = provenance(sh, m, step, stage_text.as_deref().unwrap_or("").as_bytes());
    if matches!(format, "md" | "txt") {
        let marker: Vec<String> = props
            .iter()
            .map(|(k, v)| format!("{}={v}", k.trim_start_matches("lexrun.")))
            .collect();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dest)
            .map_err(werr)?;
        use std::io::Write as _;
        writeln!(f, "\n<!-- lexrun:provenance {} -->", marker.join(" ")).map_err(werr)?;
    }
    let bytes =
        std::fs::read(dest).map_err(|e| format!("cannot read `{}`: {e}", dest.display()))?;
    let text = match format {
        "docx" | "pdf" => stage_text.unwrap_or_default(),
        _ => String::from_utf8_lossy(&bytes).into_owned(),
    };
    let hash = blake3::hash(&bytes).to_hex().to_string();
    let mut manifest: serde_json::Map<String, Value> =
        props.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    manifest.insert(
        "file".into(),
        json!(dest.file_name().map(|n| n.to_string_lossy().into_owned())),
    );
    manifest.insert("blake3".into(), json!(hash));
    manifest.insert("model".into(), json!(step.identity));
    let side = PathBuf::from(format!("{}.provenance.json", dest.display()));
    std::fs::write(
        &side,
        serde_json::to_vec_pretty(&manifest).unwrap_or_default(),
    )
    .map_err(werr)?;
    if let Some(store) = &sh.store {
        store
            .add_artifact(
                &crate::store::Artifact {
                    hash,
                    text_hash: intake::text_hash(&text),
                    run_id: sh.run_id.clone(),
                    matter: m.name.clone(),
                    stage: step.name.clone(),
                    round: step.round,
                    kind: "output".into(),
                    path: dest.display().to_string(),
                    model: step.identity.clone().unwrap_or_default(),
                    inputs: json!(step.inputs),
                    plan_hash: sh.plan.hash.clone(),
                    node_hash: step.node_hash.clone(),
                    created: crate::store::now(),
                },
                &text,
                &m.evidence_fps,
            )
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The run's index of review pages: every verification of every matter.
fn review_index(plan: &Plan, run_id: &str, root: &Path, matters: &[MatterRecord]) -> String {
    let relative = |page: &Path| {
        page.strip_prefix(root)
            .unwrap_or(page)
            .display()
            .to_string()
    };
    let mut entries = Vec::new();
    for rec in matters {
        for v in &rec.verifications {
            entries.push(crate::review::IndexEntry {
                matter: rec.name.clone(),
                stage: v.stage.clone(),
                round: v.round,
                summary: format!(
                    "{} claims, {} unsupported: {}",
                    v.claims, v.unsupported, v.decision
                ),
                problems: v.unsupported > 0,
                href: relative(&Path::new(&v.report).with_extension("html")),
            });
        }
        // Tool steps that verify a draft write their review page among their outputs.
        for st in &rec.steps {
            if let Some(page) = st.outputs.iter().find(|o| o.ends_with("report.html")) {
                entries.push(crate::review::IndexEntry {
                    matter: rec.name.clone(),
                    stage: st.name.clone(),
                    round: st.round,
                    summary: st.summary.clone(),
                    problems: !st.summary.contains(" 0 unsupported"),
                    href: relative(Path::new(page)),
                });
            }
        }
    }
    let provenance = vec![
        ("run".to_string(), run_id.to_string()),
        ("workflow".to_string(), plan.workflow.name.clone()),
        ("plan hash".to_string(), plan.hash.clone()),
    ];
    crate::review::index_page(run_id, &provenance, &entries)
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

/// The provenance every document carries, so it is recognised wherever it is copied.
fn provenance(sh: &Shared, m: &Matter, step: &StepRecord, text: &[u8]) -> Vec<(String, String)> {
    let run_id = m
        .run_dir
        .ancestors()
        .find_map(|p| {
            let n = p.file_name()?.to_string_lossy().into_owned();
            n.starts_with("run-").then_some(n)
        })
        .unwrap_or_default();
    vec![
        (
            "lexrun.generator".into(),
            format!("lexrun {}", env!("CARGO_PKG_VERSION")),
        ),
        ("lexrun.workflow".into(), sh.plan.workflow.name.clone()),
        ("lexrun.run".into(), run_id),
        ("lexrun.matter".into(), m.name.clone()),
        ("lexrun.stage".into(), step.name.clone()),
        ("lexrun.round".into(), step.round.to_string()),
        ("lexrun.plan_hash".into(), sh.plan.hash.clone()),
        ("lexrun.node_hash".into(), step.node_hash.clone()),
        (
            "lexrun.text_blake3".into(),
            blake3::hash(text).to_hex().to_string(),
        ),
    ]
}

/// A Word or PDF document from a stage's text: caption from the matter's `matter.json`,
/// signature block and jurat for affidavits, the verification appendix when asked for.
fn write_document(
    sh: &Shared,
    m: &Matter,
    step: &StepRecord,
    md: &str,
    format: &str,
    appendix: Option<&str>,
    dest: &Path,
) -> Result<(), String> {
    use crate::document::{self, docx};
    let text = std::fs::read(md).map_err(|e| format!("cannot read `{md}`: {e}"))?;
    let caption: Option<docx::Caption> = match std::fs::read(m.dir.join("matter.json")) {
        Ok(b) => Some(serde_json::from_slice(&b).map_err(|e| {
            format!(
                "`{}` is not a valid matter file: {e}",
                m.dir.join("matter.json").display()
            )
        })?),
        Err(_) => None,
    };
    let stem = dest
        .file_stem()
        .map(|s| s.to_string_lossy().replace(['-', '_'], " "))
        .unwrap_or_default();
    let is_affidavit = stem.to_ascii_lowercase().contains("affidavit");
    let closing = is_affidavit.then(|| {
        let affiant = caption
            .as_ref()
            .map(|c| c.affiant.clone())
            .filter(|a| !a.is_empty());
        let vars = json!({"affiant": affiant.unwrap_or_else(|| "Affiant".into())});
        prompt::render(document::AFFIDAVIT_CLOSING, &vars).unwrap_or_default()
    });
    let table = if appendix == Some("verification") {
        let report = m
            .run_dir
            .join(format!("verify-{}", step.name))
            .join("report.json");
        let v: Value = std::fs::read(&report)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(|| format!("no verification report for `{}` to append", step.name))?;
        let rows = v["claims"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let src = &c["source"];
                        vec![
                            (i + 1).to_string(),
                            c["kind"].as_str().unwrap_or("").into(),
                            c["text"].as_str().unwrap_or("").into(),
                            c["status"].as_str().unwrap_or("").into(),
                            src["file"]
                                .as_str()
                                .map(|f| {
                                    Path::new(f)
                                        .file_name()
                                        .map(|n| n.to_string_lossy().into_owned())
                                        .unwrap_or_default()
                                })
                                .unwrap_or_else(|| c["reason"].as_str().unwrap_or("").into()),
                            src["page"]
                                .as_u64()
                                .map(|p| p.to_string())
                                .unwrap_or_default(),
                            src["bates"].as_str().unwrap_or("").into(),
                        ]
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(docx::Table {
            title: "Verification appendix".into(),
            note: format!(
                "Every citation, date, Bates number, quotation and amount in this document, checked against the evidence: {} supported, {} unsupported.",
                v["supported"], v["unsupported"]
            ),
            header: ["#", "kind", "claim", "status", "source", "page", "Bates"]
                .map(String::from)
                .to_vec(),
            rows,
        })
    } else {
        None
    };
    let props = provenance(sh, m, step, &text);
    let d = docx::Document {
        title: stem.clone(),
        body: String::from_utf8_lossy(&text).into_owned(),
        caption,
        closing,
        appendix: table,
        style: docx::Style::default(),
        properties: props.clone(),
    };
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    }
    if format == "docx" {
        return docx::write(&d, dest);
    }
    let work = tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let tmp_docx = work.path().join(format!(
        "{}.docx",
        dest.file_stem().unwrap_or_default().to_string_lossy()
    ));
    docx::write(&d, &tmp_docx)?;
    document::docx_to_pdf(&tmp_docx, dest, &props)
}

/// `report.md`: what ran, how long, how fast, what was blocked or stopped, what was written.
fn report_markdown(header: &str, rec: &MatterRecord) -> String {
    let mut s = String::from(header);
    s.push_str(&format!(
        "\nMatter `{}` ({}): **{}**",
        rec.name,
        rec.dir,
        status_word(rec.status)
    ));
    if let Some(by) = &rec.stopped_by {
        s.push_str(&format!(" — {by}"));
    }
    s.push_str("\n\n| step | round | status | pool · model | prompt tokens | cached | generated | tok/s | time | note |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for st in &rec.steps {
        let (p, c, g, r) = match &st.timings {
            Some(t) => (
                (t.prompt_n + t.cache_n).to_string(),
                t.cache_n.to_string(),
                t.predicted_n.to_string(),
                format!("{:.1}", t.predicted_per_second),
            ),
            None => Default::default(),
        };
        let where_ = match (&st.pool, &st.model, &st.tool) {
            (Some(p), Some(m), _) => format!("{p} · {m}"),
            (_, _, Some(t)) => format!("cpu · {t}"),
            _ => String::new(),
        };
        let mut note = st.why.clone().unwrap_or_else(|| st.summary.clone());
        for w in &st.warnings {
            note.push_str(&format!(" ⚠ {w}"));
        }
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1} s | {} |\n",
            st.name,
            st.round,
            st.status.map_or("", status_word),
            where_,
            p,
            c,
            g,
            r,
            st.duration_ms as f64 / 1000.0,
            note.replace('|', "\\|").replace('\n', " ")
        ));
    }
    if !rec.verifications.is_empty() {
        s.push_str("\n## Verification\n\n| stage | round | claims | unsupported | decision | report |\n|---|---|---|---|---|---|\n");
        for v in &rec.verifications {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                v.stage, v.round, v.claims, v.unsupported, v.decision, v.report
            ));
        }
    }
    s.push_str("\n## Outputs\n\n");
    for o in &rec.outputs {
        s.push_str(&format!("- `{}` from `{}`: {}\n", o.path, o.from, o.status));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_flatten_for_the_verifier() {
        let a = json!({"amounts": [{"amount": 3875.0, "date": "2024-01-09", "bates": "SMITH000006"}], "total": 1234567.5, "count": 3});
        let t = flatten_answer(&a);
        assert!(t.contains("amount: $3,875.00\n"), "{t}");
        assert!(
            t.contains("date: 2024-01-09\n") && t.contains("bates: SMITH000006\n"),
            "{t}"
        );
        assert!(
            t.contains("total: $1,234,567.50\n") && t.contains("count: 3\n"),
            "{t}"
        );
        assert!(!t.contains('"'));
    }
}
