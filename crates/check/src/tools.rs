//! Tool steps: the tools lexrun has, the options each takes, what they read.

use std::collections::BTreeMap;

use super::context::{Cx, Decl, Kind};
use super::step_info::Info;
use crate::diagnostic::{Code, Diagnostic, FileId};
use crate::plan::workflow::{OptionValue, StepKind, ToolStage};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

/// The tools lexrun has, and the options each takes.
pub(crate) fn tool_options(kind: &str) -> Option<&'static [(&'static str, OptKind)]> {
    use OptKind::*;
    Some(match kind {
        "bates" => &[
            ("prefix", Text),
            ("start", Whole),
            ("width", Whole),
            ("suffix", Text),
            (
                "position",
                Choice(&[
                    "bottom-right",
                    "bottom-center",
                    "bottom-left",
                    "top-right",
                    "top-center",
                    "top-left",
                ]),
            ),
            ("font_size", Num),
        ],
        "merge" => &[
            ("slip_sheets", Switch),
            ("bookmarks", Switch),
            ("title", Text),
        ],
        "ocr" => &[("lang", Text), ("dpi", Whole)],
        "index" => &[("title", Text), ("format", Choice(&["md", "pdf", "both"]))],
        "verify-draft" => &[("draft", Text), ("bates_prefix", Text), ("judge", Model)],
        _ => return None,
    })
}

#[derive(Clone, Copy)]
pub(crate) enum OptKind {
    Text,
    Whole,
    Num,
    Switch,
    Choice(&'static [&'static str]),
    /// A model declared in the workflow, by name.
    Model,
}

pub(crate) const TOOLS: &[&str] = &["bates", "merge", "ocr", "index", "verify-draft"];

/// Checks a tool stage: a tool lexrun has, its options, what it reads and the options it
/// cannot do without. A `production` block is checked by `production.rs`.
pub(crate) fn tool_stage(
    cx: &mut Cx,
    f: FileId,
    t: &ast::ToolDecl,
    infos: &BTreeMap<String, Info>,
) -> Option<StepKind> {
    if let Some(p) = &t.production {
        let files = super::matter::own_files(cx);
        return super::production::stage(cx, f, t, p, infos, files.as_deref());
    }
    let Some(spec) = tool_options(&t.kind.node) else {
        let d = Diagnostic::new(
            Code::UnknownTool,
            format!("lexrun has no tool `{}`", t.kind.node),
        )
        .in_file(f)
        .label(t.kind.span, "");
        cx.error(match did_you_mean(&t.kind.node, TOOLS.iter().copied()) {
            Some(s) => d.help(format!("did you mean `{s}`?")),
            None => d.help(format!("tools: {}", TOOLS.join(", "))),
        });
        return None;
    };
    let mut options = BTreeMap::new();
    let mut ok = true;
    // Options written with a typo: not reported again as missing.
    let mut meant: Vec<&str> = Vec::new();
    for o in &t.options {
        match option(cx, f, t, o, spec, &mut meant) {
            Some(v) => {
                options.insert(o.key.node.clone(), v);
            }
            None => ok = false,
        }
    }
    ok &= evidence_reads(cx, f, t, infos);
    if t.reads.is_empty() {
        cx.error_at(
            Code::MissingSetting,
            f,
            t.name.span,
            format!("tool `{}` reads nothing", t.name.node),
            "add `reads SOURCES` naming the files it works on",
        );
        ok = false;
    }
    ok &= required_options(cx, f, t, &options, &meant);
    ok.then(|| {
        StepKind::Tool(ToolStage {
            tool: t.kind.node.clone(),
            options,
            production: None,
        })
    })
}

/// One option of a tool: one the tool takes, with a value of the kind it takes; `None` when
/// not (reported). An unknown option's likely meaning goes into `meant`.
fn option(
    cx: &mut Cx,
    f: FileId,
    t: &ast::ToolDecl,
    o: &ast::ToolOption,
    spec: &'static [(&'static str, OptKind)],
    meant: &mut Vec<&'static str>,
) -> Option<OptionValue> {
    let Some((_, kind)) = spec.iter().find(|(k, _)| *k == o.key.node) else {
        let names: Vec<&str> = spec.iter().map(|(k, _)| *k).collect();
        meant.extend(did_you_mean(&o.key.node, names.iter().copied()));
        let d = Diagnostic::new(
            Code::UnknownOption,
            format!("the `{}` tool has no option `{}`", t.kind.node, o.key.node),
        )
        .in_file(f)
        .label(o.key.span, "");
        cx.error(match did_you_mean(&o.key.node, names.iter().copied()) {
            Some(s) => d.help(format!("did you mean `{s}`?")),
            None => d.help(format!("`{}` takes: {}", t.kind.node, names.join(", "))),
        });
        return None;
    };
    let value = match (kind, &o.value.node) {
        (OptKind::Text, ast::OptionValue::Text(s)) => Some(OptionValue::Text(s.clone())),
        (OptKind::Whole, ast::OptionValue::Number(n)) if n.fract() == 0.0 && *n >= 0.0 => {
            Some(OptionValue::Number(*n))
        }
        (OptKind::Num, ast::OptionValue::Number(n)) if *n > 0.0 => Some(OptionValue::Number(*n)),
        (OptKind::Switch, ast::OptionValue::Word(w)) if w == "on" || w == "off" => {
            Some(OptionValue::Bool(w == "on"))
        }
        (OptKind::Choice(c), ast::OptionValue::Word(w) | ast::OptionValue::Text(w))
            if c.contains(&w.as_str()) =>
        {
            Some(OptionValue::Text(w.clone()))
        }
        (OptKind::Model, ast::OptionValue::Word(w) | ast::OptionValue::Text(w)) => {
            let name = ast::Name {
                node: w.clone(),
                span: o.value.span,
            };
            cx.lookup(&name, f, &[Kind::Model])?;
            Some(OptionValue::Text(w.clone()))
        }
        _ => None,
    };
    if value.is_none() {
        let want = match kind {
            OptKind::Text => "a quoted text".to_string(),
            OptKind::Whole => "a whole number".to_string(),
            OptKind::Num => "a number above 0".to_string(),
            OptKind::Switch => "`on` or `off`".to_string(),
            OptKind::Choice(c) => format!("one of {}", c.join(", ")),
            OptKind::Model => "a model's name".to_string(),
        };
        cx.error_at(
            Code::InvalidValue,
            f,
            o.value.span,
            format!("option `{}` of `{}` takes {want}", o.key.node, t.kind.node),
            format!("write e.g. `{} {}`", o.key.node, example(kind)),
        );
    }
    value
}

/// Evidence tools transform sources; feeding them a model's text would launder it into
/// evidence, the failure lexrun exists to prevent. True when the tool reads no output.
fn evidence_reads(
    cx: &mut Cx,
    f: FileId,
    t: &ast::ToolDecl,
    infos: &BTreeMap<String, Info>,
) -> bool {
    let mut ok = true;
    if matches!(t.kind.node.as_str(), "bates" | "ocr" | "merge") {
        for r in &t.reads {
            let is_model_output = infos.get(&r.node).is_some_and(|i| !i.is_tool)
                || infos
                    .get(&r.node)
                    .is_some_and(|i| matches!(i.tool_kind, Some("index" | "verify-draft")));
            if is_model_output {
                cx.error(
                    Diagnostic::new(Code::SelfPoisoning, format!("`{}` would turn `{}`'s output into evidence", t.name.node, r.node))
                        .in_file(f)
                        .label(r.span, "an output, not evidence")
                        .help("evidence tools (bates, ocr, merge) read only `sources` and other evidence tools; outputs must never re-enter as evidence"),
                );
                ok = false;
            }
        }
    }
    ok
}

/// The options a tool cannot do without: a Bates prefix (unless the sources it reads have
/// one), the draft `verify-draft` checks. An option written with a typo is not missing.
fn required_options(
    cx: &mut Cx,
    f: FileId,
    t: &ast::ToolDecl,
    options: &BTreeMap<String, OptionValue>,
    meant: &[&str],
) -> bool {
    let mut ok = true;
    if t.kind.node == "bates" && !options.contains_key("prefix") && !meant.contains(&"prefix") {
        let has_bates = t.reads.iter().any(|r| {
            matches!(cx.names.get(&r.node).map(|e| e.decl), Some(Decl::Sources(s)) if s.bates.is_some())
        });
        if !has_bates {
            cx.error_at(Code::MissingSetting, f, t.name.span, format!("tool `{}` has no Bates prefix", t.name.node), "add `prefix \"SMITH\"`, or declare `bates \"SMITH\" width 6` in the sources it reads");
            ok = false;
        }
    }
    if t.kind.node == "verify-draft" && !options.contains_key("draft") && !meant.contains(&"draft")
    {
        cx.error_at(
            Code::MissingSetting,
            f,
            t.name.span,
            format!("tool `{}` does not say which draft to check", t.name.node),
            "add `draft \"drafts/affidavit.md\"`",
        );
        ok = false;
    }
    ok
}

pub(crate) fn example(kind: &OptKind) -> &'static str {
    match kind {
        OptKind::Text => "\"text\"",
        OptKind::Whole => "6",
        OptKind::Num => "9",
        OptKind::Switch => "on",
        OptKind::Choice(c) => c.first().copied().unwrap_or(""),
        OptKind::Model => "checker",
    }
}
