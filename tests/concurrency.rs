//! Many matters into one output folder at once: eight runs (processes) of eight matters
//! sharing one `--out` and one store, round after round. Every run finishes, every matter's
//! output is on disk exactly once, whole, with a marker and manifest that name its own
//! matter, and no temporary file is left behind. `LEXRUN_CONCURRENCY_ROUNDS=N` runs N rounds
//! (50 by default).

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::servers::{Answer, Fake, Seen, Speaks};
use support::{stderr, Lexrun};

const MATTERS: usize = 8;
/// A round that takes longer than this has hung: its runs are killed and the test fails.
const ROUND_LIMIT: Duration = Duration::from_secs(120);

/// The drafter names the matter its evidence names (`MATTER-k`).
fn server() -> Fake {
    Fake::start(Speaks::Llama, Duration::from_millis(1), |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            r#"{"grounds": true, "reason": "Notice was given.", "needs_figures": false}"#.into()
        } else if p.contains("opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            let k = p
                .split("MATTER-")
                .nth(1)
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                .unwrap_or("?")
                .to_string();
            format!("1. For matter {k} I paid $1,250.00 for April 2024 (TEST000002).\n")
        };
        Answer { text, fault: None }
    })
}

fn spawn(matter: &Path, out: &Path, store: &Path, url: &str) -> std::process::Child {
    Lexrun::new()
        .args(["run", "tests/runtime/pipeline.lex", "--matter"])
        .arg(matter)
        .arg("--out")
        .arg(out)
        .arg("--store")
        .arg(store)
        .args(["--endpoint", &format!("gpu_a={url}")])
        .args(["--endpoint", &format!("gpu_b={url}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
}

/// Every file under `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Which matter a written `draft.md` is: its text, its marker and its manifest must agree,
/// and the manifest's hash must be the file's.
fn label(draft: &Path) -> String {
    let bytes = fs::read(draft).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let side = PathBuf::from(format!("{}.provenance.json", draft.display()));
    let manifest: serde_json::Value = serde_json::from_slice(&fs::read(&side).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", side.display()));
    assert_eq!(
        manifest["blake3"].as_str().unwrap(),
        blake3::hash(&bytes).to_hex().as_str(),
        "{} is not the file its manifest describes",
        draft.display()
    );
    let matter = manifest["lexrun.matter"].as_str().unwrap().to_string();
    let run = manifest["lexrun.run"].as_str().unwrap();
    assert!(
        text.contains(&format!("matter={matter} ")) && text.contains(&format!("run={run}")),
        "{}: the marker does not name matter {matter} of run {run}:\n{text}",
        draft.display()
    );
    let k = matter.trim_start_matches("m");
    assert!(
        text.contains(&format!("For matter {k} I paid")),
        "{} holds another matter's text than {matter}'s:\n{text}",
        draft.display()
    );
    matter
}

#[test]
fn eight_matters_into_one_output_folder_at_once() {
    let rounds: usize = std::env::var("LEXRUN_CONCURRENCY_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let matters: Vec<PathBuf> = (0..MATTERS)
        .map(|k| {
            let m = dir.path().join(format!("m{k}"));
            support::copy_dir(Path::new("tests/runtime/matter"), &m);
            let letter = m.join("intake/01-letter.txt");
            let t = fs::read_to_string(&letter).unwrap();
            fs::write(&letter, format!("MATTER-{k}\n{t}")).unwrap();
            m
        })
        .collect();
    let store = dir.path().join("store");
    let srv = server();
    let started = Instant::now();
    for round in 0..rounds {
        let out = dir.path().join(format!("out-{round}"));
        let mut kids: Vec<_> = matters
            .iter()
            .map(|m| Some(spawn(m, &out, &store, &srv.url)))
            .collect();
        let began = Instant::now();
        let mut done: Vec<Option<std::process::Output>> = (0..MATTERS).map(|_| None).collect();
        while done.iter().any(Option::is_none) {
            for (k, kid) in kids.iter_mut().enumerate() {
                let exited = kid
                    .as_mut()
                    .is_some_and(|c| c.try_wait().unwrap().is_some());
                if exited {
                    done[k] = Some(kid.take().unwrap().wait_with_output().unwrap());
                }
            }
            if began.elapsed() > ROUND_LIMIT {
                for c in kids.iter_mut().flatten() {
                    let _ = c.kill();
                }
                panic!("round {round}: runs still going after {ROUND_LIMIT:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        for (k, o) in done.into_iter().flatten().enumerate() {
            assert_eq!(
                o.status.code(),
                Some(0),
                "round {round}, matter m{k}:\n{}",
                stderr(&o)
            );
        }
        let mut files = Vec::new();
        walk(&out, &mut files);
        let left: Vec<_> = files
            .iter()
            .filter(|p| p.to_string_lossy().ends_with(".partial"))
            .collect();
        assert!(
            left.is_empty(),
            "round {round}: temporary files left: {left:?}"
        );
        let mut seen: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
        for f in files.iter().filter(|p| p.ends_with("draft.md")) {
            seen.entry(label(f)).or_default().push(f.clone());
        }
        for k in 0..MATTERS {
            let at = seen.get(&format!("m{k}")).cloned().unwrap_or_default();
            assert_eq!(
                at.len(),
                1,
                "round {round}: matter m{k}'s output should be on disk once: {at:?}"
            );
        }
        assert_eq!(seen.len(), MATTERS, "round {round}: {seen:?}");
        // Each run's own record, whole.
        let runs = fs::read_dir(&out)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("run-"))
            .filter(|e| {
                let rj = e.path().join("run.json");
                serde_json::from_slice::<serde_json::Value>(&fs::read(rj).unwrap_or_default())
                    .is_ok()
            })
            .count();
        assert_eq!(runs, MATTERS, "round {round}: one whole run folder per run");
    }
    eprintln!(
        "{rounds} rounds of {MATTERS} matters into one output folder: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
