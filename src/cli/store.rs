//! `why`, `audit`, `sources` and `cache`: what the store knows of past runs.

use camino::Utf8Path;

use super::args::CacheAction;
use super::compile::checked_plan;
use super::failure::fail;
use super::open::{ledger_file, ledger_url, open_at};
use super::output::{exit, print_out};
use crate::plan;
use crate::run::why::short_hash;

/// The value of a `Result<T, u8>`, or a return with its exit code.
macro_rules! or_exit {
    ($e:expr) => {
        match $e {
            Ok(x) => x,
            Err(code) => return code,
        }
    };
}

pub(super) fn open_store(
    file: &Utf8Path,
    store: Option<&std::path::Path>,
    color: bool,
    refusal: &str,
) -> Result<(plan::Plan, std::path::PathBuf, crate::store::Store), u8> {
    let plan = checked_plan(file, color, refusal)?;
    let dir = file
        .parent()
        .map(|d| d.as_std_path().to_path_buf())
        .unwrap_or_default();
    open_at(store, &dir, ledger_url(Some(&plan)))
        .map(|s| (plan, dir, s))
        .map_err(|e| fail(&e))
}

pub(super) fn cmd_why(
    file: &Utf8Path,
    stage: &str,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (plan, _, st) = or_exit!(open_store(file, store, color, "nothing to explain"));
    let ledger_file = ledger_file(file);
    match crate::run::why::why(&st, &plan, &ledger_file, stage) {
        Ok(text) => print_out(&text),
        Err(e) => {
            eprintln!("error: {e}");
            exit::USAGE
        }
    }
}

pub(super) fn short(v: &serde_json::Value) -> String {
    v.as_str().map(short_hash).unwrap_or_else(|| v.to_string())
}

pub(super) fn cmd_audit(
    file: &Utf8Path,
    run: Option<&str>,
    json: bool,
    decisions: Option<&str>,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (plan, _, st) = or_exit!(open_store(file, store, color, "no audit"));
    let (run, mut info, arts, volumes) = match audit_of(&st, &plan.workflow.name, file, run) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let mut matters: Vec<String> = arts.iter().map(|a| a.matter.clone()).collect();
    matters.extend(
        info["sources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["matter"].as_str().map(str::to_string)),
    );
    let decided = match super::decisions::of_run(&st, &run, matters) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: the reviewers' decisions cannot be read: {e}");
            return exit::USAGE;
        }
    };
    match decisions {
        Some("csv") => return print_out(&super::decisions::csv(&decided)),
        Some(_) => {
            return print_out(&(serde_json::to_string_pretty(&decided).unwrap_or_default() + "\n"))
        }
        None => {}
    }
    info["decisions"] = serde_json::to_value(&decided).unwrap_or_default();
    if json {
        return print_out(&(serde_json::to_string_pretty(&info).unwrap_or_default() + "\n"));
    }
    let mut out = format!(
        "Chain of custody — run {run} of `{}` (plan {}), status {}\n\nSources:\n",
        info["workflow"].as_str().unwrap_or(""),
        short(&info["plan_hash"]),
        info["status"].as_str().unwrap_or("unfinished")
    );
    for s in info["sources"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "  {}  blake3 {}{}\n",
            s["path"].as_str().unwrap_or(""),
            short(&s["raw_hash"]),
            s["admitted"]
                .as_str()
                .map(|r| format!("  (admitted: {r})"))
                .unwrap_or_default()
        ));
    }
    out.push_str("\nWritten:\n");
    for a in &arts {
        out.push_str(&format!(
            "  {:<6} {}  ← stage `{}` round {} of matter {}, model {}, node {}, blake3 {}\n",
            a.kind,
            a.path,
            a.stage,
            a.round,
            a.matter,
            if a.model.is_empty() { "-" } else { &a.model },
            &a.node_hash[..12.min(a.node_hash.len())],
            &a.hash[..12.min(a.hash.len())]
        ));
    }
    if !volumes.is_empty() {
        out.push_str("\nProduced:\n");
        for v in &volumes {
            out.push_str(&volume_text(v));
        }
    }
    if !decided.is_empty() {
        out.push_str("\nReviewers' decisions:\n");
        out.push_str(&super::decisions::text(&decided));
    }
    print_out(&out)
}

/// A run of workflow `name` (file `file`) and its chain of custody (default: the workflow's
/// last run): its id, the ledger's record with its artifacts and volumes, the artifacts, and
/// the volumes. A run of another workflow is refused, and a workflow that never ran says so.
#[allow(clippy::type_complexity)]
pub(super) fn audit_of(
    st: &crate::store::Store,
    name: &str,
    file: &Utf8Path,
    run: Option<&str>,
) -> Result<
    (
        String,
        serde_json::Value,
        Vec<crate::store::Artifact>,
        Vec<crate::store::Volume>,
    ),
    String,
> {
    let lfile = ledger_file(file);
    let Some(run) = run
        .map(str::to_string)
        .or_else(|| st.last_run_of(name, &lfile))
    else {
        let others = st.workflows_run();
        return Err(format!(
            "the store has no run of workflow `{name}` ({file}){}; run it first with `lexrun run {file}`, or name the store it ran with (--store DIR)",
            if others.is_empty() {
                String::new()
            } else {
                format!(" (it holds runs of: {})", others.join(", "))
            }
        ));
    };
    let Some(mut info) = st.run_info(&run) else {
        return Err(format!("the store has no run `{run}`"));
    };
    if !st.run_is_of(&run, name, &lfile) {
        let of = info["workflow"].as_str().unwrap_or_default();
        return Err(format!(
            "run {run} is a run of workflow `{of}`{}, not of `{name}` ({file}); audit it with that workflow's file, or leave out the run id for this workflow's last run",
            if of == name { " from another file" } else { "" }
        ));
    }
    let arts = st.artifacts_of_run(&run);
    info["artifacts"] = serde_json::to_value(&arts).unwrap_or_default();
    let volumes: Vec<crate::store::Volume> = st
        .volumes()
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|v| v.run_id == run)
        .collect();
    info["volumes"] = serde_json::to_value(&volumes).unwrap_or_default();
    Ok((run, info, arts, volumes))
}

/// The ledger's production volumes, or the exit code after saying why they cannot be read.
fn volumes_of(st: &crate::store::Store) -> Result<Vec<crate::store::Volume>, u8> {
    st.volumes().map_err(|e| {
        eprintln!("error: {e}");
        exit::USAGE
    })
}

/// A volume and its documents, as `lexrun audit` prints them.
fn volume_text(v: &crate::store::Volume) -> String {
    let produced: Vec<_> = v
        .documents
        .iter()
        .filter(|d| d.first_bates.is_some())
        .collect();
    let range = match (produced.first(), produced.last()) {
        (Some(a), Some(b)) => format!(
            "{}–{}",
            a.first_bates.as_deref().unwrap_or(""),
            b.last_bates.as_deref().unwrap_or("")
        ),
        _ => "no pages".into(),
    };
    let pages: u64 = produced.iter().map(|d| d.pages).sum();
    let mut out = format!(
        "  volume {} ({range}, {} documents, {pages} pages, {} withheld) in {}, run {}\n",
        v.volume,
        produced.len(),
        v.documents.len() - produced.len(),
        v.folder,
        v.run_id
    );
    for d in &v.documents {
        let hash = &d.hash[..12.min(d.hash.len())];
        match (&d.first_bates, &d.last_bates) {
            (Some(a), Some(b)) => out.push_str(&format!(
                "    {a}–{b}  {} ({} page{}), blake3 {hash}\n",
                d.document,
                d.pages,
                if d.pages == 1 { "" } else { "s" }
            )),
            _ => out.push_str(&format!(
                "    withheld  {}{}, blake3 {hash}\n",
                d.document,
                d.privilege
                    .as_deref()
                    .map(|p| format!(" ({p})"))
                    .unwrap_or_default()
            )),
        }
    }
    out
}

/// `lexrun audit FILE --productions`: every volume the ledger holds.
pub(super) fn cmd_audit_productions(
    file: &Utf8Path,
    json: bool,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (_, _, st) = or_exit!(open_store(file, store, color, "no audit"));
    let volumes = or_exit!(volumes_of(&st));
    if json {
        return print_out(&(serde_json::to_string_pretty(&volumes).unwrap_or_default() + "\n"));
    }
    if volumes.is_empty() {
        return print_out("The ledger holds no production volumes yet.\n");
    }
    let mut out = String::from("Production volumes in the ledger:\n");
    for v in &volumes {
        out.push_str(&volume_text(v));
    }
    print_out(&out)
}

pub(super) fn cmd_sources(
    file: &Utf8Path,
    matters: &[std::path::PathBuf],
    json: bool,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (plan, dir, st) = or_exit!(open_store(file, store, color, "no sources checked"));
    let verdicts = match crate::run::check_sources(&plan, &dir, matters, &st) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::USAGE;
        }
    };
    let refused = verdicts.iter().any(|v| v.blocked());
    if json {
        let _ = print_out(&(serde_json::to_string_pretty(&verdicts).unwrap_or_default() + "\n"));
    } else {
        let mut out = String::new();
        for v in &verdicts {
            let word = match (v.why(), &v.admitted) {
                _ if v.unreadable.is_some() => "UNREADABLE".to_string(),
                _ if v.unreadable_part.is_some() => "unreadable part, left out".to_string(),
                (None, _) => "admitted".to_string(),
                (Some(_), Some(r)) => format!("admitted by the workflow ({r})"),
                (Some(_), None) => "REFUSED".to_string(),
            };
            out.push_str(&format!("{:<10} {}  {word}", v.matter, v.file));
            if let Some(why) = v
                .unreadable
                .as_ref()
                .or(v.unreadable_part.as_ref())
                .or(v.refused.as_ref())
            {
                out.push_str(&format!(": {why}"));
            }
            out.push('\n');
            for c in &v.carries {
                out.push_str(&format!(
                    "           carries {} `{}`: {}\n",
                    c.kind.as_str(),
                    c.text.trim(),
                    c.reason
                ));
            }
        }
        let _ = print_out(&out);
    }
    if refused {
        exit::ERRORS
    } else {
        exit::OK
    }
}

pub(super) fn cmd_cache(
    action: CacheAction,
    file: &Utf8Path,
    keep: usize,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (_, _, st) = or_exit!(open_store(file, store, color, "no cache"));
    match action {
        CacheAction::Ls => {
            let mut out = String::new();
            for e in st.cache_entries() {
                let size = std::fs::metadata(st.object_path(&e.text_hash))
                    .map(|m| m.len())
                    .unwrap_or(0);
                out.push_str(&format!(
                    "{}  {:<12} {:>8} B  {}\n",
                    &e.key[..16],
                    e.stage,
                    size,
                    e.identity
                ));
            }
            print_out(&out)
        }
        CacheAction::Verify => {
            let objects = st.objects();
            let mut bad = 0;
            for (hash, path) in &objects {
                let ok = std::fs::read(path)
                    .map(|b| blake3::hash(&b).to_hex().as_str() == hash)
                    .unwrap_or(false);
                if !ok {
                    bad += 1;
                    println!("damaged: {}", path.display());
                }
            }
            println!("{} objects, {} damaged", objects.len(), bad);
            if bad > 0 {
                exit::ERRORS
            } else {
                exit::OK
            }
        }
        CacheAction::Gc => match st.gc(keep) {
            Ok((entries, objects)) => {
                if entries + objects == 0 {
                    println!("removed nothing: every cached answer is used by one of the last {keep} runs");
                } else {
                    println!("removed {entries} cached answer{} (and {objects} stored object{} only they used) that none of the last {keep} runs used; those stages will call their model again if they run", if entries == 1 { "" } else { "s" }, if objects == 1 { "" } else { "s" });
                }
                exit::OK
            }
            Err(e) => {
                eprintln!("error: {e}");
                exit::ERRORS
            }
        },
    }
}
