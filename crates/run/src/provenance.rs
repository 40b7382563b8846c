//! The provenance every output carries, so it is recognised wherever it is copied.

/// The provenance every document carries, so it is recognised wherever it is copied.
use crate::record::StepRecord;
use crate::shared::{Matter, Shared};

pub(super) fn provenance(
    sh: &Shared,
    m: &Matter,
    step: &StepRecord,
    text: &[u8],
) -> Vec<(String, String)> {
    let run_id = sh.run_id.clone();
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
