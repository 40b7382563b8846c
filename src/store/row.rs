//! What both ledger engines share: the values bound to statements and read from rows, the
//! error a statement gives, and the one statement each engine prepares in its own way (an
//! artifact's insertion, on the intake guard's hot path).

/// A value bound to a statement or read from a row. Nulls carry their type, because
/// PostgreSQL checks a parameter's type even when it is null.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Int(i64),
    Text(String),
    NullInt,
    NullText,
}

impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::Int(v)
    }
}
impl From<u32> for Val {
    fn from(v: u32) -> Val {
        Val::Int(v as i64)
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Int(v as i64)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Text(v.to_string())
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Val {
        Val::Text(v.clone())
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(v)
    }
}
impl From<Option<&str>> for Val {
    fn from(v: Option<&str>) -> Val {
        v.map_or(Val::NullText, Val::from)
    }
}
impl From<Option<i64>> for Val {
    fn from(v: Option<i64>) -> Val {
        v.map_or(Val::NullInt, Val::Int)
    }
}

/// One row of a result.
#[derive(Clone, Debug)]
pub struct Row(pub Vec<Val>);

impl Row {
    pub fn int(&self, i: usize) -> i64 {
        self.opt_int(i).unwrap_or(0)
    }
    pub fn opt_int(&self, i: usize) -> Option<i64> {
        match self.0.get(i) {
            Some(Val::Int(v)) => Some(*v),
            Some(Val::Text(t)) => t.parse().ok(),
            _ => None,
        }
    }
    pub fn text(&self, i: usize) -> String {
        self.opt_text(i).unwrap_or_default()
    }
    pub fn opt_text(&self, i: usize) -> Option<String> {
        match self.0.get(i) {
            Some(Val::Text(t)) => Some(t.clone()),
            Some(Val::Int(v)) => Some(v.to_string()),
            _ => None,
        }
    }
}

/// Why a ledger statement failed.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{0}")]
    Postgres(String),
    /// The PostgreSQL server could not be reached again after the connection was lost.
    #[error("{0}")]
    Lost(String),
}

impl DbError {
    /// SQLite's "another process holds the lock": worth waiting for.
    pub fn busy(&self) -> bool {
        matches!(self, DbError::Sqlite(rusqlite::Error::SqliteFailure(e, _))
            if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
    }
}

/// An artifact's columns, in the order of [`ARTIFACT_INSERT`]'s parameters.
pub(super) const ARTIFACT_INSERT: &str = "INSERT INTO artifacts (hash, text_hash, run_id, matter, stage, round, kind, path, model, inputs, plan_hash, node_hash, created, fingerprints) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
