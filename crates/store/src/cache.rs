//! The cache of model answers by key, and every key a stage had with its components, so
//! `lexrun why` can say what changed.
//!
//! An entry is kept twice: in the ledger, and as a small file of the store
//! (`keys/AB/KEY.json`) written before the ledger is asked. An answer whose object reached the
//! store while its ledger row did not (the ledger lost mid-run) is still found by its key on
//! the next run, not asked of the model again, and its row is then entered.

use serde_json::Value;

use super::db::{vals, Row};
use std::path::PathBuf;

use super::types::{now, CacheEntry, Store, StoreError};

/// Which step of which run a key or a failure belongs to: the same six facts, named.
#[derive(Clone, Copy, Debug)]
pub struct StepAt<'a> {
    pub run_id: &'a str,
    /// The workflow's name, and its file.
    pub workflow: &'a str,
    pub file: &'a str,
    pub matter: &'a str,
    pub stage: &'a str,
    pub round: u32,
}

impl Store {
    fn cache_row(r: &Row) -> CacheEntry {
        CacheEntry {
            key: r.text(0),
            stage: r.text(1),
            text_hash: r.text(2),
            timings: serde_json::from_str(&r.text(3)).unwrap_or(Value::Null),
            identity: r.text(4),
            created: r.int(5),
        }
    }

    pub fn cache_get(&self, key: &str) -> Option<CacheEntry> {
        let row = self
            .db
            .one(
                "SELECT key, stage, text_hash, timings, identity, created FROM cache WHERE key = ?1",
                vals![key],
            )
            .ok()
            .flatten()
            .map(|r| Self::cache_row(&r));
        if row.is_some() {
            return row;
        }
        let kept: CacheEntry =
            serde_json::from_slice(&crate::atomic::read_own(&self.key_path(key)?).ok()?)
                .ok()
                .filter(|e: &CacheEntry| e.key == key)?;
        // The ledger missed it: enter it now, if the ledger answers.
        let _ = self.cache_row_put(&kept);
        Some(kept)
    }

    /// Where the store keeps its own copy of a cache entry; `None` for a key that is not a
    /// hash (no file name is made of anything else).
    fn key_path(&self, key: &str) -> Option<PathBuf> {
        if key.len() < 3 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(
            self.dir
                .join("keys")
                .join(&key[..2])
                .join(format!("{}.json", &key[2..])),
        )
    }

    /// Files a cache entry: the store's copy first, then the ledger's row.
    pub fn cache_put(&self, e: &CacheEntry) -> Result<(), StoreError> {
        if let Some(path) = self.key_path(&e.key) {
            let io = |err: std::io::Error| StoreError::Io(path.display().to_string(), err);
            if let Some(parent) = path.parent() {
                crate::atomic::private_dir(parent).map_err(io)?;
            }
            crate::atomic::write_private(&path, serde_json::to_vec(e).unwrap_or_default())
                .map_err(io)?;
        }
        self.cache_row_put(e)
    }

    /// Removes the store's copy of a cache entry.
    pub(super) fn cache_file_drop(&self, key: &str) {
        if let Some(p) = self.key_path(key) {
            let _ = std::fs::remove_file(p);
        }
    }

    fn cache_row_put(&self, e: &CacheEntry) -> Result<(), StoreError> {
        self.exec(
                "INSERT INTO cache (key, stage, text_hash, timings, identity, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (key) DO UPDATE SET stage = excluded.stage, text_hash = excluded.text_hash, timings = excluded.timings, identity = excluded.identity, created = excluded.created",
                vals![&e.key, &e.stage, &e.text_hash, e.timings.to_string(), &e.identity, e.created],
            )
    }

    /// Records the cache key a stage's call had, and whether it was found.
    pub fn record_key(
        &self,
        at: &StepAt<'_>,
        key: &str,
        components: &Value,
        hit: bool,
    ) -> Result<(), StoreError> {
        self.exec(
                "INSERT INTO keys (run_id, workflow, matter, stage, round, key, components, hit, created, file) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) ON CONFLICT DO NOTHING",
                vals![at.run_id, at.workflow, at.matter, at.stage, at.round, key, components.to_string(), hit, now(), at.file],
            )
    }

    /// Records that a stage failed, and why.
    pub fn add_failure(&self, at: &StepAt<'_>, why: &str) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO failures (run_id, workflow, file, matter, stage, round, why, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            vals![at.run_id, at.workflow, at.file, at.matter, at.stage, at.round, why, now()],
        )
    }

    /// A stage's failures from this workflow file, newest first: (run, matter, why, created),
    /// and the rowid order of the newest key of the stage, to tell which came last.
    pub fn recent_failures(
        &self,
        workflow: &str,
        file: &str,
        stage: &str,
        limit: usize,
    ) -> Vec<(String, String, String, i64)> {
        let sql = format!(
            "SELECT run_id, matter, why, created FROM failures WHERE workflow = ?1 AND file = ?2 AND stage = ?3 ORDER BY {} DESC LIMIT ?4",
            self.db.rowid()
        );
        self.db
            .query(&sql, vals![workflow, file, stage, limit as i64])
            .map(|rows| {
                rows.iter()
                    .map(|r| (r.text(0), r.text(1), r.text(2), r.int(3)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The keys a stage had in its most recent runs, newest first: (run, matter, round, key,
    /// components, hit).
    /// Keys recorded from another workflow file of the same name are left out (`file`; keys
    /// from ledgers that did not record the file are kept).
    pub fn recent_keys(
        &self,
        workflow: &str,
        file: &str,
        stage: &str,
        limit: usize,
    ) -> Vec<(String, String, u32, String, Value, bool, i64)> {
        let sql = format!(
            "SELECT run_id, matter, round, key, components, hit, created FROM keys WHERE workflow = ?1 AND stage = ?2 AND (file IS NULL OR file = ?4) ORDER BY {} DESC LIMIT ?3",
            self.db.rowid()
        );
        self.db
            .query(&sql, vals![workflow, stage, limit as i64, file])
            .map(|rows| {
                rows.iter()
                    .map(|r| {
                        (
                            r.text(0),
                            r.text(1),
                            r.int(2) as u32,
                            r.text(3),
                            serde_json::from_str(&r.text(4)).unwrap_or(Value::Null),
                            r.int(5) != 0,
                            r.int(6),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The model identity the newest key of a stage with this plan node used, and its run:
    /// what a cached answer is filed under when the server cannot be asked.
    pub fn last_identity(
        &self,
        workflow: &str,
        stage: &str,
        node: &str,
    ) -> Option<(String, String)> {
        let sql = format!(
            "SELECT run_id, components FROM keys WHERE workflow = ?1 AND stage = ?2 ORDER BY {} DESC LIMIT 200",
            self.db.rowid()
        );
        let rows = self.db.query(&sql, vals![workflow, stage]).ok()?;
        rows.iter().find_map(|r| {
            let v: Value = serde_json::from_str(&r.text(1)).ok()?;
            let model = v["model_identity"].as_str().filter(|m| !m.is_empty())?;
            (v["node"].as_str() == Some(node)).then(|| (model.to_string(), r.text(0)))
        })
    }

    /// Every cache entry, newest first.
    pub fn cache_entries(&self) -> Vec<CacheEntry> {
        self.db
            .query(
                "SELECT key, stage, text_hash, timings, identity, created FROM cache ORDER BY created DESC",
                vec![],
            )
            .map(|rows| rows.iter().map(Self::cache_row).collect())
            .unwrap_or_default()
    }
}
