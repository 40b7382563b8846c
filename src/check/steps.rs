//! Stages and tools: references, the order they run in, their answers' types, the conditions
//! that gate and loop them, and their prompt templates.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::templates::{self, Provided};
use super::{and_list, hardware, Cx, Decl, Entry, Kind, Origin};
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::plan::workflow::{
    CmpOp, Expr, FieldType, Model, ModelStage, OptionValue, Prompt, Revise, Step, StepKind,
    ToolStage, Type, Value,
};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

/// What the checker knows of each step while checking others.
struct Info<'a> {
    file: FileId,
    name: &'a ast::Name,
    after: Vec<&'a ast::Name>,
    reads: Vec<&'a ast::Name>,
    returns: Option<Vec<FieldType>>,
    /// `returns` was written, even if it has errors.
    returns_declared: bool,
    is_tool: bool,
    tool_kind: Option<&'a str>,
}

pub(crate) fn steps(cx: &mut Cx, models: &[Model]) -> Vec<Step> {
    let mut entries: Vec<Entry> = cx.decls(Kind::Stage);
    entries.extend(cx.decls(Kind::Tool));
    entries.sort_by_key(|e| (e.module, span_of(e).start));

    // Pass 1: what each step is, and its returns type.
    let mut infos: BTreeMap<String, Info> = BTreeMap::new();
    for e in &entries {
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
                returns_declared: s.returns.is_some(),
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

    // Pass 2: references in `after` and `reads`.
    let mut edges: BTreeMap<String, Vec<(String, Span, FileId)>> = BTreeMap::new();
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
    let cyclic = cycles(cx, &infos, &edges);
    let order = topo_names(&infos, &edges);
    let ancestors = Ancestors::new(&order, &edges);

    // Which steps carry evidence: sources passed through CPU tools that keep their substance.
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

    // Pass 3: each step in full.
    let mut out = Vec::new();
    for e in &entries {
        let (name, reads, after_names, when) = match e.decl {
            Decl::Stage(s) => (&s.name, &s.reads, &s.after, s.when.as_ref()),
            Decl::Tool(t) => (&t.name, &t.reads, &t.after, None),
            _ => continue,
        };
        let anc = if cyclic.contains(&name.node) {
            ancestors.none()
        } else {
            ancestors.of(&name.node)
        };
        // Reading a step requires it to have run.
        for r in reads {
            let is_step = matches!(
                cx.names.get(&r.node).map(|x| x.decl.kind()),
                Some(Kind::Stage | Kind::Tool)
            );
            if is_step
                && r.node != name.node
                && !anc.contains(&r.node)
                && !cyclic.contains(&name.node)
            {
                cx.error(
                    Diagnostic::new(
                        Code::ReadsLaterStage,
                        format!(
                            "`{}` reads `{}`, which does not run before it",
                            name.node, r.node
                        ),
                    )
                    .in_file(e.file)
                    .label(r.span, "read here")
                    .help(format!(
                        "add `after {}` to the header of `{}`",
                        r.node, name.node
                    )),
                );
            }
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

/// Which steps run before which: a bitset of ancestors per step, built once in run order.
struct Ancestors {
    index: HashMap<String, usize>,
    bits: Vec<Vec<u64>>,
}

/// The ancestors of one step.
struct Anc<'a> {
    index: &'a HashMap<String, usize>,
    bits: Option<&'a [u64]>,
}

impl Anc<'_> {
    fn contains(&self, name: &str) -> bool {
        match (self.bits, self.index.get(name)) {
            (Some(bits), Some(&i)) => bits[i / 64] & (1 << (i % 64)) != 0,
            _ => false,
        }
    }
}

impl Ancestors {
    fn new(order: &[String], edges: &BTreeMap<String, Vec<(String, Span, FileId)>>) -> Self {
        let index: HashMap<String, usize> = order
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        let words = order.len().div_ceil(64);
        let mut bits = vec![vec![0u64; words]; order.len()];
        for (i, name) in order.iter().enumerate() {
            for (dep, ..) in edges.get(name).into_iter().flatten() {
                let Some(&d) = index.get(dep) else { continue };
                bits[i][d / 64] |= 1 << (d % 64);
                // In run order a dependency's own ancestors are complete (cycles aside).
                if d < i {
                    let (done, rest) = bits.split_at_mut(i);
                    for (w, x) in rest[0].iter_mut().zip(&done[d]) {
                        *w |= x;
                    }
                }
            }
        }
        Ancestors { index, bits }
    }

    fn of(&self, name: &str) -> Anc<'_> {
        Anc {
            index: &self.index,
            bits: self.index.get(name).map(|&i| self.bits[i].as_slice()),
        }
    }

    fn none(&self) -> Anc<'_> {
        Anc {
            index: &self.index,
            bits: None,
        }
    }
}

fn span_of(e: &Entry) -> Span {
    match e.decl {
        Decl::Stage(s) => s.span,
        Decl::Tool(t) => t.span,
        _ => Span::default(),
    }
}

/// Steps in an order where each comes after what it waits for (cycles broken arbitrarily).
fn topo_names(
    infos: &BTreeMap<String, Info>,
    edges: &BTreeMap<String, Vec<(String, Span, FileId)>>,
) -> Vec<String> {
    let mut done = BTreeSet::new();
    let mut order = Vec::new();
    fn visit(
        n: &str,
        edges: &BTreeMap<String, Vec<(String, Span, FileId)>>,
        done: &mut BTreeSet<String>,
        order: &mut Vec<String>,
        onstack: &mut BTreeSet<String>,
    ) {
        if done.contains(n) || !onstack.insert(n.to_string()) {
            return;
        }
        let mut stack = vec![(n.to_string(), 0usize)];
        while let Some((cur, i)) = stack.pop() {
            let deps = edges.get(&cur).map(Vec::as_slice).unwrap_or(&[]);
            if i < deps.len() {
                stack.push((cur.clone(), i + 1));
                let d = &deps[i].0;
                if !done.contains(d) && onstack.insert(d.clone()) {
                    stack.push((d.clone(), 0));
                }
            } else if done.insert(cur.clone()) {
                order.push(cur);
            }
        }
    }
    let mut onstack = BTreeSet::new();
    for n in infos.keys() {
        visit(n, edges, &mut done, &mut order, &mut onstack);
    }
    order
}

/// Reports each cycle in the `after` graph once; returns the steps on cycles.
fn cycles(
    cx: &mut Cx,
    infos: &BTreeMap<String, Info>,
    edges: &BTreeMap<String, Vec<(String, Span, FileId)>>,
) -> BTreeSet<String> {
    // Iterative DFS with colours; a grey target closes a cycle.
    let mut colour: BTreeMap<&str, u8> = BTreeMap::new();
    let mut on_cycle = BTreeSet::new();
    for start in infos.keys() {
        if colour.get(start.as_str()).copied().unwrap_or(0) != 0 {
            continue;
        }
        let mut path: Vec<(&str, usize)> = vec![(start.as_str(), 0)];
        colour.insert(start.as_str(), 1);
        while let Some(&(node, i)) = path.last() {
            let deps = edges.get(node).map(Vec::as_slice).unwrap_or(&[]);
            if i >= deps.len() {
                colour.insert(node, 2);
                path.pop();
                continue;
            }
            if let Some(top) = path.last_mut() {
                top.1 += 1;
            }
            let (dep, span, file) = &deps[i];
            match colour.get(dep.as_str()).copied().unwrap_or(0) {
                0 => {
                    colour.insert(dep.as_str(), 1);
                    path.push((dep.as_str(), 0));
                }
                1 => {
                    let from = path
                        .iter()
                        .position(|(n, _)| *n == dep.as_str())
                        .unwrap_or(0);
                    let mut ring: Vec<&str> = path[from..].iter().map(|(n, _)| *n).collect();
                    for n in &ring {
                        on_cycle.insert(n.to_string());
                    }
                    ring.reverse();
                    ring.push(ring[0]);
                    cx.error(
                        Diagnostic::new(
                            Code::StageCycle,
                            "these stages wait for each other in a circle",
                        )
                        .in_file(*file)
                        .label(*span, format!("`{node}` waits for `{dep}` here"))
                        .help(format!(
                            "{} — nothing in the circle can start; remove one `after`",
                            ring.join(" runs before ")
                        )),
                    );
                }
                _ => {}
            }
        }
    }
    on_cycle
}

fn record_type(
    cx: &mut Cx,
    f: FileId,
    fields: &[ast::Field],
    depth: usize,
) -> Option<Vec<FieldType>> {
    let mut out: Vec<FieldType> = Vec::new();
    let mut ok = true;
    for field in fields {
        if let Some(prev) = fields
            .iter()
            .take_while(|x| !std::ptr::eq(*x, field))
            .find(|x| x.name.node == field.name.node)
        {
            cx.error(
                Diagnostic::new(
                    Code::DuplicateField,
                    format!("field `{}` is declared twice", field.name.node),
                )
                .in_file(f)
                .label(field.name.span, "again")
                .label(prev.name.span, "first")
                .help("give each field of the answer its own name"),
            );
            ok = false;
            continue;
        }
        match type_expr(cx, f, &field.ty, depth) {
            Some(ty) => out.push(FieldType {
                name: field.name.node.clone(),
                ty,
            }),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn type_expr(
    cx: &mut Cx,
    f: FileId,
    t: &ast::Spanned<ast::TypeExpr>,
    depth: usize,
) -> Option<Type> {
    Some(match &t.node {
        ast::TypeExpr::Prim(p) => match p.as_str() {
            "bool" => Type::Bool,
            "text" => Type::Text,
            "number" => Type::Number,
            "date" => Type::Date,
            other => {
                let known = ["bool", "text", "number", "date", "list", "record"];
                let aliases = [
                    ("boolean", "bool"),
                    ("string", "text"),
                    ("str", "text"),
                    ("int", "number"),
                    ("integer", "number"),
                    ("float", "number"),
                    ("money", "number"),
                    ("datetime", "date"),
                ];
                let alias = aliases
                    .iter()
                    .find(|(a, _)| *a == other)
                    .map(|(_, t)| *t)
                    .or_else(|| did_you_mean(other, known))
                    .or_else(|| {
                        let near = did_you_mean(other, aliases.iter().map(|(a, _)| *a))?;
                        aliases.iter().find(|(a, _)| *a == near).map(|(_, t)| *t)
                    });
                let d = Diagnostic::new(Code::UnknownType, format!("`{other}` is not a type"))
                    .in_file(f)
                    .label(t.span, "");
                cx.error(match alias {
                    Some(s) => d.help(format!("did you mean `{s}`? Types: bool, text, number, date, list of T, record {{ … }}")),
                    None => d.help("types: bool, text, number, date, list of T, record { … }"),
                });
                return None;
            }
        },
        ast::TypeExpr::List(inner) => Type::List {
            of: Box::new(type_expr(cx, f, inner, depth + 1)?),
        },
        ast::TypeExpr::Record(fields) => Type::Record {
            fields: record_type(cx, f, fields, depth + 1)?,
        },
    })
}

/// Which answers a condition may test.
enum CondScope<'s, 'a> {
    /// `stop when` / `until`: the stage's own answer.
    Own {
        stage: &'s str,
        returns: Option<&'s [FieldType]>,
        what: &'s str,
    },
    /// `when`: answers of steps that run before this one.
    Upstream {
        stage: &'s str,
        ancestors: &'s Anc<'s>,
        infos: &'s BTreeMap<String, Info<'a>>,
    },
}

fn cond(cx: &mut Cx, f: FileId, c: &ast::Cond, scope: &CondScope) -> Option<Expr> {
    let e = expr(cx, f, c, scope)?;
    // The whole condition must be a yes/no.
    match &e.1 {
        Some(Type::Bool) | None => Some(e.0),
        Some(other) => {
            cx.error(
                Diagnostic::new(
                    Code::TypeMismatch,
                    format!("a condition must be true or false, but this is {other}"),
                )
                .in_file(f)
                .label(c.span(), format!("{other}"))
                .help("compare it (`attack.score >= 7`), or test a list with `is empty`"),
            );
            None
        }
    }
}

/// Returns the checked expression and its type (`None` for a type already reported).
fn expr(cx: &mut Cx, f: FileId, c: &ast::Cond, scope: &CondScope) -> Option<(Expr, Option<Type>)> {
    match c {
        ast::Cond::Or(parts) | ast::Cond::And(parts) => {
            let mut out = Vec::new();
            let mut ok = true;
            for p in parts {
                match cond(cx, f, p, scope) {
                    Some(e) => out.push(e),
                    None => ok = false,
                }
            }
            if !ok {
                return None;
            }
            let e = if matches!(c, ast::Cond::Or(_)) {
                Expr::Or { any: out }
            } else {
                Expr::And { all: out }
            };
            Some((e, Some(Type::Bool)))
        }
        ast::Cond::Not(inner, _) => {
            let e = cond(cx, f, inner, scope)?;
            Some((Expr::Not { expr: Box::new(e) }, Some(Type::Bool)))
        }
        ast::Cond::Operand(o) => {
            let (v, t) = operand(cx, f, o, scope)?;
            Some((Expr::Test { value: v }, t))
        }
        ast::Cond::IsEmpty {
            operand: o,
            negated,
            span,
        } => {
            let (v, t) = operand(cx, f, o, scope)?;
            if let Some(t) = &t {
                if !matches!(t, Type::List { .. } | Type::Text) {
                    cx.error(
                        Diagnostic::new(Code::TypeMismatch, format!("only a list or a text can be empty; this is {t}"))
                            .in_file(f)
                            .label(*span, "")
                            .help("use `is empty` on lists and texts; compare numbers and dates with ==, <, >"),
                    );
                    return None;
                }
            }
            Some((
                Expr::IsEmpty {
                    value: v,
                    negated: *negated,
                },
                Some(Type::Bool),
            ))
        }
        ast::Cond::Compare { op, left, right } => {
            let (l, lt) = operand(cx, f, left, scope)?;
            let (r, rt) = operand(cx, f, right, scope)?;
            let span = left.span().to(right.span());
            if let (Some(lt), Some(rt)) = (&lt, &rt) {
                if lt != rt {
                    cx.error(
                        Diagnostic::new(Code::TypeMismatch, format!("cannot compare {lt} with {rt}"))
                            .in_file(f)
                            .label(left.span(), lt.to_string())
                            .label(right.span(), rt.to_string())
                            .help("compare a field with a value of its own type: a number with a number, a date with a date such as 2024-01-05"),
                    );
                    return None;
                }
                let ordered = matches!(
                    op,
                    ast::CmpOp::Lt | ast::CmpOp::Le | ast::CmpOp::Gt | ast::CmpOp::Ge
                );
                let comparable = match lt {
                    Type::Number | Type::Date => true,
                    Type::Bool | Type::Text => !ordered,
                    _ => false,
                };
                if !comparable {
                    cx.error(
                        Diagnostic::new(Code::TypeMismatch, format!("`{}` does not apply to {lt}", op.as_str()))
                            .in_file(f)
                            .label(span, "")
                            .help("order comparisons (<, <=, >, >=) apply to numbers and dates; lists and records cannot be compared, test lists with `is empty`"),
                    );
                    return None;
                }
            }
            Some((
                Expr::Compare {
                    cmp: cmp_op(*op),
                    left: l,
                    right: r,
                },
                Some(Type::Bool),
            ))
        }
    }
}

/// The plan states its own operator, so the runtime never reads the syntax tree.
fn cmp_op(op: ast::CmpOp) -> CmpOp {
    match op {
        ast::CmpOp::Eq => CmpOp::Eq,
        ast::CmpOp::Ne => CmpOp::Ne,
        ast::CmpOp::Lt => CmpOp::Lt,
        ast::CmpOp::Le => CmpOp::Le,
        ast::CmpOp::Gt => CmpOp::Gt,
        ast::CmpOp::Ge => CmpOp::Ge,
    }
}

fn operand(
    cx: &mut Cx,
    f: FileId,
    o: &ast::Operand,
    scope: &CondScope,
) -> Option<(Value, Option<Type>)> {
    Some(match o {
        ast::Operand::Bool(b) => (Value::Bool { value: b.node }, Some(Type::Bool)),
        ast::Operand::Number(n) => (Value::Number { value: n.node }, Some(Type::Number)),
        ast::Operand::Text(t) => (
            Value::Text {
                value: t.node.clone(),
            },
            Some(Type::Text),
        ),
        ast::Operand::Date(d) => {
            if !valid_date(&d.node) {
                cx.error(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("{} is not a calendar date", d.node),
                    )
                    .in_file(f)
                    .label(d.span, "")
                    .help("write dates as YYYY-MM-DD"),
                );
                return None;
            }
            (
                Value::Date {
                    value: d.node.clone(),
                },
                Some(Type::Date),
            )
        }
        ast::Operand::Field { stage, field } => {
            let (stage_name, returns, stage_span): (String, Option<Vec<FieldType>>, Span) = match (
                scope, stage,
            ) {
                (
                    CondScope::Own {
                        stage: own,
                        returns,
                        what,
                    },
                    Some(s),
                ) if s.node != *own => {
                    cx.error(
                        Diagnostic::new(
                            Code::ForeignField,
                            format!("`{what}` tests this stage's own answer, not `{}`'s", s.node),
                        )
                        .in_file(f)
                        .label(s.span, "another stage")
                        .help(format!(
                            "write `{}`{}",
                            field.node,
                            if returns.is_some() {
                                ""
                            } else {
                                ", after adding it to this stage's `returns`"
                            }
                        )),
                    );
                    return None;
                }
                (
                    CondScope::Own {
                        stage: own,
                        returns,
                        ..
                    },
                    s,
                ) => (
                    own.to_string(),
                    returns.map(<[FieldType]>::to_vec),
                    s.as_ref().map_or(field.span, |s| s.span),
                ),
                (CondScope::Upstream { stage: own, .. }, None) => {
                    cx.error(
                        Diagnostic::new(Code::ForeignField, format!("`when` must name the stage whose answer it tests: which stage's `{}`?", field.node))
                            .in_file(f)
                            .label(field.span, "no stage named")
                            .help(format!("write e.g. `when gate.{}`; `{own}` has not answered yet when `when` is decided", field.node)),
                    );
                    return None;
                }
                (
                    CondScope::Upstream {
                        stage: own,
                        ancestors,
                        infos,
                    },
                    Some(s),
                ) => {
                    let Some(info) = infos.get(&s.node) else {
                        cx.lookup(s, f, &[Kind::Stage]);
                        return None;
                    };
                    if s.node == *own {
                        cx.error(
                            Diagnostic::new(Code::ReadsLaterStage, format!("`{own}` cannot run on a condition about its own answer"))
                                .in_file(f)
                                .label(s.span, "")
                                .help("`when` decides whether the stage runs at all; test an earlier stage's answer, or use `stop when` to halt after it"),
                        );
                        return None;
                    }
                    if !ancestors.contains(&s.node) {
                        cx.error(
                            Diagnostic::new(
                                Code::ReadsLaterStage,
                                format!(
                                    "`{own}` tests `{}`'s answer, but `{}` does not run before it",
                                    s.node, s.node
                                ),
                            )
                            .in_file(f)
                            .label(s.span, "")
                            .help(format!("add `after {}` to the header of `{own}`", s.node)),
                        );
                        return None;
                    }
                    if info.returns.is_none() && info.returns_declared {
                        return None;
                    }
                    (s.node.clone(), info.returns.clone(), s.span)
                }
            };
            let Some(returns) = returns else {
                // A returns type with an error is reported already.
                let declared = match scope {
                    CondScope::Upstream { infos, .. } => {
                        infos.get(&stage_name).is_some_and(|i| i.is_tool)
                    }
                    _ => false,
                };
                cx.error(
                    Diagnostic::new(
                        Code::NoReturns,
                        format!(
                            "`{stage_name}` has no `returns`, so it has no `{}` to test",
                            field.node
                        ),
                    )
                    .in_file(f)
                    .label(stage_span.to(field.span), "")
                    .help(if declared {
                        "tools produce files, not answers; test a model stage's answer".to_string()
                    } else {
                        format!(
                            "declare the answer in `{stage_name}`: `returns {{ {}: bool }}`",
                            field.node
                        )
                    }),
                );
                return None;
            };
            let Some(ft) = returns.iter().find(|x| x.name == field.node) else {
                let names: Vec<&str> = returns.iter().map(|x| x.name.as_str()).collect();
                let d = Diagnostic::new(
                    Code::UnknownField,
                    format!("`{stage_name}` returns no field `{}`", field.node),
                )
                .in_file(f)
                .label(field.span, "not in `returns`");
                cx.error(match did_you_mean(&field.node, names.iter().copied()) {
                    Some(s) => d.help(format!("did you mean `{s}`?")),
                    None => d.help(format!(
                        "`{stage_name}` returns {}; add the field to its `returns`",
                        and_list(&names)
                    )),
                });
                return None;
            };
            (
                Value::Field {
                    stage: stage_name,
                    field: field.node.clone(),
                },
                Some(ft.ty.clone()),
            )
        }
    })
}

fn valid_date(s: &str) -> bool {
    let p: Vec<u32> = s.split('-').filter_map(|x| x.parse().ok()).collect();
    let [y, m, d] = p[..] else { return false };
    crate::calendar::is_valid(y as i64, m, d)
}

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
    let model = match &s.model {
        Some(m) => cx
            .lookup(m, f, &[Kind::Model])
            .and_then(|_| models.iter().find(|x| x.name == m.node)),
        None if s.broken.iter().any(|b| b == "model") => None,
        None => {
            cx.error(
                Diagnostic::new(
                    Code::MissingSetting,
                    format!("stage `{}` names no model", s.name.node),
                )
                .in_file(f)
                .label(s.name.span, "")
                .help(
                    "add `model NAME` with a declared model; for work without a model use a `tool`",
                ),
            );
            None
        }
    };
    let returns = infos.get(&s.name.node).and_then(|i| i.returns.clone());
    // A `returns` with errors is reported already; conditions on it would only echo them.
    let returns_broken = s.returns.is_some() && returns.is_none();
    let stop_when = s
        .stop_when
        .as_ref()
        .filter(|_| !returns_broken)
        .and_then(|c| {
            cond(
                cx,
                f,
                c,
                &CondScope::Own {
                    stage: &s.name.node,
                    returns: returns.as_deref(),
                    what: "stop when",
                },
            )
        });
    let revise = s.revise.as_ref().and_then(|r| {
        let target = cx.lookup(&r.target, f, &[Kind::Stage, Kind::Tool])?;
        let mut ok = true;
        if r.target.node == s.name.node {
            cx.error(
                Diagnostic::new(Code::BadRevise, format!("`{}` cannot revise itself", s.name.node))
                    .in_file(f)
                    .label(r.target.span, "")
                    .help("a reviewer stage revises an earlier drafting stage: `revise draft until passes`"),
            );
            ok = false;
        } else if matches!(target.decl, Decl::Tool(_)) {
            cx.error(
                Diagnostic::new(Code::BadRevise, format!("`{}` is a tool; only a model stage can be sent back for revision", r.target.node))
                    .in_file(f)
                    .label(r.target.span, "")
                    .help("revise the stage that wrote the text"),
            );
            ok = false;
        } else if !anc.contains(&r.target.node) {
            cx.error(
                Diagnostic::new(Code::BadRevise, format!("`{}` revises `{}`, which does not run before it", s.name.node, r.target.node))
                    .in_file(f)
                    .label(r.target.span, "")
                    .help(format!("the reviewer must run after what it reviews: add `after {}` to `{}`", r.target.node, s.name.node)),
            );
            ok = false;
        }
        let until = if returns_broken {
            None
        } else {
            cond(cx, f, &r.until, &CondScope::Own { stage: &s.name.node, returns: returns.as_deref(), what: "until" })
        };
        if let Some(n) = r.max_rounds.as_ref().filter(|n| n.node == 0 || n.node > 20) {
            cx.error(
                Diagnostic::new(Code::BadRevise, format!("{} rounds is not a usable limit", n.node))
                    .in_file(f)
                    .label(n.span, "")
                    .help("allow between 1 and 20 rounds; 2 or 3 is usual"),
            );
            ok = false;
        }
        let until = until?;
        ok.then(|| Revise {
            target: r.target.node.clone(),
            until,
            max_rounds: r.max_rounds.as_ref().map_or(3, |n| n.node),
        })
    });
    let mut sampling = model.map(|m| m.sampling.clone()).unwrap_or_default();
    for x in &s.sampling {
        if hardware::check_sampling(cx, f, x) {
            sampling.insert(x.key.node.clone(), x.value.node);
        }
    }

    // What the prompt template can use.
    let reads_evidence: Vec<String> = s
        .reads
        .iter()
        .filter(|r| {
            matches!(
                cx.names.get(&r.node).map(|x| x.decl.kind()),
                Some(Kind::Sources)
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
    let provided = Provided {
        evidence: reads_evidence,
        stages,
        reviewed: s.revise.as_ref().map(|r| r.target.node.clone()),
        schema: returns.is_some(),
    };
    let prompt = match &s.prompt {
        Some(p) => templates::resolve(cx, e.module, f, p, &provided, &s.name.node),
        None if s.broken.iter().any(|b| b == "prompt") => None,
        None => {
            cx.error(
                Diagnostic::new(Code::MissingSetting, format!("stage `{}` has no prompt", s.name.node))
                    .in_file(f)
                    .label(s.name.span, "")
                    .help("add `prompt std.prompts.summary`, a template file (`prompt \"prompts/x.hbs\"`), or inline text in `\"\"\"`"),
            );
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
    })))
}

/// The tools lexrun has, and the options each takes.
fn tool_options(kind: &str) -> Option<&'static [(&'static str, OptKind)]> {
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
        "verify-draft" => &[("draft", Text), ("bates_prefix", Text)],
        _ => return None,
    })
}

#[derive(Clone, Copy)]
enum OptKind {
    Text,
    Whole,
    Num,
    Switch,
    Choice(&'static [&'static str]),
}

const TOOLS: &[&str] = &["bates", "merge", "ocr", "index", "verify-draft"];

fn tool_stage(
    cx: &mut Cx,
    f: FileId,
    t: &ast::ToolDecl,
    infos: &BTreeMap<String, Info>,
) -> Option<StepKind> {
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
            ok = false;
            continue;
        };
        let value = match (kind, &o.value.node) {
            (OptKind::Text, ast::OptionValue::Text(s)) => Some(OptionValue::Text(s.clone())),
            (OptKind::Whole, ast::OptionValue::Number(n)) if n.fract() == 0.0 && *n >= 0.0 => {
                Some(OptionValue::Number(*n))
            }
            (OptKind::Num, ast::OptionValue::Number(n)) if *n > 0.0 => {
                Some(OptionValue::Number(*n))
            }
            (OptKind::Switch, ast::OptionValue::Word(w)) if w == "on" || w == "off" => {
                Some(OptionValue::Bool(w == "on"))
            }
            (OptKind::Choice(c), ast::OptionValue::Word(w) | ast::OptionValue::Text(w))
                if c.contains(&w.as_str()) =>
            {
                Some(OptionValue::Text(w.clone()))
            }
            _ => None,
        };
        match value {
            Some(v) => {
                options.insert(o.key.node.clone(), v);
            }
            None => {
                let want = match kind {
                    OptKind::Text => "a quoted text".to_string(),
                    OptKind::Whole => "a whole number".to_string(),
                    OptKind::Num => "a number above 0".to_string(),
                    OptKind::Switch => "`on` or `off`".to_string(),
                    OptKind::Choice(c) => format!("one of {}", c.join(", ")),
                };
                cx.error(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!("option `{}` of `{}` takes {want}", o.key.node, t.kind.node),
                    )
                    .in_file(f)
                    .label(o.value.span, "")
                    .help(format!(
                        "write e.g. `{} {}`",
                        o.key.node,
                        example(kind)
                    )),
                );
                ok = false;
            }
        }
    }
    // Evidence tools transform sources; feeding them a model's text would launder it into
    // evidence, the failure lexrun exists to prevent.
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
    if t.reads.is_empty() {
        cx.error(
            Diagnostic::new(
                Code::MissingSetting,
                format!("tool `{}` reads nothing", t.name.node),
            )
            .in_file(f)
            .label(t.name.span, "")
            .help("add `reads SOURCES` naming the files it works on"),
        );
        ok = false;
    }
    if t.kind.node == "bates" && !options.contains_key("prefix") && !meant.contains(&"prefix") {
        let has_bates = t.reads.iter().any(|r| {
            matches!(cx.names.get(&r.node).map(|e| e.decl), Some(Decl::Sources(s)) if s.bates.is_some())
        });
        if !has_bates {
            cx.error(
                Diagnostic::new(Code::MissingSetting, format!("tool `{}` has no Bates prefix", t.name.node))
                    .in_file(f)
                    .label(t.name.span, "")
                    .help("add `prefix \"SMITH\"`, or declare `bates \"SMITH\" width 6` in the sources it reads"),
            );
            ok = false;
        }
    }
    if t.kind.node == "verify-draft" && !options.contains_key("draft") && !meant.contains(&"draft")
    {
        cx.error(
            Diagnostic::new(
                Code::MissingSetting,
                format!("tool `{}` does not say which draft to check", t.name.node),
            )
            .in_file(f)
            .label(t.name.span, "")
            .help("add `draft \"drafts/affidavit.md\"`"),
        );
        ok = false;
    }
    let _ = Origin::Std {
        module: String::new(),
    };
    ok.then(|| {
        StepKind::Tool(ToolStage {
            tool: t.kind.node.clone(),
            options,
        })
    })
}

fn example(kind: &OptKind) -> &'static str {
    match kind {
        OptKind::Text => "\"text\"",
        OptKind::Whole => "6",
        OptKind::Num => "9",
        OptKind::Switch => "on",
        OptKind::Choice(c) => c.first().copied().unwrap_or(""),
    }
}
