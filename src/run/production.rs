//! A `production` step: the plan's production handed to `exhibits::production` with the
//! files its sources matched, and the volume register beside the volumes (`PRODUCTIONS.json`
//! in the output folder), which says which document went out in which volume under which
//! numbers, so that a later volume continues the numbering and never reuses it.

use std::path::{Path, PathBuf};

use crate::exhibits::production::{self as prod, Input, ProductionError, VolumeRecord};
use crate::plan::production::{Production, RedactWhat};

use super::Produced;

/// The register's file name, in the output folder.
pub const REGISTER: &str = "PRODUCTIONS.json";

fn spec(p: &Production) -> prod::Spec {
    let mut patterns = Vec::new();
    let mut boxes = Vec::new();
    for r in &p.redact {
        match &r.what {
            RedactWhat::Pattern { name, regex } => {
                // Checked when the workflow was; one that no longer compiles is dropped
                // rather than half-applied.
                if let Ok(rx) = regex::Regex::new(regex) {
                    patterns.push(prod::Pattern {
                        name: name.clone(),
                        regex: rx,
                        reason: r.reason.clone(),
                    });
                }
            }
            RedactWhat::Box { file, page, rect } => boxes.push(prod::BoxRule {
                file: file.clone(),
                page: *page,
                rect: *rect,
                reason: r.reason.clone(),
            }),
        }
    }
    prod::Spec {
        volume: p.volume.clone(),
        prefix: p.bates.prefix.clone(),
        start: p.bates.start,
        continues: !p.start_given,
        width: p.bates.width,
        suffix: p.bates.suffix.clone(),
        legends: p.legends.clone(),
        designate: p
            .designate
            .iter()
            .map(|d| (d.legend.clone(), d.files.clone()))
            .collect(),
        patterns,
        boxes,
        withhold: p
            .withhold
            .iter()
            .map(|w| prod::Withhold {
                files: w.files.clone(),
                privilege: w.privilege.clone(),
                description: w.description.clone(),
            })
            .collect(),
        natives: p.natives.clone(),
        fields: p.fields.clone(),
        dpi: 300,
        lang: "eng".into(),
    }
}

/// Why a production step failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error(transparent)]
    Production(#[from] ProductionError),
    #[error("the volume register `{}` cannot be read: {}; restore it from a backup before producing another volume", .0.display(), .1)]
    Register(PathBuf, String),
}

pub fn read_register(out: &Path) -> Result<Vec<VolumeRecord>, StepError> {
    let path = out.join(REGISTER);
    match std::fs::read(&path) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| StepError::Register(path, e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(StepError::Register(path, e.to_string())),
    }
}

/// Runs the production; returns what it produced and a line saying so.
pub(super) fn run(
    p: &Production,
    inputs: &[PathBuf],
    matter: &Path,
    out: &Path,
) -> Result<(Produced, String), StepError> {
    let spec = spec(p);
    let root = matter
        .canonicalize()
        .unwrap_or_else(|_| matter.to_path_buf());
    let inputs: Vec<Input> = inputs
        .iter()
        .map(|f| {
            let abs = f.canonicalize().unwrap_or_else(|_| f.clone());
            let rel = abs
                .strip_prefix(&root)
                .or_else(|_| f.strip_prefix(matter))
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_else(|_| f.to_string_lossy().into_owned());
            Input {
                path: f.clone(),
                rel,
            }
        })
        .collect();
    let mut register = read_register(out)?;
    let report = prod::produce(&spec, &inputs, out, &register)?;
    register.retain(|v| v.volume != report.record.volume);
    register.push(report.record.clone());
    let path = out.join(REGISTER);
    let json = serde_json::to_vec_pretty(&register).unwrap_or_default();
    crate::atomic::write(&path, &json)
        .map_err(|e| StepError::Register(path.clone(), e.to_string()))?;
    let mut produced = Produced::default();
    let data = report.folder.join("DATA");
    produced.files = vec![
        data.join(format!("{}.dat", spec.volume)),
        data.join(format!("{}.opt", spec.volume)),
    ];
    produced
        .primary
        .insert("md".into(), data.join("reconciliation.md"));
    let mut summary = format!(
        "volume {}: {} documents produced as {}–{} ({} pages), {} withheld, {} redactions burned in; read back clean",
        spec.volume,
        report.produced,
        spec.number(report.record.first),
        spec.number(report.record.last),
        report.pages,
        report.withheld,
        report.redactions
    );
    if !report.exceptions.is_empty() {
        summary.push_str(&format!(
            "; {} exceptions listed in the reconciliation",
            report.exceptions.len()
        ));
    }
    if !report.unmatched.is_empty() {
        summary.push_str(&format!(
            "; redaction patterns that matched nothing: {}",
            report.unmatched.join(", ")
        ));
    }
    Ok((produced, summary))
}
