//! Conditions (`when`, `stop when`, `until`) and `returns` types: the nesting parts of a
//! stage, each bounded in depth.

use pest::iterators::Pair;

use super::ast::*;
use super::grammar::Rule;
use super::limits::MAX_NESTING;
use super::parse::Builder;
use crate::diagnostic::{Code, Span};

impl Builder {
    pub(super) fn record(&mut self, p: Pair<Rule>, depth: usize) -> Option<Vec<Field>> {
        if depth > MAX_NESTING {
            self.err(
                Code::Syntax,
                self.span(&p),
                "record types are nested too deeply",
                "here",
                "flatten the answer; a stage's answer rarely needs more than two levels",
            );
            return None;
        }
        let mut fields = Vec::new();
        for f in p.into_inner() {
            let mut it = f.into_inner();
            let name = self.name(it.next()?);
            let ty = self.type_expr(it.next()?, depth + 1)?;
            fields.push(Field { name, ty });
        }
        Some(fields)
    }

    pub(super) fn type_expr(&mut self, p: Pair<Rule>, depth: usize) -> Option<Spanned<TypeExpr>> {
        let span = self.span(&p);
        let inner = p.into_inner().next()?;
        let node = match inner.as_rule() {
            Rule::list_type => {
                let t = inner.into_inner().nth(2)?;
                TypeExpr::List(Box::new(self.type_expr(t, depth + 1)?))
            }
            Rule::record_kw_type => {
                TypeExpr::Record(self.record(inner.into_inner().nth(1)?, depth + 1)?)
            }
            Rule::record_type => TypeExpr::Record(self.record(inner, depth + 1)?),
            _ => TypeExpr::Prim(inner.as_str().to_string()),
        };
        Some(Spanned::new(node, span))
    }

    pub(super) fn cond(&mut self, p: Pair<Rule>, depth: usize) -> Option<Cond> {
        if depth > MAX_NESTING {
            self.err(
                Code::Syntax,
                self.span(&p),
                "this condition is nested too deeply",
                "here",
                "split it, or remove redundant parentheses",
            );
            return None;
        }
        let span = self.span(&p);
        match p.as_rule() {
            Rule::cond => self.cond(p.into_inner().next()?, depth + 1),
            Rule::disj | Rule::conj => {
                let is_or = p.as_rule() == Rule::disj;
                let mut parts = Vec::new();
                for c in p.into_inner() {
                    if matches!(c.as_rule(), Rule::kw_or | Rule::kw_and) {
                        continue;
                    }
                    parts.push(self.cond(c, depth + 1)?);
                }
                Some(if parts.len() == 1 {
                    parts.pop()?
                } else if is_or {
                    Cond::Or(parts)
                } else {
                    Cond::And(parts)
                })
            }
            Rule::neg => {
                let mut it = p.into_inner();
                let first = it.next()?;
                if first.as_rule() == Rule::kw_not {
                    let c = self.cond(it.next()?, depth + 1)?;
                    Some(Cond::Not(Box::new(c), span))
                } else {
                    self.cond(first, depth + 1)
                }
            }
            Rule::cmp => {
                let mut it = p.into_inner();
                let left = it.next()?;
                let left_cond = self.atom(left, depth + 1)?;
                match it.next() {
                    None => Some(left_cond),
                    Some(op) if op.as_rule() == Rule::cmp_op => {
                        let right = self.atom(it.next()?, depth + 1)?;
                        let (Cond::Operand(l), Cond::Operand(r)) = (left_cond, right) else {
                            self.err(
                                Code::Syntax,
                                span,
                                "only a field or a value can be compared",
                                "this comparison",
                                "compare a field with a value, e.g. `attack.score >= 7`",
                            );
                            return None;
                        };
                        let op = match op.as_str() {
                            "==" => CmpOp::Eq,
                            "!=" => CmpOp::Ne,
                            "<" => CmpOp::Lt,
                            "<=" => CmpOp::Le,
                            ">" => CmpOp::Gt,
                            _ => CmpOp::Ge,
                        };
                        Some(Cond::Compare {
                            op,
                            left: l,
                            right: r,
                        })
                    }
                    Some(is) => {
                        let negated = is.into_inner().any(|x| x.as_rule() == Rule::kw_not);
                        let Cond::Operand(operand) = left_cond else {
                            self.err(
                                Code::Syntax,
                                span,
                                "`is empty` applies to a field",
                                "here",
                                "write e.g. `attack.objections is empty`",
                            );
                            return None;
                        };
                        Some(Cond::IsEmpty {
                            operand,
                            negated,
                            span,
                        })
                    }
                }
            }
            _ => self.atom(p, depth + 1),
        }
    }

    pub(super) fn atom(&mut self, p: Pair<Rule>, depth: usize) -> Option<Cond> {
        let span = self.span(&p);
        let operand = match p.as_rule() {
            Rule::cond => return self.cond(p, depth),
            Rule::kw_true => Operand::Bool(Spanned::new(true, span)),
            Rule::kw_false => Operand::Bool(Spanned::new(false, span)),
            Rule::date_lit => Operand::Date(Spanned::new(p.as_str().to_string(), span)),
            Rule::decimal => Operand::Number(self.decimal(p)?),
            Rule::string => Operand::Text(self.string(p)),
            Rule::field_path => {
                let text = p.as_str();
                match text.split_once('.') {
                    Some((stage, field)) => Operand::Field {
                        stage: Some(Spanned::new(
                            stage.to_string(),
                            Span::new(span.start, span.start + stage.len()),
                        )),
                        field: Spanned::new(
                            field.to_string(),
                            Span::new(span.start + stage.len() + 1, span.end),
                        ),
                    },
                    None => Operand::Field {
                        stage: None,
                        field: Spanned::new(text.to_string(), span),
                    },
                }
            }
            _ => return None,
        };
        Some(Cond::Operand(operand))
    }
}
