//! The store and what it keeps: its folder and ledger, a cached answer, an artifact; and its
//! errors, with what a ledger statement's failure says.

use std::path::PathBuf;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::bloom;
use super::db::{self, Db, DbError};
use super::row::Loss;
use super::schema;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the store `{0}`: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("the ledger `{0}`: {1}; if it is damaged, move it aside (the objects stay valid) and run again")]
    Ledger(String, #[source] DbError),
    #[error("the PostgreSQL ledger `{0}`: {1}; the server's log says more (the store's objects are not affected)")]
    Shared(String, #[source] DbError),
    #[error("the PostgreSQL ledger `{0}` stopped answering: {1}. The run stopped at once: no model was asked after that, what it recorded before is kept and nothing was half-recorded; it is closed as failed when lexrun next reaches the ledger with this store. {remedy}, then run again: finished stages come from the cache", remedy = capital(Loss::Unreachable.remedy()))]
    LedgerGone(String, #[source] DbError),
    #[error("the ledger `{0}` cannot be written: {1}. The run stopped at once: no model was asked after that, what it recorded before is kept and nothing was half-recorded; it is closed as failed when lexrun next opens this store. {remedy}, then run again: finished stages come from the cache", remedy = capital(.2.remedy()))]
    SqliteGone(String, String, Loss),
    #[error("the ledger `{0}` cannot be used: {1}")]
    Format(String, #[source] schema::FormatError),
    #[error("cannot reach the PostgreSQL ledger `{0}`: {1}; check that the server is running and the URL (LEXRUN_LEDGER, else the workflow's `ledger`) is right — nothing was run")]
    Connect(String, #[source] DbError),
    #[error("the ledger `{0}` is missing or empty, but the store holds the objects of earlier runs: without it the intake guard would not know lexrun's own outputs. Restore the ledger from a backup, or start a new store (--store DIR) on purpose")]
    LedgerLost(String),
}

pub struct Store {
    pub dir: PathBuf,
    pub(super) db: Db,
    /// Where the ledger is, for messages: its file, or its URL without the password.
    pub ledger: String,
    /// Warnings met while reading (corrupt objects), for the run to show.
    pub warnings: Mutex<Vec<String>>,
    /// Things worth saying once (a ledger migrated from an older format).
    pub notes: Vec<String>,
    /// The ledger holds fingerprints from before text was folded (format 1).
    pub(super) legacy: bool,
    /// The fingerprint filter, once loaded and brought up to date.
    pub(super) bloom: Mutex<Option<bloom::Bloom>>,
    /// How the ledger was lost, and what its statement said, once a statement found it gone:
    /// the run stops, and says so once.
    pub(super) lost: Mutex<Option<(Loss, String)>>,
}

/// `s` with its first letter a capital, to open a sentence.
fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
/// A cached model answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CacheEntry {
    pub key: String,
    pub stage: String,
    pub text_hash: String,
    pub timings: Value,
    pub identity: String,
    pub created: i64,
}

/// Something lexrun wrote.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Artifact {
    pub hash: String,
    /// Hash of the normalised text (equal to `hash` for plain text).
    pub text_hash: String,
    pub run_id: String,
    pub matter: String,
    pub stage: String,
    pub round: u32,
    /// `stage` (a stage's text in the run folder) or `output` (a declared output).
    pub kind: String,
    pub path: String,
    pub model: String,
    pub inputs: Value,
    pub plan_hash: String,
    pub node_hash: String,
    pub created: i64,
}

pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Store {
    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    /// Runs one ledger statement that returns no rows.
    pub(crate) fn exec(&self, sql: &str, p: Vec<db::Val>) -> Result<(), StoreError> {
        self.db.exec(sql, p).map(|_| ()).map_err(|e| self.lerr(e))
    }

    pub(crate) fn lerr(&self, e: DbError) -> StoreError {
        if let Some(loss) = e.loss() {
            let mut lost = self.lost.lock().unwrap_or_else(|p| p.into_inner());
            if lost.is_none() {
                *lost = Some((loss, e.to_string()));
                // What the run still records (its close) fails at once rather than waiting
                // out the window again for every statement.
                if let Db::Sqlite(c) = &self.db {
                    let c = c.lock().unwrap_or_else(|p| p.into_inner());
                    let _ = c.busy_timeout(std::time::Duration::ZERO);
                }
            }
            return self.gone(loss, e.to_string());
        }
        ledger_error(self.db.is_postgres(), &self.ledger, e)
    }

    fn gone(&self, loss: Loss, detail: String) -> StoreError {
        match loss {
            Loss::Unreachable => StoreError::LedgerGone(self.ledger.clone(), DbError::Lost(detail)),
            loss => StoreError::SqliteGone(self.ledger.clone(), detail, loss),
        }
    }

    /// Whether a statement found the ledger gone (beyond the retry window), with the error
    /// that says so: a run then asks no model anything more.
    pub fn lost(&self) -> Option<StoreError> {
        let lost = self.lost.lock().unwrap_or_else(|p| p.into_inner());
        lost.as_ref().map(|(l, d)| self.gone(*l, d.clone()))
    }
}

/// A ledger statement's failure, with the advice that fits its engine.
pub(super) fn ledger_error(postgres: bool, name: &str, e: DbError) -> StoreError {
    match (postgres, e) {
        (_, e @ DbError::Lost(_)) => StoreError::LedgerGone(name.to_string(), e),
        (false, e) if e.loss().is_some() => {
            let loss = e.loss().unwrap_or(Loss::Disk);
            StoreError::SqliteGone(name.to_string(), e.to_string(), loss)
        }
        (true, e) => StoreError::Shared(name.to_string(), e),
        (false, e) => StoreError::Ledger(name.to_string(), e),
    }
}
