//! A `production` step: the plan's production handed to `exhibits::production` with the
//! files its sources matched. Which document went out in which volume under which numbers is
//! recorded twice: in the store's ledger (every volume a desk produced, whatever its folder;
//! `lexrun audit --productions`), and in the volume register beside the volumes
//! (`PRODUCTIONS.json` in the output folder), which travels with them. A later volume
//! continues the numbering of both and never reuses a number either knows.

use std::path::{Path, PathBuf};

use crate::exhibits::production::{self as prod, Input, ProductionError, VolumeRecord};
use crate::plan::production::{ImageFormat, Production, RedactWhat};
use crate::store::{Store, Volume, VolumeDocument};

use crate::shared::Produced;

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
        images: match p.images {
            ImageFormat::Pdf => prod::Images::Pdf,
            ImageFormat::Tiff => prod::Images::Tiff,
        },
    }
}

/// Why a production step failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error(transparent)]
    Production(#[from] ProductionError),
    #[error("the volume register `{}` cannot be read: {}; restore it from a backup before producing another volume", .0.display(), .1)]
    Register(PathBuf, String),
    #[error("the ledger's earlier volumes cannot be read ({0}), so this volume's Bates numbers cannot be checked against them; nothing was written. Run again when the ledger is back")]
    LedgerRead(String),
    #[error("volume {volume} was written to `{}` and listed in its register, but the ledger did not record it ({why}); run the production again when the ledger is back to record it", folder.display())]
    LedgerWrite {
        volume: String,
        folder: PathBuf,
        why: String,
    },
}

/// The ledger's volumes as the register holds them, for those the register does not hold
/// (volumes written to other folders).
fn ledger_volumes(
    store: &Store,
    register: &[VolumeRecord],
) -> Result<Vec<VolumeRecord>, StepError> {
    let volumes = store
        .volumes()
        .map_err(|e| StepError::LedgerRead(e.to_string()))?;
    Ok(volumes
        .into_iter()
        .filter(|v| {
            !register
                .iter()
                .any(|r| r.volume == v.volume && r.prefix == v.prefix)
        })
        .filter_map(|v| {
            let (first, last) = v.range()?;
            Some(VolumeRecord {
                volume: v.volume,
                prefix: v.prefix,
                first,
                last,
                ..VolumeRecord::default()
            })
        })
        .collect())
}

/// The volume as the ledger records it.
fn ledger_volume(spec: &prod::Spec, r: &VolumeRecord, folder: &Path, run_id: &str) -> Volume {
    let number = |b: &str| -> Option<u64> {
        b.strip_prefix(&spec.prefix)?
            .strip_suffix(spec.suffix.as_str())?
            .parse()
            .ok()
    };
    let mut documents: Vec<VolumeDocument> = r
        .documents
        .iter()
        .map(|d| VolumeDocument {
            document: d.document.clone(),
            status: "produced".into(),
            first: number(&d.first),
            last: number(&d.last),
            first_bates: Some(d.first.clone()),
            last_bates: Some(d.last.clone()),
            pages: d.pages,
            hash: d.hash.clone(),
            privilege: None,
        })
        .collect();
    documents.extend(r.held.iter().map(|h| VolumeDocument {
        document: h.document.clone(),
        status: "withheld".into(),
        hash: h.hash.clone(),
        privilege: Some(h.privilege.clone()).filter(|p| !p.is_empty()),
        ..VolumeDocument::default()
    }));
    Volume {
        volume: r.volume.clone(),
        prefix: r.prefix.clone(),
        folder: folder.display().to_string(),
        run_id: run_id.to_string(),
        created: 0,
        documents,
    }
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
    ledger: Option<(&Store, &str)>,
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
    let mut earlier = register.clone();
    if let Some((store, _)) = ledger {
        earlier.extend(ledger_volumes(store, &register)?);
    }
    let report = prod::produce(&spec, &inputs, out, &earlier)?;
    register.retain(|v| v.volume != report.record.volume);
    register.push(report.record.clone());
    let path = out.join(REGISTER);
    let json = serde_json::to_vec_pretty(&register).unwrap_or_default();
    crate::atomic::write(&path, &json)
        .map_err(|e| StepError::Register(path.clone(), e.to_string()))?;
    if let Some((store, run_id)) = ledger {
        let v = ledger_volume(&spec, &report.record, &report.folder, run_id);
        store
            .record_volume(&v)
            .map_err(|e| StepError::LedgerWrite {
                volume: spec.volume.clone(),
                folder: report.folder.clone(),
                why: e.to_string(),
            })?;
    }
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
    if !report.again.is_empty() {
        summary.push_str(&format!(
            "; warning: {} documents were already produced in an earlier volume (listed in the reconciliation)",
            report.again.len()
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
