//! The declared outputs: copied or laid out (Markdown, JSON, DOCX, PDF) from the stage that
//! makes them, each marked as lexrun's so it can never come back as evidence.
//!
//! An output is made whole in memory first — its text, its provenance marker, its manifest —
//! and entered in the ledger before it is written, so the intake guard knows it from the
//! moment it exists. The file and its manifest are then written as one
//! ([`crate::atomic::write_all`]): a failure leaves neither at its final path, and the run
//! says "not written" only of what is not there. While a run writes a folder's outputs it
//! holds the folder's lock: two runs never interleave their outputs in one folder. A folder
//! belongs to the first matter whose outputs it holds; a run of another matter writes its
//! outputs in `<out>/<matter>/` (as a run of several matters does), so that many matters run
//! into one output folder at once all finish, and none overwrites another's.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::document::DocumentError;
use crate::plan::workflow::{Closing, Output, Verify};
use crate::provenance::provenance;
use crate::record::{MatterRecord, OutputRecord, Status, StepRecord};
use crate::shared::{Matter, Shared};
use crate::verify::report::{Report, ReportClaim};
use crate::verify::{Location, Status as ClaimStatus};
use crate::{blocked, intake, prompt};

/// Why a declared output was not written.
#[derive(Debug, thiserror::Error)]
pub(super) enum OutputError {
    #[error("`{0}` produced nothing")]
    NothingFrom(String),
    #[error("`{0}` produces no text to lay out")]
    NoText(String),
    #[error("`{0}` produces no .{1} file")]
    NoFile(String, String),
    #[error("no verification report for `{0}` to append")]
    NoReport(String),
    #[error("the claims that blocked `{0}` are not where its verification report places them, so they cannot be removed from it")]
    Unmarkable(String),
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create `{}`: {source}", path.display())]
    Create {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}` is not a valid matter file: {source}", path.display())]
    Matter {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    Document(#[from] DocumentError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

fn read_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> OutputError {
    let path = path.into();
    move |source| OutputError::Read { path, source }
}

fn create_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> OutputError {
    let path = path.into();
    move |source| OutputError::Create { path, source }
}

fn write_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> OutputError {
    let path = path.into();
    move |source| OutputError::Write { path, source }
}

/// Writes the declared outputs of one matter, atomically; notes what was not written and why.
pub(super) fn write_outputs(sh: &Shared, m: &Matter, rec: &mut MatterRecord) {
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
    // A verification that could not finish passes nothing.
    let unjudged = |stage: &str| {
        rec.steps
            .iter()
            .any(|s| s.name == format!("judge {stage}") && s.status == Some(Status::Failed))
    };
    let mut written = Vec::new();
    let (lock, out_dir) = output_folder(sh, m);
    for o in &sh.plan.outputs {
        let dest = out_dir.join(&o.path);
        let (status, missing) = if let Err(e) = &lock {
            (format!("not written: {e}"), true)
        } else if blocked(&o.from) {
            write_blocked(sh, m, rec, o, &dest, &mut written)
        } else if unjudged(&o.from) {
            (
                "not written: its sentences citing pages could not be judged".to_string(),
                false,
            )
        } else if let (Some(why), Some(Status::Done | Status::Stopped | Status::Incomplete)) =
            (incomplete_origin(sh, rec, &o.from), status_of(&o.from))
        {
            write_incomplete(sh, m, rec, o, &dest, &why, &mut written)
        } else {
            match status_of(&o.from) {
                Some(Status::Done | Status::Stopped) => {
                    let mk = Making {
                        sh,
                        m,
                        output: o,
                        dest: &dest,
                        blocked: None,
                        incomplete: None,
                    };
                    match render_output(&mk, rec)
                        .and_then(|(bytes, _)| commit_output(sh, m, rec, o, &dest, bytes))
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
            if w.status.starts_with("written") {
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
    drop(lock);
    rec.outputs = written;
}

/// The lock on the folder a matter's outputs go to (none when the plan declares none), and
/// that folder: the matter's output folder, or one of its own inside it when that holds
/// another matter's outputs (which the run says).
fn output_folder(sh: &Shared, m: &Matter) -> (std::io::Result<Option<FolderLock>>, PathBuf) {
    let lock = if sh.plan.outputs.is_empty() {
        Ok(None)
    } else {
        FolderLock::claim(&m.out_dir, &m.name, &m.dir).map(Some)
    };
    let out_dir = match &lock {
        Ok(Some(l)) => l.dir.clone(),
        _ => m.out_dir.clone(),
    };
    if out_dir != m.out_dir {
        sh.events.say(&format!(
            "  outputs of the matter `{}` go to {}: {} holds another matter's",
            m.name,
            out_dir.display(),
            m.out_dir.display()
        ));
    }
    (lock, out_dir)
}

/// An output whose stage verification blocked: not written. A document of a model's draft
/// is still written for a person to read, as a blocked draft beside the declared path
/// (recorded in `written`); nothing else leaves. The declared output's status.
fn write_blocked(
    sh: &Shared,
    m: &Matter,
    rec: &MatterRecord,
    o: &Output,
    dest: &Path,
    written: &mut Vec<OutputRecord>,
) -> (String, bool) {
    let doc = matches!(o.format.as_str(), "docx" | "pdf")
        && rec
            .steps
            .iter()
            .rev()
            .find(|s| s.name == o.from)
            .is_some_and(|s| s.kind == "model");
    let block = sh
        .plan
        .verify
        .iter()
        .map(|u| &u.item)
        .find(|v| v.stage == o.from);
    let (true, Some(v)) = (doc, block) else {
        return ("not written: verification blocked it".to_string(), false);
    };
    let draft = blocked::blocked_path(dest);
    let mk = Making {
        sh,
        m,
        output: o,
        dest: &draft,
        blocked: Some(v),
        incomplete: None,
    };
    let made = render_output(&mk, rec)
        .and_then(|(bytes, removed)| commit_output(sh, m, rec, o, &draft, bytes).map(|()| removed));
    match made {
        Ok(removed) => {
            written.push(OutputRecord {
                path: draft.display().to_string(),
                from: o.from.clone(),
                status: format!(
                    "written as a blocked draft, not for filing: {removed} unsupported claim{} removed and listed in its appendix",
                    if removed == 1 { "" } else { "s" }
                ),
                missing: false,
            });
            (
                format!(
                    "not written: verification blocked it (its blocked draft is {})",
                    draft.file_name().unwrap_or_default().to_string_lossy()
                ),
                false,
            )
        }
        Err(e) => (
            format!("not written: verification blocked it, and its blocked draft could not be made: {e}"),
            false,
        ),
    }
}

/// Why what `stage` makes is incomplete: its own latest answer is, or that of a stage it
/// reads (directly or through others). `None` when everything it stands on is finished.
fn incomplete_origin(sh: &Shared, rec: &MatterRecord, stage: &str) -> Option<String> {
    let incomplete = rec.incomplete_steps();
    if incomplete.is_empty() {
        return None;
    }
    let mut seen = std::collections::BTreeSet::new();
    let mut todo = vec![stage.to_string()];
    while let Some(s) = todo.pop() {
        if !seen.insert(s.clone()) {
            continue;
        }
        if let Some(st) = incomplete.iter().find(|st| st.name == s) {
            let why = st.why.as_deref().unwrap_or("its answer is incomplete");
            return Some(match s == stage {
                true => format!("`{s}` is incomplete: {why}"),
                false => format!("it is made from `{s}`, which is incomplete: {why}"),
            });
        }
        if let Some(step) = sh.plan.steps.iter().find(|st| st.name == s) {
            todo.extend(step.reads.iter().cloned());
        }
    }
    None
}

/// An output whose stage is incomplete, or made from an incomplete stage: written only as an
/// incomplete draft beside the declared path (recorded in `written`), marked so at its top
/// (and on every page of a document); nothing is written at the declared path. The declared
/// output's status.
fn write_incomplete(
    sh: &Shared,
    m: &Matter,
    rec: &MatterRecord,
    o: &Output,
    dest: &Path,
    why: &str,
    written: &mut Vec<OutputRecord>,
) -> (String, bool) {
    let draft = blocked::draft_path(dest, "incomplete-draft");
    let mk = Making {
        sh,
        m,
        output: o,
        dest: &draft,
        blocked: None,
        incomplete: Some(why),
    };
    let made = render_output(&mk, rec).and_then(|(bytes, _)| {
        let bytes = match o.format.as_str() {
            "md" | "txt" => {
                let mut b = blocked::incomplete_banner(why).into_bytes();
                b.extend_from_slice(&bytes);
                b
            }
            _ => bytes,
        };
        commit_output(sh, m, rec, o, &draft, bytes)
    });
    match made {
        Ok(()) => {
            written.push(OutputRecord {
                path: draft.display().to_string(),
                from: o.from.clone(),
                status: format!("written as an incomplete draft, not for filing: {why}"),
                missing: false,
            });
            (
                format!(
                    "not written: {why} (its incomplete draft is {})",
                    draft.file_name().unwrap_or_default().to_string_lossy()
                ),
                false,
            )
        }
        Err(e) => (
            format!("not written: {why}; and its incomplete draft could not be made: {e}"),
            true,
        ),
    }
}

pub(super) fn status_word(s: Status) -> &'static str {
    match s {
        Status::Done => "done",
        Status::Stopped => "stopped",
        Status::Skipped => "skipped",
        Status::Failed => "failed",
        Status::Blocked => "blocked",
        Status::Cancelled => "cancelled",
        Status::Incomplete => "incomplete",
    }
}

/// The Markdown report of the verification round that decided `stage` (the last one).
fn deciding_report(m: &Matter, rec: &MatterRecord, stage: &str) -> PathBuf {
    rec.verifications
        .iter()
        .rfind(|v| v.stage == stage)
        .map(|v| PathBuf::from(&v.report))
        .unwrap_or_else(|| m.run_dir.join(format!("verify-{stage}")).join("report.md"))
}

/// One declared output being made: the run, its matter, the output, where it goes, and the
/// verification that blocked its stage when it is made as a blocked draft.
pub(super) struct Making<'a> {
    pub(super) sh: &'a Shared,
    pub(super) m: &'a Matter,
    pub(super) output: &'a Output,
    pub(super) dest: &'a Path,
    pub(super) blocked: Option<&'a Verify>,
    /// Why the output is made as an incomplete draft.
    pub(super) incomplete: Option<&'a str>,
}

/// An output's bytes, and how many claims were removed from it.
type Rendered = Result<(Vec<u8>, usize), OutputError>;

/// The bytes of a declared output, laid out or copied from its stage (without its marker),
/// and how many claims were removed from it: a blocked draft of the document when `blocked`
/// names the verification that blocked it.
pub(super) fn render_output(mk: &Making, rec: &MatterRecord) -> Rendered {
    let (m, output) = (mk.m, mk.output);
    let (from, format, appendix) = (
        output.from.as_str(),
        output.format.as_str(),
        output.appendix.as_deref(),
    );
    // The latest file of that step, by extension.
    let step = finished_step(rec, from)?;
    let pick = |ext: &str| {
        step.outputs
            .iter()
            .rev()
            .find(|f| {
                let name = file_name(f);
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
        let md = pick("md").ok_or_else(|| OutputError::NoText(from.to_string()))?;
        let report = deciding_report(m, rec, from).with_extension("json");
        return render_document(mk, step, &md, &report);
    }
    let src = pick(format)
        .or_else(|| if format == "json" { pick("md") } else { None })
        .ok_or_else(|| OutputError::NoFile(from.to_string(), format.to_string()))?;
    let mut bytes = crate::atomic::read_own(Path::new(&src)).map_err(read_err(&src))?;
    if unverified(mk.sh, step) && matches!(format, "md" | "txt") {
        bytes.extend_from_slice(format!("\n\n---\n\n**{}**\n", not_verified_note(from)).as_bytes());
    }
    if appendix == Some("verification") && matches!(format, "md" | "txt") {
        let report = deciding_report(m, rec, from);
        if let Ok(r) = crate::atomic::read_own(&report) {
            bytes.extend_from_slice(b"\n\n---\n\n");
            bytes.extend_from_slice(&r);
        }
    }
    Ok((bytes, 0))
}

/// The latest run of step `from` that finished (done, stopped, or incomplete).
fn finished_step<'a>(rec: &'a MatterRecord, from: &str) -> Result<&'a StepRecord, OutputError> {
    rec.steps
        .iter()
        .rev()
        .find(|s| {
            s.name == from
                && matches!(
                    s.status,
                    Some(Status::Done | Status::Stopped | Status::Incomplete)
                )
        })
        .ok_or_else(|| OutputError::NothingFrom(from.to_string()))
}

/// Marks an output as lexrun's — a provenance comment at the end of Markdown and text, a
/// `.provenance.json` manifest beside it, and an artifact in the ledger with the fingerprints
/// of its text, so the intake guard recognises it wherever it is copied — and writes it with
/// its manifest as one.
pub(super) fn commit_output(
    sh: &Shared,
    m: &Matter,
    rec: &MatterRecord,
    output: &Output,
    dest: &Path,
    mut bytes: Vec<u8>,
) -> Result<(), OutputError> {
    let (from, format) = (output.from.as_str(), output.format.as_str());
    let step = finished_step(rec, from)?;
    let werr = write_err(dest);
    let stage_text = step
        .outputs
        .iter()
        .find(|f| f.ends_with("output.md"))
        .and_then(|f| crate::atomic::read_own(Path::new(f)).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let props = provenance(sh, m, step, stage_text.as_deref().unwrap_or("").as_bytes());
    if matches!(format, "md" | "txt") {
        let marker: Vec<String> = props
            .iter()
            .map(|(k, v)| format!("{}={v}", k.trim_start_matches("lexrun.")))
            .collect();
        bytes.extend_from_slice(
            format!("\n<!-- lexrun:provenance {} -->\n", marker.join(" ")).as_bytes(),
        );
    }
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
    if let Some(store) = &sh.store {
        store.add_artifact(
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
        )?;
    }
    if let Some(d) = dest.parent() {
        std::fs::create_dir_all(d).map_err(create_err(d))?;
    }
    let manifest = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
    crate::atomic::write_all(&[(&side, &manifest), (dest, &bytes)]).map_err(werr)?;
    Ok(())
}

/// What a reader of the appendix needs beyond the source: for a miscited claim the pages
/// cited and where the fact really is; for a proposition the judge's verdict and quotation;
/// for anything not supported, why.
fn appendix_detail(c: &ReportClaim) -> String {
    let page = |l: &Location| {
        l.bates.clone().unwrap_or_else(|| match l.star {
            // A reported opinion's page, by its star marker.
            Some(star) => format!("{} at *{star}", l.file),
            None => format!("{} p. {}", l.file, l.page),
        })
    };
    let mut parts: Vec<String> = Vec::new();
    if let Some(v) = &c.verdict {
        let q = c.quote.as_deref().unwrap_or("").trim();
        parts.push(if q.is_empty() {
            format!("judge: {v}")
        } else {
            format!("judge: {v}, quoting “{q}”")
        });
    }
    if c.status == ClaimStatus::Miscited {
        let cited: Vec<String> = c.cited.iter().map(page).collect();
        parts.push(format!(
            "cited {}; the fact is on {}",
            cited.join(", "),
            c.source.as_ref().map(page).unwrap_or_default()
        ));
    } else if c.status != ClaimStatus::Supported {
        if let Some(r) = &c.reason {
            parts.push(r.clone());
        }
    }
    parts.join(". ")
}

/// An output folder held by one run while it writes there: an exclusive `flock` on
/// `.lexrun-outputs.lock`, which names the matter whose outputs the folder holds.
struct FolderLock {
    /// The folder the outputs go to.
    dir: PathBuf,
    _file: std::fs::File,
}

/// How many folders for one matter's name are tried (`<out>/<name>`, `<out>/<name>-2`, …)
/// before the run gives up: matter folders of one name from as many places.
const FOLDERS_PER_NAME: usize = 100;

impl FolderLock {
    /// The folder for the outputs of `matter` (named `name`): `dir` unless it holds another
    /// matter's outputs, else `dir/<name>` (or `dir/<name>-N`, when a matter folder of the
    /// same name elsewhere has that one). Waits while a run of the same matter writes there.
    fn claim(dir: &Path, name: &str, matter: &Path) -> std::io::Result<FolderLock> {
        let me = matter
            .canonicalize()
            .unwrap_or_else(|_| matter.to_path_buf())
            .display()
            .to_string();
        let candidates = std::iter::once(dir.to_path_buf())
            .chain(std::iter::once(dir.join(name)))
            .chain((2..=FOLDERS_PER_NAME).map(|n| dir.join(format!("{name}-{n}"))));
        for d in candidates {
            if let Some(lock) = Self::take(&d, &me)? {
                return Ok(lock);
            }
        }
        Err(std::io::Error::other(format!(
            "`{}` and {FOLDERS_PER_NAME} folders in it hold the outputs of other matters named `{name}`; give this matter its own output folder (--out DIR)",
            dir.display()
        )))
    }

    /// The lock of `dir` for the matter `me`, or `None` when the folder belongs to another
    /// matter (its lock names it, held or not).
    fn take(dir: &Path, me: &str) -> std::io::Result<Option<FolderLock>> {
        use std::io::{Read, Seek, Write};
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::create_dir_all(dir)?;
        let path = dir.join(".lexrun-outputs.lock");
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)?;
        let holder = |f: &mut std::fs::File| -> std::io::Result<String> {
            let mut s = String::new();
            f.rewind()?;
            f.read_to_string(&mut s)?;
            Ok(s.trim().to_string())
        };
        let fd = std::os::unix::io::AsRawFd::as_raw_fd(&f);
        // SAFETY: flock on a descriptor this function owns; it has no memory effects.
        if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            // A run holds it; the name it wrote is whole once it holds the lock.
            let h = holder(&mut f)?;
            if !h.is_empty() && h != me {
                return Ok(None);
            }
            // SAFETY: as above; this call waits for the other run of this matter (or for a
            // run that has not yet written its matter's name).
            if unsafe { libc::flock(fd, libc::LOCK_EX) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        let h = holder(&mut f)?;
        if !h.is_empty() && h != me {
            return Ok(None);
        }
        if h.is_empty() {
            f.set_len(0)?;
            f.rewind()?;
            f.write_all(me.as_bytes())?;
            f.flush()?;
        }
        Ok(Some(FolderLock {
            dir: dir.to_path_buf(),
            _file: f,
        }))
    }
}

/// A Word or PDF document from a stage's text: caption from the matter's `matter.json`,
/// signature block and jurat for affidavits, the verification appendix (`report`, the deciding
/// round's `report.json`) when asked for. When `blocked` names the verification that blocked
/// the text, a blocked draft instead (see [`blocked`]): always with the appendix, never with
/// a jurat; with the number of claims removed.
pub(super) fn render_document(mk: &Making, step: &StepRecord, md: &str, report: &Path) -> Rendered {
    use crate::document::{self, docx};
    let (sh, m, output, blocked) = (mk.sh, mk.m, mk.output, mk.blocked);
    let (format, appendix) = (output.format.as_str(), output.appendix.as_deref());
    let text = std::fs::read(md).map_err(read_err(md))?;
    let verification: Option<Report> = if appendix == Some("verification") || blocked.is_some() {
        Some(
            std::fs::read(report)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .ok_or_else(|| OutputError::NoReport(step.name.clone()))?,
        )
    } else {
        None
    };
    let claims: &[ReportClaim] = verification.as_ref().map_or(&[], |v| &v.claims);
    let removed: Vec<usize> = blocked
        .map(|v| blocked::blocking(v, claims))
        .unwrap_or_default();
    let body = String::from_utf8_lossy(&text).into_owned();
    let body = match blocked {
        Some(_) => blocked::strike(&body, claims, &removed)
            .ok_or_else(|| OutputError::Unmarkable(step.name.clone()))?,
        None => body,
    };
    let caption = read_caption(m)?;
    // A blocked or incomplete draft is not to be signed: no signature block, no jurat.
    let closing = output
        .closing()
        .filter(|_| blocked.is_none() && mk.incomplete.is_none())
        .map(|Closing::Jurat| {
            let affiant = caption
                .as_ref()
                .map(|c| c.affiant.clone())
                .filter(|a| !a.is_empty());
            let vars = json!({"affiant": affiant.unwrap_or_else(|| "Affiant".into())});
            prompt::render(document::AFFIDAVIT_CLOSING, &vars).unwrap_or_default()
        });
    let unchecked = unverified(sh, step);
    let table = verification
        .as_ref()
        .map(|v| appendix_table(v, &removed, blocked.is_some()))
        .or_else(|| {
            unchecked.then(|| crate::document::docx::Table {
                title: "Verification appendix".into(),
                note: not_verified_note(&step.name),
                header: Vec::new(),
                rows: Vec::new(),
            })
        });
    let reviewed = verification.as_ref().and_then(reviewed_table);
    let mut props = provenance(sh, m, step, &text);
    if unchecked {
        props.push(("lexrun.verification".into(), "not verified".into()));
    }
    let notice = blocked.map(|_| {
        props.push((
            "lexrun.verification".into(),
            "blocked: not for filing".into(),
        ));
        blocked::notice(&m.name, &sh.run_id, removed.len(), &file_name(&output.path))
    });
    let notice = notice.or_else(|| {
        let why = mk.incomplete?;
        props.push((
            "lexrun.status".into(),
            "incomplete draft: not for filing".into(),
        ));
        Some(blocked::incomplete_notice(
            &m.name,
            &sh.run_id,
            why,
            &file_name(&output.path),
        ))
    });
    let d = docx::Document {
        title: output.title(),
        body,
        caption,
        closing,
        appendix: table,
        reviewed,
        notice,
        style: docx::Style::default(),
        layout: docx::Layout::parse(output.layout()).unwrap_or_default(),
        properties: props.clone(),
    };
    Ok((lay_out(&d, mk.dest, format, &props)?, removed.len()))
}

/// Whether `step` is a model's text that no `verify` block checks.
fn unverified(sh: &Shared, step: &StepRecord) -> bool {
    step.kind == "model" && !sh.plan.verify.iter().any(|v| v.stage == step.name)
}

/// What a document of an unverified stage's text says of itself.
fn not_verified_note(stage: &str) -> String {
    format!(
        "Not verified: no `verify` block checks the stage `{stage}` that wrote this text, so its citations, dates, Bates numbers, quotations and amounts were not checked against the evidence. Check each against the sources before relying on it."
    )
}

/// The caption in the matter's `matter.json`, or else its `matter.toml`, if it has one.
fn read_caption(m: &Matter) -> Result<Option<crate::document::docx::Caption>, OutputError> {
    Ok(match std::fs::read(m.dir.join("matter.json")) {
        Ok(b) => Some(
            serde_json::from_slice(&b).map_err(|source| OutputError::Matter {
                path: m.dir.join("matter.json"),
                source,
            })?,
        ),
        Err(_) if !m.record.is_empty() => serde_json::from_value(Value::Object(m.record.clone()))
            .map_err(|source| OutputError::Matter {
            path: m.dir.join("matter.toml"),
            source,
        })?,
        Err(_) => None,
    })
}

/// The document laid out as `format` (DOCX, or PDF from it) in a private scratch folder;
/// its bytes, to be written with the output's manifest.
fn lay_out(
    d: &crate::document::docx::Document,
    dest: &Path,
    format: &str,
    props: &[(String, String)],
) -> Result<Vec<u8>, OutputError> {
    use crate::document::{self, docx};
    let work = tempfile::tempdir().map_err(DocumentError::TempDir)?;
    let stem = dest.file_stem().unwrap_or_default().to_string_lossy();
    let tmp_docx = work.path().join(format!("{stem}.docx"));
    docx::write(d, &tmp_docx)?;
    let made = if format == "docx" {
        tmp_docx
    } else {
        let pdf = work.path().join(format!("{stem}.pdf"));
        document::docx_to_pdf(&tmp_docx, &pdf, props)?;
        pdf
    };
    std::fs::read(&made).map_err(read_err(&made))
}

/// The last part of a path, or nothing.
fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The verification appendix of a document: a row per claim of the report `v`, the
/// claims `removed` from a blocked draft marked so.
fn appendix_table(v: &Report, removed: &[usize], blocked: bool) -> crate::document::docx::Table {
    let by_hand: Vec<&str> = v.confirmed_by_hand().map(|d| d.id.as_str()).collect();
    let rows = v
        .claims
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.id.as_deref().is_some_and(|id| by_hand.contains(&id)))
        .map(|(i, c)| appendix_row(i, c, removed.contains(&i)))
        .collect();
    crate::document::docx::Table {
        title: "Verification appendix".into(),
        note: format!(
            "{}Every citation, date, Bates number, quotation and amount {}{}, checked against the evidence: {} supported, {} unsupported{}.",
            match blocked {
                true => format!("This draft was blocked: the {} claim{} marked “removed from this draft” below {} taken out of its text, each replaced there by its number in bold. ", removed.len(), if removed.len() == 1 { "" } else { "s" }, if removed.len() == 1 { "was" } else { "were" }),
                false => String::new(),
            },
            if blocked { "the model wrote" } else { "in this document" },
            if v.claims.iter().any(|c| c.kind == crate::claim_kind::Kind::Proposition) {
                ", and every sentence that cites pages, judged against those pages"
            } else {
                ""
            },
            v.supported.saturating_sub(by_hand.len()),
            v.unsupported,
            Some(v.miscited).filter(|n| *n > 0).map(|n| format!(", {n} miscited (in the evidence, but not on the page cited)")).unwrap_or_default()
        ) + &match by_hand.len() {
            0 => String::new(),
            n => format!(" {n} more confirmed by a reviewer, listed in the table that follows."),
        },
        header: ["#", "kind", "claim", "status", "source", "page", "Bates", "detail"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

/// Every claim a reviewer confirmed by hand, by whom, when, with the page they named: apart
/// from the claims the verifier proved.
fn reviewed_table(v: &Report) -> Option<crate::document::docx::Table> {
    let rows: Vec<Vec<String>> = v
        .confirmed_by_hand()
        .enumerate()
        .map(|(i, d)| {
            let p = d.page.as_ref();
            vec![
                (i + 1).to_string(),
                d.kind.clone(),
                d.text.clone(),
                p.map(|p| file_name(&p.file)).unwrap_or_default(),
                p.map(|p| p.page.to_string()).unwrap_or_default(),
                p.and_then(|p| p.bates.clone()).unwrap_or_default(),
                d.reviewer.clone(),
                crate::calendar::utc_minute(d.created),
                d.note.clone().unwrap_or_default(),
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| crate::document::docx::Table {
        title: "Claims confirmed by a reviewer".into(),
        note: format!(
            "The verifier could not prove these {} claim{} from the evidence; a reviewer read the page named and confirmed each. They are not counted among the claims the verifier proved above.",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        ),
        header: ["#", "kind", "claim", "source", "page", "Bates", "confirmed by", "when", "note"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

/// Claim `i` of a verification report as a row of the appendix.
fn appendix_row(i: usize, c: &ReportClaim, removed: bool) -> Vec<String> {
    let detail = appendix_detail(c);
    let detail = match removed {
        true if detail.is_empty() => "removed from this draft".to_string(),
        true => format!("removed from this draft: {detail}"),
        false => detail,
    };
    let src = c.source.as_ref();
    vec![
        (i + 1).to_string(),
        c.kind.as_str().into(),
        c.text.clone(),
        c.status.as_str().into(),
        src.map(|s| file_name(&s.file)).unwrap_or_default(),
        src.map(|s| s.page.to_string()).unwrap_or_default(),
        src.and_then(|s| s.bates.clone()).unwrap_or_default(),
        detail,
    ]
}

#[cfg(test)]
mod appendix_tests {
    use super::*;

    /// A claim of the report, as `report.json` holds it: `fields` over a date claim's.
    fn claim(fields: serde_json::Value) -> ReportClaim {
        let mut c = json!({"kind": "date", "text": "", "start": 0, "end": 0});
        for (k, v) in fields.as_object().unwrap() {
            c[k] = v.clone();
        }
        serde_json::from_value(c).unwrap()
    }

    #[test]
    fn the_appendix_names_an_opinion_page_by_its_star() {
        let miscited = json!({"status": "miscited",
            "source": {"file": "ace-v-bay.txt", "page": 3, "bates": null, "star": 312},
            "cited": [{"file": "ace-v-bay.txt", "page": 2, "bates": null, "star": 305}]});
        assert_eq!(
            appendix_detail(&claim(miscited)),
            "cited ace-v-bay.txt at *305; the fact is on ace-v-bay.txt at *312"
        );
    }

    #[test]
    fn the_appendix_says_where_a_miscited_fact_is_and_what_the_judge_quoted() {
        let miscited = json!({"status": "miscited", "source": {"file": "a.txt", "page": 1, "bates": "SMITH000001"},
            "cited": [{"file": "a.txt", "page": 2, "bates": "SMITH000002"}], "reason": "found on SMITH000001"});
        assert_eq!(
            appendix_detail(&claim(miscited)),
            "cited SMITH000002; the fact is on SMITH000001"
        );
        let judged = json!({"status": "unsupported", "verdict": "not_found", "quote": "", "reason": "the judge found nothing"});
        assert_eq!(
            appendix_detail(&claim(judged)),
            "judge: not_found. the judge found nothing"
        );
        let fine = json!({"status": "supported", "verdict": "supported", "quote": "rent is due"});
        assert_eq!(
            appendix_detail(&claim(fine)),
            "judge: supported, quoting “rent is due”"
        );
    }
}
