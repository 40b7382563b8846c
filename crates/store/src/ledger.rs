//! The provenance ledger: runs and their source snapshots, every artifact with what made it
//! and the fingerprints of its text, deliberate admissions, and the overlap search the intake
//! guard asks.

use serde_json::Value;

use super::db::{self, vals, Row};
use std::path::PathBuf;

use super::types::{now, Artifact, Store, StoreError};
use super::{bloom, shingles};

/// What an earlier output has in common with a text.
#[derive(Clone, Debug)]
pub struct Overlap {
    pub artifact: Artifact,
    /// Fingerprints the two share.
    pub shared: usize,
    /// The output's own fingerprints (those not taken from its evidence).
    pub total: usize,
}

/// A source a run read, as the ledger keeps it.
#[derive(Clone, Debug, Default)]
pub struct RunSource {
    pub matter: String,
    /// The file as the workflow names it.
    pub path: String,
    pub raw_hash: String,
    pub text_hash: String,
    /// The workflow's reason for admitting it, when the guard would have refused it.
    pub admitted: Option<String>,
    /// (reason, why the guard refused it): a deliberate admission, recorded by content too
    /// so that `lexrun verify` honours it.
    pub admission: Option<(String, String)>,
}

impl Overlap {
    /// The share of the output's fingerprints found in the text.
    pub fn of_output(&self) -> f64 {
        (self.shared as f64 / self.total.max(1) as f64).min(1.0)
    }
}

/// The start time of process `pid` in clock ticks since boot (`/proc/PID/stat`), which tells
/// a live process from a later one that got its number.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces; fields follow the last `)`.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// A run under way with this store: which process runs it. Kept as `runs/RUN.json` in the
/// store from its start in the ledger to its close, so that a run whose close never reached
/// the ledger (the ledger lost, the process killed) is closed as failed later.
#[derive(serde::Serialize, serde::Deserialize)]
struct RunNote {
    pid: u32,
    start: u64,
}

impl Store {
    fn run_note(&self, run_id: &str) -> Option<PathBuf> {
        let safe = !run_id.is_empty()
            && run_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        safe.then(|| self.dir.join("runs").join(format!("{run_id}.json")))
    }

    /// Enters a run and every source it read, with the admissions of refused ones, in one
    /// transaction: all or nothing, and tried again whole when the connection is lost under
    /// it. Each row is written once whatever the tries (a retried commit may have landed).
    pub fn begin_run(
        &self,
        run_id: &str,
        workflow: &str,
        plan_hash: &str,
        sources: &[RunSource],
    ) -> Result<(), StoreError> {
        if let Some(note) = self.run_note(run_id) {
            let pid = std::process::id();
            let body = serde_json::to_vec(&RunNote {
                pid,
                start: process_start(pid).unwrap_or(0),
            })
            .unwrap_or_default();
            let io = |e: std::io::Error| StoreError::Io(note.display().to_string(), e);
            crate::atomic::private_dir(&self.dir.join("runs")).map_err(io)?;
            crate::atomic::write_private(&note, body).map_err(io)?;
        }
        let mut stmts = vec![(
            "INSERT INTO runs (run_id, workflow, plan_hash, started) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (run_id) DO UPDATE SET workflow = excluded.workflow, plan_hash = excluded.plan_hash, started = excluded.started".to_string(),
            vals![run_id, workflow, plan_hash, now()],
        )];
        for s in sources {
            stmts.push((
                "INSERT INTO sources (run_id, matter, path, raw_hash, text_hash, admitted) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING".to_string(),
                vals![run_id, &s.matter, &s.path, &s.raw_hash, &s.text_hash, s.admitted.as_deref()],
            ));
            if let Some((reason, refused_because)) = &s.admission {
                stmts.push((
                    "INSERT INTO admissions (run_id, file, reason, refused_because, matter, raw_hash, text_hash, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING".to_string(),
                    vals![run_id, &s.path, reason, refused_because, &s.matter, &s.raw_hash, &s.text_hash, now()],
                ));
            }
        }
        self.db.transaction(stmts).map_err(|e| self.lerr(e))
    }

    pub fn finish_run(&self, run_id: &str, status: &str) -> Result<(), StoreError> {
        self.exec(
            "UPDATE runs SET finished = ?2, status = ?3 WHERE run_id = ?1",
            vals![run_id, now(), status],
        )?;
        if let Some(note) = self.run_note(run_id) {
            let _ = std::fs::remove_file(note);
        }
        Ok(())
    }

    /// Closes as failed the runs this store began whose process is gone and whose close the
    /// ledger never got; the runs closed.
    pub(super) fn close_abandoned_runs(&self) -> Vec<String> {
        let mut closed = Vec::new();
        let Ok(rd) = std::fs::read_dir(self.dir.join("runs")) else {
            return closed;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(run_id) = name.strip_suffix(".json") else {
                continue;
            };
            let note: Option<RunNote> = crate::atomic::read_own(&e.path())
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            let alive = note
                .as_ref()
                .is_some_and(|n| process_start(n.pid).is_some_and(|s| s == n.start));
            if alive {
                continue;
            }
            let done = self.exec(
                "UPDATE runs SET finished = ?2, status = 'failed' WHERE run_id = ?1 AND status IS NULL",
                vals![run_id, now()],
            );
            if done.is_ok() {
                let _ = std::fs::remove_file(e.path());
                closed.push(run_id.to_string());
            }
        }
        closed
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
        self.add_artifact_fingerprints(a, &fps).map(|_| ())
    }

    /// Records an artifact with the fingerprints given; its id.
    pub fn add_artifact_fingerprints(&self, a: &Artifact, fps: &[u64]) -> Result<i64, StoreError> {
        let row = vals![
            &a.hash,
            &a.text_hash,
            &a.run_id,
            &a.matter,
            &a.stage,
            a.round,
            &a.kind,
            &a.path,
            &a.model,
            a.inputs.to_string(),
            &a.plan_hash,
            &a.node_hash,
            a.created,
            fps.len() as i64
        ];
        self.db.insert_artifact(row, fps).map_err(|e| self.lerr(e))
    }

    pub(super) fn artifact_row(r: &Row) -> Artifact {
        Artifact {
            hash: r.text(0),
            text_hash: r.text(1),
            run_id: r.text(2),
            matter: r.text(3),
            stage: r.text(4),
            round: r.int(5) as u32,
            kind: r.text(6),
            path: r.text(7),
            model: r.text(8),
            inputs: serde_json::from_str(&r.text(9)).unwrap_or(Value::Null),
            plan_hash: r.text(10),
            node_hash: r.text(11),
            created: r.int(12),
        }
    }

    /// Whether the ledger holds fingerprints from before text was folded, which a source's
    /// legacy fingerprints must be compared with too.
    pub fn has_legacy_fingerprints(&self) -> bool {
        self.legacy
    }

    /// An artifact whose bytes or normalised text have one of these hashes: one statement,
    /// each of its parts an indexed lookup (an `OR` across two columns would scan the table).
    /// A ledger that does not answer is an error, never "not found".
    pub fn artifact_by_hash(
        &self,
        raw: &str,
        texts: &[&str],
    ) -> Result<Option<Artifact>, StoreError> {
        let cols = Self::ARTIFACT_COLS;
        let mut sql =
            format!("SELECT * FROM (SELECT {cols} FROM artifacts WHERE hash = ?1 LIMIT 1) AS b");
        let mut params = vals![raw];
        for (i, t) in texts.iter().enumerate() {
            sql.push_str(&format!(
                " UNION ALL SELECT * FROM (SELECT {cols} FROM artifacts WHERE text_hash = ?{} LIMIT 1) AS t{i}",
                i + 2
            ));
            params.push(db::Val::from(*t));
        }
        sql.push_str(" LIMIT 1");
        let r = self.db.one(&sql, params).map_err(|e| self.lerr(e))?;
        Ok(r.map(|r| Self::artifact_row(&r)))
    }

    /// The earlier outputs sharing fingerprints with `fps`, and the one of them `rank` puts
    /// first (the highest rank wins; `None` ranks below any rank). A ledger that does not
    /// answer is an error, never "no overlap".
    pub fn overlap(
        &self,
        fps: &[u64],
        rank: impl Fn(usize, usize) -> Option<f64>,
    ) -> Result<Option<Overlap>, StoreError> {
        if fps.is_empty() {
            return Ok(None);
        }
        // Only the fingerprints the filter may hold are looked up in the ledger.
        let candidates: Vec<u64> = match self.filter().as_deref() {
            Some(Some(b)) => fps.iter().copied().filter(|f| b.may_contain(*f)).collect(),
            _ => fps.to_vec(),
        };
        if candidates.is_empty() {
            return Ok(None);
        }
        let counts = self
            .db
            .shingle_hits(&candidates)
            .map_err(|e| self.lerr(e))?;
        let ids: Vec<i64> = counts.keys().copied().collect();
        let totals = self.db.fingerprint_totals(&ids).map_err(|e| self.lerr(e))?;
        let mut best: Option<(i64, usize, usize, Option<f64>)> = None;
        for (id, n) in counts {
            let total = totals.get(&id).copied().unwrap_or(0).max(1) as usize;
            let r = rank(n as usize, total);
            let better = match &best {
                None => true,
                Some((bid, bn, bt, br)) => {
                    let share = n as f64 / total as f64;
                    let bshare = *bn as f64 / *bt as f64;
                    (r, share, -id) > (*br, bshare, -bid)
                }
            };
            if better {
                best = Some((id, n as usize, total, r));
            }
        }
        let Some((id, shared, total, _)) = best else {
            return Ok(None);
        };
        let sql = format!(
            "SELECT {} FROM artifacts WHERE id = ?1",
            Self::ARTIFACT_COLS
        );
        let r = self.db.one(&sql, vals![id]).map_err(|e| self.lerr(e))?;
        Ok(r.map(|r| Overlap {
            artifact: Self::artifact_row(&r),
            shared,
            total,
        }))
    }

    /// The fingerprint filter, brought up to date with the ledger: loaded from its file,
    /// extended with the fingerprints of newer artifacts, rebuilt when it is missing, damaged,
    /// ahead of the ledger or full, and saved when it changed. `None` if it cannot be had
    /// (then every fingerprint is looked up).
    pub(super) fn filter(&self) -> Option<std::sync::MutexGuard<'_, Option<bloom::Bloom>>> {
        let db = self.db();
        let mut guard = self.bloom.lock().ok()?;
        // A bare MAX over the primary key is one B-tree step (COALESCE would scan the table).
        let latest: i64 = db
            .one("SELECT MAX(id) FROM artifacts", vec![])
            .ok()?
            .and_then(|r| r.opt_int(0))
            .unwrap_or(0);
        // The filter file names the ledger it covers: a store whose ledger moved to another
        // server must not trust a filter made from the old one.
        let path = self.dir.join(format!(
            "fingerprints-{}.bloom",
            &blake3::hash(self.ledger.as_bytes()).to_hex()[..12]
        ));
        if guard.is_none() {
            *guard = bloom::Bloom::load(&path);
        }
        if guard.as_ref().is_some_and(|b| b.covers == latest) {
            return Some(guard);
        }
        let mut extended = false;
        if let Some(b) = guard.take().filter(|b| b.covers < latest && b.fits()) {
            let covers = b.covers;
            let mut b = db
                .fold_ints(
                    "SELECT fp FROM shingles WHERE artifact > ?1",
                    vals![covers],
                    b,
                    |b, fp| b.insert(fp as u64),
                )
                .ok()?;
            b.covers = latest;
            extended = b.fits();
            *guard = Some(b);
        }
        if !extended {
            let total: i64 = db
                .one(
                    "SELECT CAST(COALESCE(SUM(fingerprints), 0) AS BIGINT) FROM artifacts",
                    vec![],
                )
                .ok()?
                .map_or(0, |r| r.int(0));
            let b = bloom::Bloom::with_capacity((total as usize).max(1) * 2);
            let mut b = db
                .fold_ints("SELECT fp FROM shingles", vec![], b, |b, fp| {
                    b.insert(fp as u64)
                })
                .ok()?;
            b.covers = latest;
            *guard = Some(b);
        }
        if let Some(b) = guard.as_ref() {
            let _ = b.save(&path);
        }
        Some(guard)
    }

    pub fn artifacts_of_run(&self, run_id: &str) -> Vec<Artifact> {
        let sql = format!(
            "SELECT {} FROM artifacts WHERE run_id = ?1 ORDER BY id",
            Self::ARTIFACT_COLS
        );
        self.db
            .query(&sql, vals![run_id])
            .map(|rows| rows.iter().map(Self::artifact_row).collect())
            .unwrap_or_default()
    }

    pub fn run_info(&self, run_id: &str) -> Option<Value> {
        let r = self
            .db
            .one(
                "SELECT workflow, plan_hash, started, finished, status FROM runs WHERE run_id = ?1",
                vals![run_id],
            )
            .ok()??;
        let mut run = serde_json::json!({
            "run_id": run_id, "workflow": r.text(0), "plan_hash": r.text(1),
            "started": r.int(2), "finished": r.opt_int(3), "status": r.opt_text(4),
        });
        let sources: Vec<Value> = self
            .db
            .query(
                &format!("SELECT matter, path, raw_hash, text_hash, admitted FROM sources WHERE run_id = ?1 ORDER BY {}", self.db.rowid()),
                vals![run_id],
            )
            .ok()?
            .iter()
            .map(|r| serde_json::json!({"matter": r.text(0), "path": r.text(1), "raw_hash": r.text(2), "text_hash": r.text(3), "admitted": r.opt_text(4)}))
            .collect();
        run["sources"] = Value::Array(sources);
        Some(run)
    }

    /// The newest run of `workflow` from the workflow file `file` (as the ledger names it): a
    /// run whose calls name another file is another workflow's that shares the name.
    pub fn last_run_of(&self, workflow: &str, file: &str) -> Option<String> {
        self.db
            .one(
                &format!(
                    "SELECT run_id FROM runs WHERE workflow = ?1 AND {} ORDER BY started DESC, {} DESC LIMIT 1",
                    Self::OF_FILE,
                    self.db.rowid()
                ),
                vals![workflow, file],
            )
            .ok()
            .flatten()
            .map(|r| r.text(0))
    }

    /// Whether run `run_id` is of `workflow` from the file `file`.
    pub fn run_is_of(&self, run_id: &str, workflow: &str, file: &str) -> bool {
        self.db
            .one(
                &format!(
                    "SELECT run_id FROM runs WHERE run_id = ?3 AND workflow = ?1 AND {}",
                    Self::OF_FILE
                ),
                vals![workflow, file, run_id],
            )
            .ok()
            .flatten()
            .is_some()
    }

    /// The workflows the ledger holds runs of, by name.
    pub fn workflows_run(&self) -> Vec<String> {
        self.db
            .query(
                "SELECT DISTINCT workflow FROM runs ORDER BY workflow",
                vec![],
            )
            .map(|rows| rows.iter().map(|r| r.text(0)).collect())
            .unwrap_or_default()
    }

    /// A run's calls and failures name no other workflow file than `?2`.
    const OF_FILE: &'static str = "NOT EXISTS (SELECT 1 FROM keys k WHERE k.run_id = runs.run_id AND k.file IS NOT NULL AND k.file <> '' AND k.file <> ?2) AND NOT EXISTS (SELECT 1 FROM failures f WHERE f.run_id = runs.run_id AND f.file <> '' AND f.file <> ?2)";

    pub fn last_run(&self) -> Option<String> {
        self.db
            .one(
                &format!(
                    "SELECT run_id FROM runs ORDER BY started DESC, {} DESC LIMIT 1",
                    self.db.rowid()
                ),
                vec![],
            )
            .ok()
            .flatten()
            .map(|r| r.text(0))
    }
    /// Every run the ledger holds, newest first (of `workflow` only, when given): when it
    /// started and finished, its status, the matters it read, how many claims its
    /// verification found no support for, and how many steps failed or were blocked.
    pub fn runs(&self, workflow: Option<&str>) -> Result<Vec<RunRow>, StoreError> {
        let (filter, params) = match workflow {
            Some(w) => ("WHERE workflow = ?1", vals![w]),
            None => ("", vec![]),
        };
        let rows = self
            .db
            .query(
                &format!(
                    "SELECT run_id, workflow, started, finished, status FROM runs {filter} ORDER BY started DESC, {} DESC",
                    self.db.rowid()
                ),
                params,
            )
            .map_err(|e| self.lerr(e))?;
        let mut out = Vec::new();
        for r in rows {
            let run_id = r.text(0);
            let matters = self
                .db
                .query(
                    "SELECT DISTINCT matter FROM sources WHERE run_id = ?1 ORDER BY matter",
                    vals![&run_id],
                )
                .map_err(|e| self.lerr(e))?
                .iter()
                .map(|m| m.text(0))
                .collect();
            let unsupported = self
                .db
                .one(
                    "SELECT COUNT(*) FROM claims WHERE run_id = ?1 AND status NOT IN ('unchecked', 'supported')",
                    vals![&run_id],
                )
                .map_err(|e| self.lerr(e))?
                .map_or(0, |c| c.int(0));
            let failed = self
                .db
                .one(
                    "SELECT COUNT(DISTINCT matter || ' ' || stage) FROM failures WHERE run_id = ?1",
                    vals![&run_id],
                )
                .map_err(|e| self.lerr(e))?
                .map_or(0, |c| c.int(0));
            out.push(RunRow {
                run_id,
                workflow: r.text(1),
                started: r.int(2),
                finished: r.opt_int(3),
                status: r.opt_text(4),
                matters,
                unsupported,
                failed,
            });
        }
        Ok(out)
    }
}

/// A run as the ledger lists it (`lexrun runs`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunRow {
    pub run_id: String,
    pub workflow: String,
    /// Seconds since the epoch.
    pub started: i64,
    pub finished: Option<i64>,
    /// done, stopped, failed or cancelled; none while under way (or if it never closed).
    pub status: Option<String>,
    pub matters: Vec<String>,
    /// Claims models wrote that verification found no support for.
    pub unsupported: i64,
    /// Steps that failed or were blocked.
    pub failed: i64,
}
