//! `output`s: the files a run writes, their formats and appendices, and what they come from.

use super::context::{Cx, Kind};
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::plan::workflow::{Output, Step, StepKind, Verify, LAYOUTS};
use crate::syntax::ast;

pub(crate) const FORMATS: &[&str] = &["md", "txt", "json", "docx", "pdf"];

/// Every `output`, in file order; the outputs that checked.
pub(crate) fn outputs(cx: &mut Cx, steps: &[Step], verify: &[Verify]) -> Vec<Output> {
    let decls: Vec<(FileId, &ast::OutputDecl)> = cx
        .modules
        .iter()
        .flat_map(|m| {
            m.ast.items.iter().filter_map(move |i| match i {
                ast::Item::Output(o) => Some((m.file, o)),
                _ => None,
            })
        })
        .collect();
    let mut out: Vec<(Output, Span)> = Vec::new();
    for (f, o) in decls {
        let path = &o.path.node;
        let mut ok = cx.lookup(&o.from, f, &[Kind::Stage, Kind::Tool]).is_some();
        let ext = path
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        ok &= path_usable(cx, f, o, &ext, &out);
        let (appendix, appendix_ok) = appendix(cx, f, o, steps, verify);
        ok &= appendix_ok;
        if let Some(s) = steps.iter().find(|s| s.name == o.from.node) {
            if let StepKind::Tool(t) = &s.kind {
                if ext != "pdf" && matches!(t.tool.as_str(), "bates" | "merge") {
                    cx.error_at(
                        Code::BadOutput,
                        f,
                        o.path.span,
                        format!("`{}` produces PDF files", o.from.node),
                        "write it to a `.pdf` path",
                    );
                    ok = false;
                }
            }
        }
        let (layout, layout_ok) = layout(cx, f, o, &ext);
        ok &= layout_ok;
        if ok {
            unverified_document(cx, f, o, &ext, steps, verify);
            out.push((
                Output {
                    path: path.clone(),
                    from: o.from.node.clone(),
                    format: ext,
                    appendix,
                    layout,
                    unverified: o.unverified,
                },
                o.path.span,
            ));
        }
    }
    out.into_iter().map(|(o, _)| o).collect()
}

/// A document (DOCX, PDF, Markdown) of a model stage's text that no `verify` block checks
/// is a warning unless the output says `unverified`: whatever the model invented would leave
/// the run unchecked. (A `verify` block with errors is reported already; it covers its stage.)
fn unverified_document(
    cx: &mut Cx,
    f: FileId,
    o: &ast::OutputDecl,
    ext: &str,
    steps: &[Step],
    verify: &[Verify],
) {
    let stage = &o.from.node;
    let model = steps
        .iter()
        .any(|s| &s.name == stage && matches!(s.kind, StepKind::Model(_)));
    // An appendix of an unverified stage is an error of its own (E080).
    if o.unverified || o.appendix.is_some() || !model || !matches!(ext, "docx" | "pdf" | "md") {
        return;
    }
    let unread = format!("verify {stage}");
    let covered = verify.iter().any(|v| &v.stage == stage)
        || cx.modules.iter().any(|m| {
            m.ast.broken.contains(&unread)
                || m.ast
                    .items
                    .iter()
                    .any(|i| matches!(i, ast::Item::Verify(v) if &v.target.node == stage))
        });
    if covered {
        return;
    }
    cx.error_at(
        Code::UnverifiedOutput,
        f,
        o.path.span,
        format!("`{}` is written from `{stage}`, which no `verify` block checks: whatever the model invented in it would leave the run unchecked", o.path.node),
        format!("add `verify {stage} against SOURCES {{ rules std.verify.strict }}`, or say it on purpose: `output \"{}\" from {stage} unverified` (the document then says \"not verified\")", o.path.node),
    );
}

/// The output's path: a format lexrun writes (by its extension `ext`), inside the output
/// folder, and not the path of an output before it (`seen`).
fn path_usable(
    cx: &mut Cx,
    f: FileId,
    o: &ast::OutputDecl,
    ext: &str,
    seen: &[(Output, Span)],
) -> bool {
    let path = &o.path.node;
    let mut ok = true;
    if !FORMATS.contains(&ext) {
        cx.error_at(
            Code::BadOutput,
            f,
            o.path.span,
            format!("lexrun cannot write `{path}`: unknown format"),
            format!(
                "the extension picks the format: {}",
                FORMATS
                    .iter()
                    .map(|e| format!(".{e}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
        ok = false;
    }
    if path.starts_with('/') || path.split(['/', '\\']).any(|c| c == "..") || path.contains(':') {
        cx.error_at(Code::BadOutput, f, o.path.span, format!("`{path}` points outside the output folder"), "output paths are relative to the output folder (`--out`); drop the leading `/` or `..`");
        ok = false;
    }
    if let Some((_, first)) = seen.iter().find(|(x, _)| x.path == *path) {
        cx.error(
            Diagnostic::new(
                Code::DuplicateOutput,
                format!("two outputs are written to `{path}`"),
            )
            .in_file(f)
            .label(o.path.span, "second")
            .label(*first, "first")
            .help("give each output its own file name"),
        );
        ok = false;
    }
    ok
}

/// `appendix verification`, the one appendix lexrun writes, for a stage that is verified;
/// with whether it is usable.
fn appendix(
    cx: &mut Cx,
    f: FileId,
    o: &ast::OutputDecl,
    steps: &[Step],
    verify: &[Verify],
) -> (Option<String>, bool) {
    match &o.appendix {
        Some(a) if a.node == "verification" => {
            // A `verify` block with errors is reported already; it is not missing.
            let unread = format!("verify {}", o.from.node);
            let written = cx.modules.iter().any(|m| {
                m.ast.broken.contains(&unread)
                    || m.ast
                        .items
                        .iter()
                        .any(|i| matches!(i, ast::Item::Verify(v) if v.target.node == o.from.node))
            });
            let mut ok = true;
            if !verify.iter().any(|v| v.stage == o.from.node)
                && !written
                && steps.iter().any(|s| s.name == o.from.node)
            {
                cx.error_at(
                    Code::BadOutput,
                    f,
                    a.span,
                    format!(
                        "`{}` is not verified, so there is no verification report to append",
                        o.from.node
                    ),
                    format!(
                        "add `verify {} against SOURCES {{ … }}`, or drop the appendix",
                        o.from.node
                    ),
                );
                ok = false;
            }
            (Some(a.node.clone()), ok)
        }
        Some(a) => {
            cx.error_at(
                Code::BadOutput,
                f,
                a.span,
                format!("`{}` is not an appendix lexrun writes", a.node),
                "write `appendix verification`",
            );
            (None, false)
        }
        None => (None, true),
    }
}

/// `layout letter|memo|pleading`, for a Word or PDF document; with whether it is usable.
fn layout(cx: &mut Cx, f: FileId, o: &ast::OutputDecl, ext: &str) -> (Option<String>, bool) {
    let Some(l) = &o.layout else {
        return (None, true);
    };
    if !LAYOUTS.contains(&l.node.as_str()) {
        let hint = match crate::suggest::did_you_mean(&l.node, LAYOUTS.iter().copied()) {
            Some(s) => format!("did you mean `layout {s}`? The layouts are {}", layouts()),
            None => format!("the layouts are {}", layouts()),
        };
        cx.error_at(
            Code::BadOutput,
            f,
            l.span,
            format!("`{}` is not a document layout lexrun has", l.node),
            hint,
        );
        return (None, false);
    }
    if !matches!(ext, "docx" | "pdf") {
        cx.error_at(
            Code::BadOutput,
            f,
            l.span,
            format!("a `.{ext}` output has no layout: only Word and PDF documents are laid out"),
            "write the output to a `.docx` or `.pdf` path, or drop the layout",
        );
        return (None, false);
    }
    (Some(l.node.clone()), true)
}

fn layouts() -> String {
    LAYOUTS
        .iter()
        .map(|l| format!("`{l}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
