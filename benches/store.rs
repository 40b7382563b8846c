//! Store benchmarks, each against its target in the same run.
//!
//! 1. A fully cached re-run of the affidavit example (servers up, every answer in the
//!    store): model calls counted at the servers (target 0) and wall time (target < 100 ms);
//!    and the same re-run with every server down (`--offline`, the pools pointed at a port
//!    nothing listens on), against the same 100 ms target and the servers-up re-run.
//! 2. The intake guard against a ledger of 1,000,000 stored outputs (their fingerprints
//!    generated synthetically and loaded in bulk), on SQLite and on a PostgreSQL server the
//!    benchmark starts (Debian's `postgresql`, as the tests use it): time per source file,
//!    against the 1 ms (SQLite) and 5 ms (PostgreSQL) targets. Needs about 2 GB of disk.
//!
//! Run: `cargo bench --bench store` (`-- intake` for the intake guard alone).

#[path = "../tests/support/postgres.rs"]
mod postgres_server;
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

/// Outputs in the ledger the intake guard is measured against, and the fingerprints each
/// has (a short output; with more, loading takes longer and each probe of the index one
/// B-tree level more at most).
const OUTPUTS: i64 = 1_000_000;
const FPS_PER_OUTPUT: i64 = 8;
const SOURCES: u64 = 200;

/// A synthetic fingerprint: spread like real ones, none equal to a real text's by chance.
fn synthetic_fp(artifact: i64, j: i64) -> i64 {
    let mut x = (artifact as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (j as u64 + 1);
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) as i64
}

/// Every (fingerprint, artifact) pair of the synthetic outputs, sorted as the index keeps
/// them, so that loading appends to the B-trees.
fn synthetic_pairs() -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = (1..=OUTPUTS)
        .flat_map(|a| (0..FPS_PER_OUTPUT).map(move |j| (synthetic_fp(a, j), a)))
        .collect();
    v.sort_unstable();
    v
}

fn artifact_hash(a: i64) -> String {
    blake3::hash(&a.to_le_bytes()).to_hex().to_string()
}

/// Loads the synthetic outputs straight into an SQLite ledger lexrun made.
fn fill_sqlite(dir: &Path, pairs: &[(i64, i64)]) {
    drop(lexrun::store::Store::open(dir).unwrap());
    let mut db = rusqlite::Connection::open(dir.join("ledger.sqlite")).unwrap();
    db.execute_batch("PRAGMA synchronous = OFF; DROP INDEX shingles_artifact;")
        .unwrap();
    let tx = db.transaction().unwrap();
    {
        let mut q = tx.prepare("INSERT INTO artifacts (id, hash, text_hash, run_id, matter, stage, round, kind, path, model, inputs, plan_hash, node_hash, created, fingerprints) VALUES (?1, ?2, ?2, ?3, 'bench', 'draft', 1, 'stage', 'out.md', 'bench', 'null', '', '', 0, ?4)").unwrap();
        for a in 1..=OUTPUTS {
            q.execute(rusqlite::params![
                a,
                artifact_hash(a),
                format!("run-{}", a / 10),
                FPS_PER_OUTPUT
            ])
            .unwrap();
        }
        let mut q = tx
            .prepare("INSERT INTO shingles (fp, artifact) VALUES (?1, ?2)")
            .unwrap();
        for (fp, a) in pairs {
            q.execute(rusqlite::params![fp, a]).unwrap();
        }
    }
    tx.commit().unwrap();
    db.execute_batch("CREATE INDEX shingles_artifact ON shingles(artifact);")
        .unwrap();
}

/// Loads the synthetic outputs into a PostgreSQL ledger lexrun made, with COPY.
fn fill_postgres(url: &str, dir: &Path, pairs: &[(i64, i64)]) {
    use std::io::Write;
    drop(lexrun::store::Store::open_with(dir, Some(url)).unwrap());
    let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
    c.batch_execute("SET maintenance_work_mem = '512MB'; ALTER TABLE shingles DROP CONSTRAINT shingles_pkey; DROP INDEX shingles_artifact;").unwrap();
    let mut w = c
        .copy_in("COPY artifacts (id, hash, text_hash, run_id, matter, stage, round, kind, path, model, inputs, plan_hash, node_hash, created, fingerprints) FROM STDIN")
        .unwrap();
    let mut buf = Vec::with_capacity(1 << 20);
    for a in 1..=OUTPUTS {
        let h = artifact_hash(a);
        writeln!(
            buf,
            "{a}\t{h}\t{h}\trun-{}\tbench\tdraft\t1\tstage\tout.md\tbench\tnull\t\t\t0\t{FPS_PER_OUTPUT}",
            a / 10
        )
        .unwrap();
        if buf.len() > 1 << 20 {
            w.write_all(&buf).unwrap();
            buf.clear();
        }
    }
    w.write_all(&buf).unwrap();
    buf.clear();
    w.finish().unwrap();
    let mut w = c
        .copy_in("COPY shingles (fp, artifact) FROM STDIN")
        .unwrap();
    for (fp, a) in pairs {
        writeln!(buf, "{fp}\t{a}").unwrap();
        if buf.len() > 1 << 20 {
            w.write_all(&buf).unwrap();
            buf.clear();
        }
    }
    w.write_all(&buf).unwrap();
    w.finish().unwrap();
    c.batch_execute(&format!(
        "ALTER TABLE shingles ADD PRIMARY KEY (fp, artifact); CREATE INDEX shingles_artifact ON shingles(artifact); SELECT setval(pg_get_serial_sequence('artifacts', 'id'), {OUTPUTS}); ANALYZE;"
    ))
    .unwrap();
}

/// The intake guard against the filled ledger: a real output added on top (its copy must be
/// caught), then `SOURCES` files of fresh text; time per source.
fn time_intake(
    store: &lexrun::store::Store,
    sources: &[(PathBuf, String)],
    dir: &Path,
) -> (f64, f64, usize, bool) {
    let copied = words(4242, 60);
    let a = lexrun::store::Artifact {
        hash: blake3::hash(copied.as_bytes()).to_hex().to_string(),
        text_hash: lexrun::run::intake::text_hash(&copied),
        run_id: "run-real".into(),
        matter: "bench".into(),
        stage: "draft".into(),
        round: 1,
        kind: "stage".into(),
        path: "out/real.md".into(),
        model: "bench".into(),
        inputs: serde_json::Value::Null,
        plan_hash: String::new(),
        node_hash: String::new(),
        created: 0,
    };
    store
        .add_artifact(&a, &copied, &Default::default())
        .unwrap();
    // The first check brings the fingerprint filter up to date with the ledger (here: builds
    // it from every stored output; after a run, it adds only that run's outputs).
    let t = Instant::now();
    let first =
        lexrun::run::intake::check(store, "bench", "f.txt", &sources[0].0, &sources[0].1, &[]);
    let warm = t.elapsed().as_secs_f64();
    assert!(!first.blocked());
    let t = Instant::now();
    let mut refused = 0;
    for (p, text) in sources {
        let v = lexrun::run::intake::check(store, "bench", "f.txt", p, text, &[]);
        refused += v.blocked() as usize;
    }
    let per = t.elapsed().as_secs_f64() / sources.len() as f64;
    // The real output, edited, must still be caught.
    let copy = dir.join("copy.txt");
    let edited = copied.replacen("ka", "zu", 3);
    std::fs::write(&copy, &edited).unwrap();
    let caught =
        lexrun::run::intake::check(store, "bench", "copy.txt", &copy, &edited, &[]).blocked();
    (per, warm, refused, caught)
}

fn intake_check() {
    let src_dir = tempfile::tempdir().unwrap();
    let sources: Vec<(PathBuf, String)> = (0..SOURCES)
        .map(|i| {
            let p = src_dir.path().join(format!("{i}.txt"));
            // Two pages of fresh text per source.
            let text = words(1_000_000 + i, 600);
            std::fs::write(&p, &text).unwrap();
            (p, text)
        })
        .collect();
    let t = Instant::now();
    let pairs = synthetic_pairs();
    let generated = t.elapsed().as_secs_f64();

    let sq = tempfile::tempdir().unwrap();
    let t = Instant::now();
    fill_sqlite(sq.path(), &pairs);
    let sq_fill = t.elapsed().as_secs_f64();
    let store = lexrun::store::Store::open(sq.path()).unwrap();
    let (sq_per, sq_warm, sq_refused, sq_caught) = time_intake(&store, &sources, src_dir.path());
    drop(store);
    drop(sq);

    let pg = postgres_server::Postgres::start();
    let url = pg.url("lexrun");
    let pg_dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    fill_postgres(&url, pg_dir.path(), &pairs);
    let pg_fill = t.elapsed().as_secs_f64();
    drop(pairs);
    let store = lexrun::store::Store::open_with(pg_dir.path(), Some(&url)).unwrap();
    let (pg_per, pg_warm, pg_refused, pg_caught) = time_intake(&store, &sources, src_dir.path());
    drop(store);

    println!(
        "intake guard: {SOURCES} sources of 600 words against {OUTPUTS} stored outputs ({FPS_PER_OUTPUT} fingerprints each, generated in {generated:.1} s)"
    );
    println!(
        "  SQLite:     {:.3} ms per source = {:.2}× the 1 ms target; filter built once in {:.0} ms; loaded in {sq_fill:.0} s; {sq_refused} false refusals; an edited copy of a stored output caught: {sq_caught}",
        sq_per * 1000.0,
        sq_per * 1000.0,
        sq_warm * 1000.0
    );
    println!(
        "  PostgreSQL: {:.3} ms per source = {:.2}× the 5 ms target; filter built once in {:.0} ms; loaded in {pg_fill:.0} s; {pg_refused} false refusals; an edited copy of a stored output caught: {pg_caught}",
        pg_per * 1000.0,
        pg_per * 1000.0 / 5.0,
        pg_warm * 1000.0
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    if !std::env::args().any(|a| a == "intake") {
        let bin = lexrun_bin();
        cached_rerun(&bin);
    }
    intake_check();
}
