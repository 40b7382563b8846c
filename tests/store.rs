//! The store: cached answers, resume after SIGKILL, explained misses, the ledger and its
//! chain of custody, and the intake guard that keeps lexrun's own outputs out of the evidence.
//! (Longer than most test files: the ledger's migrations share this file's scripted server
//! and sample draft with the cache and intake tests.)

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use support::servers::{Answer, Fake, Seen, Speaks};
use support::{lexrun, stderr as err, Lexrun};

const LONG_DRAFT: &str = "1. I rented the flat at 12 Harbor Road from Acme Property LLC under a lease dated January 5, 2024 (TEST000001). \
The flat had a broken heating system from the first week of the tenancy, and the radiators in both bedrooms stayed cold \
through the whole of February and March. 2. On March 3, 2024 I gave written notice of the broken heating to the landlord, \
describing the cold rooms, the damp on the walls and the mould that had started to grow behind the wardrobe. \
3. Nothing was repaired in the weeks that followed, although the landlord's agent visited once and promised that an \
engineer would come within days. 4. I paid $1,250.00 in rent for April 2024 (TEST000002) and withheld the rent for May \
because the flat could not be heated and my children slept in the living room beside an electric heater. \
5. I kept every receipt and every message about the repairs, and I ask the court to order the landlord to repair the \
heating and to return the rent for the months in which the flat could not be used as a home.";

/// A scripted server (llama.cpp protocol) with `delay` per token; the drafter writes
/// `LONG_DRAFT`.
fn server(delay: Duration) -> Fake {
    Fake::start(Speaks::Llama, delay, |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            r#"{"grounds": true, "reason": "Notice was given.", "needs_figures": false}"#
                .to_string()
        } else if p.contains("You are opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            LONG_DRAFT.into()
        };
        Answer { text, fault: None }
    })
}

struct Setup {
    dir: tempfile::TempDir,
    store: PathBuf,
    matter: PathBuf,
}

/// A private copy of the test matter, and an empty store.
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let matter = dir.path().join("matter");
    fs::create_dir_all(matter.join("intake")).unwrap();
    for f in ["01-letter.txt", "02-receipt.txt"] {
        fs::copy(
            Path::new("tests/runtime/matter/intake").join(f),
            matter.join("intake").join(f),
        )
        .unwrap();
    }
    Setup {
        store: dir.path().join("store"),
        matter,
        dir,
    }
}

fn run(s: &Setup, url: &str, out: &str, extra: &[&str]) -> Output {
    let out = s.dir.path().join(out);
    Lexrun::new()
        .args(["run", "tests/runtime/pipeline.lex", "--matter"])
        .arg(&s.matter)
        .arg("--out")
        .arg(&out)
        .arg("--store")
        .arg(&s.store)
        .args([
            "--endpoint",
            &format!("gpu_a={url}"),
            "--endpoint",
            &format!("gpu_b={url}"),
        ])
        .args(extra)
        .env("NO_COLOR", "1")
        .output()
}

#[test]
fn a_second_run_is_answered_from_the_cache() {
    let s = setup();
    let srv = server(Duration::ZERO);
    let o = run(&s, &srv.url, "out1", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let first = srv.calls.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(first, 3, "gate, draft, review");
    let o = run(&s, &srv.url, "out2", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        srv.calls.load(std::sync::atomic::Ordering::SeqCst),
        first,
        "no model was called"
    );
    assert!(err(&o).contains("from lexrun's cache"), "{}", err(&o));
    assert_eq!(
        fs::read_to_string(s.dir.path().join("out1/draft.md"))
            .unwrap()
            .split("<!--")
            .next(),
        fs::read_to_string(s.dir.path().join("out2/draft.md"))
            .unwrap()
            .split("<!--")
            .next()
    );
    // --refresh calls one stage again; --no-cache all of them.
    let o = run(&s, &srv.url, "out3", &["--refresh", "draft"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(
        srv.calls.load(std::sync::atomic::Ordering::SeqCst),
        first + 1
    );
    let o = run(&s, &srv.url, "out4", &["--no-cache"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        srv.calls.load(std::sync::atomic::Ordering::SeqCst),
        first + 4
    );

    // A damaged object is a miss with a warning, never a wrong answer.
    let objects = s.store.join("objects");
    let mut damaged = 0;
    for d in fs::read_dir(&objects).unwrap().flatten() {
        for f in fs::read_dir(d.path()).unwrap().flatten() {
            if fs::read_to_string(f.path()).is_ok_and(|t| t.starts_with("1. I rented the flat")) {
                fs::write(f.path(), "1. An invented paragraph.").unwrap();
                damaged += 1;
            }
        }
    }
    assert_eq!(damaged, 1);
    let before = srv.calls.load(std::sync::atomic::Ordering::SeqCst);
    let o = run(&s, &srv.url, "out5", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("damaged"), "{}", err(&o));
    assert_eq!(
        srv.calls.load(std::sync::atomic::Ordering::SeqCst),
        before + 1,
        "only the draft is called again"
    );
    assert!(fs::read_to_string(s.dir.path().join("out5/draft.md"))
        .unwrap()
        .contains("broken heating system"));
    let o = lexrun(&[
        "cache",
        "verify",
        "tests/runtime/pipeline.lex",
        "--store",
        s.store.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "the object was stored again: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn why_explains_a_miss() {
    let s = setup();
    let srv = server(Duration::ZERO);
    assert_eq!(run(&s, &srv.url, "a", &[]).status.code(), Some(0));
    // The client's letter changes: the packet, and so every prompt, changes.
    let letter = s.matter.join("intake/01-letter.txt");
    fs::write(
        &letter,
        fs::read_to_string(&letter)
            .unwrap()
            .replace("Nothing was repaired.", "Nothing was repaired at all."),
    )
    .unwrap();
    assert_eq!(run(&s, &srv.url, "b", &[]).status.code(), Some(0));
    let o = lexrun(&[
        "why",
        "tests/runtime/pipeline.lex",
        "gate",
        "--store",
        s.store.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("called the model") && text.contains("prompt: the rendered prompt differs"),
        "{text}"
    );
    assert!(
        text.contains("-Nothing was repaired.") && text.contains("+Nothing was repaired at all."),
        "{text}"
    );
    // And a hit says so.
    assert_eq!(run(&s, &srv.url, "c", &[]).status.code(), Some(0));
    let o = lexrun(&[
        "why",
        "tests/runtime/pipeline.lex",
        "gate",
        "--store",
        s.store.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("answered from the cache"));
}

#[test]
fn sigkill_mid_run_then_resume_calls_only_unfinished_stages() {
    let s = setup();
    let srv = server(Duration::from_millis(40));
    let out = s.dir.path().join("killed");
    let mut child = Lexrun::new()
        .args(["run", "tests/runtime/pipeline.lex", "--matter"])
        .arg(&s.matter)
        .arg("--out")
        .arg(&out)
        .arg("--store")
        .arg(&s.store)
        .args([
            "--endpoint",
            &format!("gpu_a={}", srv.url),
            "--endpoint",
            &format!("gpu_b={}", srv.url),
        ])
        .stderr(std::process::Stdio::null())
        .spawn();
    // Kill it while the draft (the second call) is streaming.
    let start = std::time::Instant::now();
    while srv.requests().len() < 2 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    child.kill().unwrap();
    let _ = child.wait();
    let killed_at = srv.calls.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(killed_at, 2);
    let o = run(&s, &srv.url, "resumed", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let again: Vec<String> = srv.requests()[2..]
        .iter()
        .map(|r| {
            let p = r.prompt();
            if p.contains("screening") {
                "gate"
            } else if p.contains("opposing counsel") {
                "review"
            } else {
                "draft"
            }
            .to_string()
        })
        .collect();
    assert_eq!(
        again,
        ["draft", "review"],
        "the finished gate was not asked again"
    );
    // The killed run is closed as failed by the next one; none is left open.
    let db = rusqlite::Connection::open(s.store.join("ledger.sqlite")).unwrap();
    let statuses: Vec<Option<String>> = db
        .prepare("SELECT status FROM runs ORDER BY started, rowid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        statuses,
        [Some("failed".to_string()), Some("done".to_string())]
    );
    assert!(err(&o).contains("closed as failed 1 run"), "{}", err(&o));
}

#[test]
fn two_runs_share_one_store() {
    let s = setup();
    let srv = server(Duration::from_millis(5));
    let spawn = |out: &str| {
        Lexrun::new()
            .args(["run", "tests/runtime/pipeline.lex", "--matter"])
            .arg(&s.matter)
            .arg("--out")
            .arg(s.dir.path().join(out))
            .arg("--store")
            .arg(&s.store)
            .args([
                "--endpoint",
                &format!("gpu_a={}", srv.url),
                "--endpoint",
                &format!("gpu_b={}", srv.url),
            ])
            .stderr(std::process::Stdio::piped())
            .spawn()
    };
    let (a, b) = (spawn("a"), spawn("b"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_eq!(a.status.code(), Some(0), "{}", err(&a));
    assert_eq!(b.status.code(), Some(0), "{}", err(&b));
    for out in ["a", "b"] {
        assert!(fs::read_to_string(s.dir.path().join(out).join("draft.md"))
            .unwrap()
            .contains("broken heating"));
    }
    let o = lexrun(&[
        "cache",
        "verify",
        "tests/runtime/pipeline.lex",
        "--store",
        s.store.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = lexrun(&[
        "audit",
        "tests/runtime/pipeline.lex",
        "--json",
        "--store",
        s.store.to_str().unwrap(),
    ]);
    let audit: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(audit["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["kind"] == "output" && a["stage"] == "draft"));
}

/// Words of `text` with every `n`th one replaced.
fn edit(text: &str, n: usize) -> String {
    text.split(' ')
        .enumerate()
        .map(|(i, w)| if i % n == n / 2 { "altered" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn outputs_never_come_back_as_evidence() {
    let s = setup();
    let srv = server(Duration::ZERO);
    assert_eq!(run(&s, &srv.url, "out", &[]).status.code(), Some(0));
    let draft = fs::read_to_string(s.dir.path().join("out/draft.md")).unwrap();
    let bare = draft.split("\n\n---\n\n").next().unwrap().to_string(); // without the appendix
    let wrapped: String = bare
        .split(' ')
        .collect::<Vec<_>>()
        .chunks(9)
        .map(|c| c.join(" "))
        .collect::<Vec<_>>()
        .join("\n");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("exact copy, renamed", draft.clone().into_bytes()),
        ("without the provenance comment", bare.clone().into_bytes()),
        ("10% of words changed", edit(&bare, 10).into_bytes()),
        ("20% of words changed", edit(&bare, 5).into_bytes()),
        ("re-wrapped lines", wrapped.into_bytes()),
    ];
    let check = |name: &str, bytes: &[u8], ext: &str| {
        let f = s.matter.join(format!("intake/zz-notes.{ext}"));
        fs::write(&f, bytes).unwrap();
        let o = lexrun(&[
            "sources",
            "tests/runtime/pipeline.lex",
            "--matter",
            s.matter.to_str().unwrap(),
            "--store",
            s.store.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        fs::remove_file(&f).unwrap();
        (o.status.code(), text, name.to_string())
    };
    for (name, bytes) in &cases {
        let (code, text, name) = check(name, bytes, "txt");
        assert_eq!(code, Some(1), "{name}: {text}");
        assert!(
            text.contains("zz-notes.txt  REFUSED") && text.contains("stage `draft`"),
            "{name}: {text}"
        );
    }
    // Converted to PDF: see `a_pdf_copy_is_refused_where_pdfs_are_sources`.
    // Genuine evidence about the same matter is admitted.
    let genuine = "From: Jane Smith\nTo: Acme Property LLC\nDate: March 3, 2024\n\nThe heating in the flat at 12 Harbor Road \
        has not worked since February. Please send an engineer this week. The bedrooms are cold and damp.\n";
    let (code, text, _) = check("genuine", genuine.as_bytes(), "txt");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("zz-notes.txt  admitted"), "{text}");

    // A run refuses a poisoned matter before calling any model.
    fs::write(s.matter.join("intake/zz-notes.txt"), edit(&bare, 5)).unwrap();
    let calls = srv.calls.load(std::sync::atomic::Ordering::SeqCst);
    let o = run(&s, &srv.url, "poisoned", &[]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).contains("refused as evidence") && err(&o).contains("zz-notes.txt"),
        "{}",
        err(&o)
    );
    assert_eq!(srv.calls.load(std::sync::atomic::Ordering::SeqCst), calls);

    // Admitted on purpose, with a reason in the workflow: it runs, and the ledger says so.
    let lex = fs::read_to_string("tests/runtime/pipeline.lex").unwrap().replace(
        "  bates \"TEST\" start 1 width 6\n",
        "  bates \"TEST\" start 1 width 6\n  admit \"intake/zz-notes.txt\" because \"the client annotated this draft by hand\"\n",
    );
    let admitted = s.dir.path().join("admitted.lex");
    fs::write(&admitted, lex).unwrap();
    let o = Lexrun::new()
        .args([
            "run",
            admitted.to_str().unwrap(),
            "--matter",
            s.matter.to_str().unwrap(),
        ])
        .args([
            "--out",
            s.dir.path().join("admitted-out").to_str().unwrap(),
            "--store",
            s.store.to_str().unwrap(),
        ])
        .args([
            "--endpoint",
            &format!("gpu_a={}", srv.url),
            "--endpoint",
            &format!("gpu_b={}", srv.url),
        ])
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("admitted by the workflow"), "{}", err(&o));
    let db = rusqlite::Connection::open(s.store.join("ledger.sqlite")).unwrap();
    let reason: String = db
        .query_row("SELECT reason FROM admissions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(reason, "the client annotated this draft by hand");
}

#[test]
fn a_pdf_copy_is_refused_where_pdfs_are_sources() {
    let s = setup();
    let srv = server(Duration::ZERO);
    assert_eq!(run(&s, &srv.url, "out", &[]).status.code(), Some(0));
    let draft = fs::read_to_string(s.dir.path().join("out/draft.md")).unwrap();
    let bare = draft.split("\n\n---\n\n").next().unwrap().to_string();
    let lex = fs::read_to_string("tests/runtime/pipeline.lex")
        .unwrap()
        .replace(
            "files \"intake/*.txt\"",
            "files \"intake/*.txt\", \"intake/*.pdf\"",
        );
    let wf = s.dir.path().join("with-pdf.lex");
    fs::write(&wf, lex).unwrap();
    support::pdf::text_pdf(&s.matter.join("intake/scan.pdf"), &[&edit(&bare, 10)]);
    let o = lexrun(&[
        "sources",
        wf.to_str().unwrap(),
        "--matter",
        s.matter.to_str().unwrap(),
        "--store",
        s.store.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}{}", err(&o));
    assert!(
        text.contains("scan.pdf  REFUSED") && text.contains("% of its text matches"),
        "{text}"
    );
}

/// The ledger of format 1, as lexrun wrote it before formats were recorded.
const FORMAT_1: &str = "
CREATE TABLE runs (run_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, plan_hash TEXT NOT NULL,
  started INTEGER NOT NULL, finished INTEGER, status TEXT);
CREATE TABLE sources (run_id TEXT NOT NULL, matter TEXT NOT NULL, path TEXT NOT NULL,
  raw_hash TEXT NOT NULL, text_hash TEXT NOT NULL, admitted TEXT);
CREATE TABLE artifacts (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, text_hash TEXT NOT NULL,
  run_id TEXT NOT NULL, matter TEXT NOT NULL, stage TEXT NOT NULL, round INTEGER NOT NULL,
  kind TEXT NOT NULL, path TEXT NOT NULL, model TEXT NOT NULL, inputs TEXT NOT NULL,
  plan_hash TEXT NOT NULL, node_hash TEXT NOT NULL, created INTEGER NOT NULL,
  fingerprints INTEGER NOT NULL);
CREATE TABLE shingles (fp INTEGER NOT NULL, artifact INTEGER NOT NULL,
  PRIMARY KEY (fp, artifact)) WITHOUT ROWID;
CREATE TABLE cache (key TEXT PRIMARY KEY, stage TEXT NOT NULL, text_hash TEXT NOT NULL,
  timings TEXT NOT NULL, identity TEXT NOT NULL, created INTEGER NOT NULL);
CREATE TABLE keys (run_id TEXT NOT NULL, workflow TEXT NOT NULL, matter TEXT NOT NULL,
  stage TEXT NOT NULL, round INTEGER NOT NULL, key TEXT NOT NULL, components TEXT NOT NULL,
  hit INTEGER NOT NULL, created INTEGER NOT NULL);
CREATE TABLE admissions (run_id TEXT NOT NULL, file TEXT NOT NULL, reason TEXT NOT NULL,
  refused_because TEXT NOT NULL);
";

/// A format-1 ledger in `dir` holding `LONG_DRAFT` as run `run-old`'s draft, fingerprinted
/// the way lexrun did then.
fn old_ledger(dir: &Path) {
    fs::create_dir_all(dir.join("objects")).unwrap();
    let db = rusqlite::Connection::open(dir.join("ledger.sqlite")).unwrap();
    db.execute_batch(FORMAT_1).unwrap();
    let fps = lexrun::store::shingles::legacy_fingerprints(LONG_DRAFT);
    db.execute(
        "INSERT INTO runs VALUES ('run-old', 'pipeline', 'p', 1, 2, 'done')",
        [],
    )
    .unwrap();
    db.execute(
        "INSERT INTO artifacts (hash, text_hash, run_id, matter, stage, round, kind, path, model, inputs, plan_hash, node_hash, created, fingerprints) VALUES (?1, ?2, 'run-old', 'matter', 'draft', 1, 'stage', 'out/run-old/draft/output.md', 'm', 'null', 'p', 'n', 1, ?3)",
        rusqlite::params![
            blake3::hash(LONG_DRAFT.as_bytes()).to_hex().to_string(),
            lexrun::store::shingles::legacy_text_hash(LONG_DRAFT),
            fps.len() as i64
        ],
    )
    .unwrap();
    for fp in fps {
        db.execute(
            "INSERT INTO shingles VALUES (?1, 1)",
            rusqlite::params![fp as i64],
        )
        .unwrap();
    }
    db.execute(
        "INSERT INTO admissions VALUES ('run-old', 'intake/x.txt', 'checked by hand', 'a copy')",
        [],
    )
    .unwrap();
}

#[test]
fn an_older_ledger_is_migrated_with_nothing_lost() {
    let dir = tempfile::tempdir().unwrap();
    old_ledger(dir.path());
    let s = lexrun::store::Store::open(dir.path()).unwrap();
    assert!(
        s.notes.iter().any(|n| n.contains("was in format 1")),
        "{:?}",
        s.notes
    );
    assert_eq!(s.artifacts_of_run("run-old").len(), 1);
    // Copies of what it recorded are still refused: exact, and edited.
    let f = dir.path().join("copy.txt");
    for (name, text) in [
        ("exact", LONG_DRAFT.to_string()),
        ("edited", edit(LONG_DRAFT, 7)),
    ] {
        fs::write(&f, &text).unwrap();
        let v = lexrun::run::intake::check(&s, "matter", "copy.txt", &f, &text, &[]);
        assert!(v.blocked(), "{name}: {v:?}");
        assert!(v.refused.unwrap().contains("run-old"));
    }
    drop(s);
    // Opened again: already migrated, nothing more to say.
    let s = lexrun::store::Store::open(dir.path()).unwrap();
    assert!(s.notes.is_empty());
    let db = rusqlite::Connection::open(dir.path().join("ledger.sqlite")).unwrap();
    let reason: String = db
        .query_row("SELECT reason FROM admissions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(reason, "checked by hand");
}

#[test]
fn a_ledger_from_a_newer_lexrun_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = rusqlite::Connection::open(dir.path().join("ledger.sqlite")).unwrap();
    db.execute_batch(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('format', '99');",
    )
    .unwrap();
    drop(db);
    let e = lexrun::store::Store::open(dir.path())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains(
            "written by a newer lexrun (ledger format 99; this lexrun reads formats 1 to 2)"
        ),
        "{e}"
    );
    let o = Lexrun::new()
        .env("LEXRUN_STORE", dir.path())
        .args(["sources", "tests/runtime/pipeline.lex"])
        .output();
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("upgrade lexrun"), "{}", err(&o));
}

#[test]
fn the_default_store_is_in_the_data_folder_and_an_old_one_moves_there_once() {
    let s = setup();
    let srv = server(Duration::ZERO);
    // A workflow folder with a store an older lexrun kept beside it.
    let wf = s.dir.path().join("workflows");
    fs::create_dir_all(&wf).unwrap();
    fs::copy("tests/runtime/pipeline.lex", wf.join("pipeline.lex")).unwrap();
    old_ledger(&wf.join(".lexrun"));
    let data = s.dir.path().join("data");
    let here = |args: &[&str]| {
        Lexrun::new()
            .env_remove("LEXRUN_STORE")
            .env("XDG_DATA_HOME", &data)
            .args(args)
            .arg("--matter")
            .arg(&s.matter)
            .output()
    };
    let lex = wf.join("pipeline.lex");
    let lex = lex.to_str().unwrap();
    fs::write(s.matter.join("intake/03-copy.txt"), edit(LONG_DRAFT, 8)).unwrap();
    let o = here(&["sources", lex]);
    assert!(
        err(&o).contains("moved the store beside the workflow")
            && err(&o).contains("1 runs, 1 artifacts"),
        "{}",
        err(&o)
    );
    // What the old store recorded refuses the copy from its new place.
    assert_eq!(o.status.code(), Some(1), "{}", support::stdout(&o));
    assert!(support::stdout(&o).contains("run-old"));
    assert!(data.join("lexrun/ledger.sqlite").is_file());
    assert!(wf.join(".lexrun/ledger-moved.sqlite").is_file());
    assert!(wf.join(".lexrun/MOVED.txt").is_file());
    assert!(!wf.join(".lexrun/ledger.sqlite").exists());
    // Once: the second time there is nothing to move.
    let o = here(&["sources", lex]);
    assert!(!err(&o).contains("moved the store"), "{}", err(&o));
    fs::remove_file(s.matter.join("intake/03-copy.txt")).unwrap();
    // A run uses the data folder's store; a workflow in another folder reading the same
    // matter sees what it wrote.
    let out = s.dir.path().join("out");
    let o = here(&[
        "run",
        lex,
        "--out",
        out.to_str().unwrap(),
        "--endpoint",
        &format!("gpu_a={}", srv.url),
        "--endpoint",
        &format!("gpu_b={}", srv.url),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let draft = fs::read_to_string(out.join("draft.md")).unwrap();
    fs::write(s.matter.join("intake/03-copy.txt"), draft).unwrap();
    let other = s.dir.path().join("elsewhere");
    fs::create_dir_all(&other).unwrap();
    fs::copy("tests/runtime/pipeline.lex", other.join("pipeline.lex")).unwrap();
    let o = here(&["sources", other.join("pipeline.lex").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", support::stdout(&o));
    assert!(!other.join(".lexrun").exists());
}

/// Every file and folder under `dir` with its permission bits, links included (not followed).
fn modes(dir: &Path, out: &mut Vec<(PathBuf, u32, bool)>) {
    use std::os::unix::fs::PermissionsExt;
    for e in fs::read_dir(dir).unwrap().flatten() {
        let m = fs::symlink_metadata(e.path()).unwrap();
        out.push((
            e.path(),
            m.permissions().mode() & 0o777,
            m.file_type().is_symlink(),
        ));
        if m.is_dir() {
            modes(&e.path(), out);
        }
    }
}

#[test]
fn every_file_and_folder_of_the_store_is_owner_only() {
    let s = setup();
    let srv = server(Duration::ZERO);
    // A first run fills the store; a second one is answered from it and brings the
    // fingerprint filter up to date; an edited copy of the output offered as evidence is
    // checked against it.
    for out in ["out1", "out2"] {
        let o = run(&s, &srv.url, out, &[]);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    }
    let mut all = Vec::new();
    modes(&s.store, &mut all);
    let names: Vec<String> = all
        .iter()
        .map(|(p, _, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for want in ["ledger.sqlite", "objects", "keys"] {
        assert!(names.iter().any(|n| n == want), "{want} in {names:?}");
    }
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("fingerprints-") && n.ends_with(".bloom")),
        "{names:?}"
    );
    let open: Vec<_> = all
        .iter()
        .filter(|(_, mode, link)| *link || mode & 0o077 != 0)
        .collect();
    assert!(open.is_empty(), "not owner-only: {open:?}");
    use std::os::unix::fs::PermissionsExt;
    let root = fs::metadata(&s.store).unwrap().permissions().mode() & 0o777;
    assert_eq!(root, 0o700);
}

#[test]
fn a_link_where_the_store_keeps_a_folder_is_refused() {
    let s = setup();
    let srv = server(Duration::ZERO);
    let elsewhere = s.dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    // The store itself a link: refused, nothing written through it.
    std::os::unix::fs::symlink(&elsewhere, &s.store).unwrap();
    let o = run(&s, &srv.url, "out1", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("symbolic link"), "{}", err(&o));
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Its objects folder a link: refused too.
    fs::remove_file(&s.store).unwrap();
    let o = run(&s, &srv.url, "out1", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let objects = s.store.join("objects");
    fs::rename(&objects, s.dir.path().join("objects-moved")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &objects).unwrap();
    let o = run(&s, &srv.url, "out2", &["--no-cache"]);
    assert_ne!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("symbolic link"), "{}", err(&o));
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// The ledger lost mid-run (another process holds the SQLite ledger's write lock for longer
/// than a run waits): the run asks no model anything more, fails with one message that names
/// the ledger and what to do, and records nothing by half; once the ledger is back the next
/// run closes the interrupted one as failed and takes the draft the model wrote from the
/// cache, by its key, although the ledger never heard of it.
#[test]
fn a_run_that_loses_its_ledger_stops_and_the_next_run_closes_it() {
    use std::sync::atomic::Ordering;
    let s = setup();
    let srv = server(Duration::from_millis(15));
    let out = s.dir.path().join("lost");
    let child = Lexrun::new()
        .args(["run", "tests/runtime/pipeline.lex", "--matter"])
        .arg(&s.matter)
        .arg("--out")
        .arg(&out)
        .arg("--store")
        .arg(&s.store)
        .args([
            "--endpoint",
            &format!("gpu_a={}", srv.url),
            "--endpoint",
            &format!("gpu_b={}", srv.url),
        ])
        .env("LEXRUN_LEDGER_RETRY_S", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn();
    // The lock is taken while the drafter answers (the gate has answered, the draft's key is
    // in the ledger).
    let t = std::time::Instant::now();
    while srv.calls.load(Ordering::SeqCst) < 2 && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let holder = rusqlite::Connection::open(s.store.join("ledger.sqlite")).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let asked = srv.calls.load(Ordering::SeqCst);
    assert_eq!(asked, 2, "gate and draft asked");
    let o = child.wait_with_output().unwrap();
    let e = err(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(
        srv.calls.load(Ordering::SeqCst),
        asked,
        "no model asked once the ledger was lost: {e}"
    );
    let ledger = s.store.join("ledger.sqlite").display().to_string();
    assert_eq!(
        e.matches("cannot be written").count(),
        1,
        "one message: {e}"
    );
    assert!(
        e.contains(&format!("the ledger `{ledger}` cannot be written")),
        "{e}"
    );
    assert!(
        e.contains("held the ledger's write lock"),
        "the remedy: {e}"
    );
    assert!(!e.contains("pg_isready"), "PostgreSQL's remedy: {e}");
    let (_, rec) = support::run_record(&out);
    let draft = rec.matters[0]
        .steps
        .iter()
        .find(|st| st.name == "draft")
        .unwrap();
    assert!(
        draft
            .why
            .as_deref()
            .unwrap_or("")
            .contains("kept in the store"),
        "{draft:?}"
    );
    assert!(
        !out.join(&rec.run_id).join("draft/output.md").exists(),
        "no text written that the ledger does not know"
    );
    holder.execute_batch("COMMIT").unwrap();
    // Nothing by half: the run is open, the gate it finished is entered and the draft not.
    let status: Option<String> = holder
        .query_row(
            "SELECT status FROM runs WHERE run_id = ?1",
            [&rec.run_id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(status, None);
    let entered = |stage: &str| -> i64 {
        holder
            .query_row(
                "SELECT COUNT(*) FROM artifacts WHERE run_id = ?1 AND stage = ?2",
                [&rec.run_id, stage],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert_eq!((entered("gate"), entered("draft")), (1, 0));
    drop(holder);
    // The next run closes it as failed and asks the drafter nothing.
    let drafts = |srv: &Fake| {
        srv.requests()
            .iter()
            .filter(|r| {
                let p = r.prompt();
                !p.contains("screening a new matter") && !p.contains("You are opposing counsel")
            })
            .count()
    };
    let before = drafts(&srv);
    let o = run(&s, &srv.url, "after", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(drafts(&srv), before, "the stored draft was not asked again");
    let db = rusqlite::Connection::open(s.store.join("ledger.sqlite")).unwrap();
    let status: Option<String> = db
        .query_row(
            "SELECT status FROM runs WHERE run_id = ?1",
            [&rec.run_id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(status.as_deref(), Some("failed"));
}

/// A write the ledger is asked for again (a commit retried after its connection was lost may
/// have landed the first time) adds no row twice: a run's sources, admissions and keys are
/// written once each; and an older ledger holding such repeats keeps only the first.
#[test]
fn a_retried_commit_writes_each_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let s = lexrun::store::Store::open(dir.path()).unwrap();
    let sources = vec![
        lexrun::store::RunSource {
            matter: "m".into(),
            path: "a.txt".into(),
            raw_hash: "r1".into(),
            text_hash: "t1".into(),
            ..Default::default()
        },
        lexrun::store::RunSource {
            matter: "m".into(),
            path: "b.txt".into(),
            raw_hash: "r2".into(),
            text_hash: "t2".into(),
            admitted: Some("the client's own note".into()),
            admission: Some(("the client's own note".into(), "it is lexrun's".into())),
        },
    ];
    let key = |s: &lexrun::store::Store| {
        s.record_key(
            &lexrun::store::StepAt {
                run_id: "run-1",
                workflow: "w",
                file: "w.lex",
                matter: "m",
                stage: "draft",
                round: 1,
            },
            "abc123",
            &serde_json::json!({}),
            false,
        )
        .unwrap()
    };
    for _ in 0..2 {
        s.begin_run("run-1", "w", "p", &sources).unwrap();
        key(&s);
    }
    let count = |table: &str| -> i64 {
        let db = rusqlite::Connection::open(dir.path().join("ledger.sqlite")).unwrap();
        db.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(count("runs"), 1);
    assert_eq!(count("sources"), 2);
    assert_eq!(count("admissions"), 1);
    assert_eq!(count("keys"), 1);
    assert_eq!(
        s.run_info("run-1").unwrap()["sources"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    drop(s);
    // An older ledger with repeats: they go when it is opened, the first of each kept.
    let db = rusqlite::Connection::open(dir.path().join("ledger.sqlite")).unwrap();
    db.execute_batch(
        "DROP INDEX sources_once; DROP INDEX keys_once;
         INSERT INTO sources SELECT * FROM sources; INSERT INTO keys SELECT * FROM keys;",
    )
    .unwrap();
    drop(db);
    assert_eq!(count("sources"), 4);
    let s = lexrun::store::Store::open(dir.path()).unwrap();
    assert_eq!(count("sources"), 2);
    assert_eq!(count("keys"), 1);
    s.begin_run("run-1", "w", "p", &sources).unwrap();
    key(&s);
    assert_eq!(count("sources"), 2);
    assert_eq!(count("keys"), 1);
}

/// `audit` and `why` read the runs of the workflow they are given (its name and its file):
/// another workflow's runs, or a same-named workflow's from another file, are never shown
/// in its place, and a workflow that never ran says so.
#[test]
fn audit_and_why_read_only_this_workflows_runs() {
    let s = setup();
    let srv = server(Duration::ZERO);
    let o = run(&s, &srv.url, "out", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let store = s.store.to_str().unwrap();
    let lex = fs::read_to_string("tests/runtime/pipeline.lex").unwrap();
    let matter = Path::new("tests/runtime/matter").canonicalize().unwrap();
    let lex = lex.replace(
        "matter \"matter\"",
        &format!("matter \"{}\"", matter.display()),
    );
    // Another workflow, and the same workflow name in another file.
    let other = s.dir.path().join("other.lex");
    fs::write(
        &other,
        lex.replace("workflow pipeline ", "workflow demand "),
    )
    .unwrap();
    let copy = s.dir.path().join("pipeline.lex");
    fs::write(&copy, &lex).unwrap();
    for (file, name) in [(&other, "demand"), (&copy, "pipeline")] {
        let o = lexrun(&["audit", file.to_str().unwrap(), "--store", store]);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(
            e.contains(&format!("the store has no run of workflow `{name}`"))
                && e.contains("it holds runs of: pipeline")
                && e.contains("lexrun run"),
            "{e}"
        );
        assert!(o.stdout.is_empty(), "no chain of custody is printed");
        let o = lexrun(&["why", file.to_str().unwrap(), "draft", "--store", store]);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("`draft` has not run with this store yet"),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
    // The workflow that ran: its last run; that run's id under another workflow is refused.
    let o = lexrun(&[
        "audit",
        "tests/runtime/pipeline.lex",
        "--json",
        "--store",
        store,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let audit: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(audit["workflow"], "pipeline");
    let id = audit["run_id"].as_str().unwrap();
    let o = lexrun(&["audit", other.to_str().unwrap(), id, "--store", store]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains(&format!(
            "run {id} is a run of workflow `pipeline`, not of `demand`"
        )),
        "{}",
        err(&o)
    );
}
