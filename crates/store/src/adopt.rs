//! Where the store lives, and moving an old one there. The default store is `lexrun/` in the
//! user's data folder (`$XDG_DATA_HOME`, else `~/.local/share`): one ledger for every
//! workflow folder, its records keyed by matter, so that a workflow in another folder reading
//! the same matter knows what the first one wrote. A store an older lexrun kept beside a
//! workflow (`.lexrun/`) is adopted into it once: every run, source snapshot, artifact with
//! its fingerprints, cached answer, key, admission and object is copied, the old ledger is
//! kept as `ledger-moved.sqlite` with a note saying where everything went.

use std::path::{Path, PathBuf};

use super::db::Row;
use super::db::{vals, Val};
use super::types::{Store, StoreError};

/// The default store folder: `$XDG_DATA_HOME/lexrun`, else `~/.local/share/lexrun`.
pub fn default_dir() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join("lexrun"))
}

/// What was adopted from an old store.
#[derive(Debug, Default)]
pub struct Adopted {
    pub runs: usize,
    pub artifacts: usize,
    pub objects: usize,
}

/// Copies one table's rows for a run (or all its rows, with `run` `None`).
fn copy_rows(
    from: &Store,
    into: &Store,
    table: &str,
    cols: &str,
    filter: Option<(&str, &str)>,
    conflict: &str,
) -> Result<usize, StoreError> {
    let rows = match filter {
        Some((col, v)) => from.db.query(
            &format!("SELECT {cols} FROM {table} WHERE {col} = ?1"),
            vals![v],
        ),
        None => from
            .db
            .query(&format!("SELECT {cols} FROM {table}"), vec![]),
    }
    .map_err(|e| from.lerr(e))?;
    let n = cols.split(',').count();
    let marks: Vec<String> = (1..=n).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO {table} ({cols}) VALUES ({}) {conflict}",
        marks.join(", ")
    );
    let count = rows.len();
    let stmts = rows
        .into_iter()
        .map(|r| {
            let vals: Vec<Val> =
                r.0.into_iter()
                    .map(|v| match v {
                        // A null read back carries no type; these columns are texts or integers
                        // that PostgreSQL accepts as either when null.
                        Val::NullText | Val::NullInt => Val::NullText,
                        v => v,
                    })
                    .collect();
            (sql.clone(), vals)
        })
        .collect();
    into.db.transaction(stmts).map_err(|e| into.lerr(e))?;
    Ok(count)
}

/// Copies everything the store in `old` recorded into `into`; a run `into` already has is
/// skipped, so an adoption that was interrupted can run again.
pub fn adopt(old: &Path, into: &Store) -> Result<Adopted, StoreError> {
    let from = Store::open(old)?;
    let mut done = Adopted::default();
    let runs = run_ids(&from)?;
    for run in &runs {
        let known = into
            .db
            .one(
                "SELECT 1 FROM artifacts WHERE run_id = ?1 UNION SELECT 1 FROM runs WHERE run_id = ?1",
                vals![run],
            )
            .map_err(|e| into.lerr(e))?
            .is_some();
        if known {
            continue;
        }
        copy_run(&from, into, run, &mut done)?;
        done.runs += 1;
    }
    copy_rows(
        &from,
        into,
        "cache",
        "key, stage, text_hash, timings, identity, created",
        None,
        "ON CONFLICT DO NOTHING",
    )?;
    copy_rows(
        &from,
        into,
        "seen",
        "matter, text_hash, raw_hash, path, first_seen",
        None,
        "ON CONFLICT DO NOTHING",
    )?;
    if from.legacy && !into.legacy {
        into.exec(
            "INSERT INTO meta (key, value) VALUES ('legacy_fingerprints', '1') ON CONFLICT (key) DO NOTHING",
            vec![],
        )?;
    }
    for (hash, path) in from.objects() {
        if let Some(bytes) = from.get(&hash) {
            into.put(&bytes)?;
            done.objects += 1;
        }
        let _ = std::fs::remove_file(&path);
    }
    Ok(done)
}

/// The runs the store in `from` knows: those it recorded, and those only its artifacts name.
fn run_ids(from: &Store) -> Result<Vec<String>, StoreError> {
    let mut r: Vec<String> = from
        .db
        .query("SELECT run_id FROM runs", vec![])
        .map_err(|e| from.lerr(e))?
        .iter()
        .map(|r| r.text(0))
        .collect();
    for x in from
        .db
        .query("SELECT DISTINCT run_id FROM artifacts", vec![])
        .map_err(|e| from.lerr(e))?
    {
        if !r.contains(&x.text(0)) {
            r.push(x.text(0));
        }
    }
    Ok(r)
}

/// Copies one run's rows and its artifacts, with their fingerprints, from `from` into `into`.
fn copy_run(from: &Store, into: &Store, run: &str, done: &mut Adopted) -> Result<(), StoreError> {
    // Each table's rows of the run; runs and claims may be known already.
    const TABLES: [(&str, &str, &str); 5] = [
        (
            "runs",
            "run_id, workflow, plan_hash, started, finished, status",
            "ON CONFLICT DO NOTHING",
        ),
        (
            "sources",
            "run_id, matter, path, raw_hash, text_hash, admitted",
            "",
        ),
        (
            "keys",
            "run_id, workflow, matter, stage, round, key, components, hit, created",
            "",
        ),
        (
            "admissions",
            "run_id, file, reason, refused_because, matter, raw_hash, text_hash, created",
            "",
        ),
        (
            "claims",
            "matter, kind, ident, key, text, run_id, stage, created, status",
            "ON CONFLICT DO NOTHING",
        ),
    ];
    for (table, cols, conflict) in TABLES {
        copy_rows(from, into, table, cols, Some(("run_id", run)), conflict)?;
    }
    let arts = from
        .db
        .query(
            &format!(
                "SELECT id, {} FROM artifacts WHERE run_id = ?1 ORDER BY id",
                Store::ARTIFACT_COLS
            ),
            vals![run],
        )
        .map_err(|e| from.lerr(e))?;
    for r in arts {
        let id = r.int(0);
        let a = Store::artifact_row(&Row(r.0[1..].to_vec()));
        let fps: Vec<u64> = from
            .db
            .query("SELECT fp FROM shingles WHERE artifact = ?1", vals![id])
            .map_err(|e| from.lerr(e))?
            .iter()
            .map(|r| r.int(0) as u64)
            .collect();
        into.add_artifact_fingerprints(&a, &fps)?;
        done.artifacts += 1;
    }
    Ok(())
}

/// Adopts the store an older lexrun kept beside a workflow (`workflow_dir/.lexrun`) into
/// `into`, once: afterwards its ledger is `ledger-moved.sqlite` and `MOVED.txt` says where
/// everything went. The message to show, if anything was adopted.
pub fn adopt_beside(workflow_dir: &Path, into: &Store) -> Result<Option<String>, StoreError> {
    let old = workflow_dir.join(".lexrun");
    let ledger = old.join("ledger.sqlite");
    if !ledger.is_file() || old.canonicalize().ok() == into.dir.canonicalize().ok() {
        return Ok(None);
    }
    let done = adopt(&old, into)?;
    let io = |e: std::io::Error| StoreError::Io(old.display().to_string(), e);
    crate::atomic::write_private(
        old.join("MOVED.txt"),
        format!(
            "lexrun moved this store's records into {} (ledger: {}).\nThe old ledger is kept here as ledger-moved.sqlite.\n",
            into.dir.display(),
            into.ledger
        ),
    )
    .map_err(io)?;
    for ext in ["", "-wal", "-shm"] {
        let from = old.join(format!("ledger.sqlite{ext}"));
        if from.exists() {
            std::fs::rename(&from, old.join(format!("ledger-moved.sqlite{ext}"))).map_err(io)?;
        }
    }
    let _ = std::fs::remove_file(old.join("fingerprints.bloom"));
    Ok(Some(format!(
        "moved the store beside the workflow ({}) into {}: {} runs, {} artifacts, {} objects; the old ledger is kept as {}",
        old.display(),
        into.dir.display(),
        done.runs,
        done.artifacts,
        done.objects,
        old.join("ledger-moved.sqlite").display()
    )))
}
