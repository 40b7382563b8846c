//! Inlay hints: after each `model NAME on POOL` and each stage's `model NAME` in the document,
//! how the model fits its pool
//! (weights + KV cache = its share, and every model on the pool against the pool's memory).

use lsp_types::{InlayHint, InlayHintKind, InlayHintLabel, Range};

use super::super::analysis::Analysis;
use crate::plan::workflow::Workflow;
use crate::syntax::ast;

const GIB: f64 = (1u64 << 30) as f64;

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / GIB)
}

/// The hints inside `range`, from the last workflow that checked (`last_good` while the file
/// has errors).
pub fn inlay_hints(a: &Analysis, last_good: Option<&Workflow>, range: Range) -> Vec<InlayHint> {
    let Some(wf) = a.workflow().or(last_good) else {
        return Vec::new();
    };
    let ix = a.index();
    let mut out = Vec::new();
    // A model's own declaration, and each stage's `model NAME` line.
    let mut at_lines: Vec<(&str, crate::diagnostic::Span)> = Vec::new();
    for d in ix.decls.iter().filter(|d| d.file == 0) {
        match ix.item(d) {
            ast::Item::Model(m) => at_lines.push((d.key.as_str(), m.pool.span)),
            ast::Item::Stage(s) => {
                if let Some(m) = &s.model {
                    at_lines.push((m.node.as_str(), m.span));
                }
            }
            _ => {}
        }
    }
    for (name, span) in at_lines {
        let Some(model) = wf.models.iter().find(|x| x.name == name) else {
            continue;
        };
        let Some(pool) = wf.pools.iter().find(|p| p.name == model.pool) else {
            continue;
        };
        let at = a.range(0, span).end;
        if at.line < range.start.line || at.line > range.end.line {
            continue;
        }
        let own = model.weight_bytes.unwrap_or(0) + model.kv_bytes.unwrap_or(0);
        let used: u64 = wf
            .models
            .iter()
            .filter(|x| x.pool == pool.name)
            .map(|x| x.weight_bytes.unwrap_or(0) + x.kv_bytes.unwrap_or(0))
            .sum();
        let total: u64 = pool.vram.iter().sum();
        let label = format!(
            "{} + KV {} = {}; `{}` {} of {}{}",
            gib(model.weight_bytes.unwrap_or(0)),
            gib(model.kv_bytes.unwrap_or(0)),
            gib(own),
            pool.name,
            gib(used),
            gib(total),
            if used > total {
                " — does not fit"
            } else {
                ""
            }
        );
        out.push(InlayHint {
            position: at,
            label: InlayHintLabel::String(label),
            kind: Some(InlayHintKind::TYPE),
            text_edits: None,
            tooltip: None,
            padding_left: Some(true),
            padding_right: None,
            data: None,
        });
    }
    out
}
