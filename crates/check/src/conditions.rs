//! `returns` types and the conditions that gate and loop stages (`when`, `stop when`,
//! `until`), checked against the answers they test.

use std::collections::BTreeMap;

use super::context::{and_list, Cx, Kind};
use super::step_graph::Anc;
use super::step_info::Info;
use crate::diagnostic::{Code, Diagnostic, FileId, Span};
use crate::plan::workflow::{CmpOp, Expr, FieldType, Type, Value};
use crate::suggest::did_you_mean;
use crate::syntax::ast;

pub(crate) fn record_type(
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

pub(crate) fn type_expr(
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
pub(crate) enum CondScope<'s, 'a> {
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

pub(crate) fn cond(cx: &mut Cx, f: FileId, c: &ast::Cond, scope: &CondScope) -> Option<Expr> {
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
pub(crate) fn expr(
    cx: &mut Cx,
    f: FileId,
    c: &ast::Cond,
    scope: &CondScope,
) -> Option<(Expr, Option<Type>)> {
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
                    cx.error_at(Code::TypeMismatch, f, *span, format!("only a list or a text can be empty; this is {t}"), "use `is empty` on lists and texts; compare numbers and dates with ==, <, >");
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
        ast::Cond::Compare { op, left, right } => compare(cx, f, *op, left, right, scope),
    }
}

/// `LEFT OP RIGHT`: both sides of one type, and one the operator applies to (order
/// comparisons for numbers and dates only).
fn compare(
    cx: &mut Cx,
    f: FileId,
    op: ast::CmpOp,
    left: &ast::Operand,
    right: &ast::Operand,
    scope: &CondScope,
) -> Option<(Expr, Option<Type>)> {
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
            cx.error_at(Code::TypeMismatch, f, span, format!("`{}` does not apply to {lt}", op.as_str()), "order comparisons (<, <=, >, >=) apply to numbers and dates; lists and records cannot be compared, test lists with `is empty`");
            return None;
        }
    }
    Some((
        Expr::Compare {
            cmp: cmp_op(op),
            left: l,
            right: r,
        },
        Some(Type::Bool),
    ))
}

/// The plan states its own operator, so the runtime never reads the syntax tree.
pub(crate) fn cmp_op(op: ast::CmpOp) -> CmpOp {
    match op {
        ast::CmpOp::Eq => CmpOp::Eq,
        ast::CmpOp::Ne => CmpOp::Ne,
        ast::CmpOp::Lt => CmpOp::Lt,
        ast::CmpOp::Le => CmpOp::Le,
        ast::CmpOp::Gt => CmpOp::Gt,
        ast::CmpOp::Ge => CmpOp::Ge,
    }
}

/// Checks one side of a condition: a literal, or a field of a stage's answer.
pub(crate) fn operand(
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
                cx.error_at(
                    Code::InvalidValue,
                    f,
                    d.span,
                    format!("{} is not a calendar date", d.node),
                    "write dates as YYYY-MM-DD",
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
        ast::Operand::Field { stage, field } => field_operand(cx, f, stage.as_ref(), field, scope)?,
    })
}

/// `STAGE.FIELD` (or `FIELD` of the stage's own answer): a stage the scope may test, whose
/// `returns` has the field.
fn field_operand(
    cx: &mut Cx,
    f: FileId,
    stage: Option<&ast::Name>,
    field: &ast::Name,
    scope: &CondScope,
) -> Option<(Value, Option<Type>)> {
    let (stage_name, returns, stage_span) = answering_stage(cx, f, stage, field, scope)?;
    let Some(returns) = returns else {
        // A returns type with an error is reported already.
        let declared = match scope {
            CondScope::Upstream { infos, .. } => infos.get(&stage_name).is_some_and(|i| i.is_tool),
            _ => false,
        };
        cx.error_at(
            Code::NoReturns,
            f,
            stage_span.to(field.span),
            format!(
                "`{stage_name}` has no `returns`, so it has no `{}` to test",
                field.node
            ),
            if declared {
                "tools produce files, not answers; test a model stage's answer".to_string()
            } else {
                format!(
                    "declare the answer in `{stage_name}`: `returns {{ {}: bool }}`",
                    field.node
                )
            },
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
    Some((
        Value::Field {
            stage: stage_name,
            field: field.node.clone(),
        },
        Some(ft.ty.clone()),
    ))
}

/// The stage whose answer a field is of, with its `returns` and where it is named: the
/// stage's own for `stop when` and `until`; for `when`, a named stage that runs before this
/// one. `None` when that is not so (reported) or the stage's `returns` has an error.
fn answering_stage(
    cx: &mut Cx,
    f: FileId,
    stage: Option<&ast::Name>,
    field: &ast::Name,
    scope: &CondScope,
) -> Option<(String, Option<Vec<FieldType>>, Span)> {
    match (scope, stage) {
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
            None
        }
        (
            CondScope::Own {
                stage: own,
                returns,
                ..
            },
            s,
        ) => Some((
            own.to_string(),
            returns.map(<[FieldType]>::to_vec),
            s.map_or(field.span, |s| s.span),
        )),
        (CondScope::Upstream { stage: own, .. }, None) => {
            cx.error(
                Diagnostic::new(Code::ForeignField, format!("`when` must name the stage whose answer it tests: which stage's `{}`?", field.node))
                    .in_file(f)
                    .label(field.span, "no stage named")
                    .help(format!("write e.g. `when gate.{}`; `{own}` has not answered yet when `when` is decided", field.node)),
            );
            None
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
                cx.error_at(Code::ReadsLaterStage, f, s.span, format!("`{own}` cannot run on a condition about its own answer"), "`when` decides whether the stage runs at all; test an earlier stage's answer, or use `stop when` to halt after it");
                return None;
            }
            if !ancestors.contains(&s.node) {
                cx.error_at(
                    Code::ReadsLaterStage,
                    f,
                    s.span,
                    format!(
                        "`{own}` tests `{}`'s answer, but `{}` does not run before it",
                        s.node, s.node
                    ),
                    format!("add `after {}` to the header of `{own}`", s.node),
                );
                return None;
            }
            if info.returns.is_none() && info.returns_declared {
                return None;
            }
            Some((s.node.clone(), info.returns.clone(), s.span))
        }
    }
}

pub(crate) fn valid_date(s: &str) -> bool {
    let p: Vec<u32> = s.split('-').filter_map(|x| x.parse().ok()).collect();
    let [y, m, d] = p[..] else { return false };
    crate::calendar::is_valid(y as i64, m, d)
}
