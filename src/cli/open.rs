//! Where the store is, and opening it: its folder, the shared ledger's URL, and the workflow
//! file as the ledger names it.

use camino::Utf8Path;

use crate::plan;

/// The store: `--store`, else `LEXRUN_STORE`, else `lexrun/` in the user's data folder
/// (`.lexrun` beside the workflow only when there is no home folder at all).
pub(super) fn store_dir(
    given: Option<&std::path::Path>,
    workflow_dir: &std::path::Path,
) -> std::path::PathBuf {
    given
        .map(std::path::Path::to_path_buf)
        .or_else(given_store)
        .or_else(crate::store::default_dir)
        .unwrap_or_else(|| workflow_dir.join(".lexrun"))
}

fn given_store() -> Option<std::path::PathBuf> {
    std::env::var_os("LEXRUN_STORE")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
}

/// The shared ledger: `LEXRUN_LEDGER` when set, else the workflow's `ledger` line.
pub(super) fn ledger_url(plan: Option<&plan::Plan>) -> Option<String> {
    std::env::var("LEXRUN_LEDGER")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .or_else(|| plan.and_then(|p| p.workflow.ledger.clone()))
}

/// Opens the store (connecting to a shared ledger first, so an unreachable server stops
/// everything before anything is written), and, for the default store, adopts an old
/// `.lexrun/` beside the workflow once, saying so.
pub(super) fn open_at(
    given: Option<&std::path::Path>,
    workflow_dir: &std::path::Path,
    url: Option<String>,
) -> Result<crate::store::Store, crate::store::StoreError> {
    let dir = store_dir(given, workflow_dir);
    if let Some(u) = &url {
        if !u.starts_with("postgres://") && !u.starts_with("postgresql://") {
            return Err(crate::store::StoreError::Connect(
                crate::credentials::url(u),
                crate::store::DbError::Postgres(
                    "LEXRUN_LEDGER must be a postgres:// URL (postgres://USER@HOST:PORT/DATABASE); leave it unset for the ledger inside the store".into(),
                ),
            ));
        }
    }
    let st = crate::store::Store::open_with(&dir, url.as_deref())?;
    for n in &st.notes {
        eprintln!("note: {n}");
    }
    if given.is_none() && given_store().is_none() {
        if let Some(msg) = crate::store::adopt_beside(workflow_dir, &st)? {
            eprintln!("note: {msg}");
        }
    }
    Ok(st)
}

/// The workflow file as the ledger names it: its absolute path when it can be resolved.
pub(super) fn ledger_file(file: &Utf8Path) -> String {
    std::fs::canonicalize(file)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| file.to_string())
}
