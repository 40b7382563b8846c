//! Prompt templates: finding them, parsing them with handlebars, and checking that every
//! variable a template uses is one its stage provides.
//!
//! One concept just over 600 lines: the walk over a handlebars template and the variables its
//! stage provides are one check, with its tests at the end.

use std::collections::{BTreeMap, BTreeSet};

use camino::Utf8Path;
use handlebars::template::{Parameter, Template, TemplateElement};

use super::context::{Analysis, Cx, Decl, Kind, Use};
use super::load::Origin;
use super::stdlib;
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::plan::workflow::{FieldType, Prompt};
use crate::suggest::did_you_mean;
use crate::syntax::{ast, with_pest};

/// What a stage gives its template, beyond the variables every stage has.
pub(crate) struct Provided {
    /// Sources (and evidence tools) the stage reads: gives `evidence` and `sources.NAME`.
    pub evidence: Vec<String>,
    /// Earlier stages it reads, with their answer's fields when they declare `returns`.
    pub stages: BTreeMap<String, Option<Vec<FieldType>>>,
    /// The stage a reviewer revises: gives `reviewed`.
    pub reviewed: Option<String>,
    /// The stage declares `returns`: gives `schema`.
    pub schema: bool,
}

/// Variables every stage's template can use, with their fields.
const ALWAYS: &[(&str, &[&str])] = &[
    ("workflow", &["name", "description"]),
    ("matter", &["name", "dir"]),
    ("stage", &["name"]),
    ("revision", &["round", "feedback"]),
    ("inputs", &[]),
];

const HELPERS: &[&str] = &[
    "if", "unless", "each", "with", "lookup", "log", "eq", "ne", "gt", "gte", "lt", "lte", "and",
    "or", "not", "len", "raw",
];

/// Where a template's text lives, so positions in it can be shown.
#[derive(Clone, Copy)]
struct At {
    file: FileId,
    /// Byte offset of the template's first character in that file.
    offset: usize,
    /// The whole template, for when a position cannot be mapped.
    whole: Span,
}

pub(crate) fn resolve(
    cx: &mut Cx,
    module: usize,
    file: FileId,
    p: &ast::Prompt,
    provided: &Provided,
    stage: &str,
) -> Option<Prompt> {
    let (origin, raw, at) = locate(cx, module, file, p)?;
    // A template embedded in lexrun (the stdlib) is not a file the user has: its problems
    // are shown at the user's `prompt` line, with the template's line as a note.
    let embedded = at.file != file && cx.sources.get(at.file).name.starts_with("std/");
    let prompt_span = match p {
        ast::Prompt::Inline(s) | ast::Prompt::File(s) | ast::Prompt::Named(s) => s.span,
    };
    let place = |cx: &Cx, d: Diagnostic, span: Span, label: &str| {
        if embedded {
            let name = cx.sources.get(at.file).name.clone();
            d.in_file(file)
                .label(prompt_span, format!("this template {label}"))
                .note(at.file, span, format!("in {name}, which lexrun ships"))
        } else {
            d.in_file(at.file).label(span, label.to_string())
        }
    };
    let uses = match analyse(cx, &raw) {
        Analysis::Uses(uses) => uses,
        Analysis::Broken { reason, pos } => {
            let d = match super::template_syntax::explain(&raw) {
                Some(m) => {
                    let span = Span::new(at.offset + m.start, at.offset + m.end);
                    let d = Diagnostic::new(
                        Code::TemplateSyntax,
                        format!("in the prompt of `{stage}`: {}", m.message),
                    )
                    .help(m.help);
                    place(cx, d, span, "does not parse")
                }
                None => {
                    let span = pos.map_or(at.whole, |(l, c)| {
                        let o = offset_of(&raw, l, c);
                        Span::new(at.offset + o, at.offset + o + 1)
                    });
                    // Handlebars' reason may be a list of grammar rules; keep its first words.
                    let reason = reason
                        .split(['\n', '-'])
                        .next()
                        .unwrap_or("")
                        .trim()
                        .to_string();
                    let d = Diagnostic::new(
                        Code::TemplateSyntax,
                        format!("the prompt template of `{stage}` does not parse: {reason}"),
                    )
                    .help("check that every `{{#if}}`/`{{#each}}` has its `{{/if}}`/`{{/each}}` and every `{{` its `}}`");
                    place(cx, d, span, "does not parse here")
                }
            };
            cx.error(d);
            return None;
        }
    };
    let mut ok = true;
    for (path, pos, top) in uses {
        if let Some(problem) = check_path(&path, top, provided, stage) {
            ok = false;
            let span = pos.map_or(at.whole, |(l, c)| {
                let o = offset_of(&raw, l, c);
                let end = raw[o..].find("}}").map_or(o + 1, |e| o + e + 2);
                Span::new(at.offset + o, at.offset + end)
            });
            let label = if embedded {
                format!("uses `{}`", path.trim_start_matches("#helper:"))
            } else {
                "used here".to_string()
            };
            let d = Diagnostic::new(Code::TemplateVariable, problem.0).help(problem.1);
            cx.error(place(cx, d, span, &label));
        }
    }
    if ok && !provided.evidence.is_empty() && !places_evidence(&uses_of(cx, &raw)) {
        let reads = provided
            .evidence
            .iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let first = &provided.evidence[0];
        cx.error(
            Diagnostic::new(
                Code::EvidenceNotPlaced,
                format!("stage `{stage}` reads {reads}, but its prompt never places the evidence: the model would not see the sources"),
            )
            .in_file(file)
            .label(prompt_span, "no `{{evidence}}` in this prompt")
            .help(format!("put `{{{{evidence}}}}` at the top of the prompt (the packet of every source the stage reads, with file, page and Bates headers), or `{{{{sources.{first}}}}}` for one source")),
        );
    }
    let text = match p {
        ast::Prompt::Inline(_) => crate::syntax::dedent(&raw),
        _ => raw,
    };
    ok.then_some(Prompt { origin, text })
}

/// The variables a template already analysed uses.
fn uses_of(cx: &mut Cx, raw: &str) -> Vec<Use> {
    match analyse(cx, raw) {
        Analysis::Uses(u) => u,
        Analysis::Broken { .. } => Vec::new(),
    }
}

/// Whether a template's variables place the evidence: `evidence`, or any `sources.NAME`.
fn places_evidence(uses: &[Use]) -> bool {
    uses.iter().any(|(p, _, _)| {
        let p = p.trim_start_matches("@root.");
        p == "evidence" || p == "sources" || p.starts_with("sources.")
    })
}

/// Parses a template once per distinct text: a stdlib template used by a hundred stages is
/// compiled once.
fn analyse(cx: &mut Cx, raw: &str) -> Analysis {
    if let Some(a) = cx.templates.get(raw) {
        return a.clone();
    }
    if let Some(uses) = scan_simple(raw) {
        cx.templates
            .insert(raw.to_string(), Analysis::Uses(uses.clone()));
        return Analysis::Uses(uses);
    }
    let a = match with_pest(false, || Template::compile(raw)) {
        Ok(t) => {
            let mut uses = Vec::new();
            walk(&t, true, &mut uses);
            Analysis::Uses(uses)
        }
        Err(e) => Analysis::Broken {
            reason: e.reason().to_string(),
            pos: e.pos(),
        },
    };
    cx.templates.insert(raw.to_string(), a.clone());
    a
}

/// The variables of a template written in the plain subset most prompts use — `{{path}}`,
/// `{{#if|unless|each|with path}}…{{else}}…{{/…}}` and comments — found without the full
/// handlebars parser, which costs ~30 µs a template. `None` for anything outside the subset,
/// including every malformed template, which handlebars then parses and reports.
fn scan_simple(raw: &str) -> Option<Vec<Use>> {
    let mut uses = Vec::new();
    // Open blocks: (helper, changes the context).
    let mut open: Vec<(&str, bool)> = Vec::new();
    let mut line = 1;
    let mut line_start = 0;
    let mut i = 0;
    let bytes = raw.as_bytes();
    while let Some(rel) = raw[i..].find("{{") {
        let at = i + rel;
        for (j, b) in bytes[i..at].iter().enumerate() {
            if *b == b'\n' {
                line += 1;
                line_start = i + j + 1;
            }
        }
        if at > 0 && bytes[at - 1] == b'\\' {
            return None;
        }
        let end = at + raw[at..].find("}}")?;
        let inner = &raw[at + 2..end];
        if inner.contains('\n') {
            return None;
        }
        let pos = Some((line, raw[line_start..at].chars().count() + 1));
        let top = open.iter().all(|(_, ctx)| !ctx);
        let is_path = |p: &str| {
            !p.is_empty()
                && p.split('.').all(|seg| {
                    !seg.is_empty()
                        && seg
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@')
                })
        };
        if let Some(comment) = inner.strip_prefix('!') {
            if comment.starts_with("--") && !comment.ends_with("--") {
                return None;
            }
        } else if let Some(block) = inner.strip_prefix('#') {
            let mut words = block.split_whitespace();
            let helper = words.next()?;
            let arg = words.next()?;
            if words.next().is_some() || !is_path(arg) {
                return None;
            }
            let helper: &'static str = match helper {
                "if" => "if",
                "unless" => "unless",
                "each" => "each",
                "with" => "with",
                _ => return None,
            };
            uses.push((arg.to_string(), pos, top));
            open.push((helper, matches!(helper, "each" | "with")));
        } else if let Some(close) = inner.strip_prefix('/') {
            let (helper, _) = open.pop()?;
            if close.trim() != helper {
                return None;
            }
        } else if inner.trim() == "else" {
            if open.is_empty() {
                return None;
            }
        } else {
            let path = inner.trim();
            if !is_path(path)
                || path.starts_with('@')
                    && !path.starts_with("@root.")
                    && !matches!(path, "@index" | "@key" | "@first" | "@last")
            {
                return None;
            }
            uses.push((path.to_string(), pos, top));
        }
        i = end + 2;
    }
    (open.is_empty() && !raw[i..].contains("}}")).then_some(uses)
}

/// Finds the template's text; named templates resolve through their declaration.
fn locate(
    cx: &mut Cx,
    module: usize,
    file: FileId,
    p: &ast::Prompt,
) -> Option<(String, String, At)> {
    // One word that is a file beside the workflow is that file, whatever its extension.
    if let (ast::Prompt::Inline(t), Origin::Disk { dir }) = (p, cx.dir_of(module).clone()) {
        let w = &t.node;
        if !w.is_empty()
            && !w.contains(char::is_whitespace)
            && !w.contains("{{")
            && dir.join(w).exists()
        {
            return locate(cx, module, file, &ast::Prompt::File(t.clone()));
        }
    }
    match p {
        ast::Prompt::Inline(t) => Some((
            "inline".to_string(),
            t.node.clone(),
            At {
                file,
                offset: t.span.start,
                whole: t.span,
            },
        )),
        ast::Prompt::File(path) => {
            let (display, text) = match cx.dir_of(module).clone() {
                Origin::Disk { dir } => read_template(cx, file, &dir, path)?,
                Origin::Std { .. } => match stdlib::file(&path.node) {
                    Some(t) => (format!("std/{}", path.node), t.to_string()),
                    None => {
                        cx.error(
                            Diagnostic::new(
                                Code::TemplateNotFound,
                                format!("the stdlib has no template `{}`", path.node),
                            )
                            .in_file(file)
                            .label(path.span, ""),
                        );
                        return None;
                    }
                },
            };
            let id = template_file(cx, &display, &text);
            let len = text.len();
            Some((
                path.node.clone(),
                text,
                At {
                    file: id,
                    offset: 0,
                    whole: Span::new(0, len.min(1)),
                },
            ))
        }
        ast::Prompt::Named(name) => {
            let entry = cx.lookup(name, file, &[Kind::Template])?;
            let Decl::Template(t) = entry.decl else {
                return None;
            };
            let (origin, text, at) = locate(cx, entry.module, entry.file, &t.body)?;
            let origin = if origin == "inline" {
                name.node.clone()
            } else {
                format!("{} ({origin})", name.node)
            };
            Some((origin, text, at))
        }
    }
}

/// A template file on disk, read from inside the workflow library as UTF-8 text: its full
/// path and its text.
fn read_template(
    cx: &mut Cx,
    file: FileId,
    dir: &Utf8Path,
    path: &ast::Spanned<String>,
) -> Option<(String, String)> {
    let full = dir.join(&path.node);
    // A template is part of the workflow: it is read only from inside the workflow library,
    // whether by `..`, an absolute path or a symbolic link.
    let escape = cx
        .library
        .as_ref()
        .and_then(|l| l.admit(dir.as_std_path(), &path.node, "the template").err());
    if let Some(why) = escape {
        cx.error(
            Diagnostic::new(Code::TemplateOutside, why)
            .in_file(file)
            .label(path.span, "outside the workflow library")
            .help("move the template into the library (e.g. a `prompts/` folder beside the workflows), or mark the folder that holds both with an empty `lexrun.toml`"),
        );
        return None;
    }
    if full.is_dir() {
        cx.error_at(
            Code::TemplateUnreadable,
            file,
            path.span,
            format!(
                "the prompt `{}` is a folder, not a template file",
                path.node
            ),
            format!(
                "name the template file inside it (e.g. `{}/letter.md`)",
                path.node.trim_end_matches('/')
            ),
        );
        return None;
    }
    match std::fs::read(&full) {
        Ok(bytes) if bytes.contains(&0) => {
            cx.error_at(
                Code::TemplateUnreadable,
                file,
                path.span,
                format!("the prompt `{}` is a binary file, not a text template", path.node),
                "a prompt is a text file (`.md`, `.txt` or `.hbs`) of the instructions, with `{{evidence}}` where the sources go",
            );
            None
        }
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => Some((full.to_string(), t)),
            Err(_) => {
                cx.error_at(
                    Code::InvalidUtf8,
                    file,
                    path.span,
                    format!("template `{}` is not UTF-8 text", path.node),
                    "save the template as UTF-8",
                );
                None
            }
        },
        Err(e) => {
            cx.error(
                Diagnostic::new(
                    Code::TemplateNotFound,
                    format!("cannot read template `{}`: {e}", path.node),
                )
                .in_file(file)
                .label(path.span, format!("looked for {full}"))
                .help("a quoted prompt that names a file (a path, or a name ending in .md, .txt or .hbs) is read from that file, relative to the .lex file that names it; create it, fix the path, or write the prompt's text in `\"\"\"`"),
            );
            None
        }
    }
}

/// Adds a template file to the source map once, so diagnostics can point into it.
fn template_file(cx: &mut Cx, name: &str, text: &str) -> FileId {
    for id in 0..cx.sources.len() {
        if cx.sources.get(id).name == name {
            return id;
        }
    }
    cx.sources.add(name, text)
}

/// Byte offset of a 1-based line and column.
fn offset_of(text: &str, line: usize, col: usize) -> usize {
    let mut off = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let col_bytes: usize = l
                .chars()
                .take(col.saturating_sub(1))
                .map(char::len_utf8)
                .sum();
            return (off + col_bytes).min(text.len());
        }
        off += l.len();
    }
    text.len()
}

/// Collects every variable path a template uses, with its position and whether it is
/// resolved against the stage's own variables (`top`) or inside `#each`/`#with`.
fn walk(t: &Template, top: bool, out: &mut Vec<Use>) {
    for (i, el) in t.elements.iter().enumerate() {
        let pos = t.mapping.get(i).map(|m| (m.0, m.1));
        match el {
            TemplateElement::Expression(h)
            | TemplateElement::HtmlExpression(h)
            | TemplateElement::HelperBlock(h) => {
                let is_block = matches!(el, TemplateElement::HelperBlock(_));
                let has_args = !h.params.is_empty() || !h.hash.is_empty();
                if is_block || has_args {
                    if let Some(n) = h.name.as_name() {
                        if !HELPERS.contains(&n) {
                            out.push((format!("#helper:{n}"), pos, top));
                        }
                    }
                    for p in h.params.iter().chain(h.hash.values()) {
                        param(p, pos, top, out);
                    }
                } else {
                    param(&h.name, pos, top, out);
                }
                let changes_context = is_block && matches!(h.name.as_name(), Some("each" | "with"));
                if let Some(inner) = &h.template {
                    walk(inner, top && !changes_context, out);
                }
                if let Some(inv) = &h.inverse {
                    walk(inv, top, out);
                }
            }
            TemplateElement::PartialExpression(_) | TemplateElement::PartialBlock(_) => {
                out.push(("#partial".to_string(), pos, top));
            }
            _ => {}
        }
    }
}

fn param(p: &Parameter, pos: Option<(usize, usize)>, top: bool, out: &mut Vec<Use>) {
    match p {
        Parameter::Name(_) | Parameter::Path(_) => {
            if let Some(n) = p.as_name() {
                out.push((n.to_string(), pos, top));
            }
        }
        Parameter::Subexpression(s) => {
            if let Some(params) = s.params() {
                for q in params {
                    param(q, pos, top, out);
                }
            }
        }
        _ => {}
    }
}

/// `Some((message, help))` when the stage does not provide `path`.
fn check_path(path: &str, top: bool, provided: &Provided, stage: &str) -> Option<(String, String)> {
    if let Some(name) = path.strip_prefix("#helper:") {
        return Some((
            format!("the prompt of `{stage}` calls `{name}`, which is not a template helper"),
            format!("helpers: {}", HELPERS.join(", ")),
        ));
    }
    if path == "#partial" {
        return Some((
            format!("the prompt of `{stage}` uses a partial (`{{{{> …}}}}`), which lexrun templates do not support"),
            "put the shared text in a template of its own and use that".to_string(),
        ));
    }
    let rooted = path
        .strip_prefix("@root.")
        .or_else(|| path.strip_prefix("@root/"));
    let top = top || rooted.is_some();
    let path = rooted.unwrap_or(path);
    if path.starts_with('@') || path.starts_with("../") || path == "this" || path == "." {
        return None;
    }
    let path = path
        .strip_prefix("this.")
        .or_else(|| path.strip_prefix("this/"))
        .unwrap_or(path);
    if !top && !path.is_empty() {
        // Inside `#each`/`#with` names refer to the item; they cannot be checked here.
        return None;
    }
    let mut segs = path.split(['.', '/']).filter(|s| !s.is_empty());
    let head = segs.next()?;
    let next = segs.next();

    let known = known_names(provided);
    if let Some((_, fields)) = ALWAYS.iter().find(|(n, _)| *n == head) {
        // The matter's own record adds its fields to `matter`.
        let record = match head {
            "matter" => crate::plan::workflow::MATTER_RECORD_FIELDS,
            _ => &[],
        };
        return match next {
            Some(f) if !fields.is_empty() && !fields.contains(&f) && !record.contains(&f) => {
                let has: Vec<&str> = fields.iter().chain(record).copied().collect();
                Some((
                    format!("`{head}` has no `{f}` (in the prompt of `{stage}`)"),
                    match head {
                        "matter" => format!("`matter` has: {} (all but `name` and `dir` from the matter's `matter.toml` or `matter.json`)", has.join(", ")),
                        _ => format!("`{head}` has: {}", has.join(", ")),
                    },
                ))
            }
            _ => None,
        };
    }
    if known.contains(head) {
        return known_use(head, next, provided, stage);
    }
    Some(not_provided(head, &known, stage))
}

/// The names a stage's prompt can use: those every prompt has, and what the stage provides.
fn known_names(provided: &Provided) -> BTreeSet<String> {
    let mut known: BTreeSet<String> = ALWAYS.iter().map(|(n, _)| n.to_string()).collect();
    if !provided.evidence.is_empty() {
        known.insert("evidence".into());
        known.insert("sources".into());
    }
    if provided.reviewed.is_some() {
        known.insert("reviewed".into());
    }
    if provided.schema {
        known.insert("schema".into());
    }
    known.extend(provided.stages.keys().cloned());
    known
}

/// A use of a name the stage provides: sources it reads, and fields its stages return.
fn known_use(
    head: &str,
    next: Option<&str>,
    provided: &Provided,
    stage: &str,
) -> Option<(String, String)> {
    if head == "sources" {
        if let Some(s) = next.filter(|s| !provided.evidence.iter().any(|e| e == s)) {
            return Some((
                format!("`{stage}` does not read sources `{s}`"),
                format!(
                    "it reads {}; add `{s}` to its `reads`",
                    provided.evidence.join(", ")
                ),
            ));
        }
    }
    if let (Some(fields), Some(f)) = (provided.stages.get(head), next) {
        return match fields {
            None => Some((
                format!("`{head}` is text and has no field `{f}` (in the prompt of `{stage}`)"),
                format!("use `{{{{{head}}}}}` for its output, or declare `returns` on `{head}`"),
            )),
            Some(fields) if !fields.iter().any(|x| x.name == f) => Some((
                format!("`{head}` returns no field `{f}` (in the prompt of `{stage}`)"),
                format!(
                    "`{head}` returns: {}",
                    fields
                        .iter()
                        .map(|x| x.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            Some(_) => None,
        };
    }
    None
}

/// Why a name the stage does not provide cannot be used, and what to do: `(message, help)`.
fn not_provided(head: &str, known: &BTreeSet<String>, stage: &str) -> (String, String) {
    match head {
        "evidence" | "sources" => (
            format!("the prompt of `{stage}` uses `{head}`, but `{stage}` reads no sources"),
            format!("add `reads SOURCES` to `{stage}`, naming the evidence the model must see"),
        ),
        "reviewed" => (
            format!("the prompt of `{stage}` uses `reviewed`, which only a reviewer stage has"),
            format!("give `{stage}` a `revise STAGE until …` line, or use a template meant for drafting"),
        ),
        "schema" => (
            format!("the prompt of `{stage}` uses `schema`, but `{stage}` declares no `returns`"),
            format!("declare the answer `{stage}` must give: `returns {{ … }}`"),
        ),
        other => {
            let candidates: Vec<&str> = known.iter().map(String::as_str).collect();
            let msg = format!("the prompt of `{stage}` uses `{other}`, which `{stage}` does not provide");
            let help = match did_you_mean(other, candidates.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!(
                    "if `{other}` is an earlier stage, add it to `reads` (and `after`); available here: {}",
                    candidates.join(", ")
                ),
            };
            (msg, help)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provided() -> Provided {
        Provided {
            evidence: vec!["client".into()],
            stages: BTreeMap::from([("draft".to_string(), None)]),
            reviewed: None,
            schema: false,
        }
    }

    #[test]
    fn accepts_provided_and_rejects_missing() {
        let p = provided();
        assert!(check_path("evidence", true, &p, "s").is_none());
        assert!(check_path("draft", true, &p, "s").is_none());
        assert!(check_path("matter.name", true, &p, "s").is_none());
        assert!(check_path("gate", true, &p, "s").is_some());
        assert!(check_path("schema", true, &p, "s").is_some());
        assert!(check_path("draft.reason", true, &p, "s").is_some());
        assert!(check_path("matter.nmae", true, &p, "s").is_some());
        // Inside #each the item's fields are not checked.
        assert!(check_path("name", false, &p, "s").is_none());
        assert!(check_path("@root.gate", false, &p, "s").is_some());
    }

    #[test]
    fn the_matters_record_gives_its_fields_and_a_typo_lists_them() {
        let p = provided();
        for ok in [
            "matter.client",
            "matter.addressee",
            "matter.case_number",
            "matter.name",
        ] {
            assert!(check_path(ok, true, &p, "s").is_none(), "{ok}");
        }
        let (msg, help) = check_path("matter.clinet", true, &p, "s").unwrap();
        assert!(msg.contains("`matter` has no `clinet`"), "{msg}");
        assert!(
            help.contains("client") && help.contains("matter.toml"),
            "{help}"
        );
    }

    #[test]
    fn walks_nested_blocks() {
        let t = Template::compile(
            "{{a}}{{#if b}}{{c}}{{/if}}{{#each d}}{{this.e}}{{@root.f}}{{/each}}",
        )
        .unwrap();
        let mut uses = Vec::new();
        walk(&t, true, &mut uses);
        let names: Vec<(&str, bool)> = uses.iter().map(|(n, _, top)| (n.as_str(), *top)).collect();
        assert_eq!(
            names,
            vec![
                ("a", true),
                ("b", true),
                ("c", true),
                ("d", true),
                ("this.e", false),
                ("@root.f", false)
            ]
        );
    }

    #[test]
    fn the_fast_scan_agrees_with_handlebars() {
        let cases = [
            "{{evidence}}\nDraft for {{matter.name}}.",
            "{{#if revision.feedback}}\n  {{revision.feedback}}\n{{else}}none{{/if}}",
            "{{#each inputs}}{{this.name}}: {{this.text}}{{@index}}{{/each}}\n{{schema}}",
            "{{!-- a comment --}}{{! short }}{{#with matter}}{{name}}{{/with}}",
            "é {{a}}\n  ü {{b.c}}",
        ];
        for raw in cases {
            let fast = scan_simple(raw).expect(raw);
            let mut slow = Vec::new();
            walk(&Template::compile(raw).unwrap(), true, &mut slow);
            assert_eq!(fast, slow, "{raw}");
        }
        // Outside the subset, or malformed: left to handlebars.
        for raw in [
            "{{#if a}}x",
            "{{/if}}",
            "{{a b}}",
            "{{{raw}}}",
            "{{> partial}}",
            "{{#if a}}{{/each}}",
            "\\{{a}}",
            "{{a",
            "}}",
        ] {
            assert!(scan_simple(raw).is_none(), "{raw}");
        }
    }

    #[test]
    fn offsets_are_one_based() {
        assert_eq!(offset_of("ab\ncd", 2, 2), 4);
        assert_eq!(offset_of("ab", 9, 9), 2);
    }
}
