//! The ledger's database: SQLite embedded in the store (the default), or a PostgreSQL server
//! a firm's desks share (`LEXRUN_LEDGER=postgres://…`). Statements are written once, in the
//! SQL both understand, with `?N` parameters; values travel as [`Val`] and rows come back as
//! [`Row`]. The few statements on the intake guard's hot path have one form per engine.

use std::collections::HashMap;
use std::sync::Mutex;

use rusqlite::{params_from_iter, Connection, OptionalExtension};

use super::postgres::Pg;
pub use super::row::{DbError, Row, Val};

/// Parameters for a statement: `vals![a, b, c]`.
macro_rules! vals {
    ($($v:expr),* $(,)?) => { vec![$($crate::db::Val::from($v)),*] };
}
pub(crate) use vals;

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, Value, ValueRef};
        Ok(match self {
            Val::Int(v) => ToSqlOutput::Owned(Value::Integer(*v)),
            Val::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Val::NullInt | Val::NullText => ToSqlOutput::Owned(Value::Null),
        })
    }
}

fn sqlite_row(r: &rusqlite::Row<'_>, n: usize) -> rusqlite::Result<Row> {
    use rusqlite::types::ValueRef;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(match r.get_ref(i)? {
            ValueRef::Integer(v) => Val::Int(v),
            ValueRef::Real(v) => Val::Int(v as i64),
            ValueRef::Text(t) | ValueRef::Blob(t) => {
                Val::Text(String::from_utf8_lossy(t).into_owned())
            }
            ValueRef::Null => Val::NullText,
        });
    }
    Ok(Row(out))
}

/// The ledger's engine.
pub enum Db {
    Sqlite(Mutex<Connection>),
    Postgres(Pg),
}

impl Db {
    fn sqlite(&self) -> Option<std::sync::MutexGuard<'_, Connection>> {
        match self {
            Db::Sqlite(c) => Some(c.lock().unwrap_or_else(|p| p.into_inner())),
            Db::Postgres(_) => None,
        }
    }

    /// The column that orders rows by insertion: SQLite's implicit `rowid`, PostgreSQL's `id`.
    pub fn rowid(&self) -> &'static str {
        match self {
            Db::Sqlite(_) => "rowid",
            Db::Postgres(_) => "id",
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Db::Postgres(_))
    }

    /// Runs one statement; the number of rows it changed.
    pub fn exec(&self, sql: &str, params: Vec<Val>) -> Result<u64, DbError> {
        match self {
            Db::Sqlite(_) => {
                let c = self.sqlite().expect("sqlite");
                let mut q = c.prepare_cached(sql)?;
                Ok(q.execute(params_from_iter(params.iter()))? as u64)
            }
            Db::Postgres(pg) => pg.exec(sql, params),
        }
    }

    /// Runs several statements, each with its parameters, in one transaction.
    pub fn transaction(&self, stmts: Vec<(String, Vec<Val>)>) -> Result<(), DbError> {
        match self {
            Db::Sqlite(_) => {
                let mut c = self.sqlite().expect("sqlite");
                let tx = c.transaction()?;
                for (sql, p) in &stmts {
                    tx.prepare_cached(sql)?
                        .execute(params_from_iter(p.iter()))?;
                }
                tx.commit()?;
                Ok(())
            }
            Db::Postgres(pg) => pg.transaction(stmts),
        }
    }

    /// Runs a statement that returns rows.
    pub fn query(&self, sql: &str, params: Vec<Val>) -> Result<Vec<Row>, DbError> {
        match self {
            Db::Sqlite(_) => {
                let c = self.sqlite().expect("sqlite");
                let mut q = c.prepare_cached(sql)?;
                let n = q.column_count();
                let rows = q.query_map(params_from_iter(params.iter()), |r| sqlite_row(r, n))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            }
            Db::Postgres(pg) => pg.query(sql, params),
        }
    }

    /// The first row, if any.
    pub fn one(&self, sql: &str, params: Vec<Val>) -> Result<Option<Row>, DbError> {
        match self {
            Db::Sqlite(_) => {
                let c = self.sqlite().expect("sqlite");
                let mut q = c.prepare_cached(sql)?;
                let n = q.column_count();
                Ok(
                    q.query_row(params_from_iter(params.iter()), |r| sqlite_row(r, n))
                        .optional()?,
                )
            }
            Db::Postgres(pg) => Ok(pg.query(sql, params)?.into_iter().next()),
        }
    }

    /// Folds every integer the statement's first column yields into `acc`, streaming: for
    /// reading millions of fingerprints without holding them as rows.
    pub fn fold_ints<T: Send + 'static>(
        &self,
        sql: &str,
        params: Vec<Val>,
        acc: T,
        f: fn(&mut T, i64),
    ) -> Result<T, DbError> {
        match self {
            Db::Sqlite(_) => {
                let c = self.sqlite().expect("sqlite");
                let mut q = c.prepare(sql)?;
                let mut rows = q.query(params_from_iter(params.iter()))?;
                let mut acc = acc;
                while let Some(r) = rows.next()? {
                    f(&mut acc, r.get(0)?);
                }
                Ok(acc)
            }
            Db::Postgres(pg) => pg.fold_ints(sql, params, (acc, f)),
        }
    }

    /// Records an artifact row (its columns in `ARTIFACT_INSERT` order) with its
    /// fingerprints, in one transaction; its id. Ids are handed out in commit order, so a
    /// reader that has seen id N has seen every id below it.
    pub fn insert_artifact(&self, row: Vec<Val>, fps: &[u64]) -> Result<i64, DbError> {
        match self {
            Db::Sqlite(_) => {
                let mut c = self.sqlite().expect("sqlite");
                let tx = c.transaction()?;
                tx.prepare_cached(super::row::ARTIFACT_INSERT)?
                    .execute(params_from_iter(row.iter()))?;
                let id = tx.last_insert_rowid();
                {
                    let mut ins = tx.prepare_cached(
                        "INSERT OR IGNORE INTO shingles (fp, artifact) VALUES (?1, ?2)",
                    )?;
                    for fp in fps {
                        ins.execute(rusqlite::params![*fp as i64, id])?;
                    }
                }
                tx.commit()?;
                Ok(id)
            }
            Db::Postgres(pg) => pg.insert_artifact(row, fps),
        }
    }

    /// For each artifact sharing any of `fps`: how many of them it has.
    pub fn shingle_hits(&self, fps: &[u64]) -> Result<HashMap<i64, u32>, DbError> {
        let mut counts: HashMap<i64, u32> = HashMap::new();
        match self {
            Db::Sqlite(_) => {
                let c = self.sqlite().expect("sqlite");
                // One probe of the (fp, artifact) B-tree per fingerprint.
                let mut q = c.prepare_cached("SELECT artifact FROM shingles WHERE fp = ?1")?;
                for fp in fps {
                    let rows = q.query_map([*fp as i64], |r| r.get::<_, i64>(0))?;
                    for id in rows {
                        *counts.entry(id?).or_default() += 1;
                    }
                }
            }
            Db::Postgres(pg) => {
                if fps.is_empty() {
                    return Ok(counts);
                }
                counts = pg.shingle_hits(fps)?;
            }
        }
        Ok(counts)
    }

    /// The fingerprint count of each artifact named.
    pub fn fingerprint_totals(&self, ids: &[i64]) -> Result<HashMap<i64, i64>, DbError> {
        let mut out = HashMap::new();
        match self {
            Db::Sqlite(_) => {
                let c = self.sqlite().expect("sqlite");
                let mut q = c.prepare_cached("SELECT fingerprints FROM artifacts WHERE id = ?1")?;
                for id in ids {
                    if let Some(n) = q.query_row([id], |r| r.get::<_, i64>(0)).optional()? {
                        out.insert(*id, n);
                    }
                }
            }
            Db::Postgres(pg) => {
                if !ids.is_empty() {
                    out = pg.fingerprint_totals(ids)?;
                }
            }
        }
        Ok(out)
    }
}
