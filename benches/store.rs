//! Store benchmarks, each against its target in the same run.
//!
//! 1. A fully cached re-run of the affidavit example (servers up, every answer in the
//!    store): model calls counted at the servers (target 0) and wall time (target < 100 ms);
//!    and the same re-run with every server down (`--offline`, the pools pointed at a port
//!    nothing listens on), against the same 100 ms target and the servers-up re-run.
//! 2. The intake guard against a ledger of 100,000 stored outputs: time per source file
//!    (target < 1 ms on average).
//!
//! Run: `cargo bench --bench store`.

#[path = "../tests/support/servers.rs"]
mod servers;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use servers::{Answer, Fake, Seen, Speaks};

fn lexrun_bin() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let st = Command::new("cargo")
        .args(["build", "--release", "--quiet", "--bin", "lexrun"])
        .current_dir(root)
        .status()
        .expect("cargo build");
    assert!(st.success());
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("release")
        .join("lexrun")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn cached_rerun(bin: &Path) {
    let llama = Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening") {
            r#"{"grounds": true, "reason": "Notice was given (SMITH000004).", "needs_figures": true}"#
        } else if p.contains("opposing counsel") {
            r#"{"passes": true, "objections": []}"#
        } else {
            "1. I have rented Unit 3B at 1420 Harbor View Drive since June 1, 2022 (SMITH000001)."
        };
        Answer {
            text: text.into(),
            fault: None,
        }
    });
    let ollama = Fake::start(Speaks::Ollama, Duration::ZERO, |_| Answer {
        text: r#"{"amounts": [], "total": 0}"#.into(),
        fault: None,
    });
    let store = tempfile::tempdir().unwrap();
    let dead = format!("http://127.0.0.1:{}", servers::free_port());
    let run_at = |out: &Path, llama_url: &str, ollama_url: &str, extra: &[&str]| {
        let mut c = Command::new(bin);
        c.args(["run", "workflows/affidavit.lex", "--out"])
            .arg(out)
            .arg("--store")
            .arg(store.path())
            .args(extra);
        for p in ["board_a", "board_b", "pair_01", "pair_23"] {
            c.arg("--endpoint").arg(format!("{p}={llama_url}"));
        }
        c.arg("--endpoint").arg(format!("rtx={ollama_url}"));
        let t = Instant::now();
        let o = c.output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        t.elapsed().as_secs_f64()
    };
    let run = |out: &Path| run_at(out, &llama.url, &ollama.url, &[]);
    let out = tempfile::tempdir().unwrap();
    let first = run(&out.path().join("first"));
    let calls = llama.calls.load(Ordering::SeqCst) + ollama.calls.load(Ordering::SeqCst);
    let mut times = Vec::new();
    for i in 0..15 {
        times.push(run(&out.path().join(format!("again-{i}"))));
    }
    let again = llama.calls.load(Ordering::SeqCst) + ollama.calls.load(Ordering::SeqCst) - calls;
    let m = median(times);
    println!(
        "cached re-run of the affidavit example: {again} model calls (target 0); {:.1} ms wall, median of 15 = {:.2}× the 100 ms target (first run: {calls} calls, {:.1} ms)",
        m * 1000.0,
        m * 10.0,
        first * 1000.0
    );
    let mut down = Vec::new();
    for i in 0..15 {
        down.push(run_at(
            &out.path().join(format!("down-{i}")),
            &dead,
            &dead,
            &["--offline"],
        ));
    }
    let d = median(down);
    println!(
        "cached re-run with every server down (--offline): {:.1} ms wall, median of 15 = {:.2}× the 100 ms target, {:.2}× the servers-up re-run",
        d * 1000.0,
        d * 10.0,
        d / m
    );
}

fn words(seed: u64, n: usize) -> String {
    // A deterministic pseudo-random text over a vocabulary of 4,096 made-up words, about the
    // number of distinct words in a matter's documents.
    const SYL: &[&str] = &[
        "ka", "lo", "mer", "tin", "sa", "ve", "ron", "di", "pa", "lu", "gen", "ta", "bri", "co",
        "nu", "fe",
    ];
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let w = (x % 4096) as usize;
            format!(
                "{}{}{}",
                SYL[w % 16],
                SYL[(w / 16) % 16],
                SYL[(w / 256) % 16]
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn intake_check() {
    const OUTPUTS: u64 = 100_000;
    const SOURCES: u64 = 200;
    let dir = tempfile::tempdir().unwrap();
    let store = lexrun::store::Store::open(dir.path()).unwrap();
    let t = Instant::now();
    let none = Default::default();
    for i in 0..OUTPUTS {
        let text = words(i, 60);
        let a = lexrun::store::Artifact {
            hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
            text_hash: lexrun::run::intake::text_hash(&text),
            run_id: format!("run-{}", i / 10),
            matter: "bench".into(),
            stage: "draft".into(),
            round: 1,
            kind: "stage".into(),
            path: format!("out/{i}.md"),
            model: "bench".into(),
            inputs: serde_json::Value::Null,
            plan_hash: String::new(),
            node_hash: String::new(),
            created: 0,
        };
        store.add_artifact(&a, &text, &none).unwrap();
    }
    let fill = t.elapsed();
    let src_dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for i in 0..SOURCES {
        let p = src_dir.path().join(format!("{i}.txt"));
        // Two pages of fresh text per source.
        let text = words(1_000_000 + i, 600);
        std::fs::write(&p, &text).unwrap();
        files.push((p, text));
    }
    // The first check brings the fingerprint filter up to date with the ledger (here: builds
    // it from all 100,000 outputs; after a run, it adds only that run's outputs).
    let t = Instant::now();
    let first = lexrun::run::intake::check(&store, "bench", "f.txt", &files[0].0, &files[0].1, &[]);
    let warm = t.elapsed();
    assert!(!first.blocked());
    let t = Instant::now();
    let mut refused = 0;
    for (p, text) in &files {
        let v = lexrun::run::intake::check(&store, "bench", "f.txt", p, text, &[]);
        refused += v.blocked() as usize;
    }
    let per = t.elapsed().as_secs_f64() / SOURCES as f64;
    // One copy of a stored output must still be caught.
    let copy = src_dir.path().join("copy.txt");
    std::fs::write(&copy, words(4242, 60)).unwrap();
    let caught =
        lexrun::run::intake::check(&store, "bench", "copy.txt", &copy, &words(4242, 60), &[])
            .blocked();
    println!(
        "intake guard: {SOURCES} sources of 600 words against {OUTPUTS} stored outputs ({:.1} s to store them; {:.0} ms to build the fingerprint filter once): {:.3} ms per source = {:.2}× the 1 ms target; {refused} false refusals; a stored copy caught: {caught}",
        fill.as_secs_f64(),
        warm.as_secs_f64() * 1000.0,
        per * 1000.0,
        per * 1000.0
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let bin = lexrun_bin();
    cached_rerun(&bin);
    intake_check();
}
