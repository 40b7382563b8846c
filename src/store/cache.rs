//! The cache of model answers by key, and every key a stage had with its components, so
//! `lexrun why` can say what changed.

use serde_json::Value;

use super::db::{vals, Row};
use super::*;

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
        self.db
            .one(
                "SELECT key, stage, text_hash, timings, identity, created FROM cache WHERE key = ?1",
                vals![key],
            )
            .ok()
            .flatten()
            .map(|r| Self::cache_row(&r))
    }

    pub fn cache_put(&self, e: &CacheEntry) -> Result<(), StoreError> {
        self.exec(
                "INSERT INTO cache (key, stage, text_hash, timings, identity, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (key) DO UPDATE SET stage = excluded.stage, text_hash = excluded.text_hash, timings = excluded.timings, identity = excluded.identity, created = excluded.created",
                vals![&e.key, &e.stage, &e.text_hash, e.timings.to_string(), &e.identity, e.created],
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
                vals![run_id, workflow, matter, stage, round, key, components.to_string(), hit, now()],
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
        let sql = format!(
            "SELECT run_id, matter, round, key, components, hit FROM keys WHERE workflow = ?1 AND stage = ?2 ORDER BY {} DESC LIMIT ?3",
            self.db.rowid()
        );
        self.db
            .query(&sql, vals![workflow, stage, limit as i64])
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
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
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
