//! Run folders pruned to the last N per workflow, so `out/` does not grow by a folder on every
//! run. Only folders whose `run.json` names the workflow are counted or removed: a run still
//! under way (no `run.json` yet), another workflow's runs and anything else in the folder are
//! left alone. The ledger keeps every run's provenance whatever is pruned.

use std::path::{Path, PathBuf};

/// Removes all but the newest `keep` run folders of `workflow` under `out`; returns those
/// removed, oldest first.
pub fn prune_runs(out: &Path, workflow: &str, keep: usize) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut runs: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("run-"))
        })
        .filter_map(|p| {
            let rj = p.join("run.json");
            let modified = std::fs::metadata(&rj).ok()?.modified().ok()?;
            let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&rj).ok()?).ok()?;
            (v["workflow"].as_str() == Some(workflow)).then_some((modified, p))
        })
        .collect();
    runs.sort();
    let excess = runs.len().saturating_sub(keep);
    runs.into_iter()
        .take(excess)
        .filter(|(_, p)| std::fs::remove_dir_all(p).is_ok())
        .map(|(_, p)| p)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(out: &Path, name: &str, workflow: Option<&str>) {
        let d = out.join(name);
        std::fs::create_dir_all(&d).unwrap();
        if let Some(w) = workflow {
            std::fs::write(d.join("run.json"), format!("{{\"workflow\": \"{w}\"}}")).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    #[test]
    fn keeps_the_newest_of_this_workflow_only() {
        let out = tempfile::tempdir().unwrap();
        for i in 0..4 {
            run(out.path(), &format!("run-{i}"), Some("affidavit"));
        }
        run(out.path(), "run-other", Some("motion"));
        run(out.path(), "run-under-way", None);
        std::fs::write(out.path().join("affidavit.md"), "x").unwrap();
        let gone = prune_runs(out.path(), "affidavit", 2);
        let names: Vec<_> = gone
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["run-0", "run-1"]);
        for left in [
            "run-2",
            "run-3",
            "run-other",
            "run-under-way",
            "affidavit.md",
        ] {
            assert!(out.path().join(left).exists(), "{left}");
        }
    }
}
