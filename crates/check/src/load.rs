//! Reading the entry file and everything it `use`s, with cycle detection.

use camino::{Utf8Path, Utf8PathBuf};

use super::stdlib;
use crate::confine::Library;
use crate::diagnostic::{Code, Diagnostic, FileId, SourceMap, Span};
use crate::suggest::did_you_mean;
use crate::syntax::{self, ast};

/// What an editor has open: the text of a file that is read in place of the file on disk
/// (an unsaved edit to an imported file), by the file's path.
pub type Overlay<'a> = &'a dyn Fn(&Utf8Path) -> Option<Vec<u8>>;

/// Where relative paths in a module resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A file on disk; paths resolve against its folder.
    Disk { dir: Utf8PathBuf },
    /// A stdlib module; paths resolve inside the embedded `stdlib/`.
    Std { module: String },
}

#[derive(Debug)]
pub struct Module {
    pub file: FileId,
    pub ast: ast::File,
    pub origin: Origin,
}

/// Loads the entry file, given as its bytes, and its imports, which are read relative to it
/// and must lie inside the entry's workflow library (returned with the modules).
pub fn load(
    entry: &Utf8Path,
    bytes: Vec<u8>,
    open: Overlay,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
    reuse: Option<&mut syntax::Reuse>,
) -> (Vec<Module>, Library) {
    let dir = entry
        .parent()
        .map(Utf8Path::to_path_buf)
        .unwrap_or_default();
    let library = Library::of(dir.as_std_path());
    let mut loader = Loader {
        sources,
        diags,
        modules: Vec::new(),
        stack: Vec::new(),
        seen: Vec::new(),
        library,
        open,
        reuse,
    };
    let key = canonical(entry);
    loader.stack.push((key.clone(), entry.to_string()));
    loader.seen.push(key);
    loader.add(entry.as_str().to_string(), bytes, Origin::Disk { dir });
    (loader.modules, loader.library)
}

fn canonical(p: &Utf8Path) -> String {
    std::fs::canonicalize(p)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| p.to_string())
}

struct Loader<'a> {
    sources: &'a mut SourceMap,
    diags: &'a mut Vec<Diagnostic>,
    modules: Vec<Module>,
    /// Files being loaded, outermost first, to detect cycles: (canonical key, name shown).
    stack: Vec<(String, String)>,
    seen: Vec<String>,
    library: Library,
    /// Files open in an editor, read in place of the disk.
    open: Overlay<'a>,
    /// Declarations parsed by an earlier check, for an editor checking on every edit.
    reuse: Option<&'a mut syntax::Reuse>,
}

impl Loader<'_> {
    fn add(&mut self, name: String, bytes: Vec<u8>, origin: Origin) {
        let (text, bad_at) = match syntax::decode(&bytes) {
            Ok(t) => (t.to_string(), None),
            Err((lossy, at)) => (lossy, Some(at)),
        };
        let file = self.sources.add(name, text);
        if let Some(at) = bad_at {
            let text = &self.sources.get(file).text;
            let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
            self.diags.push(
                Diagnostic::new(Code::InvalidUtf8, "this file is not valid UTF-8 text")
                    .in_file(file)
                    .label(Span::new(at, end), "first invalid byte")
                    .help("save the file as UTF-8 (most editors offer this under \"Save with encoding\")"),
            );
            return;
        }
        let text = &self.sources.get(file).text;
        let parsed = match self.reuse.as_deref_mut() {
            Some(r) => syntax::parse_reusing(text, file, r),
            None => syntax::parse(text, file),
        };
        self.diags.extend(parsed.diagnostics);
        let uses: Vec<ast::UseDecl> = parsed
            .file
            .items
            .iter()
            .filter_map(|i| match i {
                ast::Item::Use(u) => Some(u.clone()),
                _ => None,
            })
            .collect();
        self.modules.push(Module {
            file,
            ast: parsed.file,
            origin: origin.clone(),
        });
        for u in uses {
            self.import(file, &origin, &u);
        }
    }

    /// One `use`: a stdlib module, or a file when the importing file is on disk.
    fn import(&mut self, from: FileId, origin: &Origin, u: &ast::UseDecl) {
        match (&u.target, origin) {
            (ast::UseTarget::Module(m), _) => self.import_module(from, m),
            (ast::UseTarget::File(p), Origin::Disk { dir }) => self.import_file(from, dir, p),
            (ast::UseTarget::File(p), Origin::Std { .. }) => {
                self.diags.push(
                    Diagnostic::new(Code::ImportNotFound, "stdlib modules cannot import files")
                        .in_file(from)
                        .label(p.span, ""),
                );
            }
        }
    }

    /// `use std.MODULE`: a stdlib module, loaded once.
    fn import_module(&mut self, from: FileId, m: &ast::Name) {
        let Some(path) = stdlib::module_path(&m.node) else {
            let modules: Vec<String> = stdlib::modules().collect();
            let mut d = Diagnostic::new(
                Code::ImportNotFound,
                format!("there is no stdlib module `{}`", m.node),
            )
            .in_file(from)
            .label(m.span, "unknown module");
            d = match did_you_mean(&m.node, modules.iter().map(String::as_str)) {
                Some(s) => d.help(format!("did you mean `{s}`?")),
                None => d.help(format!(
                    "the stdlib has: {}; to use a file, quote its path: `use \"common.lex\"`",
                    modules.join(", ")
                )),
            };
            self.diags.push(d);
            return;
        };
        let key = format!("std:{path}");
        if self.seen.contains(&key) {
            return;
        }
        self.seen.push(key);
        let text = stdlib::file(&path).unwrap_or_default();
        self.add(
            format!("std/{path}"),
            text.as_bytes().to_vec(),
            Origin::Std {
                module: m.node.clone(),
            },
        );
    }

    /// `use "FILE"`: a file inside the workflow library, relative to the importing file,
    /// loaded once; a file that imports itself through others is a cycle.
    fn import_file(&mut self, from: FileId, dir: &Utf8Path, p: &ast::Spanned<String>) {
        let path = dir.join(&p.node);
        let edited = (self.open)(&path);
        if let Err(why) = self.library.admit(dir.as_std_path(), &p.node, "the import") {
            self.diags.push(
                Diagnostic::new(Code::ImportOutside, why)
                    .in_file(from)
                    .label(p.span, "outside the workflow library")
                    .help("move the file into the library, or mark the folder that holds both with an empty `lexrun.toml`"),
            );
            return;
        }
        if edited.is_none() && !path.is_file() {
            self.diags.push(
                Diagnostic::new(
                    Code::ImportNotFound,
                    format!("cannot find `{}` to import", p.node),
                )
                .in_file(from)
                .label(p.span, format!("looked for {path}"))
                .help("paths in `use` are relative to the file that contains the `use`"),
            );
            return;
        }
        let key = canonical(&path);
        if let Some(pos) = self.stack.iter().position(|s| s.0 == key) {
            let chain: Vec<&str> = self.stack[pos..].iter().map(|s| s.1.as_str()).collect();
            self.diags.push(
                Diagnostic::new(
                    Code::ImportCycle,
                    "these files import each other in a circle",
                )
                .in_file(from)
                .label(p.span, "this import closes the circle")
                .help(format!(
                    "the circle: {} → back to the start; move what both need into a third file",
                    chain.join(" → ")
                )),
            );
            return;
        }
        if self.seen.contains(&key) {
            return;
        }
        let read = match edited {
            Some(b) => Ok(b),
            None => std::fs::read(&path),
        };
        let bytes = match read {
            Ok(b) => b,
            Err(e) => {
                self.diags.push(
                    Diagnostic::new(Code::UnreadableFile, format!("cannot read `{path}`: {e}"))
                        .in_file(from)
                        .label(p.span, "imported here")
                        .help("check the file's permissions"),
                );
                return;
            }
        };
        self.seen.push(key.clone());
        self.stack.push((key, path.to_string()));
        let child_dir = path.parent().map(Utf8Path::to_path_buf).unwrap_or_default();
        self.add(path.to_string(), bytes, Origin::Disk { dir: child_dir });
        self.stack.pop();
    }
}

/// The files under `paths` whose names end with `suffix` (`.lex`, `.test.lex`): files as
/// given, folders searched (hidden folders, `target` and `out` skipped), sorted. With
/// `keep_unreadable`, a path that is neither a readable folder nor a file is kept, so that
/// reading it reports the problem; otherwise it is passed over.
pub fn discover(
    paths: &[std::path::PathBuf],
    suffix: &str,
    keep_unreadable: bool,
) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack: Vec<std::path::PathBuf> = paths.to_vec();
    while let Some(p) = stack.pop() {
        if p.is_file() || (keep_unreadable && !p.is_dir()) {
            out.push(p);
            continue;
        }
        let Ok(rd) = std::fs::read_dir(&p) else {
            if keep_unreadable {
                out.push(p);
            }
            continue;
        };
        for e in rd.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "out" {
                    stack.push(path);
                }
            } else if name.ends_with(suffix) {
                out.push(path);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}
