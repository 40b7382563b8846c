//! What the server answers: hover, definitions, references, renames, completions and
//! semantic tokens, all from one [`Analysis`].

use std::collections::HashMap;

use lsp_types::{
    CompletionItem, CompletionItemKind, Hover, HoverContents, Location, MarkupContent, MarkupKind,
    Position, SemanticToken, SemanticTokenType, TextEdit, Url, WorkspaceEdit,
};

use super::analysis::{file_url, Analysis};
use super::index::{Index, Kind};
use super::lines::Lines;
use crate::check::stdlib;
use crate::diagnostic::{Code, Severity, Span};
use crate::plan::workflow::Workflow;
use crate::syntax::{ast, CLAIM_KINDS};

const GIB: f64 = (1u64 << 30) as f64;

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / GIB)
}

/// The word (letters, digits, `_` and `.`) around a byte offset.
fn word_at(text: &str, offset: usize) -> (usize, &str) {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let offset = offset.min(text.len());
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| ok(c))
        .last()
        .map_or(offset, |(i, _)| i);
    let end = text[offset..]
        .char_indices()
        .find(|&(_, c)| !ok(c))
        .map_or(text.len(), |(i, _)| offset + i);
    (start, &text[start..end])
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
        ast::Item::Pool(p) => {
            let models: Vec<&str> = ix
                .decls
                .iter()
                .filter_map(|d| match ix.item(d) {
                    ast::Item::Model(m) if m.pool.node == p.name.node => Some(m.name.node.as_str()),
                    _ => None,
                })
                .collect();
            out.push_str(&format!(
                "\n\nmodels: {}\n\n",
                if models.is_empty() {
                    "none".to_string()
                } else {
                    models.join(", ")
                }
            ));
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
        }
        ast::Item::Stage(s) => {
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
            out.push_str(&format!(
                "\n\ninputs: {}",
                if inputs.is_empty() {
                    "none".to_string()
                } else {
                    inputs.join(", ")
                }
            ));
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
        }
        ast::Item::Template(t) => {
            let body = match &t.body {
                ast::Prompt::Inline(s) => Some(s.node.clone()),
                ast::Prompt::File(f) if key.starts_with("std.") => {
                    stdlib::file(&f.node).map(str::to_string)
                }
                ast::Prompt::File(f) => {
                    let dir = camino::Utf8Path::new(&ix.names[d.file])
                        .parent()?
                        .to_owned();
                    std::fs::read_to_string(dir.join(&f.node)).ok()
                }
                ast::Prompt::Named(n) => Some(format!("(the template `{}`)", n.node)),
            };
            if let Some(body) = body {
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

fn field(f: &ast::Field) -> String {
    format!("{}: {}", f.name.node, ty(&f.ty.node))
}

fn ty(t: &ast::TypeExpr) -> String {
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

pub fn definition(a: &Analysis, doc: &Url, pos: Position) -> Option<Location> {
    let text = a.text(0);
    let offset = Lines::new(text).offset(pos);
    if let Some(key) = a.index().key_at(0, offset) {
        let d = a.index().decl(key)?;
        return a.location(d.file, d.span, doc);
    }
    // A `use` line opens the file it imports; a prompt file opens the file.
    for imp in a.index().imports.iter().filter(|i| i.file == 0) {
        if imp.span.start <= offset && offset <= imp.span.end {
            let t = imp.target?;
            return Some(Location::new(a.url(t, doc)?, Default::default()));
        }
    }
    for item in &a.index().trees.first()?.items {
        if let ast::Item::Stage(s) = item {
            if let Some(ast::Prompt::File(f)) = &s.prompt {
                if f.span.start <= offset && offset <= f.span.end {
                    let dir = super::analysis::doc_path(doc);
                    let path = dir.parent()?.join(&f.node);
                    return Some(Location::new(
                        Url::from_file_path(path.as_std_path()).ok()?,
                        Default::default(),
                    ));
                }
            }
        }
    }
    None
}

pub fn references(a: &Analysis, doc: &Url, pos: Position, with_decl: bool) -> Vec<Location> {
    let offset = Lines::new(a.text(0)).offset(pos);
    let Some(key) = a.index().key_at(0, offset) else {
        return Vec::new();
    };
    let decls = a.index().decls.iter().filter(|d| d.key == key).count();
    a.index()
        .occurrences(key)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| with_decl || *i >= decls)
        .filter_map(|(_, (f, s))| a.location(f, s, doc))
        .collect()
}

/// Where a rename at this position would apply, and the name's range; refused for stdlib
/// names and for kinds other than pools, models, sources, stages, tools and templates.
pub fn rename_target(a: &Analysis, pos: Position) -> Result<(String, Span), String> {
    let offset = Lines::new(a.text(0)).offset(pos);
    let key = a
        .index()
        .key_at(0, offset)
        .ok_or("there is no declared name here to rename")?;
    let d = a
        .index()
        .decl(key)
        .ok_or_else(|| format!("`{key}` is not declared, so it cannot be renamed"))?;
    if key.starts_with("std.") {
        return Err(format!("`{key}` belongs to the stdlib, which is read-only"));
    }
    if d.kind == Kind::Ruleset {
        return Err("rule sets are renamed by hand".into());
    }
    let hit = a
        .index()
        .occurrences(key)
        .into_iter()
        .find(|(f, s)| *f == 0 && s.start <= offset && offset <= s.end)
        .map(|(_, s)| s)
        .ok_or("there is no declared name here to rename")?;
    Ok((key.to_string(), hit))
}

pub fn rename(a: &Analysis, doc: &Url, pos: Position, new: &str) -> Result<WorkspaceEdit, String> {
    let (key, _) = rename_target(a, pos)?;
    let valid = new
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && new.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "`{new}` is not a name: use letters, digits and `_`, starting with a letter"
        ));
    }
    if a.index().decl(new).is_some() {
        return Err(format!("`{new}` is already declared"));
    }
    let mut changes: HashMap<Url, Vec<TextEdit>> = HashMap::new();
    for (f, s) in a.index().occurrences(&key) {
        if a.checked.sources.get(f).name.starts_with("std/") {
            continue;
        }
        let Some(url) = a.url(f, doc) else { continue };
        changes
            .entry(url)
            .or_default()
            .push(TextEdit::new(a.range(f, s), new.to_string()));
    }
    Ok(WorkspaceEdit {
        changes: Some(changes),
        ..Default::default()
    })
}

// ------------------------------------------------------------------ completion

const TOP: &[&str] = &[
    "workflow", "matter", "use", "pool", "model", "sources", "stage", "tool", "verify", "output",
    "template", "ruleset",
];
const POOL: &[&str] = &[
    "host", "gpus", "link", "vram", "compute", "serve", "slots", "binary",
];
const SAMPLING: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repeat_penalty",
    "seed",
    "max_tokens",
];
const MODEL: &[&str] = &[
    "gguf",
    "tag",
    "weights",
    "ctx",
    "kv",
    "kv_k",
    "kv_v",
    "flash_attn",
    "min_decode",
    "layers",
    "kv_heads",
    "head_dim",
    "quant",
    "dtype",
];
const SOURCES: &[&str] = &["files", "bates", "description", "admit", "ocr"];
const STAGE: &[&str] = &[
    "model",
    "prompt",
    "reads",
    "after",
    "when",
    "returns",
    "stop when",
    "revise",
    "timeout",
];
const TOOL: &[&str] = &["reads", "after"];
const VERIFY: &[&str] = &["rules", "on failure"];
const CACHE: &[&str] = &[
    "f16", "bf16", "f32", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl",
];

/// The keyword of the block the offset is inside (`stage`, `pool`, …), if any: the first
/// word of the line holding the innermost unclosed `{`. Strings and comments are skipped.
fn enclosing_block(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let mut opens: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' if text[i..].starts_with("\"\"\"") => {
                i += 3 + text[i + 3..].find("\"\"\"").map_or(text.len(), |e| e + 3);
                continue;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if text[i..].starts_with("//") => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'{' => opens.push(i),
            b'}' => {
                opens.pop();
            }
            _ => {}
        }
        i += 1;
    }
    // A record's braces inside a block are not the block: take the outermost open brace.
    let at = *opens.first()?;
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..at].split_whitespace().next()
}

pub fn completion(a: &Analysis, pos: Position) -> Vec<CompletionItem> {
    let text = a.text(0);
    let offset = Lines::new(text).offset(pos);
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = &before[line_start..];
    let (wstart, _) = word_at(text, offset);
    let typed = &text[wstart..offset];
    // `STAGE.` → its `returns` fields; `std.` → stdlib names.
    if let Some(dot) = typed.rfind('.') {
        let head = &typed[..dot];
        if let Some(s) = a.index().stage(head) {
            return s
                .returns
                .iter()
                .flat_map(|r| &r.node)
                .map(|f| {
                    item(
                        &f.name.node,
                        CompletionItemKind::FIELD,
                        Some(ty(&f.ty.node)),
                    )
                })
                .collect();
        }
        return a
            .index()
            .decls
            .iter()
            .filter(|d| d.key.starts_with(&format!("{head}.")))
            .map(|d| {
                item(
                    &d.key[head.len() + 1..],
                    kind_of(d.kind),
                    Some(d.kind.noun().into()),
                )
            })
            .chain(
                stdlib::modules()
                    .filter(|m| m.starts_with(&format!("{head}.")))
                    .map(|m| item(&m[head.len() + 1..], CompletionItemKind::MODULE, None)),
            )
            .collect();
    }
    let words: Vec<&str> = line[..line.len() - typed.len()]
        .split_whitespace()
        .collect();
    let block = enclosing_block(before);
    let names = |kinds: &[Kind]| -> Vec<CompletionItem> {
        a.index()
            .decls
            .iter()
            .filter(|d| kinds.contains(&d.kind))
            .map(|d| item(&d.key, kind_of(d.kind), Some(d.kind.noun().into())))
            .collect()
    };
    let keywords = |list: &[&str]| -> Vec<CompletionItem> {
        list.iter()
            .map(|k| item(k, CompletionItemKind::KEYWORD, None))
            .collect()
    };
    if words.is_empty() {
        return match block {
            None => keywords(TOP),
            Some("pool") => keywords(POOL),
            Some("model") => [MODEL, SAMPLING]
                .concat()
                .iter()
                .map(|k| item(k, CompletionItemKind::PROPERTY, None))
                .collect(),
            Some("sources") => keywords(SOURCES),
            Some("stage") => [STAGE, SAMPLING]
                .concat()
                .iter()
                .map(|k| item(k, CompletionItemKind::PROPERTY, None))
                .collect(),
            Some("tool") => keywords(TOOL),
            Some("verify" | "ruleset") => [CLAIM_KINDS, VERIFY]
                .concat()
                .iter()
                .map(|k| item(k, CompletionItemKind::PROPERTY, None))
                .collect(),
            Some(_) => Vec::new(),
        };
    }
    let last = *words.last().unwrap_or(&"");
    let after_comma = last.ends_with(',');
    let key = if after_comma {
        words
            .iter()
            .rev()
            .find(|w| !w.ends_with(','))
            .copied()
            .unwrap_or(last)
    } else {
        last
    };
    match (block, key) {
        (_, "on") if words.first() == Some(&"model") => names(&[Kind::Pool]),
        (Some("stage"), "model") => names(&[Kind::Model]),
        (Some("stage"), "prompt") => names(&[Kind::Template]),
        (_, "reads") => names(&[Kind::Sources, Kind::Stage, Kind::Tool]),
        (_, "after" | "revise") => names(&[Kind::Stage, Kind::Tool]),
        (_, "against") => names(&[Kind::Sources]),
        (_, "rules") => names(&[Kind::Ruleset]),
        (_, "from") => names(&[Kind::Stage, Kind::Tool]),
        (_, "verify") if block.is_none() => names(&[Kind::Stage]),
        (_, "use") => stdlib::modules()
            .map(|m| item(&m, CompletionItemKind::MODULE, None))
            .collect(),
        (_, "kv" | "kv_k" | "kv_v") => keywords(CACHE),
        (_, "flash_attn") => keywords(&["on", "off"]),
        (_, "link") => keywords(&["nvlink", "pcie"]),
        (_, "serve") => keywords(&["llama_cpp", "ollama", "openai"]),
        (_, "must") => keywords(&["appear", "exist", "match exactly"]),
        (_, "failure" | "or") if block.is_some_and(|b| b == "verify" || b == "ruleset") => {
            keywords(&["block", "revise", "flag"])
        }
        (_, "when" | "until" | "and" | "or" | "not") => names(&[Kind::Stage]),
        _ => names(&[
            Kind::Pool,
            Kind::Model,
            Kind::Sources,
            Kind::Stage,
            Kind::Tool,
            Kind::Template,
            Kind::Ruleset,
        ]),
    }
}

fn item(label: &str, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail,
        ..Default::default()
    }
}

fn kind_of(k: Kind) -> CompletionItemKind {
    match k {
        Kind::Pool => CompletionItemKind::MODULE,
        Kind::Model => CompletionItemKind::CLASS,
        Kind::Sources => CompletionItemKind::FOLDER,
        Kind::Stage => CompletionItemKind::FUNCTION,
        Kind::Tool => CompletionItemKind::FUNCTION,
        Kind::Template => CompletionItemKind::SNIPPET,
        Kind::Ruleset => CompletionItemKind::ENUM,
    }
}

// ------------------------------------------------------------------ semantic tokens

/// The token types, in the order of the legend the server announces.
pub const TOKEN_TYPES: &[SemanticTokenType] = &[
    SemanticTokenType::KEYWORD,
    SemanticTokenType::STRING,
    SemanticTokenType::NUMBER,
    SemanticTokenType::COMMENT,
    SemanticTokenType::NAMESPACE,
    SemanticTokenType::CLASS,
    SemanticTokenType::FUNCTION,
    SemanticTokenType::VARIABLE,
    SemanticTokenType::PROPERTY,
    SemanticTokenType::OPERATOR,
    SemanticTokenType::TYPE,
    SemanticTokenType::ENUM_MEMBER,
];

#[derive(Clone, Copy)]
enum Tok {
    Keyword = 0,
    String = 1,
    Number = 2,
    Comment = 3,
    Namespace = 4,
    Class = 5,
    Function = 6,
    Variable = 7,
    Property = 8,
    Operator = 9,
    Type = 10,
    EnumMember = 11,
}

const KEYWORDS: &[&str] = &[
    "workflow", "matter", "use", "pool", "model", "on", "sources", "stage", "tool", "runs",
    "verify", "against", "output", "from", "appendix", "template", "ruleset", "after", "when",
    "until", "at", "most", "rounds", "round", "and", "or", "not", "is", "empty", "list", "of",
    "record", "must", "failure", "stop", "revise", "returns", "reads", "prompt", "rules",
];
const SETTINGS: &[&str] = &[
    "host",
    "gpus",
    "link",
    "vram",
    "compute",
    "serve",
    "slots",
    "binary",
    "gguf",
    "tag",
    "weights",
    "ctx",
    "kv",
    "kv_k",
    "kv_v",
    "flash_attn",
    "min_decode",
    "layers",
    "kv_heads",
    "head_dim",
    "quant",
    "dtype",
    "files",
    "bates",
    "description",
    "admit",
    "because",
    "ocr",
    "optional",
    "timeout",
    "start",
    "width",
    "suffix",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repeat_penalty",
    "seed",
    "max_tokens",
];
const TYPES: &[&str] = &["bool", "text", "number", "date"];
const VALUES: &[&str] = &[
    "true",
    "false",
    "appear",
    "exist",
    "match",
    "exactly",
    "block",
    "flag",
    "nvlink",
    "pcie",
    "llama_cpp",
    "ollama",
    "openai",
];

/// Semantic tokens for the document, read by a small lexer that never fails, so a
/// half-typed file is coloured too. Declared names are coloured by their kind.
pub fn semantic_tokens(a: &Analysis) -> Vec<SemanticToken> {
    let text = a.text(0);
    let mut names: HashMap<usize, Kind> = HashMap::new();
    for d in a.index().decls.iter().filter(|d| d.file == 0) {
        names.insert(d.span.start, d.kind);
    }
    for u in a.index().uses.iter().filter(|u| u.file == 0) {
        if let Some(d) = a.index().decl(&u.key) {
            names.insert(u.span.start, d.kind);
        }
    }
    let mut raw: Vec<(usize, usize, Tok)> = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        let c = rest.chars().next().unwrap_or(' ');
        let (len, tok) = if rest.starts_with("//") {
            (rest.find('\n').unwrap_or(rest.len()), Some(Tok::Comment))
        } else if rest.starts_with("/*") {
            (
                rest.find("*/").map_or(rest.len(), |e| e + 2),
                Some(Tok::Comment),
            )
        } else if let Some(body) = rest.strip_prefix("\"\"\"") {
            (
                body.find("\"\"\"").map_or(rest.len(), |e| e + 6),
                Some(Tok::String),
            )
        } else if c == '"' {
            let mut j = 1;
            let rb = rest.as_bytes();
            while j < rb.len() && rb[j] != b'"' && rb[j] != b'\n' {
                j += if rb[j] == b'\\' { 2 } else { 1 };
            }
            ((j + 1).min(rest.len()), Some(Tok::String))
        } else if c.is_ascii_digit() {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
                .unwrap_or(rest.len());
            (len, Some(Tok::Number))
        } else if c.is_ascii_alphabetic() || c == '_' {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len());
            let word = &rest[..len];
            let tok = match names.get(&i) {
                Some(Kind::Pool) => Tok::Namespace,
                Some(Kind::Model) => Tok::Class,
                Some(Kind::Stage | Kind::Tool) => Tok::Function,
                Some(Kind::Template | Kind::Ruleset) => Tok::EnumMember,
                Some(Kind::Sources) => Tok::Variable,
                None if KEYWORDS.contains(&word) => Tok::Keyword,
                None if SETTINGS.contains(&word) || CLAIM_KINDS.contains(&word) => Tok::Property,
                None if TYPES.contains(&word) => Tok::Type,
                None if VALUES.contains(&word) => Tok::EnumMember,
                None => Tok::Variable,
            };
            (len, Some(tok))
        } else if "=<>!".contains(c) {
            let len = rest
                .find(|c: char| !"=<>!".contains(c))
                .unwrap_or(rest.len());
            (len, Some(Tok::Operator))
        } else {
            (c.len_utf8(), None)
        };
        if let Some(t) = tok {
            raw.push((i, i + len, t));
        }
        i += len.max(1);
        while !text.is_char_boundary(i) {
            i += 1;
        }
    }
    encode(text, &raw)
}

/// Relative encoding, one token per line piece (the protocol's tokens do not span lines).
fn encode(text: &str, raw: &[(usize, usize, Tok)]) -> Vec<SemanticToken> {
    let lines = Lines::new(text);
    let mut out = Vec::new();
    let (mut pl, mut pc) = (0u32, 0u32);
    for &(s, e, t) in raw {
        let mut start = s;
        for piece in text[s..e].split_inclusive('\n') {
            let body = piece.trim_end_matches(['\n', '\r']);
            let end = start + body.len();
            if end > start {
                let p = lines.position(start);
                let q = lines.position(end);
                let len = q.character - p.character;
                let dl = p.line - pl;
                let dc = if dl == 0 {
                    p.character - pc
                } else {
                    p.character
                };
                out.push(SemanticToken {
                    delta_line: dl,
                    delta_start: dc,
                    length: len,
                    token_type: t as u32,
                    token_modifiers_bitset: 0,
                });
                pl = p.line;
                pc = p.character;
            }
            start += piece.len();
        }
    }
    out
}

/// The stdlib file a document URL points into, if it is one of the read-only copies.
pub fn is_stdlib(url: &Url) -> bool {
    file_url("std/prompts.lex").is_some_and(|s| {
        let dir = s.as_str().trim_end_matches("prompts.lex");
        url.as_str().starts_with(dir)
    })
}
