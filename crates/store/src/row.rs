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

    /// Whether the ledger itself is gone, not a statement wrong: PostgreSQL not reached
    /// again within the retry window, or an SQLite ledger that cannot be written (its lock
    /// held past the window, its disk full or failing, its file damaged). What it takes to
    /// bring it back, for the message.
    pub fn loss(&self) -> Option<Loss> {
        use rusqlite::ErrorCode as C;
        match self {
            DbError::Lost(_) => Some(Loss::Unreachable),
            DbError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => match e.code {
                C::DatabaseBusy | C::DatabaseLocked => Some(Loss::Locked),
                C::DiskFull => Some(Loss::Full),
                C::SystemIoFailure | C::ReadOnly | C::CannotOpen | C::PermissionDenied => {
                    Some(Loss::Disk)
                }
                C::DatabaseCorrupt | C::NotADatabase => Some(Loss::Damaged),
                _ => None,
            },
            _ => None,
        }
    }
}

/// How a ledger was lost, which decides what the person is told to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// The PostgreSQL server did not answer again within the retry window.
    Unreachable,
    /// Another process held the SQLite ledger's write lock for longer than the window.
    Locked,
    /// The disk holding the SQLite ledger is full.
    Full,
    /// The SQLite ledger's disk or folder failed or cannot be written.
    Disk,
    /// The SQLite ledger's file is damaged.
    Damaged,
}

impl Loss {
    /// The remedy, in one sentence.
    pub fn remedy(self) -> &'static str {
        match self {
            Loss::Unreachable => "check that the server is up and reachable (`pg_isready -h HOST -p PORT`) and that LEXRUN_LEDGER, else the workflow's `ledger`, names it",
            Loss::Locked => "another process held the ledger's write lock for longer than lexrun waits (LEXRUN_LEDGER_RETRY_S, 30 s by default): end it (a `sqlite3` shell or a backup with a transaction open)",
            Loss::Full => "the disk holding the store is full: free some space (`df` shows it)",
            Loss::Disk => "check that the store's folder is on a working disk and that you can write to it",
            Loss::Damaged => "the ledger's file is damaged: restore it from a backup",
        }
    }
}

/// How long a lost ledger is waited for before the statement under way fails: a PostgreSQL
/// connection tried again with backoff, an SQLite lock another process holds. Long enough for
/// a server restart, a network blip or a busy neighbour; `LEXRUN_LEDGER_RETRY_S` sets it in
/// seconds.
pub fn retry_window() -> std::time::Duration {
    std::env::var("LEXRUN_LEDGER_RETRY_S")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(
            std::time::Duration::from_secs(30),
            std::time::Duration::from_secs_f64,
        )
}

/// An artifact's columns, in the order of [`ARTIFACT_INSERT`]'s parameters.
pub(super) const ARTIFACT_INSERT: &str = "INSERT INTO artifacts (hash, text_hash, run_id, matter, stage, round, kind, path, model, inputs, plan_hash, node_hash, created, fingerprints) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
