//! Completions: keywords and settings for the enclosing block, declared names where a name
//! is expected.

use lsp_types::{CompletionItem, CompletionItemKind, Position};

use super::super::analysis::Analysis;
use super::super::index::Kind;
use super::super::lines::Lines;
use super::hover::ty;
use super::word::word_at;
use crate::check::stdlib;
use crate::syntax::keywords as kw;
use crate::syntax::CLAIM_KINDS;

/// A setting as it is offered: the few whose keyword is always followed by the same word come
/// with it.
fn label(key: &str) -> &str {
    match key {
        "stop" => "stop when",
        "on" => "on failure",
        k => k,
    }
}
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
        return dotted(a, &typed[..dot]);
    }
    let words: Vec<&str> = line[..line.len() - typed.len()]
        .split_whitespace()
        .collect();
    let block = enclosing_block(before);
    if words.is_empty() {
        return match block {
            None => keywords(kw::TOP),
            Some("pool") => keywords(kw::POOL),
            Some("model") => settings(&[kw::MODEL, kw::SAMPLING]),
            Some("sources") => keywords(kw::SOURCES),
            Some("stage") => settings(&[kw::STAGE, kw::SAMPLING]),
            Some("tool") => keywords(kw::TOOL),
            Some("verify" | "ruleset") => settings(&[CLAIM_KINDS, kw::VERIFY]),
            Some(_) => Vec::new(),
        };
    }
    values(a, block, &words)
}

/// After `HEAD.`: a stage's `returns` fields, or the names and modules under `HEAD`.
fn dotted(a: &Analysis, head: &str) -> Vec<CompletionItem> {
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
    a.index()
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
        .collect()
}

/// What may follow a setting's name (or a list of names after a comma) in `block`.
fn values(a: &Analysis, block: Option<&str>, words: &[&str]) -> Vec<CompletionItem> {
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
        (_, "on") if words.first() == Some(&"model") => names(a, &[Kind::Pool]),
        (Some("stage"), "model") => names(a, &[Kind::Model]),
        (Some("stage"), "prompt") => names(a, &[Kind::Template]),
        (_, "reads") => names(a, &[Kind::Sources, Kind::Stage, Kind::Tool]),
        (_, "after" | "revise") => names(a, &[Kind::Stage, Kind::Tool]),
        (_, "against") => names(a, &[Kind::Sources]),
        (_, "rules") => names(a, &[Kind::Ruleset]),
        (_, "from") => names(a, &[Kind::Stage, Kind::Tool]),
        (_, "verify") if block.is_none() => names(a, &[Kind::Stage]),
        (_, "use") => stdlib::modules()
            .map(|m| item(&m, CompletionItemKind::MODULE, None))
            .collect(),
        (_, "kv" | "kv_k" | "kv_v") => keywords(CACHE),
        (_, "flash_attn") => keywords(&["on", "off"]),
        (_, "link") => keywords(&["nvlink", "pcie"]),
        (_, "serve") => keywords(&lexrun_base::server_kind::ServerKind::NAMES),
        (_, "must") => keywords(&["appear", "exist", "match exactly", "hold"]),
        (Some("verify"), "judge") => names(a, &[Kind::Model]),
        (_, "failure" | "or") if block.is_some_and(|b| b == "verify" || b == "ruleset") => {
            keywords(&["block", "revise", "flag"])
        }
        (_, "when" | "until" | "and" | "or" | "not") => names(a, &[Kind::Stage]),
        _ => names(
            a,
            &[
                Kind::Pool,
                Kind::Model,
                Kind::Sources,
                Kind::Stage,
                Kind::Tool,
                Kind::Template,
                Kind::Ruleset,
            ],
        ),
    }
}

/// The declared names of these kinds.
fn names(a: &Analysis, kinds: &[Kind]) -> Vec<CompletionItem> {
    a.index()
        .decls
        .iter()
        .filter(|d| kinds.contains(&d.kind))
        .map(|d| item(&d.key, kind_of(d.kind), Some(d.kind.noun().into())))
        .collect()
}

fn keywords(list: &[&str]) -> Vec<CompletionItem> {
    list.iter()
        .map(|k| item(k, CompletionItemKind::KEYWORD, None))
        .collect()
}

fn settings(lists: &[&[&str]]) -> Vec<CompletionItem> {
    lists
        .concat()
        .iter()
        .map(|k| item(label(k), CompletionItemKind::PROPERTY, None))
        .collect()
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
