//! The store (by default `lexrun/` in the user's data folder, one for every matter and
//! workflow; `--store DIR` or `LEXRUN_STORE` to choose another): artifacts addressed by their
//! blake3, and the provenance ledger — an SQLite database anyone can query with `sqlite3`, or
//! a PostgreSQL database a firm's desks share (`LEXRUN_LEDGER=postgres://…`, see `db.rs`).
//!
//! Objects are written atomically (temporary file, fsync, rename) and re-hashed on every
//! read: a corrupt or truncated object is a miss with a warning, never a wrong answer. The
//! store's folder and files are readable by their owner only. Several lexrun processes can
//! share a store: objects are immutable and named by content, and the ledger is SQLite in WAL
//! mode with a busy timeout.
//!
//! The ledger holds, for every run, its source snapshot (the hash of every evidence file, raw
//! and as text); for every artifact (a stage's text, a written output) the run, stage, model
//! identity, input hashes, plan and node hashes and time, with word-shingle fingerprints of
//! its text so that a copy — renamed, re-wrapped, lightly edited, converted — is recognised if
//! it ever comes back as evidence; the cache of model answers by key, with the key's
//! components so a miss can be explained; every deliberate admission of a refused file; every
//! claim a model wrote, with its verdict (`taint.rs`); when each evidence file was first
//! seen in each matter; and reviewers' decisions on flagged claims (`decisions.rs`).

use lexrun_base::{atomic, credentials};

mod adopt;
mod cache;
pub(crate) mod db;
mod decisions;
mod ledger;
mod postgres;
mod productions;
mod row;
mod schema;
mod taint;
mod types;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::Connection;
use serde_json::Value;

use crate::atomic::private_dir;
use db::{vals, Db};
use lexrun_base::fingerprint::bloom;
pub use lexrun_base::fingerprint::{fold, shingles};

pub use adopt::{adopt, adopt_beside, default_dir, Adopted};
pub use cache::StepAt;
pub use db::DbError;
pub use decisions::{Decision, DecisionPage, Verdict};
pub use ledger::{Overlap, RunRow, RunSource};
pub use productions::{Volume, VolumeDocument};
pub use row::Loss;
pub use schema::FORMAT;
pub use taint::{now_ms, ClaimRecord, Seen};
pub use types::{now, Artifact, CacheEntry, Store, StoreError};

use types::ledger_error;

impl Store {
    /// The store in `dir`, with its SQLite ledger `dir/ledger.sqlite`.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        Self::open_with(dir, None)
    }

    /// The store in `dir` (its objects), with the ledger at `ledger` (a `postgres://` URL)
    /// or, when none is given, in `dir/ledger.sqlite`. A PostgreSQL server that cannot be
    /// reached is an error before anything is written.
    pub fn open_with(dir: &Path, ledger: Option<&str>) -> Result<Store, StoreError> {
        let io = |e: std::io::Error| StoreError::Io(dir.display().to_string(), e);
        // A store with objects had runs: its own ledger must still know them.
        let had_runs = std::fs::read_dir(dir.join("objects"))
            .map(|mut rd| rd.next().is_some())
            .unwrap_or(false);
        let (db, name) = match ledger {
            Some(url) => {
                let shown = crate::credentials::url(url);
                let pg = postgres::Pg::connect(url, std::time::Duration::from_secs(10))
                    .map_err(|e| StoreError::Connect(shown.clone(), e))?;
                (Db::Postgres(pg), shown)
            }
            None => {
                private_dir(dir).map_err(io)?;
                let db_path = dir.join("ledger.sqlite");
                let name = db_path.display().to_string();
                (Db::Sqlite(Mutex::new(open_sqlite(&db_path, &name)?)), name)
            }
        };
        private_dir(dir).map_err(io)?;
        private_dir(&dir.join("objects")).map_err(io)?;
        let before = with_retry(|| schema::prepare(&db, db.is_postgres()))
            .map_err(|e| StoreError::Format(name.clone(), e))?;
        if had_runs && !db.is_postgres() {
            let runs = db
                .one("SELECT COUNT(*) FROM runs", vec![])
                .map_err(|e| StoreError::Ledger(name.clone(), e))?
                .map_or(0, |r| r.int(0));
            if runs == 0 {
                return Err(StoreError::LedgerLost(name));
            }
        }
        let mut notes = Vec::new();
        if let Some(f) = before.filter(|f| *f < schema::FORMAT) {
            notes.push(format!(
                "the ledger `{name}` was in format {f} (an older lexrun); it now is in format {}, with everything it recorded kept",
                schema::FORMAT
            ));
        }
        let legacy = db
            .one(
                "SELECT value FROM meta WHERE key = 'legacy_fingerprints'",
                vec![],
            )
            .map_err(|e| ledger_error(db.is_postgres(), &name, e))?
            .is_some();
        let mut store = Store {
            dir: dir.to_path_buf(),
            db,
            ledger: name,
            warnings: Mutex::new(Vec::new()),
            notes,
            legacy,
            bloom: Mutex::new(None),
            lost: Mutex::new(None),
        };
        let closed = store.close_abandoned_runs();
        if !closed.is_empty() {
            store.notes.push(format!(
                "closed as failed {} run{} of this store that ended without the ledger hearing of it: {}",
                closed.len(),
                if closed.len() == 1 { "" } else { "s" },
                closed.join(", ")
            ));
        }
        Ok(store)
    }

    pub fn object_path(&self, hash: &str) -> PathBuf {
        let (a, b) = hash.split_at(2.min(hash.len()));
        self.dir.join("objects").join(a).join(b)
    }

    /// Stores bytes; returns their hash. Writing what is already there costs a stat.
    pub fn put(&self, bytes: &[u8]) -> Result<String, StoreError> {
        let hash = blake3::hash(bytes).to_hex().to_string();
        let path = self.object_path(&hash);
        if path.is_file() && self.get(&hash).is_some() {
            return Ok(hash);
        }
        let io = |e: std::io::Error| StoreError::Io(path.display().to_string(), e);
        let parent = path.parent().unwrap_or(&self.dir);
        private_dir(parent).map_err(io)?;
        crate::atomic::write_private(&path, bytes).map_err(io)?;
        Ok(hash)
    }

    /// Reads an object and checks its hash; a damaged object is a miss with a warning.
    pub fn get(&self, hash: &str) -> Option<Vec<u8>> {
        let path = self.object_path(hash);
        let bytes = std::fs::read(&path).ok()?;
        if blake3::hash(&bytes).to_hex().as_str() != hash {
            let w = format!(
                "store object {} is damaged (its content no longer matches its hash); treated as missing",
                path.display()
            );
            if let Ok(mut ws) = self.warnings.lock() {
                ws.push(w);
            }
            return None;
        }
        Some(bytes)
    }

    const ARTIFACT_COLS: &'static str = "hash, text_hash, run_id, matter, stage, round, kind, path, model, inputs, plan_hash, node_hash, created";

    /// Every object file: (hash it is named by, path).
    pub fn objects(&self) -> Vec<(String, PathBuf)> {
        let mut out = Vec::new();
        let Ok(rd) = std::fs::read_dir(self.dir.join("objects")) else {
            return out;
        };
        for d in rd.flatten() {
            let prefix = d.file_name().to_string_lossy().into_owned();
            if let Ok(inner) = std::fs::read_dir(d.path()) {
                for f in inner.flatten() {
                    let name = f.file_name().to_string_lossy().into_owned();
                    // Temporary files of writes under way (`.NAME.XXXXXX.partial`).
                    if name.starts_with('.') {
                        continue;
                    }
                    out.push((format!("{prefix}{name}"), f.path()));
                }
            }
        }
        out.sort();
        out
    }

    /// Removes cache entries and objects that the `keep` most recent runs do not use. The
    /// rendered prompts `lexrun why` compares stay: those of the kept runs' keys, and of the
    /// two newest keys of every stage.
    pub fn gc(&self, keep: usize) -> Result<(usize, usize), StoreError> {
        let db = self.db();
        let recent: Vec<String> = db
            .query(
                &format!(
                    "SELECT run_id FROM runs ORDER BY started DESC, {} DESC LIMIT ?1",
                    db.rowid()
                ),
                vals![keep as i64],
            )
            .map_err(|e| self.lerr(e))?
            .iter()
            .map(|r| r.text(0))
            .collect();
        let mut keys_in_use: std::collections::HashSet<String> = Default::default();
        for run in &recent {
            for r in db
                .query(
                    "SELECT DISTINCT key FROM keys WHERE run_id = ?1",
                    vals![run],
                )
                .map_err(|e| self.lerr(e))?
            {
                keys_in_use.insert(r.text(0));
            }
        }
        let all = db
            .query("SELECT key, text_hash FROM cache", vec![])
            .map_err(|e| self.lerr(e))?;
        let mut dropped = 0;
        let mut live_objects: std::collections::HashSet<String> = Default::default();
        {
            let rid = db.rowid();
            let rows = db
                .query(
                    &format!(
                        "SELECT run_id, components FROM keys k WHERE {rid} IN (
                           SELECT {rid} FROM keys k2 WHERE k2.workflow = k.workflow AND k2.stage = k.stage
                           ORDER BY {rid} DESC LIMIT 2)
                         OR run_id IN (SELECT run_id FROM runs ORDER BY started DESC, {rid} DESC LIMIT ?1)"
                    ),
                    vals![keep as i64],
                )
                .map_err(|e| self.lerr(e))?;
            for r in rows {
                if let Some(p) = serde_json::from_str::<Value>(&r.text(1))
                    .ok()
                    .and_then(|v| v["prompt"].as_str().map(str::to_string))
                {
                    live_objects.insert(p);
                }
            }
        }
        for r in all {
            let (k, h) = (r.text(0), r.text(1));
            if keys_in_use.contains(&k) {
                live_objects.insert(h);
            } else {
                self.exec("DELETE FROM cache WHERE key = ?1", vals![&k])?;
                self.cache_file_drop(&k);
                dropped += 1;
            }
        }
        let mut removed = 0;
        for (hash, path) in self.objects() {
            if !live_objects.contains(&hash) && std::fs::remove_file(&path).is_ok() {
                removed += 1;
            }
        }
        Ok((dropped, removed))
    }
}

/// Opens an SQLite ledger in WAL mode with a busy timeout, so several lexrun processes can
/// share it.
fn open_sqlite(path: &Path, name: &str) -> Result<Connection, StoreError> {
    let lerr = |e: rusqlite::Error| StoreError::Ledger(name.to_string(), e.into());
    // Made owner-only before SQLite opens it: SQLite gives its `-wal` and `-shm` files the
    // database file's mode.
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| StoreError::Io(name.to_string(), e))?;
    }
    let db = Connection::open(path).map_err(lerr)?;
    db.busy_timeout(row::retry_window()).map_err(lerr)?;
    with_retry(|| -> Result<(), DbError> {
        db.pragma_update(None, "journal_mode", "WAL")?;
        Ok(())
    })
    .map_err(|e| StoreError::Ledger(name.to_string(), e))?;
    // The fingerprint index is probed hundreds of times per source: map it, do not copy it.
    db.pragma_update(None, "mmap_size", 1i64 << 30)
        .map_err(lerr)?;
    db.pragma_update(None, "cache_size", -65536i64)
        .map_err(lerr)?;
    db.pragma_update(None, "synchronous", "NORMAL")
        .map_err(lerr)?;
    {
        use std::os::unix::fs::PermissionsExt;
        for ext in ["", "-wal", "-shm"] {
            let f = std::path::PathBuf::from(format!("{}{ext}", path.display()));
            let _ = std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o600));
        }
    }
    Ok(db)
}

/// Switching to WAL and creating the schema take the database's write lock, and SQLite may
/// refuse them at once (without waiting) while another lexrun holds it: retry for up to 30 s.
fn with_retry<T, E: RetryBusy>(mut f: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(5);
    loop {
        match f() {
            Err(e) if e.busy() && started.elapsed() < std::time::Duration::from_secs(30) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(200));
            }
            r => return r,
        }
    }
}

trait RetryBusy {
    fn busy(&self) -> bool;
}
impl RetryBusy for DbError {
    fn busy(&self) -> bool {
        DbError::busy(self)
    }
}
impl RetryBusy for schema::FormatError {
    fn busy(&self) -> bool {
        matches!(self, schema::FormatError::Db(e) if e.busy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_round_trip_and_damage_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let h = s.put(b"the draft").unwrap();
        assert_eq!(s.get(&h).unwrap(), b"the draft");
        std::fs::write(s.object_path(&h), b"the draf").unwrap();
        assert!(s.get(&h).is_none());
        assert!(s.warnings.lock().unwrap()[0].contains("damaged"));
        // Putting it again repairs it.
        s.put(b"the draft").unwrap();
        assert_eq!(s.get(&h).unwrap(), b"the draft");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("objects"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "owner only");
    }
}
