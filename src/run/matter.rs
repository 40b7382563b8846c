//! Matters: the folders a run works on, their source files, and the intake guard's verdict
//! on each file before a run starts.

/// Files under `matter` matching `patterns`, sorted, outside lexrun's own folders. Symbolic
/// links are followed only while they stay inside the matter (see [`crate::confine::walk`]):
/// one leading out of it stops the run, naming the link and its target.
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSetBuilder};

use crate::plan::Plan;
use crate::run::error::RunError;
use crate::run::{intake, prompt};

pub(super) fn matching(matter: &Path, patterns: &[String]) -> Result<Vec<PathBuf>, RunError> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        if let Ok(g) = GlobBuilder::new(p).literal_separator(true).build() {
            set.add(g);
        }
    }
    let Ok(set) = set.build() else {
        return Ok(Vec::new());
    };
    let skip = |name: &str| name == ".lexrun" || name == "out" || name.starts_with('.');
    let wanted = |p: &Path| p.strip_prefix(matter).is_ok_and(|rel| set.is_match(rel));
    crate::confine::walk(matter, &skip, &wanted).map_err(RunError::Confined)
}

/// The matter folders: those given, else the workflow's `matter`, else its own folder.
pub(super) fn matter_dirs(plan: &Plan, workflow_dir: &Path, given: &[PathBuf]) -> Vec<PathBuf> {
    if !given.is_empty() {
        return given.to_vec();
    }
    vec![match &plan.workflow.matter {
        Some(m) => workflow_dir.join(m),
        None => workflow_dir.to_path_buf(),
    }]
}

/// A matter's name: its folder's name.
pub(super) fn matter_name(dir: &Path) -> String {
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
        let mut mine = Vec::new();
        let mut pages = Vec::new();
        for s in &plan.sources {
            let admit = s.admitted();
            for f in matching(dir, &s.files)? {
                let shown = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
                // A file that cannot be read gets that verdict; every other file is still read.
                let docs = match prompt::read(&f, s.ocr_optional) {
                    Ok(d) => d,
                    Err(e) => {
                        let why = e.source.to_string();
                        mine.push(intake::Verdict::unreadable(&name, &shown, &f, why));
                        continue;
                    }
                };
                for (part, why) in prompt::unreadable_parts(&shown, &docs) {
                    mine.push(intake::Verdict::unreadable_part(&name, &part, &f, why));
                }
                for e in prompt::evidence_files(&s.name, &shown, &f, docs) {
                    let text = e.pages.join("\n");
                    mine.push(match &e.embedded {
                        Some(b) => {
                            intake::check_bytes(store, &name, &e.shown, &e.path, b, &text, &admit)
                        }
                        None => intake::check(store, &name, &e.shown, &f, &text, &admit),
                    });
                    pages.push(e.pages);
                }
            }
        }
        intake::check_taint(store, &name, &mut mine, &pages, &bates_prefixes(plan));
        out.extend(mine);
    }
    Ok(out)
}

/// The Bates prefixes the workflow's sources declare.
pub(super) fn bates_prefixes(plan: &Plan) -> Vec<String> {
    let mut p: Vec<String> = plan
        .sources
        .iter()
        .filter_map(|s| s.bates.as_ref().map(|b| b.prefix.clone()))
        .collect();
    p.sort();
    p.dedup();
    p
}
