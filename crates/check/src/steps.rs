//! Stages and tools: their references and settings, checked in the order they run. The order
//! itself is `step_graph`, types and conditions are `conditions`, tool options are `tools`,
//! prompt templates are `templates`.

use std::collections::BTreeMap;

use super::context::{Cx, Decl, Entry, Kind};
use super::models;
use super::templates::{self, Provided};
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::plan::workflow::{Model, ModelStage, OutputCap, Prompt, Revise, Step, StepKind};
use crate::syntax::ast;

use super::conditions::{cond, record_type, CondScope};
use super::step_graph::{cycles, span_of, topo_names, Anc, Ancestors};
use super::step_info::Info;
use super::tools::tool_stage;

/// The step graph's edges: for each step, the steps it waits for, with where each is named.
type Edges = BTreeMap<String, Vec<(String, Span, FileId)>>;

/// Every stage and tool, in file order: their references and run order first, then each step
/// in full; the steps that checked.
pub(crate) fn steps(cx: &mut Cx, models: &[Model]) -> Vec<Step> {
    let mut entries: Vec<Entry> = cx.decls(Kind::Stage);
    entries.extend(cx.decls(Kind::Tool));
    entries.sort_by_key(|e| (e.module, span_of(e).start));

    let infos = infos(cx, &entries);
    let edges = edges(cx, &infos);
    let cyclic = cycles(cx, &infos, &edges);
    let order = topo_names(&infos, &edges);
    let ancestors = Ancestors::new(&order, &edges);
    let evidence = evidence(cx, &infos, order);

    // Pass 3: each step in full.
    let mut out = Vec::new();
    for e in &entries {
        let (name, reads, after_names, when) = match e.decl {
            Decl::Stage(s) => (&s.name, &s.reads, &s.after, s.when.as_ref()),
            Decl::Tool(t) => (&t.name, &t.reads, &t.after, None),
            _ => continue,
        };
        let in_cycle = cyclic.contains(&name.node);
        let anc = if in_cycle {
            ancestors.none()
        } else {
            ancestors.of(&name.node)
        };
        if !in_cycle {
            reads_run_before(cx, e.file, name, reads, &anc);
        }
        let when = when.and_then(|c| {
            cond(
                cx,
                e.file,
                c,
                &CondScope::Upstream {
                    stage: &name.node,
                    ancestors: &anc,
                    infos: &infos,
                },
            )
        });
        let reads_v: Vec<String> = reads.iter().map(|r| r.node.clone()).collect();
        let after_v: Vec<String> = after_names.iter().map(|r| r.node.clone()).collect();
        let is_evidence = evidence.get(&name.node).copied().unwrap_or(false);
        let kind = match e.decl {
            Decl::Stage(s) => model_stage(cx, e, s, models, &infos, &anc, &evidence),
            Decl::Tool(t) => tool_stage(cx, e.file, t, &infos),
            _ => None,
        };
        if let Some(kind) = kind {
            out.push(Step {
                name: name.node.clone(),
                kind,
                reads: reads_v,
                after: after_v,
                when,
                evidence: is_evidence,
            });
        }
    }
    out
}

/// Pass 1: what each step is, and its `returns` type (checked here, once).
fn infos<'a>(cx: &mut Cx<'a>, entries: &[Entry<'a>]) -> BTreeMap<String, Info<'a>> {
    let mut infos: BTreeMap<String, Info> = BTreeMap::new();
    for e in entries {
        let info = match e.decl {
            Decl::Stage(s) => Info {
                file: e.file,
                name: &s.name,
                after: s.after.iter().collect(),
                reads: s.reads.iter().collect(),
                returns: s
                    .returns
                    .as_ref()
                    .and_then(|r| record_type(cx, e.file, &r.node, 0)),
                returns_declared: s.returns.is_some() || ast::is_broken(&s.broken, "returns"),
                is_tool: false,
                tool_kind: None,
            },
            Decl::Tool(t) => Info {
                file: e.file,
                name: &t.name,
                after: t.after.iter().collect(),
                reads: t.reads.iter().collect(),
                returns: None,
                returns_declared: false,
                is_tool: true,
                tool_kind: Some(t.kind.node.as_str()),
            },
            _ => continue,
        };
        infos.insert(info.name.node.clone(), info);
    }
    infos
}

/// Pass 2: the names in `after` and `reads` are declared steps (or sources), and not the
/// step itself; each step's `after` becomes its edges.
fn edges(cx: &mut Cx, infos: &BTreeMap<String, Info>) -> Edges {
    let mut edges: Edges = BTreeMap::new();
    for info in infos.values() {
        let mut deps = Vec::new();
        for a in &info.after {
            if a.node == info.name.node {
                cx.error(
                    Diagnostic::new(Code::StageCycle, format!("`{}` waits for itself", a.node))
                        .in_file(info.file)
                        .label(a.span, "")
                        .help("remove it from `after`"),
                );
                continue;
            }
            if cx
                .lookup(a, info.file, &[Kind::Stage, Kind::Tool])
                .is_some()
            {
                deps.push((a.node.clone(), a.span, info.file));
            }
        }
        for r in &info.reads {
            if r.node == info.name.node {
                cx.error(
                    Diagnostic::new(
                        Code::StageCycle,
                        format!("`{}` reads its own output", r.node),
                    )
                    .in_file(info.file)
                    .label(r.span, "")
                    .help(
                        "a stage cannot read what it has not written yet; remove it from `reads`",
                    ),
                );
                continue;
            }
            cx.lookup(r, info.file, &[Kind::Sources, Kind::Stage, Kind::Tool]);
        }
        edges.insert(info.name.node.clone(), deps);
    }
    edges
}

/// Which steps carry evidence: sources passed through CPU tools that keep their substance.
fn evidence(cx: &Cx, infos: &BTreeMap<String, Info>, order: Vec<String>) -> BTreeMap<String, bool> {
    let mut evidence: BTreeMap<String, bool> = BTreeMap::new();
    for name in order {
        let info = &infos[&name];
        let is_evidence = info.is_tool
            && matches!(info.tool_kind, Some("bates" | "ocr" | "merge"))
            && info.reads.iter().all(|r| {
                matches!(
                    cx.names.get(&r.node).map(|e| e.decl.kind()),
                    Some(Kind::Sources)
                ) || evidence.get(&r.node).copied().unwrap_or(false)
            });
        evidence.insert(name, is_evidence);
    }
    evidence
}

/// Reading a step requires it to have run: each step a step reads runs before it.
fn reads_run_before(cx: &mut Cx, f: FileId, name: &ast::Name, reads: &[ast::Name], anc: &Anc) {
    for r in reads {
        let is_step = matches!(
            cx.names.get(&r.node).map(|x| x.decl.kind()),
            Some(Kind::Stage | Kind::Tool)
        );
        if is_step && r.node != name.node && !anc.contains(&r.node) {
            cx.error(
                Diagnostic::new(
                    Code::ReadsLaterStage,
                    format!(
                        "`{}` reads `{}`, which does not run before it",
                        name.node, r.node
                    ),
                )
                .in_file(f)
                .label(r.span, "read here")
                .help(format!(
                    "add `after {}` to the header of `{}`",
                    r.node, name.node
                )),
            );
        }
    }
}

/// Checks a model stage: its model, `stop when`, `revise`, sampling with the output cap, and
/// its prompt against what the stage reads.
fn model_stage(
    cx: &mut Cx,
    e: &Entry,
    s: &ast::StageDecl,
    models: &[Model],
    infos: &BTreeMap<String, Info>,
    anc: &Anc,
    evidence: &BTreeMap<String, bool>,
) -> Option<StepKind> {
    let f = e.file;
    let model = stage_model(cx, f, s, models);
    let returns = infos.get(&s.name.node).and_then(|i| i.returns.clone());
    // A `returns` with errors is reported already; conditions on it would only echo them.
    let returns_broken =
        (s.returns.is_some() && returns.is_none()) || ast::is_broken(&s.broken, "returns");
    let own = |what: &'static str| {
        (!returns_broken).then_some(CondScope::Own {
            stage: &s.name.node,
            returns: returns.as_deref(),
            what,
        })
    };
    let stop_when = s
        .stop_when
        .as_ref()
        .zip(own("stop when"))
        .and_then(|(c, scope)| cond(cx, f, c, &scope));
    let revise = s
        .revise
        .as_ref()
        .and_then(|r| revise(cx, f, s, r, anc, own("until")));
    let (sampling, cap) = sampling(cx, f, s, model, returns.is_some() || returns_broken);
    let provided = provided(cx, s, infos, evidence, returns.is_some() || returns_broken);
    let prompt = match &s.prompt {
        Some(p) => templates::resolve(cx, e.module, f, p, &provided, &s.name.node),
        None if ast::is_broken(&s.broken, "prompt") => None,
        None => {
            cx.error_at(Code::MissingSetting, f, s.name.span, format!("stage `{}` has no prompt", s.name.node), "add `prompt std.prompts.summary`, a template file (`prompt \"prompts/x.hbs\"`), or inline text in `\"\"\"`");
            None
        }
    };
    let model = model?;
    let prompt: Prompt = prompt?;
    Some(StepKind::Model(Box::new(ModelStage {
        model: model.name.clone(),
        prompt,
        returns,
        stop_when,
        revise,
        sampling,
        timeout_ms: s.timeout.as_ref().map(|t| t.node),
        cap,
    })))
}

/// The stage names a declared model, which checked.
fn stage_model<'m>(
    cx: &mut Cx,
    f: FileId,
    s: &ast::StageDecl,
    models: &'m [Model],
) -> Option<&'m Model> {
    match &s.model {
        Some(m) => cx
            .lookup(m, f, &[Kind::Model])
            .and_then(|_| models.iter().find(|x| x.name == m.node)),
        None if ast::is_broken(&s.broken, "model") => None,
        None => {
            cx.error_at(
                Code::MissingSetting,
                f,
                s.name.span,
                format!("stage `{}` names no model", s.name.node),
                "add `model NAME` with a declared model; for work without a model use a `tool`",
            );
            None
        }
    }
}

/// `revise TARGET until COND`: an earlier model stage other than this one, a condition on
/// this stage's answer (`until`, `None` when its `returns` is broken), and a usable number
/// of rounds.
fn revise(
    cx: &mut Cx,
    f: FileId,
    s: &ast::StageDecl,
    r: &ast::Revise,
    anc: &Anc,
    until: Option<CondScope>,
) -> Option<Revise> {
    let target = cx.lookup(&r.target, f, &[Kind::Stage, Kind::Tool])?;
    let mut ok = true;
    if r.target.node == s.name.node {
        cx.error_at(
            Code::BadRevise,
            f,
            r.target.span,
            format!("`{}` cannot revise itself", s.name.node),
            "a reviewer stage revises an earlier drafting stage: `revise draft until passes`",
        );
        ok = false;
    } else if matches!(target.decl, Decl::Tool(_)) {
        cx.error_at(
            Code::BadRevise,
            f,
            r.target.span,
            format!(
                "`{}` is a tool; only a model stage can be sent back for revision",
                r.target.node
            ),
            "revise the stage that wrote the text",
        );
        ok = false;
    } else if !anc.contains(&r.target.node) {
        cx.error_at(
            Code::BadRevise,
            f,
            r.target.span,
            format!(
                "`{}` revises `{}`, which does not run before it",
                s.name.node, r.target.node
            ),
            format!(
                "the reviewer must run after what it reviews: add `after {}` to `{}`",
                r.target.node, s.name.node
            ),
        );
        ok = false;
    }
    let until = until.and_then(|scope| cond(cx, f, &r.until, &scope));
    if let Some(n) = r.max_rounds.as_ref().filter(|n| n.node == 0 || n.node > 20) {
        cx.error_at(
            Code::BadRevise,
            f,
            n.span,
            format!("{} rounds is not a usable limit", n.node),
            "allow between 1 and 20 rounds; 2 or 3 is usual",
        );
        ok = false;
    }
    let until = until?;
    ok.then(|| Revise {
        target: r.target.node.clone(),
        until,
        max_rounds: r.max_rounds.as_ref().map_or(3, |n| n.node),
    })
}

/// The stage's sampling: the model's defaults with the stage's checked overrides, and the
/// output cap every model stage has (a model that never stops ends there).
fn sampling(
    cx: &mut Cx,
    f: FileId,
    s: &ast::StageDecl,
    model: Option<&Model>,
    answers: bool,
) -> (BTreeMap<String, f64>, OutputCap) {
    let mut sampling = model.map(|m| m.sampling.clone()).unwrap_or_default();
    let mut cap = OutputCap::Model;
    for x in &s.sampling {
        if models::check_sampling(cx, f, x) {
            sampling.insert(x.key.node.clone(), x.value.node);
            if x.key.node == "max_tokens" {
                cap = OutputCap::Stage;
            }
        }
    }
    if !sampling.contains_key("max_tokens") {
        let ctx = model.map_or(4096, |m| m.ctx);
        let (why, n) = OutputCap::default_for(answers, ctx);
        sampling.insert("max_tokens".into(), n as f64);
        cap = why;
    }
    (sampling, cap)
}

/// What the prompt template can use: the evidence the stage reads, the answers of the
/// stages it reads, the text under review, and whether it answers to a schema.
fn provided(
    cx: &Cx,
    s: &ast::StageDecl,
    infos: &BTreeMap<String, Info>,
    evidence: &BTreeMap<String, bool>,
    schema: bool,
) -> Provided {
    let reads_evidence: Vec<String> = s
        .reads
        .iter()
        .filter(|r| {
            // A read that names nothing declared is reported already; it may well be the
            // sources the prompt needs, so the prompt is not blamed as well.
            matches!(
                cx.names.get(&r.node).map(|x| x.decl.kind()),
                Some(Kind::Sources) | None
            ) || evidence.get(&r.node).copied().unwrap_or(false)
        })
        .map(|r| r.node.clone())
        .collect();
    let mut stages = BTreeMap::new();
    for r in &s.reads {
        if reads_evidence.contains(&r.node) {
            continue;
        }
        if let Some(info) = infos.get(&r.node) {
            stages.insert(r.node.clone(), info.returns.clone());
        }
    }
    Provided {
        evidence: reads_evidence,
        stages,
        reviewed: s.revise.as_ref().map(|r| r.target.node.clone()),
        schema,
    }
}
