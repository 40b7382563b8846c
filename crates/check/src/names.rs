//! Every declared name, collected once: a name declared twice is reported, at the declaration
//! in the user's own file when the other is in a file it imports.

use super::context::{Cx, Decl, Entry};
use super::load::Origin;
use crate::diagnostic::{Code, Diagnostic};
use crate::syntax::ast;

/// Collects the declarations of every loaded file into `cx.names`; stdlib names are qualified
/// by their module (`std.prompts.gate`).
pub(super) fn collect(cx: &mut Cx) {
    for (mi, m) in cx.modules.iter().enumerate() {
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
            if let Some(prev) = cx.names.get(&key) {
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
                    let shared = cx.sources.get(m.file).name.clone();
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
                cx.diags.push(d);
                continue;
            }
            cx.names.insert(
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
