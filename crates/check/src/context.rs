//! What every check shares: the declared names and what they refer to, the diagnostics found
//! so far, the parsed templates, and the look-ups and helpers the checks use on them.

use std::collections::{BTreeMap, HashMap};

use super::load::{Module, Origin};
use crate::diagnostic::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

/// What a name refers to.
#[derive(Clone, Copy)]
pub(crate) enum Decl<'a> {
    Pool(&'a ast::PoolDecl),
    Model(&'a ast::ModelDecl),
    Sources(&'a ast::SourcesDecl),
    Stage(&'a ast::StageDecl),
    Tool(&'a ast::ToolDecl),
    Template(&'a ast::TemplateDecl),
    Ruleset(&'a ast::RulesetDecl),
}

/// The kinds of declaration a name can refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Pool,
    Model,
    Sources,
    Stage,
    Tool,
    Template,
    Ruleset,
}

impl Kind {
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Pool => "pool",
            Kind::Model => "model",
            Kind::Sources => "sources",
            Kind::Stage => "stage",
            Kind::Tool => "tool",
            Kind::Template => "template",
            Kind::Ruleset => "rule set",
        }
    }
}

impl Decl<'_> {
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Decl::Pool(_) => Kind::Pool,
            Decl::Model(_) => Kind::Model,
            Decl::Sources(_) => Kind::Sources,
            Decl::Stage(_) => Kind::Stage,
            Decl::Tool(_) => Kind::Tool,
            Decl::Template(_) => Kind::Template,
            Decl::Ruleset(_) => Kind::Ruleset,
        }
    }

    pub(crate) fn name(&self) -> &ast::Name {
        match self {
            Decl::Pool(d) => &d.name,
            Decl::Model(d) => &d.name,
            Decl::Sources(d) => &d.name,
            Decl::Stage(d) => &d.name,
            Decl::Tool(d) => &d.name,
            Decl::Template(d) => &d.name,
            Decl::Ruleset(d) => &d.name,
        }
    }
}

/// A declared name: what it refers to, the file it is in and that file's place in the load order.
#[derive(Clone, Copy)]
pub(crate) struct Entry<'a> {
    pub decl: Decl<'a>,
    pub file: FileId,
    pub module: usize,
}

pub(crate) struct Cx<'a> {
    pub modules: &'a [Module],
    pub sources: &'a mut SourceMap,
    pub diags: Vec<Diagnostic>,
    /// Every declared name; stdlib names are qualified (`std.prompts.gate`).
    pub names: BTreeMap<String, Entry<'a>>,
    /// Parsed prompt templates, by their text.
    pub templates: HashMap<String, Analysis>,
    /// The workflow library of the entry file, when it is on disk.
    pub library: Option<crate::confine::Library>,
}

/// What parsing a template found: the variables it uses, or why it does not parse.
#[derive(Clone, Debug)]
pub(crate) enum Analysis {
    Uses(Vec<Use>),
    Broken {
        reason: String,
        pos: Option<(usize, usize)>,
    },
}

/// A variable path, where it is (line, column), and whether it is at the template's top level.
pub(crate) type Use = (String, Option<(usize, usize)>, bool);

impl<'a> Cx<'a> {
    pub(crate) fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// Reports an error in file `f` at `span` with a hint, the shape most of the checker's
    /// errors take.
    pub(crate) fn error_at(
        &mut self,
        code: Code,
        f: FileId,
        span: Span,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        self.error(
            Diagnostic::new(code, message)
                .in_file(f)
                .label(span, "")
                .help(help),
        );
    }

    /// Resolves a reference, reporting an unknown name (with a suggestion among names of the
    /// wanted kinds) or a name of the wrong kind.
    pub(crate) fn lookup(
        &mut self,
        name: &ast::Name,
        file: FileId,
        want: &[Kind],
    ) -> Option<Entry<'a>> {
        let wanted: Vec<&str> = want.iter().map(|k| k.noun()).collect();
        let what = wanted.join(" or ");
        match self.names.get(&name.node).copied() {
            Some(e) if want.contains(&e.decl.kind()) => Some(e),
            Some(e) => {
                let d = Diagnostic::new(
                    Code::WrongKind,
                    format!(
                        "`{}` is a {}, not a {what}",
                        name.node,
                        e.decl.kind().noun()
                    ),
                )
                .in_file(file)
                .label(name.span, format!("expected a {what}"));
                let d = match self.suggest(&name.node, want) {
                    Some(s) => d.help(format!("did you mean the {what} `{s}`?")),
                    None => d.help(format!("name a {what} here")),
                };
                self.diags.push(d);
                None
            }
            None if self.known_broken(&name.node) => None,
            None if !name.node.is_ascii() || self.names.keys().any(|k| !k.is_ascii()) => {
                // A look-alike letter (reported where it is written) in the reference or the
                // declaration: resolve the name as it was meant.
                let meant = crate::syntax::skeleton(&name.node);
                let found = self
                    .names
                    .iter()
                    .find(|(k, e)| {
                        want.contains(&e.decl.kind()) && crate::syntax::skeleton(k) == meant
                    })
                    .map(|(_, e)| *e);
                if found.is_none() && name.node.is_ascii() {
                    self.unknown(name, file, want);
                }
                found
            }
            None => {
                self.unknown(name, file, want);
                None
            }
        }
    }

    /// Whether `name` is a declaration that did not parse (its error is the root).
    fn known_broken(&self, name: &str) -> bool {
        self.modules
            .iter()
            .any(|m| m.ast.broken.iter().any(|b| b == name))
    }

    /// Reports a name that is declared nowhere, with the likeliest fix: a near name, the
    /// `use` a stdlib module needs, or the names of the wanted kinds that are declared.
    fn unknown(&mut self, name: &ast::Name, file: FileId, want: &[Kind]) {
        let wanted: Vec<&str> = want.iter().map(|k| k.noun()).collect();
        let what = wanted.join(" or ");
        let mut d = Diagnostic::new(
            Code::UnknownName,
            format!("there is no {what} named `{}`", name.node),
        )
        .in_file(file)
        .label(name.span, "not declared");
        if let Some(s) = self.suggest(&name.node, want) {
            d = d.help(format!("did you mean `{s}`?"));
        } else if let Some(module) = name
            .node
            .rsplit_once('.')
            .map(|(m, _)| m)
            .filter(|m| m.starts_with("std."))
        {
            let imported = self
                .modules
                .iter()
                .any(|m| matches!(&m.origin, Origin::Std { module: mm } if mm == module));
            d = if imported {
                let names: Vec<String> = self
                    .names
                    .keys()
                    .filter(|k| k.starts_with(&format!("{module}.")))
                    .cloned()
                    .collect();
                d.help(format!("`{module}` has: {}", names.join(", ")))
            } else {
                d.help(format!("add `use {module}` at the top of the file"))
            };
        } else {
            let all: Vec<&String> = self
                .names
                .iter()
                .filter(|(k, e)| want.contains(&e.decl.kind()) && !k.starts_with("std."))
                .map(|(k, _)| k)
                .collect();
            d = if all.is_empty() {
                d.help(format!("declare a {what} named `{}`", name.node))
            } else {
                d.help(format!(
                    "declared {what}s: {}",
                    all.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            };
        }
        self.diags.push(d);
    }

    fn suggest(&self, word: &str, want: &[Kind]) -> Option<String> {
        let candidates: Vec<&str> = self
            .names
            .iter()
            .filter(|(_, e)| want.contains(&e.decl.kind()))
            .map(|(k, _)| k.as_str())
            .collect();
        did_you_mean(word, candidates).map(str::to_string)
    }

    /// Declarations of one kind, in file order, with the file they are in.
    pub(crate) fn decls(&self, kind: Kind) -> Vec<Entry<'a>> {
        let mut v: Vec<Entry<'a>> = self
            .names
            .values()
            .filter(|e| e.decl.kind() == kind)
            .copied()
            .collect();
        v.sort_by_key(|e| (e.module, e.decl.name().span.start));
        v
    }

    /// Every `verify` block of the workflow's files, with its file.
    pub(crate) fn verify_decls(&self) -> Vec<(FileId, &'a ast::VerifyDecl)> {
        self.modules
            .iter()
            .flat_map(|m| {
                m.ast.items.iter().filter_map(move |i| match i {
                    ast::Item::Verify(v) => Some((m.file, &**v)),
                    _ => None,
                })
            })
            .collect()
    }

    pub(crate) fn dir_of(&self, module: usize) -> &Origin {
        &self.modules[module].origin
    }

    /// A path written in the file at `module`, resolved against that file's folder; `None`
    /// for the standard library, which has no folder.
    pub(crate) fn resolve_path(&self, module: usize, rel: &str) -> Option<camino::Utf8PathBuf> {
        match self.dir_of(module) {
            Origin::Disk { dir } => Some(dir.join(rel)),
            Origin::Std { .. } => None,
        }
    }
}

/// Renders a sorted list of names as `a, b and c`.
pub(crate) fn and_list(items: &[impl AsRef<str>]) -> String {
    match items {
        [] => String::new(),
        [one] => format!("`{}`", one.as_ref()),
        [rest @ .., last] => format!(
            "{} and `{}`",
            rest.iter()
                .map(|s| format!("`{}`", s.as_ref()))
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}
