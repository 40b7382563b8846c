//! `lexrun verify` on 10,000 pages of generated evidence and a draft with 2,000 claims,
//! against `rg -F -f PATTERNS` searching the same files for the same claims as fixed strings.
//! Targets: verify time ≤ 2 × rg's, peak memory ≤ 2 × the evidence text size.
//!
//! Run: `cargo bench --bench verify` (needs `rg`: `apt-get install ripgrep`). With
//! `LEXRUN_BENCH_DIR=DIR` the generated files are kept in DIR for profiling.

#[path = "../tests/support/corpus.rs"]
mod corpus;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PAGES: usize = 10_000;
const PLANTED: usize = 1_000; // each plants a fact and a Bates number: 2,000 claims
const RUNS: usize = 11;

/// Runs a command to completion; its wall time and peak resident memory (KiB).
fn measure(cmd: &mut Command) -> (Duration, i64, Option<i32>) {
    let t = Instant::now();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("command starts");
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    // wait4 reaps the child and reports its own peak memory; `try_wait` afterwards only
    // confirms to std that it is gone.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let _ = child.try_wait();
    let elapsed = t.elapsed();
    assert_eq!(r, pid, "wait4 failed");
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (elapsed, usage.ru_maxrss, code)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // LEXRUN_BENCH_DIR keeps the generated evidence, draft and patterns for profiling.
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir =
        std::env::var_os("LEXRUN_BENCH_DIR").map_or_else(|| tmp.path().to_path_buf(), Into::into);
    let sources = dir.join("sources");
    std::fs::create_dir_all(&sources).unwrap();
    let c = corpus::generate(PAGES, PLANTED, 42);
    let mut evidence_bytes = 0;
    for (name, pages) in &c.files {
        let text = pages.join("\u{000C}");
        evidence_bytes += text.len();
        std::fs::write(sources.join(name), text).unwrap();
    }
    let draft = dir.join("draft.md");
    std::fs::write(&draft, &c.draft).unwrap();
    let patterns = dir.join("patterns.txt");
    let pats: Vec<&str> = c.planted.iter().map(|(t, _)| t.trim_matches('"')).collect();
    std::fs::write(&patterns, pats.join("\n") + "\n").unwrap();

    let exe = env!("CARGO_BIN_EXE_lexrun");
    let rg_ok = Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    // lexrun and rg take turns, so that a busy moment on the machine falls on both.
    let mut lexrun_times = Vec::new();
    let mut rg_times = Vec::new();
    let mut peak = 0;
    for _ in 0..RUNS {
        let (t, rss, code) = measure(
            Command::new(exe)
                .arg("verify")
                .arg("--json")
                .arg("--sources")
                .arg(&sources)
                .arg(&draft),
        );
        assert!(
            matches!(code, Some(0 | 1)),
            "lexrun verify failed: {code:?}"
        );
        lexrun_times.push(t);
        peak = peak.max(rss);
        if rg_ok {
            let (t, _, code) = measure(
                Command::new("rg")
                    .arg("-F")
                    .arg("-f")
                    .arg(&patterns)
                    .arg(&sources),
            );
            assert!(matches!(code, Some(0 | 1)), "rg failed: {code:?}");
            rg_times.push(t);
        }
    }
    let out = Command::new(exe)
        .arg("verify")
        .arg("--json")
        .arg("--sources")
        .arg(&sources)
        .arg(&draft)
        .output()
        .unwrap();
    let mut claims = 0;
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&out.stdout) {
        claims = v["claims"].as_array().map_or(0, Vec::len);
    }
    let lex = median(lexrun_times);
    println!(
        "evidence: {PAGES} pages in {} files, {:.1} MB of text; draft: {claims} claims",
        c.files.len(),
        evidence_bytes as f64 / 1e6
    );
    println!("lexrun verify (median of {RUNS}): {:.1} ms, peak memory {:.1} MB = {:.2} × the evidence text", lex.as_secs_f64() * 1e3, peak as f64 * 1024.0 / 1e6, peak as f64 * 1024.0 / evidence_bytes as f64);

    if !rg_ok {
        println!("rg is not installed: `apt-get install ripgrep` for the comparison");
        return;
    }
    let rg = median(rg_times);
    println!(
        "rg -F -f PATTERNS (median of {RUNS}): {:.1} ms",
        rg.as_secs_f64() * 1e3
    );
    println!(
        "ratio: lexrun verify = {:.2} × rg (target ≤ 2.00)",
        lex.as_secs_f64() / rg.as_secs_f64()
    );
}
