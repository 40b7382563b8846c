//! Signature help inside a prompt's handlebars tag: what `{{#each …}}`, `{{#if …}}`,
//! `{{#unless …}}`, `{{#with …}}`, `{{lookup …}}` and a plain `{{NAME}}` take, with the names
//! the stage at the cursor provides.

use lsp_types::{
    Documentation, MarkupContent, MarkupKind, ParameterInformation, ParameterLabel, Position,
    SignatureHelp, SignatureInformation,
};

use super::super::analysis::Analysis;
use super::super::lines::Lines;
use crate::syntax::ast;

/// The helpers a template may use: (name, label, parameter, what it does).
const HELPERS: &[(&str, &str, &str, &str)] = &[
    ("#each", "{{#each LIST}} … {{/each}}", "LIST", "repeats its block for each item of LIST (a stage's list field, or `evidence`); inside, `{{this}}` is the item and `{{@index}}` its position"),
    ("#if", "{{#if VALUE}} … {{else}} … {{/if}}", "VALUE", "keeps its block when VALUE is true, non-empty text or a non-empty list, else the `{{else}}` part"),
    ("#unless", "{{#unless VALUE}} … {{/unless}}", "VALUE", "keeps its block when VALUE is false, empty or missing"),
    ("#with", "{{#with RECORD}} … {{/with}}", "RECORD", "reads the fields of RECORD by their bare names inside its block"),
    ("lookup", "{{lookup LIST INDEX}}", "LIST", "the item of LIST at INDEX"),
];

/// Signature help at `pos`, when it is inside an open `{{` of a quoted prompt.
pub fn signature_help(a: &Analysis, pos: Position) -> Option<SignatureHelp> {
    let text = a.text(0);
    let offset = Lines::new(text).offset(pos);
    let before = &text[..offset];
    let open = before.rfind("{{")?;
    // A tag open on the cursor's line (tags do not span lines in a prompt).
    if before[open..].contains("}}") || before[open..].contains('\n') {
        return None;
    }
    let inner = before[open + 2..]
        .trim_start_matches('{')
        .trim_start_matches('~')
        .trim_start();
    let word: String = inner
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '}')
        .collect();
    let names = provided(a, offset);
    let (label, param, doc) = match HELPERS.iter().find(|h| h.0 == word) {
        Some(&(_, label, param, doc)) => (label.to_string(), param.to_string(), doc.to_string()),
        None => (
            "{{NAME}}".to_string(),
            "NAME".to_string(),
            "the text of NAME: a stage this one reads (or a field, `STAGE.FIELD`), `evidence`, or `matter.name`".to_string(),
        ),
    };
    let doc = if names.is_empty() {
        doc
    } else {
        format!("{doc}\n\nthis stage provides: {}", names.join(", "))
    };
    Some(SignatureHelp {
        signatures: vec![SignatureInformation {
            label: label.clone(),
            documentation: Some(Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: doc,
            })),
            parameters: Some(vec![ParameterInformation {
                label: ParameterLabel::Simple(param),
                documentation: None,
            }]),
            active_parameter: Some(0),
        }],
        active_signature: Some(0),
        active_parameter: Some(0),
    })
}

/// The names a template in the stage around `offset` may use: what the stage reads, as
/// backticked names, and `evidence` and `matter.name`.
fn provided(a: &Analysis, offset: usize) -> Vec<String> {
    let ix = a.index();
    let mut out = Vec::new();
    for d in ix.decls.iter().filter(|d| d.file == 0) {
        let ast::Item::Stage(s) = ix.item(d) else {
            continue;
        };
        if !(s.span.start <= offset && offset <= s.span.end) {
            continue;
        }
        for r in &s.reads {
            out.push(format!("`{}`", r.node));
        }
        out.push("`evidence`".into());
        out.push("`matter.name`".into());
    }
    out
}
