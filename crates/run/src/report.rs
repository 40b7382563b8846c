//! `report.md`: what ran, how long, how fast, what was blocked or stopped, what was written.

use std::path::Path;

use crate::outputs::status_word;
use crate::plan::Plan;
use crate::record::MatterRecord;

pub(super) fn record_header(plan: &Plan, run_id: &str) -> String {
    format!(
        "# Run {run_id} of `{}`\n\n{}\n",
        plan.workflow.name, plan.workflow.description
    )
}

/// `report.md`: what ran, how long, how fast, what was blocked or stopped, what was written.
pub(super) fn report_markdown(header: &str, rec: &MatterRecord) -> String {
    let mut s = String::from(header);
    s.push_str(&format!(
        "\nMatter `{}` ({}): **{}**",
        rec.name,
        rec.dir,
        status_word(rec.status)
    ));
    if let Some(by) = &rec.stopped_by {
        s.push_str(&format!(" — {by}"));
    }
    s.push_str("\n\n| step | round | status | pool · model | prompt tokens | cached | generated | tok/s | time | note |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for st in &rec.steps {
        let (p, c, g, r) = match &st.timings {
            Some(t) => (
                (t.prompt_n + t.cache_n).to_string(),
                t.cache_n.to_string(),
                t.predicted_n.to_string(),
                format!("{:.1}", t.predicted_per_second),
            ),
            None => Default::default(),
        };
        let where_ = match (&st.pool, &st.model, &st.tool) {
            (Some(p), Some(m), _) => format!("{p} · {m}"),
            (_, _, Some(t)) => format!("cpu · {t}"),
            _ => String::new(),
        };
        let mut note = st.why.clone().unwrap_or_else(|| st.summary.clone());
        for w in &st.warnings {
            note.push_str(&format!(" ⚠ {w}"));
        }
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1} s | {} |\n",
            st.name,
            st.round,
            st.status.map_or("", status_word),
            where_,
            p,
            c,
            g,
            r,
            st.duration_ms as f64 / 1000.0,
            note.replace('|', "\\|").replace('\n', " ")
        ));
    }
    if !rec.verifications.is_empty() {
        s.push_str("\n## Verification\n\n| stage | round | claims | unsupported | decision | report |\n|---|---|---|---|---|---|\n");
        for v in &rec.verifications {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                v.stage, v.round, v.claims, v.unsupported, v.decision, v.report
            ));
        }
        for v in rec.verifications.iter().filter(|v| v.note.is_some()) {
            s.push_str(&format!(
                "\n⚠ `{}` round {}: {}.\n",
                v.stage,
                v.round,
                v.note.as_deref().unwrap_or("")
            ));
        }
    }
    s.push_str("\n## Outputs\n\n");
    for o in &rec.outputs {
        s.push_str(&format!("- `{}` from `{}`: {}\n", o.path, o.from, o.status));
    }
    s
}

/// The parts of the matter's files that could not be read and were left out of its
/// evidence, each with why (empty when there are none).
pub(super) fn unreadable_parts(parts: &[(String, String)]) -> String {
    if parts.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n## Unreadable parts, left out of the evidence\n\n");
    for (part, why) in parts {
        s.push_str(&format!("- `{part}`: {why}\n"));
    }
    s
}

/// The run's index of review pages: every verification of every matter.
pub(super) fn review_index(
    plan: &Plan,
    run_id: &str,
    root: &Path,
    matters: &[MatterRecord],
) -> String {
    let relative = |page: &Path| {
        page.strip_prefix(root)
            .unwrap_or(page)
            .display()
            .to_string()
    };
    let mut entries = Vec::new();
    for rec in matters {
        for v in &rec.verifications {
            entries.push(crate::review::IndexEntry {
                matter: rec.name.clone(),
                stage: v.stage.clone(),
                round: v.round,
                summary: format!(
                    "{} claims, {} unsupported: {}",
                    v.claims, v.unsupported, v.decision
                ),
                problems: v.unsupported > 0,
                href: relative(&Path::new(&v.report).with_extension("html")),
            });
        }
        // Tool steps that verify a draft write their review page among their outputs.
        for st in &rec.steps {
            if let Some(page) = st.outputs.iter().find(|o| o.ends_with("report.html")) {
                entries.push(crate::review::IndexEntry {
                    matter: rec.name.clone(),
                    stage: st.name.clone(),
                    round: st.round,
                    summary: st.summary.clone(),
                    problems: !st.summary.contains(" 0 unsupported"),
                    href: relative(Path::new(page)),
                });
            }
        }
    }
    let provenance = vec![
        ("run".to_string(), run_id.to_string()),
        ("workflow".to_string(), plan.workflow.name.clone()),
        ("plan hash".to_string(), plan.hash.clone()),
    ];
    crate::review::index_page(run_id, &provenance, &entries)
}
