//! The cache of model answers by key, and every key a stage had with its components, so
//! `lexrun why` can say what changed.

use rusqlite::{params, OptionalExtension};
use serde_json::Value;

use super::*;

impl Store {
    pub(super) fn cache_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CacheEntry> {
        Ok(CacheEntry {
            key: r.get(0)?,
            stage: r.get(1)?,
            text_hash: r.get(2)?,
            timings: serde_json::from_str(&r.get::<_, String>(3)?).unwrap_or(Value::Null),
            identity: r.get(4)?,
            created: r.get(5)?,
        })
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
        file: &str,
    ) -> Result<(), StoreError> {
        self.exec(
                "INSERT INTO keys (run_id, workflow, matter, stage, round, key, components, hit, created, file) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![run_id, workflow, matter, stage, round, key, components.to_string(), hit, now(), file],
            )
    }

    /// Records that a stage failed, and why.
    #[allow(clippy::too_many_arguments)]
    pub fn add_failure(
        &self,
        run_id: &str,
        workflow: &str,
        file: &str,
        matter: &str,
        stage: &str,
        round: u32,
        why: &str,
    ) -> Result<(), StoreError> {
        self.exec(
            "INSERT INTO failures (run_id, workflow, file, matter, stage, round, why, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![run_id, workflow, file, matter, stage, round, why, now()],
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
        let db = self.db();
        let Ok(mut q) = db.prepare(
            "SELECT run_id, matter, why, created FROM failures WHERE workflow = ?1 AND file = ?2 AND stage = ?3 ORDER BY rowid DESC LIMIT ?4",
        ) else {
            return Vec::new();
        };
        let rows = q.query_map(params![workflow, file, stage, limit as i64], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        });
        rows.map(|rows| rows.flatten().collect())
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
        let db = self.db();
        let Ok(mut q) = db.prepare(
            "SELECT run_id, matter, round, key, components, hit, created FROM keys WHERE workflow = ?1 AND stage = ?2 AND (file IS NULL OR file = ?4) ORDER BY rowid DESC LIMIT ?3",
        ) else {
            return Vec::new();
        };
        q.query_map(params![workflow, stage, limit as i64, file], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, u32>(2)?,
                r.get::<_, String>(3)?,
                serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or(Value::Null),
                r.get::<_, bool>(5)?,
                r.get::<_, i64>(6)?,
            ))
        })
        .map(|rows| rows.flatten().collect())
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
        let db = self.db();
        let mut q = db
            .prepare(
                "SELECT run_id, components FROM keys WHERE workflow = ?1 AND stage = ?2 ORDER BY rowid DESC LIMIT 200",
            )
            .ok()?;
        let rows = q
            .query_map(params![workflow, stage], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .ok()?;
        let found = rows.flatten().find_map(|(run, components)| {
            let v: Value = serde_json::from_str(&components).ok()?;
            let model = v["model_identity"].as_str().filter(|m| !m.is_empty())?;
            (v["node"].as_str() == Some(node)).then(|| (model.to_string(), run))
        });
        found
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
}
