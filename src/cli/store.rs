//! `why`, `audit`, `sources` and `cache`: what the store knows of past runs.

use super::*;

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
                crate::redact::url(u),
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

pub(super) fn cmd_why(
    file: &Utf8Path,
    stage: &str,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (plan, _, st) = match open_store(file, store, color, "nothing to explain") {
        Ok(x) => x,
        Err(c) => return c,
    };
    let is_step = |s: &str| plan.steps.iter().any(|x| x.name == s);
    let judged = stage.strip_prefix("judge ").is_some_and(is_step);
    if !is_step(stage) && !judged {
        eprintln!("error: the workflow has no stage `{stage}` (a judge's calls are `judge STAGE`)");
        return exit::USAGE;
    }
    let ledger_file = super::run::ledger_file(file);
    if judged {
        return print_out(&why_judge(&st, &plan.workflow.name, &ledger_file, stage));
    }
    let keys = st.recent_keys(&plan.workflow.name, &ledger_file, stage, 200);
    let failures = st.recent_failures(&plan.workflow.name, &ledger_file, stage, 200);
    // A stage that failed after its last key (or never got one) is reported as failing.
    if let Some((frun, fmatter, why, at)) = failures.first() {
        if keys.first().is_none_or(|k| k.6 <= *at) {
            let mut out = format!("`{stage}` failed in run {frun} (matter {fmatter}): {why}\n");
            if failures.len() > 1 {
                out.push_str(&format!(
                    "it has failed {} times in the runs this store remembers of {file}; the earlier errors:\n",
                    failures.len()
                ));
                let mut seen = std::collections::BTreeSet::new();
                for (r, _, w, _) in failures.iter().skip(1) {
                    if seen.insert(w.clone()) {
                        out.push_str(&format!("  run {r}: {w}\n"));
                    }
                }
            }
            return print_out(&out);
        }
    }
    let Some((run, matter, round, key, new, hit, _)) = keys.first().cloned() else {
        println!("`{stage}` has not run with this store yet: its first run will call the model");
        return exit::OK;
    };
    let mut out = format!(
        "`{stage}` in run {run} (matter {matter}, round {round}): {} (key {})\n",
        if hit {
            "answered from the cache"
        } else {
            "called the model"
        },
        &key[..12.min(key.len())]
    );
    let previous = keys
        .iter()
        .skip(1)
        .find(|k| k.0 != run && k.1 == matter && k.2 == round);
    match previous {
        None => out.push_str("no earlier run of this stage for this matter to compare with\n"),
        Some((prun, _, _, pkey, old, _, _)) if pkey == &key => {
            out.push_str(&format!(
                "the key is the same as in run {prun}: nothing changed\n"
            ));
            let _ = old;
        }
        Some((prun, _, _, _, old, _, _)) => {
            out.push_str(&format!("changed since run {prun}:\n"));
            let parse = |v: &serde_json::Value| serde_json::from_value::<CacheKey>(v.clone());
            match (parse(old), parse(&new)) {
                (Ok(old), Ok(new)) => {
                    for change in new.changes_since(&old) {
                        explain_change(&st, &change, &mut out);
                    }
                }
                _ => out.push_str("  the stored keys are from another version of lexrun\n"),
            }
        }
    }
    print_out(&out)
}

/// A judge's calls in the last run that made any, against the run before it on the same
/// matter: how many were answered from the cache, and, for each call not made before, what
/// changed from the nearest earlier one (a set of pages or its sentences, usually).
fn why_judge(st: &crate::store::Store, workflow: &str, ledger_file: &str, stage: &str) -> String {
    let keys = st.recent_keys(workflow, ledger_file, stage, 1000);
    let Some(last) = keys.first() else {
        return format!("`{stage}` has judged nothing with this store yet\n");
    };
    let (run, matter) = (last.0.clone(), last.1.clone());
    let of = |r: &str| -> Vec<&(String, String, u32, String, serde_json::Value, bool, i64)> {
        keys.iter().filter(|k| k.0 == r && k.1 == matter).collect()
    };
    let now = of(&run);
    let hits = now.iter().filter(|k| k.5).count();
    let mut out = format!(
        "`{stage}` in run {run} (matter {matter}): {} call{}, {hits} answered from the cache, {} sent to the judge\n",
        now.len(),
        if now.len() == 1 { "" } else { "s" },
        now.len() - hits
    );
    let Some(prev) = keys
        .iter()
        .find(|k| k.0 != run && k.1 == matter)
        .map(|k| k.0.clone())
    else {
        out.push_str("no earlier run of this judge for this matter to compare with\n");
        return out;
    };
    let before = of(&prev);
    let old_keys: std::collections::BTreeSet<&str> = before.iter().map(|k| k.3.as_str()).collect();
    let fresh: Vec<_> = now
        .iter()
        .filter(|k| !old_keys.contains(k.3.as_str()))
        .collect();
    out.push_str(&format!(
        "compared with run {prev}: {} the same, {} not made before\n",
        now.len() - fresh.len(),
        fresh.len()
    ));
    let parse = |v: &serde_json::Value| serde_json::from_value::<CacheKey>(v.clone()).ok();
    for k in fresh {
        out.push_str(&format!("call with key {}:\n", short_hash(&k.3)));
        let (Some(new), olds) = (parse(&k.4), before.iter().filter_map(|b| parse(&b.4))) else {
            out.push_str("  the stored key is from another version of lexrun\n");
            continue;
        };
        // The nearest earlier call: fewest changed components, then the most similar prompt.
        let text = |h: &str| st.get(h).map(|b| String::from_utf8_lossy(&b).into_owned());
        let new_prompt = text(&new.prompt).unwrap_or_default();
        let likeness = |o: &CacheKey| {
            let old = text(&o.prompt).unwrap_or_default();
            (similar::TextDiff::from_lines(&old, &new_prompt).ratio() * 1e6) as i64
        };
        let nearest = olds.min_by_key(|o| (new.changes_since(o).len(), -likeness(o)));
        match nearest.map(|o| new.changes_since(&o)) {
            Some(changes) => {
                for c in &changes {
                    explain_change(st, c, &mut out);
                }
            }
            None => out.push_str("  no earlier call to compare with\n"),
        }
    }
    out
}

/// One line (or a diff, for the prompt) per changed component of a cache key.
pub(super) fn explain_change(st: &crate::store::Store, change: &Change, out: &mut String) {
    match change {
        Change::Prompt { before, now } => {
            out.push_str("  prompt: the rendered prompt differs\n");
            let text = |h: &str| st.get(h).map(|b| String::from_utf8_lossy(&b).into_owned());
            if let (Some(a), Some(b)) = (text(before), text(now)) {
                let d = similar::TextDiff::from_lines(&a, &b)
                    .unified_diff()
                    .context_radius(1)
                    .header("before", "now")
                    .to_string();
                for l in d.lines().take(40) {
                    out.push_str(&format!("    {l}\n"));
                }
            }
        }
        Change::Node { before, now } => out.push_str(&format!(
            "  plan node: the stage's declaration, model or pool changed ({} → {})\n",
            short_hash(before),
            short_hash(now)
        )),
        Change::Input { name, before, now } => {
            let shown = |h: &Option<String>| h.as_deref().map_or("null".to_string(), short_hash);
            out.push_str(&format!(
                "  input `{name}`: its text changed ({} → {})\n",
                shown(before),
                shown(now)
            ))
        }
        Change::ModelIdentity { before, now } => out.push_str(&format!(
            "  model_identity: {} → {}\n",
            serde_json::Value::from(before.as_str()),
            serde_json::Value::from(now.as_str())
        )),
        Change::Sampling { before, now } => {
            out.push_str(&format!("  sampling: {before} → {now}\n"))
        }
        Change::Schema { before, now } => out.push_str(&format!("  schema: {before} → {now}\n")),
        Change::Round { before, now } => out.push_str(&format!("  round: {before} → {now}\n")),
        Change::Format { before, now } => out.push_str(&format!("  format: {before} → {now}\n")),
    }
}

/// The first 12 characters of a hash.
pub(super) fn short_hash(h: &str) -> String {
    h.chars().take(12).collect()
}

pub(super) fn short(v: &serde_json::Value) -> String {
    v.as_str().map(short_hash).unwrap_or_else(|| v.to_string())
}

pub(super) fn cmd_audit(
    file: &Utf8Path,
    run: Option<&str>,
    json: bool,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (_, _, st) = match open_store(file, store, color, "no audit") {
        Ok(x) => x,
        Err(c) => return c,
    };
    let Some(run) = run.map(str::to_string).or_else(|| st.last_run()) else {
        eprintln!("error: the store has no runs yet");
        return exit::USAGE;
    };
    let Some(mut info) = st.run_info(&run) else {
        eprintln!("error: the store has no run `{run}`");
        return exit::USAGE;
    };
    let arts = st.artifacts_of_run(&run);
    info["artifacts"] = serde_json::to_value(&arts).unwrap_or_default();
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
    print_out(&out)
}

pub(super) fn cmd_sources(
    file: &Utf8Path,
    matters: &[std::path::PathBuf],
    json: bool,
    store: Option<&std::path::Path>,
    color: bool,
) -> u8 {
    let (plan, dir, st) = match open_store(file, store, color, "no sources checked") {
        Ok(x) => x,
        Err(c) => return c,
    };
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
    let (_, _, st) = match open_store(file, store, color, "no cache") {
        Ok(x) => x,
        Err(c) => return c,
    };
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
