//! The provenance ledger: runs and their source snapshots, every artifact with what made it
//! and the fingerprints of its text, deliberate admissions, and the overlap search the intake
//! guard asks.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value;

use super::*;

impl Store {
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

    pub(super) fn artifact_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Artifact> {
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
    pub(super) fn filter(
        &self,
        db: &Connection,
    ) -> Option<std::sync::MutexGuard<'_, Option<bloom::Bloom>>> {
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
}
