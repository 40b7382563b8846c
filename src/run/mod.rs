//! Running a plan. This build runs CPU tool stages (`bates`, `merge`, `index`, `ocr`,
//! `verify-draft`) in plan order over a matter folder; a plan with model stages is refused
//! with a clear message, since calling model servers is not part of this build yet.
//!
//! Every run writes `<out>/<run-id>/`: one folder per step with what it produced, and
//! `run.json` (per step: tool, inputs, outputs, duration, outcome). Declared `output`s are
//! copied to `<out>/<path>`. Sources are matched inside the matter folder and never inside
//! lexrun's own `.lexrun/` or output folders.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use globset::{GlobBuilder, GlobSetBuilder};
use serde::Serialize;

use crate::check::model::{OptionValue, StepKind, ToolStage};
use crate::exhibits::{bates, merge, text};
use crate::plan::Plan;
use crate::verify;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("`{0}` is a model stage; this build runs tool stages only (model servers are not called yet)")]
    ModelStage(String),
    #[error("the matter folder `{0}` does not exist; give one with --matter DIR")]
    NoMatter(String),
    #[error("sources `{0}` match no files in `{1}`")]
    NoFiles(String, String),
    #[error("step `{step}` failed: {why}")]
    Step { step: String, why: String },
    #[error("cannot write `{0}`: {1}")]
    Write(String, String),
}

#[derive(Clone, Debug, Serialize)]
pub struct StepRecord {
    pub name: String,
    pub tool: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub duration_ms: u64,
    /// What the step found, in a line (e.g. "7 pages stamped SMITH000001–SMITH000007").
    pub summary: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    pub workflow: String,
    pub plan_hash: String,
    pub run_id: String,
    pub matter: String,
    pub steps: Vec<StepRecord>,
    /// Declared outputs, as written.
    pub outputs: Vec<String>,
}

/// What one step left for later steps.
#[derive(Default, Clone)]
struct Produced {
    files: Vec<PathBuf>,
    /// Text per page (file, pages), when the step extracted it.
    pages: Vec<(String, Vec<String>)>,
    /// The file a declared `output` of each extension copies.
    primary: BTreeMap<String, PathBuf>,
}

fn opt_text(t: &ToolStage, key: &str) -> Option<String> {
    match t.options.get(key) {
        Some(OptionValue::Text(s)) => Some(s.clone()),
        _ => None,
    }
}

fn opt_num(t: &ToolStage, key: &str) -> Option<f64> {
    match t.options.get(key) {
        Some(OptionValue::Number(n)) => Some(*n),
        _ => None,
    }
}

fn opt_bool(t: &ToolStage, key: &str, default: bool) -> bool {
    match t.options.get(key) {
        Some(OptionValue::Bool(b)) => *b,
        _ => default,
    }
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

/// Runs a plan's tool stages over a matter; returns the run record.
pub fn run(
    plan: &Plan,
    workflow_dir: &Path,
    matter: Option<&Path>,
    out: &Path,
) -> Result<RunRecord, RunError> {
    if let Some(s) = plan
        .steps
        .iter()
        .find(|s| matches!(s.kind, StepKind::Model(_)))
    {
        return Err(RunError::ModelStage(s.name.clone()));
    }
    let matter = match (matter, &plan.workflow.matter) {
        (Some(m), _) => m.to_path_buf(),
        (None, Some(m)) => workflow_dir.join(m),
        (None, None) => workflow_dir.to_path_buf(),
    };
    if !matter.is_dir() {
        return Err(RunError::NoMatter(matter.display().to_string()));
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut run_id = format!("run-{secs}");
    let mut n = 1;
    while out.join(&run_id).exists() {
        n += 1;
        run_id = format!("run-{secs}-{n}");
    }
    let run_dir = out.join(&run_id);
    let werr =
        |p: &Path, e: std::io::Error| RunError::Write(p.display().to_string(), e.to_string());
    std::fs::create_dir_all(&run_dir).map_err(|e| werr(&run_dir, e))?;

    let mut produced: BTreeMap<String, Produced> = BTreeMap::new();
    let mut bates_of: BTreeMap<String, crate::check::model::Bates> = BTreeMap::new();
    for s in &plan.sources {
        let files = matching(&matter, &s.files);
        if files.is_empty() {
            return Err(RunError::NoFiles(
                s.name.clone(),
                matter.display().to_string(),
            ));
        }
        if let Some(b) = &s.bates {
            bates_of.insert(s.name.clone(), b.clone());
        }
        produced.insert(
            s.name.clone(),
            Produced {
                files,
                ..Produced::default()
            },
        );
    }

    let mut record = RunRecord {
        workflow: plan.workflow.name.clone(),
        plan_hash: plan.hash.clone(),
        run_id: run_id.clone(),
        matter: matter.display().to_string(),
        steps: Vec::new(),
        outputs: Vec::new(),
    };
    for step in &plan.steps {
        let StepKind::Tool(tool) = &step.kind else {
            continue;
        };
        let started = Instant::now();
        let dir = run_dir.join(&step.name);
        std::fs::create_dir_all(&dir).map_err(|e| werr(&dir, e))?;
        let inputs: Vec<PathBuf> = step
            .reads
            .iter()
            .flat_map(|r| produced.get(r).map(|p| p.files.clone()).unwrap_or_default())
            .collect();
        let fail = |why: String| RunError::Step {
            step: step.name.clone(),
            why,
        };
        let mut result = Produced::default();
        let summary = match tool.tool.as_str() {
            "bates" => {
                let decl = step.reads.iter().find_map(|r| bates_of.get(r)).cloned();
                let opts = bates::Options {
                    prefix: opt_text(tool, "prefix")
                        .or_else(|| decl.as_ref().map(|b| b.prefix.clone()))
                        .unwrap_or_default(),
                    start: opt_num(tool, "start")
                        .map(|n| n as u64)
                        .or(decl.as_ref().map(|b| b.start))
                        .unwrap_or(1),
                    width: opt_num(tool, "width")
                        .map(|n| n as u32)
                        .or(decl.as_ref().map(|b| b.width))
                        .unwrap_or(6),
                    suffix: opt_text(tool, "suffix")
                        .or_else(|| decl.as_ref().map(|b| b.suffix.clone()))
                        .unwrap_or_default(),
                    position: opt_text(tool, "position")
                        .and_then(|p| bates::Position::parse(&p))
                        .unwrap_or(bates::Position::BottomRight),
                    font_size: opt_num(tool, "font_size").unwrap_or(9.0),
                };
                let pdfs: Vec<PathBuf> = inputs
                    .iter()
                    .filter(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf")))
                    .cloned()
                    .collect();
                if pdfs.len() != inputs.len() {
                    let other: Vec<String> = inputs
                        .iter()
                        .filter(|p| !pdfs.contains(p))
                        .map(|p| p.display().to_string())
                        .collect();
                    return Err(fail(format!(
                        "Bates numbers are stamped on PDFs; convert these first: {}",
                        other.join(", ")
                    )));
                }
                let map =
                    bates::stamp_files(&pdfs, &dir, &opts).map_err(|e| fail(e.to_string()))?;
                result.files = pdfs
                    .iter()
                    .filter_map(|p| p.file_name().map(|n| dir.join(n)))
                    .collect();
                result
                    .primary
                    .insert("json".into(), dir.join("bates-map.json"));
                format!(
                    "{} pages stamped {}–{}",
                    map.len(),
                    map.first().map_or("", |s| s.bates.as_str()),
                    map.last().map_or("", |s| s.bates.as_str())
                )
            }
            "merge" => {
                let binder = dir.join("binder.pdf");
                let opts = merge::Options {
                    slip_sheets: opt_bool(tool, "slip_sheets", false),
                    bookmarks: opt_bool(tool, "bookmarks", true),
                    index_page: false,
                    title: opt_text(tool, "title").unwrap_or_else(|| "Exhibits".into()),
                };
                let entries =
                    merge::merge(&inputs, &binder, &opts).map_err(|e| fail(e.to_string()))?;
                result.files = vec![binder.clone()];
                result.primary.insert("pdf".into(), binder);
                format!("{} exhibits bound", entries.len())
            }
            "index" => {
                // The index is built the way a binder is, then kept on its own.
                let scratch = dir.join("scratch.pdf");
                let title = opt_text(tool, "title").unwrap_or_else(|| "Exhibit index".into());
                let opts = merge::Options {
                    slip_sheets: false,
                    bookmarks: false,
                    index_page: false,
                    title: title.clone(),
                };
                let entries =
                    merge::merge(&inputs, &scratch, &opts).map_err(|e| fail(e.to_string()))?;
                let _ = std::fs::remove_file(&scratch);
                let md = dir.join("index.md");
                std::fs::rename(dir.join("scratch-index.md"), &md).map_err(|e| werr(&md, e))?;
                result.primary.insert("md".into(), md.clone());
                result.files.push(md);
                if matches!(opt_text(tool, "format").as_deref(), Some("pdf" | "both")) {
                    let pdf = dir.join("index.pdf");
                    merge::index_pdf(&title, &entries, &pdf).map_err(|e| fail(e.to_string()))?;
                    result.primary.insert("pdf".into(), pdf.clone());
                    result.files.push(pdf);
                }
                format!("{} exhibits indexed", entries.len())
            }
            "ocr" => {
                let opts = text::Options {
                    lang: opt_text(tool, "lang").unwrap_or_else(|| "eng".into()),
                    dpi: opt_num(tool, "dpi").map_or(300, |n| n as u32),
                    cache: text::default_cache(),
                    ocr_optional: false,
                };
                let mut rows = Vec::new();
                let mut ocr = 0;
                for f in &inputs {
                    let pages = text::pages(f, &opts).map_err(|e| fail(e.to_string()))?;
                    ocr += pages.iter().filter(|p| p.from == "ocr").count();
                    for p in &pages {
                        rows.push(serde_json::json!({
                            "file": f.display().to_string(), "page": p.page, "from": p.from,
                            "bates": verify::evidence::stamp_of(&p.text), "text": p.text,
                        }));
                    }
                    result.pages.push((
                        f.display().to_string(),
                        pages.into_iter().map(|p| p.text).collect(),
                    ));
                }
                let json = dir.join("text.json");
                std::fs::write(&json, serde_json::to_vec_pretty(&rows).unwrap_or_default())
                    .map_err(|e| werr(&json, e))?;
                result.files = inputs.clone();
                result.primary.insert("json".into(), json);
                format!("{} pages read, {ocr} by OCR", rows.len())
            }
            "verify-draft" => {
                let draft_path = matter.join(opt_text(tool, "draft").unwrap_or_default());
                let draft = std::fs::read_to_string(&draft_path).map_err(|e| {
                    fail(format!(
                        "cannot read the draft `{}`: {e}",
                        draft_path.display()
                    ))
                })?;
                let prefixes = opt_text(tool, "bates_prefix").into_iter().collect();
                let mut ev = verify::Evidence::new(prefixes);
                for r in &step.reads {
                    let Some(p) = produced.get(r) else { continue };
                    if p.pages.is_empty() {
                        for f in &p.files {
                            ev.add_path(f).map_err(|e| fail(e.to_string()))?;
                        }
                    } else {
                        for (file, pages) in &p.pages {
                            ev.add_pages(file.clone(), pages.clone());
                        }
                    }
                }
                let v = verify::verify(&draft, &ev);
                let name = draft_path.display().to_string();
                let md = dir.join("report.md");
                let json = dir.join("report.json");
                std::fs::write(
                    &md,
                    verify::report::markdown(&name, &draft, &v.outcomes, &v.files),
                )
                .map_err(|e| werr(&md, e))?;
                std::fs::write(&json, verify::report::json(&v.outcomes, &v.files))
                    .map_err(|e| werr(&json, e))?;
                result.primary.insert("md".into(), md.clone());
                result.primary.insert("json".into(), json.clone());
                result.files = vec![md, json];
                let bad = v
                    .outcomes
                    .iter()
                    .filter(|o| o.status == verify::Status::Unsupported)
                    .count();
                format!("{} claims checked, {bad} unsupported", v.outcomes.len())
            }
            other => return Err(fail(format!("lexrun has no `{other}` tool"))),
        };
        record.steps.push(StepRecord {
            name: step.name.clone(),
            tool: tool.tool.clone(),
            inputs: inputs.iter().map(|p| p.display().to_string()).collect(),
            outputs: result
                .files
                .iter()
                .chain(result.primary.values())
                .map(|p| p.display().to_string())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            duration_ms: started.elapsed().as_millis() as u64,
            summary,
        });
        produced.insert(step.name.clone(), result);
    }

    for o in &plan.outputs {
        let src = produced
            .get(&o.from)
            .and_then(|p| p.primary.get(&o.format))
            .ok_or_else(|| RunError::Step {
                step: o.from.clone(),
                why: format!(
                    "it produces no .{} file for `output \"{}\"`",
                    o.format, o.path
                ),
            })?;
        let dest = out.join(&o.path);
        if let Some(d) = dest.parent() {
            std::fs::create_dir_all(d).map_err(|e| werr(d, e))?;
        }
        std::fs::copy(src, &dest).map_err(|e| werr(&dest, e))?;
        record.outputs.push(dest.display().to_string());
    }
    let rj = run_dir.join("run.json");
    std::fs::write(&rj, serde_json::to_vec_pretty(&record).unwrap_or_default())
        .map_err(|e| werr(&rj, e))?;
    Ok(record)
}
