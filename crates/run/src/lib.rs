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

use lexrun_backend as backend;
use lexrun_base::{atomic, calendar, claim_kind, confine, credentials};
use lexrun_document as document;
use lexrun_exhibits as exhibits;
use lexrun_plan as plan;
use lexrun_review as review;
use lexrun_sources as sources;
use lexrun_store as store;
use lexrun_verify as verify;

mod answer;
mod blocked;
mod cache_key;
mod call;
mod error;
pub mod events;
mod expr;
mod failure;
mod incomplete;
pub mod intake;
mod judge;
mod matter;
mod outputs;
mod production;
pub mod prompt;
mod provenance;
mod prune;
mod record;
mod report;
mod schedule;
pub mod schema;
mod shared;
mod stage;
mod taint_ledger;
mod tools;
mod unit;
mod verification;
pub mod why;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tokio::sync::{OnceCell, Semaphore};

use crate::backend::{cassette, Limits};
use crate::plan::workflow::{Bates, Pool, StepKind};
use crate::plan::Plan;
use error::write_error;
use events::Events;
use matter::{matching, matter_dirs, matter_name};
use outputs::write_outputs;
use prompt::EvidenceFile;
use report::{record_header, report_markdown};
use schedule::schedule;
use shared::{Matter, PoolRt, Shared};

pub use cache_key::{CacheKey, Change, CACHE_FORMAT};
pub use error::RunError;
pub use matter::check_sources;
pub use prune::prune_runs;
pub use record::{
    MatterRecord, OutputRecord, RecordError, RunRecord, Status, StepRecord, VerifyRecord,
    INCOMPLETE_EXIT,
};
pub use taint_ledger::LedgerFacts;

/// How to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Matter folders; empty means the workflow's `matter`, else its own folder.
    pub matters: Vec<PathBuf>,
    pub out: PathBuf,
    /// Pool name → the server standing in for the pool's declared one (URL, maybe kind).
    pub endpoints: backend::endpoint::Overrides,
    pub limits: Limits,
    pub events: events::Mode,
    /// Record to, or replay from, a cassette.
    pub cassette: Option<(PathBuf, cassette::Mode)>,
    /// The store (cache and ledger); `None` runs without one.
    pub store: Option<PathBuf>,
    /// A shared ledger (`postgres://…`) in place of the one inside the store.
    pub ledger: Option<String>,
    /// Answer model stages from the cache when their key is there.
    pub cache: bool,
    /// Stages whose cached answers are ignored.
    pub refresh: Vec<String>,
    /// Ask no server: every model stage must be in the cache, under the model identity the
    /// ledger recorded for it.
    pub offline: bool,
    /// The workflow file, as the ledger names it (so `why` tells apart two files that share
    /// a workflow name).
    pub workflow_file: String,
    /// A program following the run (its events, and a way to stop it).
    pub watch: Option<events::Watch>,
}

/// Runs a plan; returns the record (also written as `run.json`). In steps: open the pools,
/// read the matters and guard their sources, record the sources, schedule every step, write
/// the reports.
pub async fn run(plan: &Plan, workflow_dir: &Path, opts: &Options) -> Result<RunRecord, RunError> {
    let started = Instant::now();
    let events = Events::watched(opts.events, opts.watch.clone());
    let tape = match &opts.cassette {
        Some((path, mode)) => Some(Arc::new(cassette::Cassette::open(path, *mode)?)),
        None => None,
    };
    if let Some(tape) = &tape {
        let stages: Vec<&str> = plan.steps.iter().map(|s| s.name.as_str()).collect();
        tape.bind(&plan.workflow.name, &stages)?;
    }
    let pools = open_pools(plan, opts, tape.as_ref())?;
    let bates_of: BTreeMap<String, Bates> = plan
        .sources
        .iter()
        .filter_map(|s| s.bates.clone().map(|b| (s.name.clone(), b)))
        .collect();
    let mut prefixes: Vec<String> = bates_of.values().map(|b| b.prefix.clone()).collect();
    prefixes.sort();
    prefixes.dedup();
    // A stamp with a declared prefix is read as one at any width.
    crate::sources::declare_prefixes(&prefixes);

    let dirs = matter_dirs(plan, workflow_dir, &opts.matters);
    let multi = dirs.len() > 1;
    let run_id = new_run_id(&opts.out);
    let store = match &opts.store {
        Some(dir) => Some(Arc::new(crate::store::Store::open_with(
            dir,
            opts.ledger.as_deref(),
        )?)),
        None => None,
    };
    let run_root = opts.out.join(&run_id);
    let reading = Reading {
        plan,
        opts,
        store: store.as_deref(),
        prefixes: &prefixes,
        run_root: &run_root,
        multi,
    };
    let (matters, verdicts) = reading.matters(&dirs)?;
    if let Some(store) = &store {
        record_sources(store, &run_id, plan, &verdicts, &events)?;
    }
    let shared = Arc::new(Shared {
        plan: plan.clone(),
        limits: opts.limits.clone(),
        events: events.clone(),
        started,
        pools,
        bates_of,
        prefixes,
        multi,
        run_id: run_id.clone(),
        store: store.clone(),
        cache: opts.cache,
        refresh: opts.refresh.clone(),
        offline: opts.offline,
        workflow_file: opts.workflow_file.clone(),
        library: crate::confine::Library::of(workflow_dir),
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
            .map_err(|e| RunError::CassetteWrite(tape.path.display().to_string(), e))?;
    }
    let mut record = RunRecord {
        workflow: plan.workflow.name.clone(),
        plan_hash: plan.hash.clone(),
        run_id: run_id.clone(),
        duration_ms: started.elapsed().as_millis() as u64,
        cancelled,
        matters: records,
    };
    write_reports(&shared, &matters, &mut record, &run_root)?;
    Ok(record)
}

/// Every pool's server: its endpoint (as `--endpoint` overrides it), its backend (taped when
/// a cassette records or replays), its slots.
fn open_pools(
    plan: &Plan,
    opts: &Options,
    tape: Option<&Arc<cassette::Cassette>>,
) -> Result<BTreeMap<String, Arc<PoolRt>>, RunError> {
    for name in opts.endpoints.keys() {
        if !plan.pools.iter().any(|p| &p.name == name) {
            let all: Vec<&str> = plan.pools.iter().map(|p| p.name.as_str()).collect();
            return Err(RunError::UnknownPool(name.clone(), all.join(", ")));
        }
    }
    let mut pools = BTreeMap::new();
    for p in &plan.pools {
        let (server, endpoint) =
            backend::endpoint::resolve(&opts.endpoints, &p.name, p.server, &p.endpoint);
        let mut backend =
            backend::connect_with_key(server, &endpoint, &opts.limits, p.api_key_env.as_deref())
                .map_err(|e| RunError::Endpoint(p.name.clone(), e))?;
        if let Some(tape) = tape {
            backend = Box::new(cassette::Taped {
                inner: backend,
                cassette: tape.clone(),
                pool: p.name.clone(),
                server,
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
                pool: Pool {
                    server,
                    ..p.item.clone()
                },
                endpoint,
                backend,
                slots: Arc::new(Semaphore::new(p.slots.max(1) as usize)),
                identity,
                reachable: OnceCell::new(),
            }),
        );
    }
    Ok(pools)
}

/// What reading the matters needs.
struct Reading<'a> {
    plan: &'a Plan,
    opts: &'a Options,
    store: Option<&'a crate::store::Store>,
    prefixes: &'a [String],
    run_root: &'a Path,
    multi: bool,
}

impl Reading<'_> {
    /// Every matter with its evidence, and the intake guard's verdict on each source. Every
    /// file is read before any refusal, so that all bad files are named at once.
    fn matters(
        &self,
        dirs: &[PathBuf],
    ) -> Result<(Vec<Arc<Matter>>, Vec<intake::Verdict>), RunError> {
        let mut matters = Vec::new();
        let mut names = BTreeSet::new();
        let mut verdicts: Vec<intake::Verdict> = Vec::new();
        let mut unreadable: Vec<crate::sources::Unreadable> = Vec::new();
        for dir in dirs {
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
            let (run_dir, out_dir) = if self.multi {
                (self.run_root.join(&name), self.opts.out.join(&name))
            } else {
                (self.run_root.to_path_buf(), self.opts.out.clone())
            };
            crate::atomic::private_dir(self.run_root)
                .and_then(|()| crate::atomic::private_dir(&run_dir))
                .map_err(|e| write_error(&run_dir, e))?;
            let record = matter::matter_record(dir)?;
            let mut parts = Vec::new();
            let evidence = self.evidence(dir, &mut unreadable, &mut parts)?;
            if let Some(store) = self.store {
                verdicts.extend(self.guard(store, &name, &evidence));
            }
            let evidence_fps = if self.store.is_some() {
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
                unreadable_parts: parts,
                record,
            }));
        }
        if !unreadable.is_empty() {
            return Err(RunError::Evidence(crate::sources::Unreadables(unreadable)));
        }
        if verdicts.iter().any(intake::Verdict::blocked) {
            return Err(RunError::Refused(verdicts));
        }
        Ok((matters, verdicts))
    }

    /// A matter's sources, read when a model, a verification or the intake guard needs
    /// their text; the files that cannot be read are added to `unreadable`, the parts of
    /// files that cannot be read (an email's broken attachment) to `parts`.
    fn evidence(
        &self,
        dir: &Path,
        unreadable: &mut Vec<crate::sources::Unreadable>,
        parts: &mut Vec<(String, String)>,
    ) -> Result<BTreeMap<String, Vec<EvidenceFile>>, RunError> {
        let plan = self.plan;
        let mut evidence = BTreeMap::new();
        for s in &plan.sources {
            let files = matching(dir, &s.files)?;
            if files.is_empty() {
                return Err(RunError::NoFiles(s.name.clone(), dir.display().to_string()));
            }
            let needed = plan
                .steps
                .iter()
                .any(|st| matches!(st.kind, StepKind::Model(_)) && st.reads.contains(&s.name))
                || plan.verify.iter().any(|v| v.against.contains(&s.name))
                // The intake guard reads every source.
                || self.store.is_some();
            let mut list = Vec::new();
            for f in files {
                let shown = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
                if !needed {
                    list.push(EvidenceFile {
                        source: s.name.clone(),
                        shown,
                        path: f.display().to_string(),
                        pages: Vec::new(),
                        embedded: None,
                    });
                    continue;
                }
                match prompt::read(&f, s.ocr_optional) {
                    Ok(docs) => {
                        parts.extend(prompt::unreadable_parts(&shown, &docs));
                        list.extend(prompt::evidence_files(&s.name, &shown, &f, docs))
                    }
                    // A production accounts for a file it cannot read as an exception,
                    // with a slip sheet; only a source something else reads needs every
                    // file read.
                    Err(e) if produced_only(plan, &s.name) => {
                        parts.push((shown.clone(), e.to_string()));
                        list.push(EvidenceFile {
                            source: s.name.clone(),
                            shown,
                            path: f.display().to_string(),
                            pages: Vec::new(),
                            embedded: None,
                        });
                    }
                    Err(e) => unreadable.push(e),
                }
            }
            if let Some(b) = &s.bates {
                number_pages(&mut list, b);
            }
            evidence.insert(s.name.clone(), list);
        }
        Ok(evidence)
    }

    /// The intake guard's verdict on each of a matter's sources: lexrun's own outputs, near
    /// copies of them, and claims a model invented are refused unless admitted.
    fn guard(
        &self,
        store: &crate::store::Store,
        name: &str,
        evidence: &BTreeMap<String, Vec<EvidenceFile>>,
    ) -> Vec<intake::Verdict> {
        let mut mine = Vec::new();
        let mut pages = Vec::new();
        for s in &self.plan.sources {
            let admit = s.admitted();
            for f in evidence.get(&s.name).into_iter().flatten() {
                let text = f.pages.join("\n");
                mine.push(match &f.embedded {
                    Some(bytes) => {
                        intake::check_bytes(store, name, &f.shown, &f.path, bytes, &text, &admit)
                    }
                    None => intake::check(store, name, &f.shown, Path::new(&f.path), &text, &admit),
                });
                pages.push(f.pages.clone());
            }
        }
        intake::check_taint(store, name, &mut mine, &pages, self.prefixes);
        mine
    }
}

/// `sources … bates`: when no page of the source's files carries a stamp yet, every page is
/// given its number, in file and page order from the declared start, at its foot — in the
/// text the run reads (the packet the model reads, the verifier's index, the review page),
/// as a stamped copy would carry it; the client's files are never touched. A source whose
/// files are stamped already keeps its own numbers.
fn number_pages(files: &mut [EvidenceFile], b: &Bates) {
    let stamped = files
        .iter()
        .flat_map(|f| &f.pages)
        .any(|p| crate::sources::stamp_of(p).is_some());
    if stamped {
        return;
    }
    for (n, page) in (b.start..).zip(files.iter_mut().flat_map(|f| f.pages.iter_mut())) {
        let trimmed = page.trim_end().len();
        page.truncate(trimmed);
        page.push_str(&format!(
            "\n\n{}{:0w$}{}\n",
            b.prefix,
            n,
            b.suffix,
            w = b.width as usize
        ));
    }
}

/// Whether only productions read source `name`: they account for a file that cannot be
/// read as an exception rather than stop.
fn produced_only(plan: &Plan, name: &str) -> bool {
    let readers: Vec<&StepKind> = plan
        .steps
        .iter()
        .filter(|st| st.reads.iter().any(|r| r == name))
        .map(|st| &st.kind)
        .collect();
    !readers.is_empty()
        && readers
            .iter()
            .all(|k| matches!(k, StepKind::Tool(t) if t.production.is_some()))
        && !plan
            .verify
            .iter()
            .any(|v| v.against.iter().any(|a| a == name))
}

/// The run and every source it read, in the ledger; admissions said on the terminal.
fn record_sources(
    store: &crate::store::Store,
    run_id: &str,
    plan: &Plan,
    verdicts: &[intake::Verdict],
    events: &Events,
) -> Result<(), RunError> {
    let mut sources = Vec::new();
    for v in verdicts {
        let why = v.why();
        let admission = v.admitted.clone().zip(why);
        if let Some((reason, why)) = &admission {
            events.warn(
                &v.file,
                &format!("admitted by the workflow although {why}: {reason}"),
            );
        }
        sources.push(crate::store::RunSource {
            matter: v.matter.clone(),
            path: v.path.clone(),
            raw_hash: v.raw_hash.clone(),
            text_hash: v.text_hash.clone(),
            admitted: admission.as_ref().map(|(r, _)| r.clone()),
            admission,
        });
    }
    store.begin_run(run_id, &plan.workflow.name, &plan.hash, &sources)?;
    Ok(())
}

/// The declared outputs and `report.md` of each matter, the run's review index, the run's
/// status in the ledger, and `run.json`.
fn write_reports(
    shared: &Shared,
    matters: &[Arc<Matter>],
    record: &mut RunRecord,
    run_root: &Path,
) -> Result<(), RunError> {
    let (plan, run_id) = (&shared.plan, &shared.run_id);
    for (m, rec) in matters.iter().zip(record.matters.iter_mut()) {
        write_outputs(shared, m, rec);
        let mut md = report_markdown(&record_header(plan, run_id), rec);
        md.push_str(&report::unreadable_parts(&m.unreadable_parts));
        let path = m.run_dir.join("report.md");
        crate::atomic::write_private(&path, md).map_err(|e| write_error(&path, e))?;
    }
    let index = run_root.join("review.html");
    crate::atomic::write_private(
        &index,
        report::review_index(plan, run_id, run_root, &record.matters),
    )
    .map_err(|e| write_error(&index, e))?;
    // The record is written even when the ledger cannot close the run: nothing done is lost.
    let closed = match &shared.store {
        Some(store) => store.finish_run(
            run_id,
            match record.exit_code() {
                0 => "done",
                3 => "stopped",
                record::INCOMPLETE_EXIT => "incomplete",
                130 => "cancelled",
                _ => "failed",
            },
        ),
        None => Ok(()),
    };
    let rj = run_root.join("run.json");
    crate::atomic::write_private(&rj, serde_json::to_vec_pretty(&record).unwrap_or_default())
        .map_err(|e| write_error(&rj, e))?;
    // A ledger lost during the run ends it with the one error that says so, whether or not
    // it was back in time to close the run.
    if let Some(lost) = shared.store.as_ref().and_then(|s| s.lost()) {
        return Err(lost.into());
    }
    closed?;
    shared.events.run_finished(
        json!({"run_id": run_id, "exit": record.exit_code(), "record": rj.display().to_string()}),
    );
    Ok(())
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
