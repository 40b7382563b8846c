//! The servers a run meets, against the real llama.cpp server with the tiny model: one server
//! standing in for every pool (`--endpoint POOL=KIND:URL`) and the error when its protocol is
//! not the pool's; a fully cached re-run with every server down; `bench` measuring a prompt no
//! cache holds; a pool that needs a newer llama.cpp build than the server runs.

use crate::support;

use std::fs;
use std::path::Path;

use serde_json::Value;
use support::servers;
use support::{run_record, stderr, Lexrun};

fn affidavit(
    out: &Path,
    store: &Path,
    endpoints: &[String],
    extra: &[&str],
) -> std::process::Output {
    let mut l = Lexrun::new()
        .args([
            "run",
            "workflows/affidavit.lex",
            "--backoff-ms",
            "20",
            "--retries",
            "1",
        ])
        .arg("--out")
        .arg(out)
        .arg("--store")
        .arg(store);
    for e in endpoints {
        l = l.args(["--endpoint", e]);
    }
    l.args(extra).output()
}

/// Every pool of the affidavit example pointed at `url`, the Ollama pool as `rtx`.
fn every_pool(url: &str, rtx: &str) -> Vec<String> {
    let mut v: Vec<String> = ["board_a", "board_b", "pair_01", "pair_23"]
        .iter()
        .map(|p| format!("{p}={url}"))
        .collect();
    v.push(format!("rtx={rtx}"));
    v
}

#[test]
fn one_llama_server_stands_in_for_every_pool() {
    let llama = servers::llama();
    let (out, store) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let rtx = format!("llama_cpp:{}", llama.url);
    let o = affidavit(out.path(), store.path(), &every_pool(&llama.url, &rtx), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_, rec) = run_record(out.path());
    let figures = rec.matters[0]
        .steps
        .iter()
        .find(|s| s.name == "figures")
        .unwrap();
    assert!(figures.identity.as_deref().unwrap().contains("tiny-llama"));
}

#[test]
fn a_server_of_another_protocol_is_named_not_a_bare_404() {
    let llama = servers::llama();
    let (out, store) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = affidavit(
        out.path(),
        store.path(),
        &every_pool(&llama.url, &llama.url),
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("this endpoint answers like llama.cpp, not Ollama"),
        "{e}"
    );
    assert!(
        e.contains(&format!("--endpoint rtx=llama_cpp:{}", llama.url)),
        "{e}"
    );
    let line = e
        .lines()
        .find(|l| l.starts_with("error: step `figures`"))
        .unwrap();
    assert!(!line.contains("404"), "{line}");
}

#[test]
fn a_fully_cached_run_needs_no_server() {
    let llama = servers::llama();
    let (out, store) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let rtx = format!("llama_cpp:{}", llama.url);
    let o = affidavit(out.path(), store.path(), &every_pool(&llama.url, &rtx), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The document without its provenance line (which names the run).
    let text = |dir: &Path| {
        let t = fs::read_to_string(dir.join("affidavit.md")).unwrap();
        t[..t.find("<!-- lexrun:provenance").unwrap()].to_string()
    };
    let first = text(out.path());

    // Every server down: nothing listens where the pools point.
    let dead = format!("http://127.0.0.1:{}", servers::free_port());
    let dead_rtx = format!("llama_cpp:{dead}");
    for extra in [&["--offline"][..], &[][..]] {
        let again = tempfile::tempdir().unwrap();
        let o = affidavit(
            again.path(),
            store.path(),
            &every_pool(&dead, &dead_rtx),
            extra,
        );
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        assert_eq!(text(again.path()), first);
        let (_, rec) = run_record(again.path());
        for s in rec.matters[0].steps.iter().filter(|s| s.kind == "model") {
            assert!(s.cached, "{}", s.name);
            let note = s.identity_note.as_deref().unwrap_or_default();
            assert!(
                note.starts_with("the server was not asked"),
                "{}: {note}",
                s.name
            );
            assert!(s.identity.as_deref().unwrap().contains("tiny-llama"));
        }
    }

    // Offline with nothing in the ledger is a clear failure, not a wait for servers.
    let (fresh, empty) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let o = affidavit(fresh.path(), empty.path(), &[], &["--offline"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("offline: no earlier run of stage `gate`"),
        "{}",
        stderr(&o)
    );
}

/// A one-model workflow on the tiny server, with extra pool settings.
fn tiny(dir: &Path, url: &str, pool_extra: &str) -> std::path::PathBuf {
    let lex = format!(
        "workflow tiny \"One tiny model\"\n\n\
         pool cpu {{\n  gpus 0\n  vram 8 GiB\n  serve llama_cpp at \"{url}\"\n{pool_extra}}}\n\n\
         model tiny on cpu {{\n  gguf \"{}\"\n  ctx 32k\n  temperature 0\n}}\n\n\
         sources notes {{\n  files \"*.txt\"\n}}\n\n\
         stage answer {{\n  model tiny\n  prompt \"{{{{evidence}}}} Answer.\"\n  reads notes\n}}\n",
        servers::llama().model.display()
    );
    fs::write(
        dir.join("notes.txt"),
        "The heating broke on March 3, 2024.\n",
    )
    .unwrap();
    let file = dir.join("tiny.lex");
    fs::write(&file, lex).unwrap();
    file
}

#[test]
fn bench_measures_a_prompt_no_cache_holds() {
    let llama = servers::llama();
    let dir = tempfile::tempdir().unwrap();
    let file = tiny(dir.path(), &llama.url, "");
    let o = Lexrun::new()
        .arg("bench")
        .arg(&file)
        .args(["--runs", "2", "--json"])
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &rows[0];
    // The second run evaluates the whole prompt again: nothing came from the server's cache.
    assert!(r["prompt_tokens"].as_u64().unwrap() > 300, "{r:#}");
    assert_eq!(r["cached_tokens"], 0, "{r:#}");
    assert_eq!(r["decode_tokens"], 128, "{r:#}");
    assert_eq!(r["build"], "b0-unknown", "{r:#}");
    let kept: Value =
        serde_json::from_slice(&fs::read(dir.path().join(".lexrun/bench.json")).unwrap()).unwrap();
    assert_eq!(kept["tiny"]["build"], "b0-unknown");
    assert!(kept["tiny"]["decode_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_pool_refuses_a_server_older_than_its_min_build() {
    let llama = servers::llama();
    let dir = tempfile::tempdir().unwrap();
    let file = tiny(
        dir.path(),
        &llama.url,
        "  min_build 6123 because \"older builds garble long Gemma prompts\"\n",
    );
    let o = Lexrun::new().arg("run").arg(&file).output();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("pool `cpu` needs llama.cpp build 6123 or newer (older builds garble long Gemma prompts)"),
        "{e}"
    );
    assert!(e.contains("reports no build number (`b0-unknown`"), "{e}");
    let o = Lexrun::new()
        .arg("status")
        .arg(&file)
        .arg("--json")
        .output();
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows[0]["state"], "old build", "{rows:#}");
    assert_eq!(rows[0]["build"], "b0-unknown");
}

/// The tiny workflow against a scripted server that streams 48 words, `delay` apart.
fn slow(delay: std::time::Duration) -> (servers::Fake, tempfile::TempDir, std::path::PathBuf) {
    let fake = servers::Fake::start(servers::Speaks::Llama, delay, |_| servers::Answer {
        // 48 different words: a stream that says one passage again and again is cut short.
        text: (1..=48).map(|i| format!("word{i} ")).collect(),
        fault: None,
    });
    let dir = tempfile::tempdir().unwrap();
    let file = tiny(dir.path(), &fake.url, "");
    (fake, dir, file)
}

#[test]
fn a_terminal_shows_tokens_and_speed_while_a_stage_runs() {
    let (_fake, dir, file) = slow(std::time::Duration::from_millis(60));
    // `script` gives lexrun a pseudo-terminal as its stderr and copies what it draws.
    let cmd = format!(
        "{} run {} --out {}",
        env!("CARGO_BIN_EXE_lexrun"),
        file.display(),
        dir.path().join("out").display()
    );
    let o = std::process::Command::new("script")
        .args(["-qefc", &cmd, "/dev/null"])
        .env("LEXRUN_STORE", support::fresh_store())
        .env("NO_COLOR", "1")
        .output()
        .expect("script (util-linux) runs a command in a pseudo-terminal");
    let screen = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{screen}");
    assert!(
        screen.contains("cpu · tiny · 16 tokens") || screen.contains("cpu · tiny · 24 tokens"),
        "{screen}"
    );
    assert!(screen.contains(" tok/s"), "{screen}");
}

#[test]
fn piped_output_says_how_a_long_stage_is_doing() {
    // 48 tokens 250 ms apart: 12 s, past the 10 s a quiet stage may last.
    let (_fake, dir, file) = slow(std::time::Duration::from_millis(250));
    let o = Lexrun::new()
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    let line = e
        .lines()
        .find(|l| l.trim_start().starts_with("working answer on cpu (tiny):"))
        .unwrap_or_else(|| panic!("no progress line: {e}"));
    assert!(
        line.contains(" tokens, ") && line.contains(" tok/s, "),
        "{line}"
    );
}
