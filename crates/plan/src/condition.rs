//! Conditions as the plan states them: `when`, `stop when` and `revise … until`, every field
//! resolved to the stage that answers it.

use std::fmt;

use serde::Serialize;

pub use crate::compare::CmpOp;

/// A checked condition: every field resolved to its stage and type.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Expr {
    Or {
        any: Vec<Expr>,
    },
    And {
        all: Vec<Expr>,
    },
    Not {
        expr: Box<Expr>,
    },
    Compare {
        cmp: CmpOp,
        left: Value,
        right: Value,
    },
    IsEmpty {
        value: Value,
        negated: bool,
    },
    Test {
        value: Value,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum Value {
    Field { stage: String, field: String },
    Bool { value: bool },
    Number { value: f64 },
    Text { value: String },
    Date { value: String },
}

impl Expr {
    fn prec(&self) -> u8 {
        match self {
            Expr::Or { .. } => 1,
            Expr::And { .. } => 2,
            _ => 3,
        }
    }

    fn fmt_in(&self, f: &mut fmt::Formatter<'_>, outer: u8) -> fmt::Result {
        let paren = self.prec() < outer;
        if paren {
            f.write_str("(")?;
        }
        match self {
            Expr::Or { any } => join(f, any, " or ", 1)?,
            Expr::And { all } => join(f, all, " and ", 2)?,
            Expr::Not { expr } => {
                f.write_str("not ")?;
                expr.fmt_in(f, 3)?;
            }
            Expr::Compare { cmp, left, right } => write!(f, "{left} {} {right}", cmp.as_str())?,
            Expr::IsEmpty { value, negated } => {
                write!(f, "{value} is {}empty", if *negated { "not " } else { "" })?
            }
            Expr::Test { value } => write!(f, "{value}")?,
        }
        if paren {
            f.write_str(")")?;
        }
        Ok(())
    }
}

fn join(f: &mut fmt::Formatter<'_>, parts: &[Expr], sep: &str, prec: u8) -> fmt::Result {
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        p.fmt_in(f, prec + 1)?;
    }
    Ok(())
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_in(f, 0)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Field { stage, field } => write!(f, "{stage}.{field}"),
            Value::Bool { value } => write!(f, "{value}"),
            Value::Number { value } => write!(f, "{value}"),
            Value::Text { value } => write!(f, "{value:?}"),
            Value::Date { value } => f.write_str(value),
        }
    }
}
