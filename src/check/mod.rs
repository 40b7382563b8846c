//! Names, imports, types, the stage graph and the hardware: everything that makes a parsed
//! file a workflow lexrun can run, or a list of diagnostics saying why not.
//!
//! All checks run even after errors, so one pass reports every problem in a file.

mod conditions;
mod evidence;
mod hardware;
mod ledger;
mod load;
mod matter;
pub use load::discover;
mod models;
mod outputs;
mod pools;
mod production;
mod speed;
pub mod stdlib;
mod step_graph;
mod step_info;
mod steps;
mod template_syntax;
mod test_file;
pub use test_file::{check_test_bytes, check_test_path};
mod templates;
mod tools;
mod verify_reads;
mod verify_rules;

use std::collections::{BTreeMap, HashMap};

use camino::Utf8Path;

use crate::diagnostic::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::plan::workflow::Workflow;
use crate::suggest::did_you_mean;
use crate::syntax::ast;
use load::Module;
pub use load::Origin;

/// The outcome of checking a file.
#[derive(Debug)]
pub struct Checked {
    pub sources: SourceMap,
    /// Errors and warnings, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// The workflow, when there are no errors.
    pub workflow: Option<Workflow>,
    /// The entry file could not be read at all (exit code 2 rather than 1).
    pub unreadable: bool,
}

impl Checked {
    pub fn has_errors(&self) -> bool {
        self.unreadable || self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Checks a `.lex` file and everything it imports.
pub fn check_path(path: &Utf8Path) -> Checked {
    match std::fs::read(path) {
        Ok(bytes) => check_bytes(path, bytes),
        Err(e) => Checked {
            sources: SourceMap::default(),
            diagnostics: vec![Diagnostic::new(
                Code::UnreadableFile,
                format!("cannot read `{path}`: {e}"),
            )
            .help("check the path; run `lexrun check` on a .lex file")],
            workflow: None,
            unreadable: true,
        },
    }
}

/// Checks the text of a `.lex` file as if it were at `path` (imports and relative paths
/// resolve against its folder). Never panics, whatever the bytes.
pub fn check_bytes(path: &Utf8Path, bytes: Vec<u8>) -> Checked {
    check_bytes_with(path, bytes, &|_| None)
}

/// What an editor has open: the text of a file that is read in place of the file on disk
/// (an unsaved edit to an imported file), by the file's path.
pub type Overlay<'a> = &'a dyn Fn(&Utf8Path) -> Option<Vec<u8>>;

/// [`check_bytes`], reading imported files through `open` first.
pub fn check_bytes_with(path: &Utf8Path, bytes: Vec<u8>, open: Overlay) -> Checked {
    check_inner(path, bytes, open, None)
}

/// [`check_bytes_with`], reusing the parse of the declarations an earlier check through
/// `reuse` read in the same words (an editor checks after every edit); the result is the
/// same.
pub fn check_bytes_reusing(
    path: &Utf8Path,
    bytes: Vec<u8>,
    open: Overlay,
    reuse: &mut crate::syntax::Reuse,
) -> Checked {
    reuse.begin();
    check_inner(path, bytes, open, Some(reuse))
}

fn check_inner(
    path: &Utf8Path,
    bytes: Vec<u8>,
    open: Overlay,
    reuse: Option<&mut crate::syntax::Reuse>,
) -> Checked {
    let mut sources = SourceMap::default();
    let mut diags = Vec::new();
    let (modules, library) = load::load(path, bytes, open, &mut sources, &mut diags, reuse);
    let mut cx = Cx {
        modules: &modules,
        sources: &mut sources,
        diags,
        names: BTreeMap::new(),
        templates: HashMap::new(),
        library: Some(library),
    };
    let workflow = cx.run();
    let mut diagnostics = cx.diags;
    // "Unused" means nothing while declarations have errors: the broken one may be the user.
    if diagnostics.iter().any(Diagnostic::is_error) {
        diagnostics.retain(|d| d.code != Code::UnusedPool);
    }
    diagnostics.sort_by_key(|d| d.position());
    diagnostics.dedup();
    let failed = diagnostics.iter().any(Diagnostic::is_error);
    Checked {
        sources,
        diagnostics,
        workflow: if failed { None } else { workflow },
        unreadable: false,
    }
}

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

    fn name(&self) -> &ast::Name {
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
    pub templates: HashMap<String, templates::Analysis>,
    /// The workflow library of the entry file, when it is on disk.
    pub library: Option<crate::confine::Library>,
}

impl<'a> Cx<'a> {
    fn run(&mut self) -> Option<Workflow> {
        let header = self.header();
        self.collect_names();
        let pools = pools::pools(self);
        let models = models::models(self, &pools);
        hardware::fit(self, &pools, &models);
        let sources = evidence::sources(self);
        let steps = steps::steps(self, &models);
        let verify = verify_rules::verify(self, &steps);
        verify_reads::check(self, &steps, &verify);
        matter::matter(self);
        let ledger = ledger::ledger(self);
        let outputs = outputs::outputs(self, &steps, &verify);
        let (name, description, matter) = header?;
        Some(Workflow {
            name,
            description,
            matter,
            ledger,
            pools,
            models,
            sources,
            steps,
            verify,
            outputs,
        })
    }

    pub(crate) fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// The one `workflow` header, which must be in the file being checked.
    fn header(&mut self) -> Option<(String, String, Option<String>)> {
        let mut found: Option<(&ast::WorkflowDecl, FileId)> = None;
        let mut matter = None;
        for (i, m) in self.modules.iter().enumerate() {
            for item in &m.ast.items {
                match item {
                    ast::Item::Workflow(w) if i > 0 => self.error(
                        Diagnostic::new(Code::MissingWorkflow, "an imported file declares a workflow")
                            .in_file(m.file)
                            .label(w.span, "")
                            .help("only the file you run has a `workflow` header; remove it from files that are imported"),
                    ),
                    ast::Item::Workflow(w) => {
                        if let Some((first, _)) = found {
                            self.error(
                                Diagnostic::new(Code::MissingWorkflow, "a second `workflow` header")
                                    .in_file(m.file)
                                    .label(w.span, "second header")
                                    .label(first.span, "first header")
                                    .help("one file holds one workflow; split the file or remove one header"),
                            );
                        } else {
                            found = Some((w, m.file));
                        }
                    }
                    ast::Item::Matter(p) if i == 0 => {
                        if !crate::confine::lexically_inside(std::path::Path::new(&p.node)) {
                            self.error(
                                Diagnostic::new(
                                    Code::MatterOutside,
                                    format!("the matter `{}` is outside the workflow's folder", p.node),
                                )
                                .in_file(m.file)
                                .label(p.span, "leads out of the workflow's folder")
                                .help("keep each matter in a folder beside or below its workflow, or name it on purpose for one run with `--matter DIR`"),
                            );
                        }
                        matter = Some(p.node.clone());
                    }
                    _ => {}
                }
            }
        }
        match found {
            Some((w, _)) => Some((
                w.name.node.clone(),
                w.description
                    .as_ref()
                    .map_or_else(String::new, |d| d.node.clone()),
                matter,
            )),
            None => {
                let entry = self.modules.first()?;
                // An empty or unparsable file, or a header with errors, has its diagnostic.
                if !entry.ast.items.is_empty() && !entry.ast.broken.iter().any(|b| b == "workflow")
                {
                    self.error(
                        Diagnostic::new(Code::MissingWorkflow, "this file has no `workflow` header")
                            .in_file(entry.file)
                            .label(Span::new(0, 0), "")
                            .help("add a first line such as `workflow affidavit \"Affidavit from intake to draft\"`"),
                    );
                }
                None
            }
        }
    }

    fn collect_names(&mut self) {
        for (mi, m) in self.modules.iter().enumerate() {
            let prefix = match &m.origin {
                Origin::Std { module } => format!("{module}."),
                Origin::Disk { .. } => String::new(),
            };
            for item in &m.ast.items {
                let decl = match item {
                    ast::Item::Pool(d) => Decl::Pool(d),
                    ast::Item::Model(d) => Decl::Model(d),
                    ast::Item::Sources(d) => Decl::Sources(d),
                    ast::Item::Stage(d) => Decl::Stage(d),
                    ast::Item::Tool(d) => Decl::Tool(d),
                    ast::Item::Template(d) => Decl::Template(d),
                    ast::Item::Ruleset(d) => Decl::Ruleset(d),
                    _ => continue,
                };
                let name = decl.name();
                let key = format!("{prefix}{}", name.node);
                if let Some(prev) = self.names.get(&key) {
                    let prev_name = prev.decl.name().span;
                    let noun = decl.kind().noun();
                    let d = if prev.file == m.file {
                        Diagnostic::new(
                            Code::DuplicateName,
                            format!("`{}` is declared twice", name.node),
                        )
                        .in_file(m.file)
                        .label(name.span, format!("this {noun}"))
                        .label(
                            prev_name,
                            format!("the {} declared first", prev.decl.kind().noun()),
                        )
                        .help("every pool, model, source, stage, tool and template needs its own name; rename one")
                    } else {
                        // Shown at the declaration in the file nearer the one being checked
                        // (the user's own), with the imported one as a note: the fix belongs
                        // in the user's file, not in a file other workflows share.
                        let shared = self.sources.get(m.file).name.clone();
                        Diagnostic::new(
                            Code::DuplicateName,
                            format!("`{}` is already declared in {shared}", name.node),
                        )
                        .in_file(prev.file)
                        .label(prev_name, format!("this {} has the same name", prev.decl.kind().noun()))
                        .note(m.file, name.span, format!("{shared} declares the {noun} `{}` here", name.node))
                        .help(format!(
                            "remove this declaration to use the one from {shared}, or give it another name here; {shared} is shared, so leave it unchanged"
                        ))
                    };
                    self.diags.push(d);
                    continue;
                }
                self.names.insert(
                    key,
                    Entry {
                        decl,
                        file: m.file,
                        module: mi,
                    },
                );
            }
        }
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

    fn unknown(&mut self, name: &ast::Name, file: FileId, want: &[Kind]) {
        let wanted: Vec<&str> = want.iter().map(|k| k.noun()).collect();
        let what = wanted.join(" or ");
        {
            {
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
        }
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

    /// The folder relative paths in `file` resolve against, for files on disk.
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
