//! The ledger's tables, its format number, and the migration of a ledger an older lexrun
//! wrote. A ledger records its format in `meta`; one written before formats were recorded
//! is format 1. A newer format than this lexrun knows is refused, never guessed at.

use super::db::{vals, Db, DbError};

/// The format this lexrun writes.
pub const FORMAT: i64 = 2;

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  {serial} run_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, plan_hash TEXT NOT NULL,
  started BIGINT NOT NULL, finished BIGINT, status TEXT);
CREATE TABLE IF NOT EXISTS sources (
  {serial} run_id TEXT NOT NULL, matter TEXT NOT NULL, path TEXT NOT NULL,
  raw_hash TEXT NOT NULL, text_hash TEXT NOT NULL, admitted TEXT);
CREATE TABLE IF NOT EXISTS artifacts (
  id {id}, hash TEXT NOT NULL, text_hash TEXT NOT NULL, run_id TEXT NOT NULL,
  matter TEXT NOT NULL, stage TEXT NOT NULL, round BIGINT NOT NULL, kind TEXT NOT NULL,
  path TEXT NOT NULL, model TEXT NOT NULL, inputs TEXT NOT NULL, plan_hash TEXT NOT NULL,
  node_hash TEXT NOT NULL, created BIGINT NOT NULL, fingerprints BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS artifacts_hash ON artifacts(hash);
CREATE INDEX IF NOT EXISTS artifacts_text ON artifacts(text_hash);
CREATE INDEX IF NOT EXISTS artifacts_run ON artifacts(run_id);
CREATE TABLE IF NOT EXISTS shingles (
  fp BIGINT NOT NULL, artifact BIGINT NOT NULL, PRIMARY KEY (fp, artifact)) {norowid};
CREATE INDEX IF NOT EXISTS shingles_artifact ON shingles(artifact);
CREATE TABLE IF NOT EXISTS cache (
  key TEXT PRIMARY KEY, stage TEXT NOT NULL, text_hash TEXT NOT NULL, timings TEXT NOT NULL,
  identity TEXT NOT NULL, created BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS keys (
  {serial} run_id TEXT NOT NULL, workflow TEXT NOT NULL, matter TEXT NOT NULL, stage TEXT NOT NULL,
  round BIGINT NOT NULL, key TEXT NOT NULL, components TEXT NOT NULL, hit BIGINT NOT NULL,
  created BIGINT NOT NULL, file TEXT);
CREATE INDEX IF NOT EXISTS keys_stage ON keys(workflow, stage, created);
CREATE TABLE IF NOT EXISTS failures (
  {serial} run_id TEXT NOT NULL, workflow TEXT NOT NULL, file TEXT NOT NULL, matter TEXT NOT NULL,
  stage TEXT NOT NULL, round BIGINT NOT NULL, why TEXT NOT NULL, created BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS failures_stage ON failures(workflow, stage, created);
CREATE TABLE IF NOT EXISTS admissions (
  run_id TEXT NOT NULL, file TEXT NOT NULL, reason TEXT NOT NULL, refused_because TEXT NOT NULL,
  matter TEXT, raw_hash TEXT, text_hash TEXT, created BIGINT);
CREATE TABLE IF NOT EXISTS decisions (
  {serial} matter TEXT NOT NULL, claim_id TEXT NOT NULL, kind TEXT NOT NULL, claim TEXT NOT NULL,
  sentence TEXT NOT NULL, sentence_hash TEXT NOT NULL, draft_hash TEXT NOT NULL,
  run_id TEXT NOT NULL, stage TEXT NOT NULL, decision TEXT NOT NULL, page_file TEXT,
  page_no BIGINT, page_bates TEXT, page_hash TEXT, note TEXT, reason TEXT,
  reviewer TEXT NOT NULL, created BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS decisions_claim ON decisions(matter, claim_id, created);
CREATE INDEX IF NOT EXISTS decisions_run ON decisions(run_id);
";

/// Format 2: claims models wrote, when each evidence file was first seen, admissions by
/// content, and the documents of production volumes (a table an older lexrun of the same
/// format leaves alone).
const FORMAT_2: &str = "
CREATE TABLE IF NOT EXISTS claims (
  matter TEXT NOT NULL, kind TEXT NOT NULL, ident TEXT NOT NULL, key TEXT NOT NULL,
  text TEXT NOT NULL, run_id TEXT NOT NULL, stage TEXT NOT NULL, created BIGINT NOT NULL,
  status TEXT NOT NULL, UNIQUE (matter, ident, run_id, stage));
CREATE INDEX IF NOT EXISTS claims_matter ON claims(matter, created);
CREATE TABLE IF NOT EXISTS seen (
  matter TEXT NOT NULL, text_hash TEXT NOT NULL, raw_hash TEXT NOT NULL, path TEXT NOT NULL,
  first_seen BIGINT NOT NULL, PRIMARY KEY (matter, text_hash));
CREATE INDEX IF NOT EXISTS seen_text ON seen(text_hash);
CREATE TABLE IF NOT EXISTS produced (
  volume TEXT NOT NULL, prefix TEXT NOT NULL, folder TEXT NOT NULL, run_id TEXT NOT NULL,
  created BIGINT NOT NULL, document TEXT NOT NULL, status TEXT NOT NULL, first_no BIGINT,
  last_no BIGINT, first_bates TEXT, last_bates TEXT, pages BIGINT NOT NULL, hash TEXT NOT NULL,
  privilege TEXT, UNIQUE (volume, prefix, document));
";

fn tables(pg: bool) -> String {
    TABLES
        .replace("{serial}", if pg { "id BIGSERIAL," } else { "" })
        .replace(
            "{id}",
            if pg {
                "BIGSERIAL PRIMARY KEY"
            } else {
                "INTEGER PRIMARY KEY"
            },
        )
        .replace("{norowid}", if pg { "" } else { "WITHOUT ROWID" })
}

/// Why a ledger cannot be used as it is.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("it was written by a newer lexrun (ledger format {0}; this lexrun reads formats 1 to {FORMAT}): upgrade lexrun, or give another store with --store")]
    Newer(i64),
    #[error("it is not a ledger lexrun can read ({0}); move it aside and run again (the objects stay valid)")]
    Unknown(String),
    #[error("{0}")]
    Db(#[from] DbError),
}

fn format_of(db: &Db) -> Result<Option<i64>, DbError> {
    let has = |table: &str| -> Result<bool, DbError> {
        Ok(if db.is_postgres() {
            db.one("SELECT to_regclass(?1)::text", vals![table])?
                .and_then(|r| r.opt_text(0))
                .is_some()
        } else {
            db.one(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?1",
                vals![table],
            )?
            .is_some()
        })
    };
    if has("meta")? {
        return Ok(db
            .one("SELECT value FROM meta WHERE key = 'format'", vec![])?
            .and_then(|r| r.text(0).parse().ok()));
    }
    Ok(if has("artifacts")? { Some(1) } else { None })
}

/// Creates the tables of an empty ledger, or brings an older one to [`FORMAT`]. Returns the
/// format the ledger had (`None`: it was empty), so the caller can say it migrated.
pub fn prepare(db: &Db, pg: bool) -> Result<Option<i64>, FormatError> {
    if !pg {
        return prepare_locked(db, pg);
    }
    // Desks opening a new shared ledger at once: one reads the format and makes the tables
    // while the others wait, so none sees half of another's work (tables but no format).
    db.exec("SELECT pg_advisory_lock(7265787276)", vec![])?;
    let r = prepare_locked(db, pg);
    let _ = db.exec("SELECT pg_advisory_unlock(7265787276)", vec![]);
    r
}

fn prepare_locked(db: &Db, pg: bool) -> Result<Option<i64>, FormatError> {
    let before = format_of(db)?;
    match before {
        Some(f) if f > FORMAT => return Err(FormatError::Newer(f)),
        Some(1) => migrate_1(db)?,
        Some(_) => {}
        None => {}
    }
    let script = tables(pg) + FORMAT_2;
    run_script(db, &script)?;
    add_key_file(db)?;
    for (table, index, cols) in ONCE {
        once(db, table, index, cols)?;
    }
    db.exec(
        "INSERT INTO meta (key, value) VALUES ('format', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        vals![FORMAT.to_string()],
    )?;
    if before == Some(1) {
        // What format 1 recorded was fingerprinted before text was folded; those
        // fingerprints stay, and the intake guard computes them for a source too.
        db.exec(
            "INSERT INTO meta (key, value) VALUES ('legacy_fingerprints', '1') ON CONFLICT (key) DO NOTHING",
            vec![],
        )?;
    }
    Ok(before)
}

/// Rows a run writes once each, whatever happens on the way: a statement tried again after
/// its connection was lost may have been committed the first time, and must not add its rows
/// twice. (table, index, the columns that say which row it is.)
const ONCE: [(&str, &str, &str); 3] = [
    ("sources", "sources_once", "run_id, matter, path"),
    ("keys", "keys_once", "run_id, matter, stage, round, key"),
    ("admissions", "admissions_once", "run_id, matter, file"),
];

/// Makes `index` unique over `cols`, first dropping the repeats an older lexrun may have
/// written (the first row of each is kept). Done once: later opens find the index.
fn once(db: &Db, table: &str, index: &str, cols: &str) -> Result<(), DbError> {
    let exists = if db.is_postgres() {
        db.one("SELECT to_regclass(?1)::text", vals![index])?
            .and_then(|r| r.opt_text(0))
            .is_some()
    } else {
        db.one(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name = ?1",
            vals![index],
        )?
        .is_some()
    };
    if exists {
        return Ok(());
    }
    let dedupe = if db.is_postgres() {
        let pairs: Vec<String> = cols
            .split(", ")
            .map(|c| format!("a.{c} IS NOT DISTINCT FROM b.{c}"))
            .collect();
        format!(
            "DELETE FROM {table} a USING {table} b WHERE a.ctid > b.ctid AND {}",
            pairs.join(" AND ")
        )
    } else {
        format!("DELETE FROM {table} WHERE rowid NOT IN (SELECT MIN(rowid) FROM {table} GROUP BY {cols})")
    };
    db.transaction(vec![
        (dedupe, vec![]),
        (
            format!("CREATE UNIQUE INDEX IF NOT EXISTS {index} ON {table}({cols})"),
            vec![],
        ),
    ])
}

/// Keys name the workflow file they came from; ledgers written before have the column
/// missing, and their keys keep no file.
fn add_key_file(db: &Db) -> Result<(), DbError> {
    if db.is_postgres() {
        db.exec(
            "ALTER TABLE keys ADD COLUMN IF NOT EXISTS file TEXT",
            vec![],
        )?;
    } else if db
        .one(
            "SELECT 1 FROM pragma_table_info('keys') WHERE name = 'file'",
            vec![],
        )?
        .is_none()
    {
        db.exec("ALTER TABLE keys ADD COLUMN file TEXT", vec![])?;
    }
    Ok(())
}

fn run_script(db: &Db, script: &str) -> Result<(), DbError> {
    match db {
        Db::Sqlite(c) => {
            let c = c.lock().unwrap_or_else(|p| p.into_inner());
            c.execute_batch(script)?;
            Ok(())
        }
        // Desks opening a new shared ledger at once must not make its tables twice.
        Db::Postgres(pg) => pg.batch(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock(7265787276); {script}; COMMIT;"
        )),
    }
}

/// Format 1 (SQLite only): the same tables, with admissions by path alone.
fn migrate_1(db: &Db) -> Result<(), FormatError> {
    let Db::Sqlite(c) = db else {
        return Err(FormatError::Unknown("format 1 on PostgreSQL".into()));
    };
    let c = c.lock().unwrap_or_else(|p| p.into_inner());
    let columns = |table: &str| -> Result<Vec<String>, DbError> {
        let mut q = c.prepare(&format!("PRAGMA table_info({table})"))?;
        let names = q.query_map([], |r| r.get::<_, String>(1))?;
        Ok(names.collect::<Result<_, _>>()?)
    };
    let arts = columns("artifacts")?;
    for needed in ["hash", "text_hash", "run_id", "fingerprints"] {
        if !arts.iter().any(|c| c == needed) {
            return Err(FormatError::Unknown(format!(
                "its artifacts table has no `{needed}` column"
            )));
        }
    }
    let adm = columns("admissions")?;
    let tx = c.unchecked_transaction().map_err(DbError::from)?;
    for col in [
        "matter TEXT",
        "raw_hash TEXT",
        "text_hash TEXT",
        "created BIGINT",
    ] {
        let name = col.split(' ').next().unwrap_or(col);
        if !adm.is_empty() && !adm.iter().any(|c| c == name) {
            tx.execute_batch(&format!("ALTER TABLE admissions ADD COLUMN {col}"))
                .map_err(DbError::from)?;
        }
    }
    tx.commit().map_err(DbError::from)?;
    Ok(())
}
