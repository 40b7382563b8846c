//! `report.md`: what ran, how long, how fast, what was blocked or stopped, what was written.

use super::*;

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
    }
    s.push_str("\n## Outputs\n\n");
    for o in &rec.outputs {
        s.push_str(&format!("- `{}` from `{}`: {}\n", o.path, o.from, o.status));
    }
    s
}
