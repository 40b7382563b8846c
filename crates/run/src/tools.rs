//! The CPU tool steps: `bates`, `merge`, `index`, `ocr` and `verify-draft`. Each works in its
//! own folder of the run and says in one line what it did.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::exhibits::{bates, merge};
use crate::plan::workflow::{Bates, OptionValue, Step, ToolStage};
use crate::sources::pdf_text as text;
use crate::verify;

use crate::shared::Produced;

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

/// Why a tool step failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read the draft `{}`: {source}", path.display())]
    Draft {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Sources(#[source] std::io::Error),
    #[error("{0}")]
    DraftOutside(Box<DraftOutside>),
    #[error(transparent)]
    Bates(#[from] bates::BatesError),
    #[error(transparent)]
    Source(#[from] crate::sources::Unreadable),
    #[error("lexrun has no `{0}` tool")]
    Unknown(String),
}

/// A draft outside both its matter and the workflow library.
#[derive(Debug, thiserror::Error)]
#[error("the draft `{written}` is outside its matter (`{}`) and outside the workflow library (`{}`): {escape}; a `verify-draft` tool reads its draft from inside its matter or the workflow library, and {}", matter.display(), library.display(), crate::confine::LIBRARY_RULE)]
pub struct DraftOutside {
    written: String,
    matter: PathBuf,
    library: PathBuf,
    escape: crate::confine::Escape,
}

fn werr(p: &Path, source: std::io::Error) -> ToolError {
    ToolError::Write {
        path: p.to_path_buf(),
        source,
    }
}

/// Where a tool step may read what its options name: its matter, and the workflow library.
pub(super) struct Place<'a> {
    pub matter: &'a Path,
    pub library: &'a crate::confine::Library,
}

/// Runs one tool step in `dir`; returns what it produced and a line saying what it did.
pub(super) fn run(
    step: &Step,
    tool: &ToolStage,
    inputs: &[PathBuf],
    dir: &Path,
    place: &Place,
    bates_of: &BTreeMap<String, Bates>,
    produced: &BTreeMap<String, std::sync::Arc<Produced>>,
) -> Result<(Produced, String), ToolError> {
    crate::atomic::private_dir(dir).map_err(|e| werr(dir, e))?;
    let mut result = Produced::default();
    let summary = match tool.tool.as_str() {
        "bates" => stamp_tool(step, tool, inputs, dir, bates_of, &mut result)?,
        "merge" => merge_tool(tool, inputs, dir, &mut result)?,
        "index" => index_tool(tool, inputs, dir, &mut result)?,
        "ocr" => ocr_tool(tool, inputs, dir, &mut result)?,
        "verify-draft" => {
            let checked = draft_check(step, tool, place, produced)?;
            let (p, summary) = draft_reports(step, dir, &checked)?;
            result = p;
            summary
        }
        other => return Err(ToolError::Unknown(other.to_string())),
    };
    Ok((result, summary))
}

/// Stamps Bates numbers on the inputs, from the tool's options or else the sources'
/// declaration; which pages it stamped.
fn stamp_tool(
    step: &Step,
    tool: &ToolStage,
    inputs: &[PathBuf],
    dir: &Path,
    bates_of: &BTreeMap<String, Bates>,
    result: &mut Produced,
) -> Result<String, ToolError> {
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
    let map = bates::stamp_files(inputs, dir, &opts)?;
    // Each stamped file, once, in order (a converted `lease.docx` is `lease.pdf`).
    let mut files: Vec<PathBuf> = Vec::new();
    for s in &map {
        let p = PathBuf::from(&s.output);
        if !files.contains(&p) {
            files.push(p);
        }
    }
    result.files = files;
    result
        .primary
        .insert("json".into(), dir.join("bates-map.json"));
    Ok(format!(
        "{} pages stamped {}–{}",
        map.len(),
        map.first().map_or("", |s| s.bates.as_str()),
        map.last().map_or("", |s| s.bates.as_str())
    ))
}

/// Binds the inputs into one PDF; how many exhibits.
fn merge_tool(
    tool: &ToolStage,
    inputs: &[PathBuf],
    dir: &Path,
    result: &mut Produced,
) -> Result<String, ToolError> {
    let binder = dir.join("binder.pdf");
    let opts = merge::Options {
        slip_sheets: opt_bool(tool, "slip_sheets", false),
        bookmarks: opt_bool(tool, "bookmarks", true),
        index_page: false,
        title: opt_text(tool, "title").unwrap_or_else(|| "Exhibits".into()),
    };
    let entries = merge::merge(inputs, &binder, &opts)?;
    result.files = vec![binder.clone()];
    result.primary.insert("pdf".into(), binder);
    Ok(format!("{} exhibits bound", entries.len()))
}

/// An exhibit index of the inputs, in Markdown and optionally PDF; how many exhibits.
fn index_tool(
    tool: &ToolStage,
    inputs: &[PathBuf],
    dir: &Path,
    result: &mut Produced,
) -> Result<String, ToolError> {
    // The index is built the way a binder is, then kept on its own.
    let scratch = dir.join("scratch.pdf");
    let title = opt_text(tool, "title").unwrap_or_else(|| "Exhibit index".into());
    let opts = merge::Options {
        slip_sheets: false,
        bookmarks: false,
        index_page: false,
        title: title.clone(),
    };
    let entries = merge::merge(inputs, &scratch, &opts)?;
    let _ = std::fs::remove_file(&scratch);
    let md = dir.join("index.md");
    std::fs::rename(dir.join("scratch-index.md"), &md).map_err(|e| werr(&md, e))?;
    result.primary.insert("md".into(), md.clone());
    result.files.push(md);
    if matches!(opt_text(tool, "format").as_deref(), Some("pdf" | "both")) {
        let pdf = dir.join("index.pdf");
        merge::index_pdf(&title, &entries, &pdf)?;
        result.primary.insert("pdf".into(), pdf.clone());
        result.files.push(pdf);
    }
    Ok(format!("{} exhibits indexed", entries.len()))
}

/// Reads every page of the inputs (by OCR where they have no text) into `text.json`; how
/// many pages.
fn ocr_tool(
    tool: &ToolStage,
    inputs: &[PathBuf],
    dir: &Path,
    result: &mut Produced,
) -> Result<String, ToolError> {
    let opts = crate::sources::Options {
        scan: text::Options {
            lang: opt_text(tool, "lang").unwrap_or_else(|| "eng".into()),
            dpi: opt_num(tool, "dpi").map_or(300, |n| n as u32),
            cache: text::default_cache(),
            ocr_optional: false,
        },
    };
    let mut rows = Vec::new();
    let mut ocr = 0;
    for f in inputs {
        let docs = crate::sources::read(f, &opts).map_err(|source| {
            ToolError::Source(crate::sources::Unreadable {
                path: f.clone(),
                source,
            })
        })?;
        for d in docs {
            let file = d.shown(&f.display().to_string());
            ocr += d.pages.iter().filter(|p| p.from == "ocr").count();
            for p in &d.pages {
                rows.push(serde_json::json!({
                    "file": file, "page": p.page, "from": p.from,
                    "bates": crate::sources::stamp_of(&p.text), "text": p.text,
                }));
            }
            result.pages.push((file, d.texts()));
        }
    }
    let json = dir.join("text.json");
    crate::atomic::write_private(&json, serde_json::to_vec_pretty(&rows).unwrap_or_default())
        .map_err(|e| werr(&json, e))?;
    result.files = inputs.to_vec();
    result.primary.insert("json".into(), json);
    Ok(format!("{} pages read, {ocr} by OCR", rows.len()))
}

/// A `verify-draft` tool's draft, checked: its name, its text, the verification and the
/// evidence it was checked against (which a judge model's pages come from).
pub(super) struct DraftChecked {
    pub name: String,
    pub draft: String,
    pub verification: verify::Verification,
    pub evidence: verify::Evidence,
    /// The model that judged its sentences citing pages, if one did.
    pub judge: Option<String>,
}

/// Reads the `verify-draft` tool's draft (refusing one outside both its matter and the
/// workflow library) and checks it against what the tool reads.
pub(super) fn draft_check(
    step: &Step,
    tool: &ToolStage,
    place: &Place,
    produced: &BTreeMap<String, std::sync::Arc<Produced>>,
) -> Result<DraftChecked, ToolError> {
    let written = opt_text(tool, "draft").unwrap_or_default();
    let draft_path = place.matter.join(&written);
    let real = admit_draft(place, &written, &draft_path)?;
    let draft = std::fs::read_to_string(&real).map_err(|source| ToolError::Draft {
        path: draft_path.to_path_buf(),
        source,
    })?;
    let prefixes = opt_text(tool, "bates_prefix").into_iter().collect();
    let mut ev = verify::Evidence::new(prefixes);
    for r in &step.reads {
        let Some(p) = produced.get(r) else { continue };
        if p.pages.is_empty() {
            for f in &p.files {
                ev.add_path(f).map_err(ToolError::Sources)?;
            }
        } else {
            for (file, pages) in &p.pages {
                ev.add_pages(file.clone(), pages.clone());
            }
        }
    }
    let v = verify::verify(&draft, &ev);
    Ok(DraftChecked {
        name: draft_path.display().to_string(),
        draft,
        verification: v,
        evidence: ev,
        judge: None,
    })
}

/// The draft's real path, if it (symbolic links followed) lies inside the matter or inside the
/// workflow library: the one rule imports and templates keep, with the matter added, since a
/// draft is written relative to its matter.
fn admit_draft(place: &Place, written: &str, path: &Path) -> Result<PathBuf, ToolError> {
    use crate::confine::{resolve_within, ConfineError};
    let io = |source| ToolError::Draft {
        path: path.to_path_buf(),
        source,
    };
    let escape = match resolve_within(place.matter, path) {
        Ok(real) => return Ok(real),
        Err(ConfineError::Io(_, source)) => return Err(io(source)),
        Err(ConfineError::Escape(e)) => e,
    };
    match resolve_within(&place.library.root, path) {
        Ok(real) => Ok(real),
        Err(ConfineError::Io(_, source)) => Err(io(source)),
        Err(ConfineError::Escape(_)) => Err(ToolError::DraftOutside(Box::new(DraftOutside {
            written: written.to_string(),
            matter: place.matter.to_path_buf(),
            library: place.library.root.clone(),
            escape,
        }))),
    }
}

/// The `verify-draft` tool's reports (Markdown, JSON, the review page) of a checked draft;
/// what it produced and its summary line.
pub(super) fn draft_reports(
    step: &Step,
    dir: &Path,
    c: &DraftChecked,
) -> Result<(Produced, String), ToolError> {
    crate::atomic::private_dir(dir).map_err(|e| werr(dir, e))?;
    let (name, draft, v, ev) = (&c.name, &c.draft, &c.verification, &c.evidence);
    let mut result = Produced::default();
    let md = dir.join("report.md");
    let json = dir.join("report.json");
    crate::atomic::write_private(&md, verify::report::markdown(name, draft, v))
        .map_err(|e| werr(&md, e))?;
    crate::atomic::write_private(&json, verify::report::json(v)).map_err(|e| werr(&json, e))?;
    let html = dir.join("report.html");
    let run = dir
        .ancestors()
        .filter_map(|p| p.file_name()?.to_str())
        .find(|n| n.starts_with("run-"))
        .unwrap_or_default();
    let page = crate::review::page(&crate::review::Review {
        title: name,
        draft,
        outcomes: &v.outcomes,
        files: &v.files,
        evidence: ev,
        provenance: vec![
            ("run".into(), run.to_string()),
            ("step".into(), step.name.clone()),
            (
                "model".into(),
                c.judge.as_ref().map_or_else(
                    || "none (the verify-draft tool)".into(),
                    |j| format!("{j}, judging the sentences that cite pages"),
                ),
            ),
            ("draft".into(), name.clone()),
        ],
        images: true,
        ids: &[],
    });
    crate::atomic::write_private(&html, page).map_err(|e| werr(&html, e))?;
    result.primary.insert("md".into(), md.clone());
    result.primary.insert("json".into(), json.clone());
    result.files = vec![md, json, html];
    let bad = v
        .outcomes
        .iter()
        .filter(|o| o.status != verify::Status::Supported)
        .count();
    Ok((
        result,
        format!("{} claims checked, {bad} unsupported", v.outcomes.len()),
    ))
}
