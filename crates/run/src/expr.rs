//! Conditions (`when`, `stop when`, `revise … until`) evaluated against stages' answers.

use std::cmp::Ordering;

use serde_json::Value as Json;

use crate::plan::workflow::{CmpOp, Expr, Value};

/// Why a condition could not be decided.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error("`{value}` is {found}, not true or false")]
    NotBool { value: String, found: Json },
    #[error("`{0}` has no answer yet")]
    NoAnswer(String),
    #[error("the answer of `{stage}` has no field `{field}`")]
    NoField { stage: String, field: String },
    #[error("cannot compare `{left}` ({l}) with `{right}` ({r})")]
    Incomparable {
        left: String,
        l: Json,
        right: String,
        r: Json,
    },
}

/// Evaluates `e`; `answer(stage)` gives a stage's parsed answer. An answer without the field
/// is an error naming it (the checker makes that impossible for well-formed answers).
pub fn eval(e: &Expr, answer: &dyn Fn(&str) -> Option<Json>) -> Result<bool, EvalError> {
    Ok(match e {
        Expr::Or { any } => {
            for x in any {
                if eval(x, answer)? {
                    return Ok(true);
                }
            }
            false
        }
        Expr::And { all } => {
            for x in all {
                if !eval(x, answer)? {
                    return Ok(false);
                }
            }
            true
        }
        Expr::Not { expr } => !eval(expr, answer)?,
        Expr::Test { value } => match value_of(value, answer)? {
            Json::Bool(b) => b,
            found => {
                return Err(EvalError::NotBool {
                    value: value.to_string(),
                    found,
                })
            }
        },
        Expr::IsEmpty { value, negated } => {
            let empty = match value_of(value, answer)? {
                Json::Null => true,
                Json::String(s) => s.trim().is_empty(),
                Json::Array(a) => a.is_empty(),
                Json::Object(o) => o.is_empty(),
                _ => false,
            };
            empty != *negated
        }
        Expr::Compare { cmp, left, right } => {
            let (l, r) = (value_of(left, answer)?, value_of(right, answer)?);
            let ord = match (&l, &r) {
                (Json::Number(a), Json::Number(b)) => a
                    .as_f64()
                    .partial_cmp(&b.as_f64())
                    .unwrap_or(Ordering::Equal),
                (Json::String(a), Json::String(b)) => a.cmp(b),
                (Json::Bool(a), Json::Bool(b)) => a.cmp(b),
                _ => {
                    return Err(EvalError::Incomparable {
                        left: left.to_string(),
                        l,
                        right: right.to_string(),
                        r,
                    })
                }
            };
            match cmp {
                CmpOp::Eq => ord == Ordering::Equal,
                CmpOp::Ne => ord != Ordering::Equal,
                CmpOp::Lt => ord == Ordering::Less,
                CmpOp::Le => ord != Ordering::Greater,
                CmpOp::Gt => ord == Ordering::Greater,
                CmpOp::Ge => ord != Ordering::Less,
            }
        }
    })
}

fn value_of(v: &Value, answer: &dyn Fn(&str) -> Option<Json>) -> Result<Json, EvalError> {
    Ok(match v {
        Value::Field { stage, field } => {
            let a = answer(stage).ok_or_else(|| EvalError::NoAnswer(stage.clone()))?;
            let mut cur = &a;
            for part in field.split('.') {
                cur = cur.get(part).ok_or_else(|| EvalError::NoField {
                    stage: stage.clone(),
                    field: field.clone(),
                })?;
            }
            cur.clone()
        }
        Value::Bool { value } => Json::Bool(*value),
        Value::Number { value } => serde_json::json!(value),
        Value::Text { value } | Value::Date { value } => Json::String(value.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(f: &str) -> Value {
        Value::Field {
            stage: "gate".into(),
            field: f.into(),
        }
    }

    #[test]
    fn conditions_over_an_answer() {
        let a = json!({"grounds": false, "total": 12.5, "items": [], "on": "2024-01-05"});
        let ans = |s: &str| (s == "gate").then(|| a.clone());
        let not_grounds = Expr::Not {
            expr: Box::new(Expr::Test {
                value: field("grounds"),
            }),
        };
        assert!(eval(&not_grounds, &ans).unwrap());
        let big = Expr::Compare {
            cmp: CmpOp::Gt,
            left: field("total"),
            right: Value::Number { value: 10.0 },
        };
        assert!(eval(&big, &ans).unwrap());
        let empty = Expr::IsEmpty {
            value: field("items"),
            negated: false,
        };
        assert!(eval(&empty, &ans).unwrap());
        let late = Expr::Compare {
            cmp: CmpOp::Ge,
            left: field("on"),
            right: Value::Date {
                value: "2024-02-01".into(),
            },
        };
        assert!(!eval(&late, &ans).unwrap());
        let both = Expr::And {
            all: vec![big, late],
        };
        assert!(!eval(&both, &ans).unwrap());
        let missing = Expr::Test {
            value: field("nope"),
        };
        assert!(eval(&missing, &ans)
            .unwrap_err()
            .to_string()
            .contains("no field `nope`"));
    }
}
