//! Matters: the folders a run works on, their source files, and the intake guard's verdict
//! on each file before a run starts.

/// Files under `matter` matching `patterns`, sorted, outside lexrun's own folders. Symbolic
/// links are followed only while they stay inside the matter (see [`crate::confine::walk`]):
/// one leading out of it stops the run, naming the link and its target.
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSetBuilder};

use crate::error::RunError;
use crate::plan::Plan;
use crate::{intake, prompt};

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
        // A stamp with a declared prefix is read as one at any width.
        crate::sources::declare_prefixes(&bates_prefixes(plan));
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

/// A matter's own record: the fields of `matter.toml`, else `matter.json`, in its folder
/// (none when it has neither), for templates (`{{matter.client}}`) and documents. A record
/// that does not parse, or is not a table of fields, stops the run, naming its line.
pub(super) fn matter_record(
    dir: &Path,
) -> Result<serde_json::Map<String, serde_json::Value>, RunError> {
    let toml = dir.join("matter.toml");
    let json = dir.join("matter.json");
    let bad = |path: &Path, line: usize, why: String| RunError::MatterRecord {
        path: path.display().to_string(),
        line,
        why,
    };
    if let Ok(bytes) = std::fs::read(&toml) {
        let text = String::from_utf8(bytes).map_err(|e| {
            bad(
                &toml,
                1,
                format!(
                    "it is not UTF-8 text (at byte {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })?;
        let doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
            let line = e.span().map_or(1, |r| {
                text[..r.start.min(text.len())].matches('\n').count() + 1
            });
            let why = e.message().trim().replace('\n', " ");
            bad(&toml, line, why)
        })?;
        let mut map = serde_json::Map::new();
        for (k, item) in doc.iter() {
            let value = item.as_value().and_then(toml_value).ok_or_else(|| {
                let line = item
                    .span()
                    .or_else(|| doc.key(k).and_then(|key| key.span()))
                    .map_or(1, |r| {
                        text[..r.start.min(text.len())].matches('\n').count() + 1
                    });
                bad(
                    &toml,
                    line,
                    format!("`{k}` is not text, a number, a date or a list of text"),
                )
            })?;
            map.insert(k.to_string(), value);
        }
        return Ok(map);
    }
    match std::fs::read(&json) {
        Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(serde_json::Value::Object(m)) => Ok(m),
            Ok(_) => Err(bad(&json, 1, "it is not one JSON object of fields".into())),
            Err(e) => Err(bad(&json, e.line(), e.to_string())),
        },
        Err(_) => Ok(serde_json::Map::new()),
    }
}

/// A TOML value of a matter's record as JSON: text, numbers, booleans, dates (as written),
/// and lists of them.
fn toml_value(v: &toml_edit::Value) -> Option<serde_json::Value> {
    use serde_json::json;
    Some(match v {
        toml_edit::Value::String(s) => json!(s.value()),
        toml_edit::Value::Integer(i) => json!(i.value()),
        toml_edit::Value::Float(f) => json!(f.value()),
        toml_edit::Value::Boolean(b) => json!(b.value()),
        toml_edit::Value::Datetime(d) => json!(d.value().to_string()),
        toml_edit::Value::Array(a) => {
            serde_json::Value::Array(a.iter().map(toml_value).collect::<Option<Vec<_>>>()?)
        }
        toml_edit::Value::InlineTable(_) => return None,
    })
}

#[cfg(test)]
mod record_tests {
    use super::*;

    #[test]
    fn a_matter_toml_gives_its_fields_and_a_mistake_its_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("matter.toml"),
            "client = \"Bright Dental LLC\"\naddressee = \"Harbor Supply Co.\"\nparties = [\"Bright Dental LLC\", \"Harbor Supply Co.\"]\n",
        )
        .unwrap();
        let r = matter_record(dir.path()).unwrap();
        assert_eq!(r["client"], "Bright Dental LLC");
        assert_eq!(r["parties"][1], "Harbor Supply Co.");
        std::fs::write(
            dir.path().join("matter.toml"),
            "client = \"Bright Dental LLC\"\ncourt = Superior Court\n",
        )
        .unwrap();
        let e = matter_record(dir.path()).unwrap_err().to_string();
        assert!(e.contains("matter.toml") && e.contains("line 2"), "{e}");
    }

    #[test]
    fn a_matter_json_is_read_and_a_broken_one_names_its_line() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matter_record(dir.path()).unwrap().is_empty());
        std::fs::write(
            dir.path().join("matter.json"),
            "{\"court\": \"Superior Court\"}",
        )
        .unwrap();
        assert_eq!(
            matter_record(dir.path()).unwrap()["court"],
            "Superior Court"
        );
        std::fs::write(
            dir.path().join("matter.json"),
            "{\n\"court\": \"Superior Court\",\n}",
        )
        .unwrap();
        let e = matter_record(dir.path()).unwrap_err().to_string();
        assert!(e.contains("matter.json") && e.contains("line 3"), "{e}");
    }
}
