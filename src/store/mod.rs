//! The store (`.lexrun/` beside the workflow, or `--store DIR`): artifacts addressed by their
//! blake3, and the provenance ledger, an SQLite database anyone can query with `sqlite3`.
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
//! components so a miss can be explained; and every deliberate admission of a refused file.

mod bloom;
mod cache;
mod ledger;
pub mod shingles;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Connection};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the store `{0}`: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("the ledger `{0}`: {1}; if it is damaged, move it aside (the objects stay valid) and run again")]
    Ledger(String, #[source] rusqlite::Error),
    #[error("the ledger `{0}` is missing or empty, but the store holds the objects of earlier runs: without it the intake guard would not know lexrun's own outputs. Restore the ledger from a backup, or start a new store (--store DIR) on purpose")]
    LedgerLost(String),
}

pub struct Store {
    pub dir: PathBuf,
    db: Mutex<Connection>,
    /// Warnings met while reading (corrupt objects), for the run to show.
    pub warnings: Mutex<Vec<String>>,
    /// The fingerprint filter, once loaded and brought up to date.
    bloom: Mutex<Option<bloom::Bloom>>,
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

fn private_dir(p: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(p)?;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700))
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, plan_hash TEXT NOT NULL,
  started INTEGER NOT NULL, finished INTEGER, status TEXT);
CREATE TABLE IF NOT EXISTS sources (
  run_id TEXT NOT NULL, matter TEXT NOT NULL, path TEXT NOT NULL,
  raw_hash TEXT NOT NULL, text_hash TEXT NOT NULL, admitted TEXT);
CREATE TABLE IF NOT EXISTS artifacts (
  id INTEGER PRIMARY KEY, hash TEXT NOT NULL, text_hash TEXT NOT NULL, run_id TEXT NOT NULL,
  matter TEXT NOT NULL, stage TEXT NOT NULL, round INTEGER NOT NULL, kind TEXT NOT NULL,
  path TEXT NOT NULL, model TEXT NOT NULL, inputs TEXT NOT NULL, plan_hash TEXT NOT NULL,
  node_hash TEXT NOT NULL, created INTEGER NOT NULL, fingerprints INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS artifacts_hash ON artifacts(hash);
CREATE INDEX IF NOT EXISTS artifacts_text ON artifacts(text_hash);
CREATE INDEX IF NOT EXISTS artifacts_run ON artifacts(run_id);
CREATE TABLE IF NOT EXISTS shingles (
  fp INTEGER NOT NULL, artifact INTEGER NOT NULL, PRIMARY KEY (fp, artifact)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS shingles_artifact ON shingles(artifact);
CREATE TABLE IF NOT EXISTS cache (
  key TEXT PRIMARY KEY, stage TEXT NOT NULL, text_hash TEXT NOT NULL, timings TEXT NOT NULL,
  identity TEXT NOT NULL, created INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS keys (
  run_id TEXT NOT NULL, workflow TEXT NOT NULL, matter TEXT NOT NULL, stage TEXT NOT NULL,
  round INTEGER NOT NULL, key TEXT NOT NULL, components TEXT NOT NULL, hit INTEGER NOT NULL,
  created INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS keys_stage ON keys(workflow, stage, created);
CREATE TABLE IF NOT EXISTS admissions (
  run_id TEXT NOT NULL, file TEXT NOT NULL, reason TEXT NOT NULL, refused_because TEXT NOT NULL);
";

impl Store {
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let io = |e: std::io::Error| StoreError::Io(dir.display().to_string(), e);
        private_dir(dir).map_err(io)?;
        private_dir(&dir.join("objects")).map_err(io)?;
        let db_path = dir.join("ledger.sqlite");
        let lerr = |e: rusqlite::Error| StoreError::Ledger(db_path.display().to_string(), e);
        // A store with objects had runs: its ledger must still know them.
        let had_runs = std::fs::read_dir(dir.join("objects"))
            .map(|mut rd| rd.next().is_some())
            .unwrap_or(false);
        let db = Connection::open(&db_path).map_err(lerr)?;
        db.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(lerr)?;
        // Switching to WAL and creating the schema take the database's write lock, and SQLite
        // may refuse them at once (without waiting) while another lexrun holds it: retry.
        let setup = |db: &Connection| -> rusqlite::Result<()> {
            db.pragma_update(None, "journal_mode", "WAL")?;
            db.execute_batch(SCHEMA)
        };
        let started = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(5);
        loop {
            match setup(&db) {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if matches!(
                        e.code,
                        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                    ) && started.elapsed() < std::time::Duration::from_secs(30) =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_millis(200));
                }
                Err(e) => return Err(lerr(e)),
            }
        }
        // The fingerprint index is probed hundreds of times per source: map it, do not copy it.
        db.pragma_update(None, "mmap_size", 1i64 << 30)
            .map_err(lerr)?;
        db.pragma_update(None, "cache_size", -65536i64)
            .map_err(lerr)?;
        db.pragma_update(None, "synchronous", "NORMAL")
            .map_err(lerr)?;
        if had_runs {
            let runs: i64 = db
                .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
                .map_err(lerr)?;
            if runs == 0 {
                return Err(StoreError::LedgerLost(db_path.display().to_string()));
            }
        }
        {
            use std::os::unix::fs::PermissionsExt;
            for f in ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"] {
                let _ =
                    std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o600));
            }
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            db: Mutex::new(db),
            warnings: Mutex::new(Vec::new()),
            bloom: Mutex::new(None),
        })
    }

    pub(super) fn db(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs one ledger statement that returns no rows.
    pub(super) fn exec(&self, sql: &str, p: impl rusqlite::Params) -> Result<(), StoreError> {
        self.db()
            .execute(sql, p)
            .map(|_| ())
            .map_err(|e| self.lerr(e))
    }

    pub(super) fn lerr(&self, e: rusqlite::Error) -> StoreError {
        StoreError::Ledger(self.dir.join("ledger.sqlite").display().to_string(), e)
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
        let mut tmp = tempfile::NamedTempFile::new_in(parent).map_err(io)?;
        tmp.write_all(bytes).map_err(io)?;
        tmp.as_file().sync_all().map_err(io)?;
        tmp.persist(&path).map_err(|e| io(e.error))?;
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
                    if name.starts_with(".tmp") {
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
        let recent: Vec<String> = {
            let mut q = db
                .prepare("SELECT run_id FROM runs ORDER BY started DESC, rowid DESC LIMIT ?1")
                .map_err(|e| self.lerr(e))?;
            let rows = q
                .query_map(params![keep as i64], |r| r.get(0))
                .map_err(|e| self.lerr(e))?;
            rows.flatten().collect()
        };
        let marks = recent.iter().map(|_| "?").collect::<Vec<_>>().join(",");
        let keys_in_use: std::collections::HashSet<String> = if recent.is_empty() {
            Default::default()
        } else {
            let sql = format!("SELECT DISTINCT key FROM keys WHERE run_id IN ({marks})");
            let mut q = db.prepare(&sql).map_err(|e| self.lerr(e))?;
            let rows = q
                .query_map(rusqlite::params_from_iter(recent.iter()), |r| r.get(0))
                .map_err(|e| self.lerr(e))?;
            rows.flatten().collect()
        };
        let all: Vec<(String, String)> = {
            let mut q = db
                .prepare("SELECT key, text_hash FROM cache")
                .map_err(|e| self.lerr(e))?;
            let rows = q
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(|e| self.lerr(e))?;
            rows.flatten().collect()
        };
        let mut dropped = 0;
        let mut live_objects: std::collections::HashSet<String> = Default::default();
        {
            let mut q = db
                .prepare(
                    "SELECT run_id, components FROM keys k WHERE rowid IN (
                       SELECT rowid FROM keys k2 WHERE k2.workflow = k.workflow AND k2.stage = k.stage
                       ORDER BY rowid DESC LIMIT 2)
                     OR run_id IN (SELECT run_id FROM runs ORDER BY started DESC, rowid DESC LIMIT ?1)",
                )
                .map_err(|e| self.lerr(e))?;
            let rows = q
                .query_map(params![keep as i64], |r| r.get::<_, String>(1))
                .map_err(|e| self.lerr(e))?;
            for c in rows.flatten() {
                if let Some(p) = serde_json::from_str::<Value>(&c)
                    .ok()
                    .and_then(|v| v["prompt"].as_str().map(str::to_string))
                {
                    live_objects.insert(p);
                }
            }
        }
        for (k, h) in all {
            if keys_in_use.contains(&k) {
                live_objects.insert(h);
            } else {
                db.execute("DELETE FROM cache WHERE key = ?1", params![k])
                    .map_err(|e| self.lerr(e))?;
                dropped += 1;
            }
        }
        drop(db);
        let mut removed = 0;
        for (hash, path) in self.objects() {
            if !live_objects.contains(&hash) && std::fs::remove_file(&path).is_ok() {
                removed += 1;
            }
        }
        Ok((dropped, removed))
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
