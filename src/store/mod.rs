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
pub mod shingles;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the store `{0}`: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("the ledger `{0}`: {1}; if it is damaged, move it aside (the objects stay valid) and run again")]
    Ledger(String, #[source] rusqlite::Error),
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
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&db_path, std::fs::Permissions::from_mode(0o600));
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            db: Mutex::new(db),
            warnings: Mutex::new(Vec::new()),
            bloom: Mutex::new(None),
        })
    }

    fn db(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs one ledger statement that returns no rows.
    fn exec(&self, sql: &str, p: impl rusqlite::Params) -> Result<(), StoreError> {
        self.db()
            .execute(sql, p)
            .map(|_| ())
            .map_err(|e| self.lerr(e))
    }

    fn cache_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CacheEntry> {
        Ok(CacheEntry {
            key: r.get(0)?,
            stage: r.get(1)?,
            text_hash: r.get(2)?,
            timings: serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or(Value::Null),
            identity: r.get(4)?,
            created: r.get(5)?,
        })
    }

    fn lerr(&self, e: rusqlite::Error) -> StoreError {
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

    pub fn cache_get(&self, key: &str) -> Option<CacheEntry> {
        self.db()
            .query_row(
                "SELECT key, stage, text_hash, timings, identity, created FROM cache WHERE key = ?1",
                params![key],
                Self::cache_row,
            )
            .optional()
            .ok()
            .flatten()
    }

    pub fn cache_put(&self, e: &CacheEntry) -> Result<(), StoreError> {
        self.exec(
                "INSERT OR REPLACE INTO cache (key, stage, text_hash, timings, identity, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![e.key, e.stage, e.text_hash, e.timings.to_string(), e.identity, e.created],
            )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn record_key(
        &self,
        run_id: &str,
        workflow: &str,
        matter: &str,
        stage: &str,
        round: u32,
        key: &str,
        components: &Value,
        hit: bool,
    ) -> Result<(), StoreError> {
        self.exec(
                "INSERT INTO keys (run_id, workflow, matter, stage, round, key, components, hit, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![run_id, workflow, matter, stage, round, key, components.to_string(), hit, now()],
            )
    }

    /// The keys a stage had in its most recent runs, newest first: (run, matter, round, key,
    /// components, hit).
    pub fn recent_keys(
        &self,
        workflow: &str,
        stage: &str,
        limit: usize,
    ) -> Vec<(String, String, u32, String, Value, bool)> {
        let db = self.db();
        let Ok(mut q) = db.prepare(
            "SELECT run_id, matter, round, key, components, hit FROM keys WHERE workflow = ?1 AND stage = ?2 ORDER BY rowid DESC LIMIT ?3",
        ) else {
            return Vec::new();
        };
        q.query_map(params![workflow, stage, limit as i64], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, u32>(2)?,
                r.get::<_, String>(3)?,
                serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or(Value::Null),
                r.get::<_, bool>(5)?,
            ))
        })
        .map(|rows| rows.flatten().collect())
        .unwrap_or_default()
    }

    pub fn begin_run(
        &self,
        run_id: &str,
        workflow: &str,
        plan_hash: &str,
    ) -> Result<(), StoreError> {
        self.exec(
                "INSERT OR REPLACE INTO runs (run_id, workflow, plan_hash, started) VALUES (?1, ?2, ?3, ?4)",
                params![run_id, workflow, plan_hash, now()],
            )
    }

    pub fn finish_run(&self, run_id: &str, status: &str) -> Result<(), StoreError> {
        self.exec(
            "UPDATE runs SET finished = ?2, status = ?3 WHERE run_id = ?1",
            params![run_id, now(), status],
        )
    }

    pub fn add_source(
        &self,
        run_id: &str,
        matter: &str,
        path: &str,
        raw: &str,
        text: &str,
        admitted: Option<&str>,
    ) -> Result<(), StoreError> {
        self.exec(
                "INSERT INTO sources (run_id, matter, path, raw_hash, text_hash, admitted) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![run_id, matter, path, raw, text, admitted],
            )
    }

    pub fn add_admission(
        &self,
        run_id: &str,
        file: &str,
        reason: &str,
        refused_because: &str,
    ) -> Result<(), StoreError> {
        self.exec(
                "INSERT INTO admissions (run_id, file, reason, refused_because) VALUES (?1, ?2, ?3, ?4)",
                params![run_id, file, reason, refused_because],
            )
    }

    /// Records an artifact with the fingerprints of its text, leaving out those of the
    /// evidence it was written from (`evidence`): a passage the output quotes from a source
    /// must not make that source look like a copy of the output.
    pub fn add_artifact(
        &self,
        a: &Artifact,
        text: &str,
        evidence: &std::collections::HashSet<u64>,
    ) -> Result<(), StoreError> {
        let fps: Vec<u64> = shingles::fingerprints(text)
            .into_iter()
            .filter(|f| !evidence.contains(f))
            .collect();
        let mut db = self.db();
        let tx = db.transaction().map_err(|e| self.lerr(e))?;
        tx.execute(
            "INSERT INTO artifacts (hash, text_hash, run_id, matter, stage, round, kind, path, model, inputs, plan_hash, node_hash, created, fingerprints) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![a.hash, a.text_hash, a.run_id, a.matter, a.stage, a.round, a.kind, a.path, a.model, a.inputs.to_string(), a.plan_hash, a.node_hash, a.created, fps.len() as i64],
        )
        .map_err(|e| self.lerr(e))?;
        let id = tx.last_insert_rowid();
        {
            let mut ins = tx
                .prepare_cached("INSERT OR IGNORE INTO shingles (fp, artifact) VALUES (?1, ?2)")
                .map_err(|e| self.lerr(e))?;
            for fp in &fps {
                ins.execute(params![*fp as i64, id])
                    .map_err(|e| self.lerr(e))?;
            }
        }
        tx.commit().map_err(|e| self.lerr(e))
    }

    fn artifact_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Artifact> {
        Ok(Artifact {
            hash: r.get(0)?,
            text_hash: r.get(1)?,
            run_id: r.get(2)?,
            matter: r.get(3)?,
            stage: r.get(4)?,
            round: r.get(5)?,
            kind: r.get(6)?,
            path: r.get(7)?,
            model: r.get(8)?,
            inputs: serde_json::from_str(&r.get::<_, String>(9)?).unwrap_or(Value::Null),
            plan_hash: r.get(10)?,
            node_hash: r.get(11)?,
            created: r.get(12)?,
        })
    }

    const ARTIFACT_COLS: &'static str = "hash, text_hash, run_id, matter, stage, round, kind, path, model, inputs, plan_hash, node_hash, created";

    /// An artifact whose bytes or normalised text have this hash.
    pub fn artifact_by_hash(&self, raw: &str, text: &str) -> Option<Artifact> {
        let db = self.db();
        // Two indexed lookups (an `OR` across two columns would scan the table).
        for (col, v) in [("hash", raw), ("text_hash", text)] {
            let sql = format!(
                "SELECT {} FROM artifacts WHERE {col} = ?1 LIMIT 1",
                Self::ARTIFACT_COLS
            );
            if let Ok(Some(a)) = db
                .query_row(&sql, params![v], Self::artifact_row)
                .optional()
            {
                return Some(a);
            }
        }
        None
    }

    /// The earlier artifact whose own fingerprints (those not taken from its evidence) are
    /// most contained in `fps`: (artifact, the share of them found).
    pub fn overlap(&self, fps: &[u64]) -> Option<(Artifact, f64)> {
        if fps.is_empty() {
            return None;
        }
        let db = self.db();
        // Only the fingerprints the filter may hold are looked up in the ledger.
        let candidates: Vec<u64> = match self.filter(&db).as_deref() {
            Some(Some(b)) => fps.iter().copied().filter(|f| b.may_contain(*f)).collect(),
            _ => fps.to_vec(),
        };
        let mut counts: std::collections::HashMap<i64, u32> = std::collections::HashMap::new();
        // One probe of the (fp, artifact) B-tree per candidate, through one prepared statement.
        {
            let mut q = db
                .prepare_cached("SELECT artifact FROM shingles WHERE fp = ?1")
                .ok()?;
            for fp in &candidates {
                let rows = q
                    .query_map(params![*fp as i64], |r| r.get::<_, i64>(0))
                    .ok()?;
                for id in rows.flatten() {
                    *counts.entry(id).or_default() += 1;
                }
            }
        }
        let mut best: Option<(i64, f64)> = None;
        for (id, n) in counts {
            let total: i64 = db
                .query_row(
                    "SELECT fingerprints FROM artifacts WHERE id = ?1",
                    params![id],
                    |r| r.get(0),
                )
                .ok()?;
            let share = n as f64 / total.max(1) as f64;
            if best.is_none_or(|(_, s)| share > s) {
                best = Some((id, share.min(1.0)));
            }
        }
        let (id, share) = best?;
        let sql = format!(
            "SELECT {} FROM artifacts WHERE id = ?1",
            Self::ARTIFACT_COLS
        );
        let a = db.query_row(&sql, params![id], Self::artifact_row).ok()?;
        Some((a, share))
    }

    /// The fingerprint filter, brought up to date with the ledger: loaded from its file,
    /// extended with the fingerprints of newer artifacts, rebuilt when it is missing, damaged,
    /// ahead of the ledger or full, and saved when it changed. `None` if it cannot be had
    /// (then every fingerprint is looked up).
    fn filter(&self, db: &Connection) -> Option<std::sync::MutexGuard<'_, Option<bloom::Bloom>>> {
        let mut guard = self.bloom.lock().ok()?;
        // A bare MAX over the primary key is one B-tree step (COALESCE would scan the table).
        let latest: i64 = db
            .prepare_cached("SELECT MAX(id) FROM artifacts")
            .and_then(|mut q| q.query_row([], |r| r.get::<_, Option<i64>>(0)))
            .ok()?
            .unwrap_or(0);
        let path = self.dir.join("fingerprints.bloom");
        if guard.is_none() {
            *guard = bloom::Bloom::load(&path);
        }
        if guard.as_ref().is_some_and(|b| b.covers == latest) {
            return Some(guard);
        }
        let mut extended = false;
        if let Some(b) = guard.as_mut().filter(|b| b.covers < latest && b.fits()) {
            let mut q = db
                .prepare("SELECT fp FROM shingles WHERE artifact > ?1")
                .ok()?;
            for fp in q
                .query_map(params![b.covers], |r| r.get::<_, i64>(0))
                .ok()?
                .flatten()
            {
                b.insert(fp as u64);
            }
            b.covers = latest;
            extended = b.fits();
        }
        if !extended {
            let total: i64 = db
                .query_row(
                    "SELECT COALESCE(SUM(fingerprints), 0) FROM artifacts",
                    [],
                    |r| r.get(0),
                )
                .ok()?;
            let mut b = bloom::Bloom::with_capacity((total as usize).max(1) * 2);
            let mut q = db.prepare("SELECT fp FROM shingles").ok()?;
            for fp in q.query_map([], |r| r.get::<_, i64>(0)).ok()?.flatten() {
                b.insert(fp as u64);
            }
            b.covers = latest;
            *guard = Some(b);
        }
        if let Some(b) = guard.as_ref() {
            let _ = b.save(&path);
        }
        Some(guard)
    }

    pub fn artifacts_of_run(&self, run_id: &str) -> Vec<Artifact> {
        let db = self.db();
        let sql = format!(
            "SELECT {} FROM artifacts WHERE run_id = ?1 ORDER BY id",
            Self::ARTIFACT_COLS
        );
        let Ok(mut q) = db.prepare(&sql) else {
            return Vec::new();
        };
        q.query_map(params![run_id], Self::artifact_row)
            .map(|rows| rows.flatten().collect())
            .unwrap_or_default()
    }

    pub fn run_info(&self, run_id: &str) -> Option<Value> {
        let db = self.db();
        let run = db
            .query_row(
                "SELECT workflow, plan_hash, started, finished, status FROM runs WHERE run_id = ?1",
                params![run_id],
                |r| {
                    Ok(serde_json::json!({
                        "run_id": run_id, "workflow": r.get::<_, String>(0)?, "plan_hash": r.get::<_, String>(1)?,
                        "started": r.get::<_, i64>(2)?, "finished": r.get::<_, Option<i64>>(3)?, "status": r.get::<_, Option<String>>(4)?,
                    }))
                },
            )
            .optional()
            .ok()??;
        let mut q = db
            .prepare(
                "SELECT matter, path, raw_hash, text_hash, admitted FROM sources WHERE run_id = ?1",
            )
            .ok()?;
        let sources: Vec<Value> = q
            .query_map(params![run_id], |r| {
                Ok(serde_json::json!({"matter": r.get::<_, String>(0)?, "path": r.get::<_, String>(1)?, "raw_hash": r.get::<_, String>(2)?, "text_hash": r.get::<_, String>(3)?, "admitted": r.get::<_, Option<String>>(4)?}))
            })
            .ok()?
            .flatten()
            .collect();
        let mut run = run;
        run["sources"] = Value::Array(sources);
        Some(run)
    }

    pub fn last_run(&self) -> Option<String> {
        self.db()
            .query_row(
                "SELECT run_id FROM runs ORDER BY started DESC, rowid DESC LIMIT 1",
                [],
                |r| r.get(0),
            )
            .optional()
            .ok()
            .flatten()
    }

    /// Every cache entry, newest first.
    pub fn cache_entries(&self) -> Vec<CacheEntry> {
        let db = self.db();
        let Ok(mut q) = db.prepare("SELECT key, stage, text_hash, timings, identity, created FROM cache ORDER BY created DESC") else {
            return Vec::new();
        };
        q.query_map([], Self::cache_row)
            .map(|rows| rows.flatten().collect())
            .unwrap_or_default()
    }

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

    /// Removes cache entries and objects that the `keep` most recent runs do not use.
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
