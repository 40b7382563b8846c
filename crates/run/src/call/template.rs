//! The variables of a stage's template: the run and matter, each source it reads as an
//! evidence packet, the steps before it, its schema, and a revision's feedback.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::plan::workflow::{ModelStage, Step};
use crate::prompt::{self, EvidenceFile};
use crate::schema;
use crate::shared::{Matter, Produced, Shared};

/// The variables of a stage's template.
pub(crate) fn template_vars(
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
    // The matter's own record beside its name and folder (which it cannot replace).
    for (k, value) in &m.record {
        if k != "name" && k != "dir" {
            v["matter"][k.as_str()] = value.clone();
        }
    }
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
            .flat_map(|f| {
                let shown = f
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match prompt::read(f, false) {
                    Ok(docs) => prompt::evidence_files(name, &shown, f, docs),
                    // The model is told, rather than given an empty file.
                    Err(e) => vec![EvidenceFile {
                        source: name.to_string(),
                        shown,
                        path: f.display().to_string(),
                        pages: vec![format!("[this file could not be read: {}]", e.source)],
                        embedded: None,
                    }],
                }
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
                embedded: None,
            })
            .collect()
    };
    prompt::packet(&files)
}
