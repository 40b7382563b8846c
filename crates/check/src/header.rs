//! The workflow header: one `workflow` line, in the file being checked, and the matter folder
//! it names.

use super::context::Cx;
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::syntax::ast;

/// The one `workflow` header, which must be in the file being checked.
pub(super) fn header(cx: &mut Cx) -> Option<(String, String, Option<String>)> {
    let mut found: Option<(&ast::WorkflowDecl, FileId)> = None;
    let mut matter = None;
    for (i, m) in cx.modules.iter().enumerate() {
        for item in &m.ast.items {
            match item {
                ast::Item::Workflow(w) if i > 0 => cx.error(
                    Diagnostic::new(Code::MissingWorkflow, "an imported file declares a workflow")
                        .in_file(m.file)
                        .label(w.span, "")
                        .help("only the file you run has a `workflow` header; remove it from files that are imported"),
                ),
                ast::Item::Workflow(w) => {
                    if let Some((first, _)) = found {
                        cx.error(
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
                        cx.error(
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
            let entry = cx.modules.first()?;
            // An empty or unparsable file, or a header with errors, has its diagnostic.
            if !entry.ast.items.is_empty() && !entry.ast.broken.iter().any(|b| b == "workflow") {
                cx.error(
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
