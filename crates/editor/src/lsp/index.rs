//! Where every name is declared and used, across the checked file, its imports and the
//! stdlib, read from the syntax trees of the files the checker loaded.

use std::collections::HashMap;

use crate::diagnostic::{FileId, SourceMap, Span};
use crate::syntax::{self, ast};

pub use crate::check::Kind;

#[derive(Debug)]
pub struct Decl {
    /// The name as the checker keys it: stdlib names qualified (`std.prompts.gate`).
    pub key: String,
    pub kind: Kind,
    pub file: FileId,
    /// The declared name.
    pub span: Span,
    /// Which item of the file's tree.
    pub item: usize,
}

#[derive(Debug)]
pub struct Use {
    pub file: FileId,
    pub span: Span,
    /// The key of the declaration it names, resolved or not.
    pub key: String,
}

/// A `use` line and the file it loads.
#[derive(Debug)]
pub struct Import {
    pub file: FileId,
    pub span: Span,
    pub target: Option<FileId>,
}

#[derive(Default)]
pub struct Index {
    /// Each file's name as the checker gave it (a path, or `std/<module>.lex`).
    pub names: Vec<String>,
    pub trees: Vec<ast::File>,
    pub decls: Vec<Decl>,
    pub by_key: HashMap<String, usize>,
    pub uses: Vec<Use>,
    pub imports: Vec<Import>,
}

/// `std/prompts.lex` → `std.prompts.`; files on disk declare unqualified names.
pub fn prefix(name: &str) -> String {
    match name
        .strip_prefix("std/")
        .and_then(|n| n.strip_suffix(".lex"))
    {
        Some(m) => format!("std.{}.", m.replace('/', ".")),
        None => String::new(),
    }
}

impl Index {
    pub fn build(sources: &SourceMap) -> Index {
        let mut ix = Index::default();
        for f in 0..sources.len() {
            let text = &sources.get(f).text;
            ix.trees.push(syntax::parse(text, f).file);
            ix.names.push(sources.get(f).name.clone());
        }
        for f in 0..sources.len() {
            let pre = prefix(&sources.get(f).name);
            for (i, item) in ix.trees[f].items.iter().enumerate() {
                let (name, kind) = match item {
                    ast::Item::Pool(d) => (&d.name, Kind::Pool),
                    ast::Item::Model(d) => (&d.name, Kind::Model),
                    ast::Item::Sources(d) => (&d.name, Kind::Sources),
                    ast::Item::Stage(d) => (&d.name, Kind::Stage),
                    ast::Item::Tool(d) => (&d.name, Kind::Tool),
                    ast::Item::Template(d) => (&d.name, Kind::Template),
                    ast::Item::Ruleset(d) => (&d.name, Kind::Ruleset),
                    _ => continue,
                };
                let key = format!("{pre}{}", name.node);
                ix.by_key.entry(key.clone()).or_insert(ix.decls.len());
                ix.decls.push(Decl {
                    key,
                    kind,
                    file: f,
                    span: name.span,
                    item: i,
                });
            }
        }
        for f in 0..sources.len() {
            let pre = prefix(&sources.get(f).name);
            let mut names: Vec<&ast::Name> = Vec::new();
            for item in &ix.trees[f].items {
                collect(item, &mut names);
                if let ast::Item::Use(u) = item {
                    let target = match &u.target {
                        ast::UseTarget::Module(m) => {
                            let want = format!("std/{}.lex", m.node.trim_start_matches("std."));
                            (0..sources.len()).find(|&g| sources.get(g).name == want)
                        }
                        ast::UseTarget::File(p) => {
                            let dir = camino::Utf8Path::new(&sources.get(f).name)
                                .parent()
                                .map(|d| d.join(&p.node));
                            dir.and_then(|want| {
                                (0..sources.len()).find(|&g| sources.get(g).name == want.as_str())
                            })
                        }
                    };
                    ix.imports.push(Import {
                        file: f,
                        span: u.span,
                        target,
                    });
                }
            }
            let uses: Vec<Use> = names
                .into_iter()
                .map(|n| {
                    let local = format!("{pre}{}", n.node);
                    let key = if ix.by_key.contains_key(&local) {
                        local
                    } else {
                        n.node.clone()
                    };
                    Use {
                        file: f,
                        span: n.span,
                        key,
                    }
                })
                .collect();
            ix.uses.extend(uses);
        }
        ix
    }

    pub fn decl(&self, key: &str) -> Option<&Decl> {
        self.by_key.get(key).map(|&i| &self.decls[i])
    }

    /// The key of the name at a byte offset of a file, declared or used there.
    pub fn key_at(&self, file: FileId, offset: usize) -> Option<&str> {
        let hit = |s: Span| s.start <= offset && offset <= s.end;
        self.decls
            .iter()
            .find(|d| d.file == file && hit(d.span))
            .map(|d| d.key.as_str())
            .or_else(|| {
                self.uses
                    .iter()
                    .find(|u| u.file == file && hit(u.span))
                    .map(|u| u.key.as_str())
            })
    }

    /// Every place a key is declared or used: (file, span), declarations first.
    pub fn occurrences(&self, key: &str) -> Vec<(FileId, Span)> {
        let mut out: Vec<(FileId, Span)> = self
            .decls
            .iter()
            .filter(|d| d.key == key)
            .map(|d| (d.file, d.span))
            .collect();
        out.extend(
            self.uses
                .iter()
                .filter(|u| u.key == key)
                .map(|u| (u.file, u.span)),
        );
        out
    }

    pub fn item(&self, d: &Decl) -> &ast::Item {
        &self.trees[d.file].items[d.item]
    }

    pub fn stage(&self, key: &str) -> Option<&ast::StageDecl> {
        match self.item(self.decl(key)?) {
            ast::Item::Stage(s) => Some(s),
            _ => None,
        }
    }

    /// The steps, verify blocks and outputs that read a stage (or tool, or sources).
    pub fn readers(&self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        for tree in &self.trees {
            for item in &tree.items {
                match item {
                    ast::Item::Stage(s) => {
                        if s.reads.iter().any(|r| r.node == name) {
                            out.push(format!("stage `{}` reads it", s.name.node));
                        } else if s.revise.as_ref().is_some_and(|r| r.target.node == name) {
                            out.push(format!(
                                "stage `{}` sends it back for revision",
                                s.name.node
                            ));
                        }
                    }
                    ast::Item::Tool(t) if t.reads.iter().any(|r| r.node == name) => {
                        out.push(format!("tool `{}` reads it", t.name.node));
                    }
                    ast::Item::Verify(v) if v.target.node == name => {
                        out.push("verified by a `verify` block".to_string());
                    }
                    ast::Item::Output(o) if o.from.node == name => {
                        out.push(format!("written to `{}`", o.path.node));
                    }
                    _ => {}
                }
            }
        }
        out
    }
}

/// Every name a declaration refers to (not the names it declares).
fn collect<'a>(item: &'a ast::Item, out: &mut Vec<&'a ast::Name>) {
    match item {
        ast::Item::Model(m) => out.push(&m.pool),
        ast::Item::Stage(s) => {
            out.extend(&s.model);
            if let Some(ast::Prompt::Named(n)) = &s.prompt {
                out.push(n);
            }
            out.extend(&s.reads);
            out.extend(&s.after);
            for c in [&s.when, &s.stop_when].into_iter().flatten() {
                cond(c, out);
            }
            if let Some(r) = &s.revise {
                out.push(&r.target);
                cond(&r.until, out);
            }
        }
        ast::Item::Tool(t) => {
            out.extend(&t.reads);
            out.extend(&t.after);
        }
        ast::Item::Verify(v) => {
            out.push(&v.target);
            out.extend(&v.against);
            out.extend(&v.body.includes);
        }
        ast::Item::Ruleset(r) => out.extend(&r.body.includes),
        ast::Item::Output(o) => out.push(&o.from),
        ast::Item::Template(t) => {
            if let ast::Prompt::Named(n) = &t.body {
                out.push(n);
            }
        }
        _ => {}
    }
}

fn cond<'a>(c: &'a ast::Cond, out: &mut Vec<&'a ast::Name>) {
    match c {
        ast::Cond::Or(v) | ast::Cond::And(v) => v.iter().for_each(|c| cond(c, out)),
        ast::Cond::Not(c, _) => cond(c, out),
        ast::Cond::Compare { left, right, .. } => {
            operand(left, out);
            operand(right, out);
        }
        ast::Cond::IsEmpty { operand: o, .. } | ast::Cond::Operand(o) => operand(o, out),
    }
}

fn operand<'a>(o: &'a ast::Operand, out: &mut Vec<&'a ast::Name>) {
    if let ast::Operand::Field { stage: Some(s), .. } = o {
        out.push(s);
    }
}
