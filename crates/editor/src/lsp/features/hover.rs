//! Hover text: what a name declares, what a diagnostic code means, how a model fits its pool.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

use super::super::analysis::Analysis;
use super::super::index::Index;
use super::super::lines::Lines;
use super::word::word_at;
use crate::check::stdlib;
use crate::diagnostic::{Code, Severity};
use crate::plan::workflow::Workflow;
use crate::syntax::ast;

const GIB: f64 = (1u64 << 30) as f64;

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / GIB)
}

pub fn hover(a: &Analysis, last_good: Option<&Workflow>, pos: Position) -> Option<Hover> {
    let text = a.text(0);
    let offset = Lines::new(text).offset(pos);
    let mut parts: Vec<String> = Vec::new();
    if let Some(key) = a.index().key_at(0, offset) {
        let wf = a.workflow().or(last_good);
        if let Some(h) = describe(a.index(), key, wf) {
            parts.push(h);
        }
    }
    let (_, word) = word_at(text, offset);
    if let Some(c) = code_named(word) {
        parts.push(explain(c));
    }
    // The diagnostics under the cursor, explained.
    let mut seen = Vec::new();
    for d in a.checked.diagnostics.iter().filter(|d| d.file == Some(0)) {
        let hit = d
            .labels
            .iter()
            .any(|l| l.span.start <= offset && offset <= l.span.end.max(l.span.start + 1));
        if hit && !seen.contains(&d.code) {
            seen.push(d.code);
            parts.push(explain(d.code));
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: parts.join("\n\n---\n\n"),
        }),
        range: None,
    })
}

fn code_named(word: &str) -> Option<Code> {
    let w = word.trim_start_matches("lex::").to_ascii_uppercase();
    Code::ALL.iter().copied().find(|c| c.id() == w)
}

/// `lexrun explain CODE`, from the same table.
pub fn explain(c: Code) -> String {
    let kind = match c.severity() {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    format!("**{c}** ({kind}): {}", c.summary())
}

fn describe(ix: &Index, key: &str, wf: Option<&Workflow>) -> Option<String> {
    let d = ix.decl(key)?;
    let item = ix.item(d);
    let mut out = format!("**{} `{}`**", d.kind.noun(), key);
    match item {
        ast::Item::Model(m) => {
            out.push_str(&format!(" on pool `{}`\n\n", m.pool.node));
            out.push_str(&memory(key, wf));
        }
        ast::Item::Pool(p) => out.push_str(&pool_summary(ix, p, wf)),
        ast::Item::Stage(s) => out.push_str(&stage_summary(ix, s)),
        ast::Item::Template(t) => {
            if let Some(body) = template_body(ix, d.file, key, t)? {
                out.push_str(&format!("\n\n```handlebars\n{}\n```", body.trim_end()));
            }
        }
        ast::Item::Sources(s) => {
            let files: Vec<String> = s.files.iter().map(|f| format!("`{}`", f.node)).collect();
            out.push_str(&format!("\n\nfiles: {}", files.join(", ")));
            if let Some(b) = &s.bates {
                out.push_str(&format!("\n\nBates prefix: `{}`", b.prefix.node));
            }
            let readers = ix.readers(&s.name.node);
            if !readers.is_empty() {
                out.push_str(&format!("\n\nread by: {}", readers.join("; ")));
            }
        }
        ast::Item::Tool(t) => {
            out.push_str(&format!(" runs `{}`", t.kind.node));
            let readers = ix.readers(&t.name.node);
            if !readers.is_empty() {
                out.push_str(&format!("\n\nread by: {}", readers.join("; ")));
            }
        }
        ast::Item::Ruleset(r) => {
            let rules: Vec<String> = r
                .body
                .rules
                .iter()
                .map(|x| format!("- {} must {}", x.kind.node, x.requirement.node))
                .collect();
            out.push_str(&format!("\n\n{}", rules.join("\n")));
        }
        _ => {}
    }
    Some(out)
}

/// A pool's models and, once the workflow is planned, its memory and servers.
fn pool_summary(ix: &Index, p: &ast::PoolDecl, wf: Option<&Workflow>) -> String {
    let mut out = String::new();
    let models: Vec<&str> = ix
        .decls
        .iter()
        .filter_map(|d| match ix.item(d) {
            ast::Item::Model(m) if m.pool.node == p.name.node => Some(m.name.node.as_str()),
            _ => None,
        })
        .collect();
    out.push_str(&format!("\n\nmodels: {}\n\n", listed(&models)));
    if let Some(wf) = wf {
        if let Some(pool) = wf.pools.iter().find(|x| x.name == p.name.node) {
            let total: u64 = pool.vram.iter().sum();
            let used: u64 = wf
                .models
                .iter()
                .filter(|m| m.pool == pool.name)
                .map(|m| m.weight_bytes.unwrap_or(0) + m.kv_bytes.unwrap_or(0))
                .sum();
            out.push_str(&format!(
                "memory: {} of {} used ({} GPU{} on `{}`, {})",
                gib(used),
                gib(total),
                pool.gpus.len(),
                if pool.gpus.len() == 1 { "" } else { "s" },
                pool.host,
                pool.server.as_str()
            ));
        }
    }
    out
}

/// A stage's model, prompt, inputs, what it returns and what reads it.
fn stage_summary(ix: &Index, s: &ast::StageDecl) -> String {
    let mut out = String::new();
    out.push('\n');
    if let Some(m) = &s.model {
        out.push_str(&format!("\nmodel: `{}`", m.node));
    }
    if let Some(p) = &s.prompt {
        let what = match p {
            ast::Prompt::Named(n) => format!("`{}`", n.node),
            ast::Prompt::File(f) => format!("file `{}`", f.node),
            ast::Prompt::Inline(_) => "written inline".to_string(),
        };
        out.push_str(&format!("\n\nprompt: {what}"));
    }
    let mut inputs: Vec<String> = Vec::new();
    for n in s.reads.iter().chain(&s.after) {
        let name = format!("`{}`", n.node);
        if !inputs.contains(&name) {
            inputs.push(name);
        }
    }
    out.push_str(&format!("\n\ninputs: {}", listed(&inputs)));
    match &s.returns {
        Some(fields) => {
            let list: Vec<String> = fields.node.iter().map(field).collect();
            out.push_str(&format!("\n\nreturns: `{{ {} }}`", list.join(", ")));
        }
        None => out.push_str("\n\nreturns: text"),
    }
    let readers = ix.readers(&s.name.node);
    out.push_str(&format!(
        "\n\nread by: {}",
        if readers.is_empty() {
            "nothing".to_string()
        } else {
            readers.join("; ")
        }
    ));
    out
}

/// A template's text: written inline, from the standard library, or read beside the file
/// that declares it; `None` when that file has no folder.
fn template_body(
    ix: &Index,
    file: usize,
    key: &str,
    t: &ast::TemplateDecl,
) -> Option<Option<String>> {
    Some(match &t.body {
        ast::Prompt::Inline(s) => Some(s.node.clone()),
        ast::Prompt::File(f) if key.starts_with("std.") => {
            stdlib::file(&f.node).map(str::to_string)
        }
        ast::Prompt::File(f) => {
            let dir = camino::Utf8Path::new(&ix.names[file]).parent()?.to_owned();
            std::fs::read_to_string(dir.join(&f.node)).ok()
        }
        ast::Prompt::Named(n) => Some(format!("(the template `{}`)", n.node)),
    })
}

fn field(f: &ast::Field) -> String {
    format!("{}: {}", f.name.node, ty(&f.ty.node))
}

pub(super) fn ty(t: &ast::TypeExpr) -> String {
    match t {
        ast::TypeExpr::Prim(p) => p.clone(),
        ast::TypeExpr::List(inner) => format!("list of {}", ty(&inner.node)),
        ast::TypeExpr::Record(fields) => {
            let list: Vec<String> = fields.iter().map(field).collect();
            format!("record {{ {} }}", list.join(", "))
        }
    }
}

/// A model's share of its pool: weights + KV cache, and the pool's total.
fn memory(model: &str, wf: Option<&Workflow>) -> String {
    let Some(wf) = wf else {
        return "memory: shown once the workflow checks without errors".into();
    };
    let Some(m) = wf.models.iter().find(|m| m.name == model) else {
        return "memory: not known".into();
    };
    let Some(pool) = wf.pools.iter().find(|p| p.name == m.pool) else {
        return "memory: its pool is not known".into();
    };
    let total: u64 = pool.vram.iter().sum();
    let w = m.weight_bytes.unwrap_or(0);
    let kv = m.kv_bytes;
    let mine = w + kv.unwrap_or(0);
    let all: u64 = wf
        .models
        .iter()
        .filter(|x| x.pool == pool.name)
        .map(|x| x.weight_bytes.unwrap_or(0) + x.kv_bytes.unwrap_or(0))
        .sum();
    let pct = |b: u64| {
        if total == 0 {
            0.0
        } else {
            b as f64 * 100.0 / total as f64
        }
    };
    format!(
        "weights {} ({}) + KV cache {} (ctx {}, K {} / V {}{}) = **{}**, {:.0}% of pool `{}` ({})\n\nall models on `{}`: {} of {}, {} free",
        gib(w),
        m.weight_bytes_from,
        kv.map_or_else(|| "unknown".to_string(), gib),
        if m.ctx % 1024 == 0 {
            format!("{}k", m.ctx / 1024)
        } else {
            m.ctx.to_string()
        },
        m.kv_k,
        m.kv_v,
        if m.flash_attn { ", flash attention" } else { "" },
        gib(mine),
        pct(mine),
        pool.name,
        gib(total),
        pool.name,
        gib(all),
        gib(total),
        gib(total.saturating_sub(all)),
    )
}

/// Names joined by commas, or `none`.
fn listed<S: AsRef<str>>(names: &[S]) -> String {
    if names.is_empty() {
        return "none".to_string();
    }
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    names.join(", ")
}
