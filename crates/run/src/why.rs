//! `lexrun why STAGE`: why a stage was answered from the cache or called the model, read from
//! the keys the ledger holds — the last run's key against the run before it, component by
//! component of the [`CacheKey`], with the prompt's diff.

use crate::cache_key::{CacheKey, Change};
use crate::plan::Plan;
use crate::store::Store;

/// A stage `why` cannot explain.
#[derive(Debug, thiserror::Error)]
#[error("the workflow has no stage `{0}` (a judge's calls are `judge STAGE`)")]
pub struct NoStage(pub String);

/// What the store knows of the last call of `stage` (a stage, or `judge STAGE`) of the
/// workflow in `ledger_file`, and what changed since the run before.
pub fn why(st: &Store, plan: &Plan, ledger_file: &str, stage: &str) -> Result<String, NoStage> {
    let is_step = |s: &str| plan.steps.iter().any(|x| x.name == s);
    let judged = stage.strip_prefix("judge ").is_some_and(is_step);
    if !is_step(stage) && !judged {
        return Err(NoStage(stage.to_string()));
    }
    if judged {
        return Ok(why_judge(st, &plan.workflow.name, ledger_file, stage));
    }
    let keys = st.recent_keys(&plan.workflow.name, ledger_file, stage, 200);
    let failures = st.recent_failures(&plan.workflow.name, ledger_file, stage, 200);
    // A stage that failed after its last key (or never got one) is reported as failing.
    if let Some((frun, fmatter, why, at)) = failures.first() {
        if keys.first().is_none_or(|k| k.6 <= *at) {
            let mut out = format!("`{stage}` failed in run {frun} (matter {fmatter}): {why}\n");
            if failures.len() > 1 {
                out.push_str(&format!(
                    "it has failed {} times in the runs this store remembers of {ledger_file}; the earlier errors:\n",
                    failures.len()
                ));
                let mut seen = std::collections::BTreeSet::new();
                for (r, _, w, _) in failures.iter().skip(1) {
                    if seen.insert(w.clone()) {
                        out.push_str(&format!("  run {r}: {w}\n"));
                    }
                }
            }
            return Ok(out);
        }
    }
    let Some((run, matter, round, key, new, hit, _)) = keys.first().cloned() else {
        return Ok(format!(
            "`{stage}` has not run with this store yet: its first run will call the model\n"
        ));
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
                        explain_change(st, &change, &mut out);
                    }
                }
                _ => out.push_str("  the stored keys are from another version of lexrun\n"),
            }
        }
    }
    Ok(out)
}

/// A judge's calls in the last run that made any, against the run before it on the same
/// matter: how many were answered from the cache, and, for each call not made before, what
/// changed from the nearest earlier one (a set of pages or its sentences, usually).
fn why_judge(st: &Store, workflow: &str, ledger_file: &str, stage: &str) -> String {
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
fn explain_change(st: &Store, change: &Change, out: &mut String) {
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
pub fn short_hash(h: &str) -> String {
    h.chars().take(12).collect()
}
