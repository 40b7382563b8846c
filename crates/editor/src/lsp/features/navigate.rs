//! Go to definition, find references and rename, from the name index.

use std::collections::HashMap;

use lsp_types::{Location, Position, TextEdit, Url, WorkspaceEdit};

use super::super::analysis::Analysis;
use super::super::index::Kind;
use super::super::lines::Lines;
use crate::diagnostic::Span;
use crate::syntax::ast;

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
                    let dir = super::super::analysis::doc_path(doc);
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
