//! Document and workspace symbols (the declarations), and code actions: a diagnostic whose
//! help names the fix (`did you mean `gatekeeper`?`, `retype it as `intake``) is applied in
//! one click.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range, SymbolInformation, SymbolKind,
    TextEdit, Url, WorkspaceEdit,
};

use super::super::analysis::Analysis;
use super::super::index::Kind;

fn symbol_kind(k: Kind) -> SymbolKind {
    match k {
        Kind::Pool => SymbolKind::NAMESPACE,
        Kind::Model => SymbolKind::CLASS,
        Kind::Sources => SymbolKind::FILE,
        Kind::Stage => SymbolKind::FUNCTION,
        Kind::Tool => SymbolKind::METHOD,
        Kind::Template => SymbolKind::STRING,
        Kind::Ruleset => SymbolKind::STRUCT,
    }
}

/// The declarations of the files the check read, those of `file` only when given.
fn symbols(a: &Analysis, doc: &Url, only: Option<usize>) -> Vec<SymbolInformation> {
    a.index()
        .decls
        .iter()
        .filter(|d| only.is_none_or(|f| d.file == f))
        .filter_map(|d| {
            #[allow(deprecated)]
            Some(SymbolInformation {
                name: d.key.clone(),
                kind: symbol_kind(d.kind),
                tags: None,
                deprecated: None,
                location: a.location(d.file, d.span, doc)?,
                container_name: Some(d.kind.noun().to_string()),
            })
        })
        .collect()
}

pub fn document_symbols(a: &Analysis, doc: &Url) -> Vec<SymbolInformation> {
    symbols(a, doc, Some(0))
}

/// The declarations of every open document and what it imports (stdlib included), once
/// each, whose names contain `query` (any case).
pub fn workspace_symbols<'a>(
    docs: impl Iterator<Item = (&'a Url, &'a Analysis)>,
    query: &str,
) -> Vec<SymbolInformation> {
    let q = query.to_lowercase();
    let mut seen: HashMap<(String, String), ()> = HashMap::new();
    let mut out = Vec::new();
    for (uri, a) in docs {
        for s in symbols(a, uri, None) {
            if !s.name.to_lowercase().contains(&q) {
                continue;
            }
            if seen
                .insert((s.location.uri.to_string(), s.name.clone()), ())
                .is_none()
            {
                out.push(s);
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The replacement a diagnostic's help line names, if it names one.
pub fn suggested(help: &str) -> Option<&str> {
    for lead in ["did you mean `", "retype it as `"] {
        if let Some(i) = help.find(lead) {
            let rest = &help[i + lead.len()..];
            let end = rest.find('`')?;
            let s = &rest[..end];
            if !s.is_empty() && !s.contains(char::is_whitespace) {
                return Some(s);
            }
        }
    }
    None
}

fn overlaps(a: Range, b: Range) -> bool {
    let key = |p: lsp_types::Position| (p.line, p.character);
    key(a.start) <= key(b.end) && key(b.start) <= key(a.end)
}

/// Quick fixes for the diagnostics of the document within `range`.
pub fn code_actions(a: &Analysis, doc: &Url, range: Range) -> Vec<CodeActionOrCommand> {
    let diags = a.diagnostics(doc);
    let mut out = Vec::new();
    for (d, shown) in a.checked.diagnostics.iter().zip(diags) {
        if d.file != Some(0) {
            continue;
        }
        let (Some(help), Some(label)) = (&d.help, d.labels.first()) else {
            continue;
        };
        let Some(fix) = suggested(help) else {
            continue;
        };
        let at = a.range(0, label.span);
        if !overlaps(at, range) || label.span.is_empty() {
            continue;
        }
        let edit = WorkspaceEdit {
            changes: Some(HashMap::from([(
                doc.clone(),
                vec![TextEdit::new(at, fix.to_string())],
            )])),
            ..Default::default()
        };
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Replace with `{fix}`"),
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![shown]),
            edit: Some(edit),
            is_preferred: Some(true),
            ..Default::default()
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::suggested;

    #[test]
    fn the_fix_is_read_from_the_help_line() {
        assert_eq!(suggested("did you mean `gatekeeper`?"), Some("gatekeeper"));
        assert_eq!(
            suggested("names must be ASCII: retype it as `intake` (letters a–z)"),
            Some("intake")
        );
        assert_eq!(suggested("add e.g. `serve llama_cpp at …`"), None);
        assert_eq!(suggested("did you mean `a b`?"), None);
    }
}
