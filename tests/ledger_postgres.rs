//! The shared ledger on a real PostgreSQL server (started by `support::postgres` in a
//! temporary folder): two desks with stores of their own see each other's outputs at intake,
//! desks sharing an objects folder share cached answers, claims and first sightings are
//! shared, and a server that is down stops a run before any model call, naming the URL
//! without its password and writing nothing. Under load: eight desks (processes) running at
//! once against one server while copies of each other's outputs are offered as evidence,
//! then the server stopped under running runs — briefly (the runs reconnect and finish) and
//! for longer than a run waits (the runs fail clearly, are closed as failed when the ledger
//! returns, and their stored answers are not asked of the model again). Two reviewers deciding
//! on one claim at once from two desks: both recorded, the later standing.

use crate::support;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use support::postgres::Postgres;
use support::servers::{Answer, Fake, Seen, Speaks};
use support::Lexrun;

const DRAFT: &str = "1. I rented the flat at 12 Harbor Road from Acme Property LLC under a lease dated January 5, 2024 (TEST000001). \
The radiators in both bedrooms stayed cold through the whole of February and March, and the damp spread behind the wardrobe \
until the wallpaper peeled and the children's clothes smelled of mould. 2. On March 3, 2024 I gave written notice of the broken \
heating to the landlord, and the agent who came a week later promised an engineer within days, who never came. 3. I paid \
$1,250.00 in rent for April 2024 (TEST000002) and withheld the rent for May because the flat could not be heated.";

fn server() -> Fake {
    Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            r#"{"grounds": true, "reason": "Notice was given.", "needs_figures": false}"#.into()
        } else if p.contains("You are opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            DRAFT.into()
        };
        Answer { text, fault: None }
    })
}

fn matter(dir: &Path) -> PathBuf {
    let m = dir.join("matter");
    fs::create_dir_all(m.join("intake")).unwrap();
    for f in ["01-letter.txt", "02-receipt.txt"] {
        fs::copy(
            Path::new("tests/runtime/matter/intake").join(f),
            m.join("intake").join(f),
        )
        .unwrap();
    }
    m
}

/// `lexrun ARGS` at one desk: its own store folder, the shared ledger.
fn desk(store: &Path, ledger: &str, matter: &Path, args: &[String]) -> std::process::Output {
    Lexrun::new()
        .env("LEXRUN_STORE", store)
        .env("LEXRUN_LEDGER", ledger)
        .args(args)
        .arg("--matter")
        .arg(matter)
        .output()
}

fn run_args(out: &Path, url: &str) -> Vec<String> {
    vec![
        "run".into(),
        "tests/runtime/pipeline.lex".into(),
        "--out".into(),
        out.display().to_string(),
        "--endpoint".into(),
        format!("gpu_a={url}"),
        "--endpoint".into(),
        format!("gpu_b={url}"),
    ]
}

#[test]
fn two_desks_see_each_others_outputs() {
    let pg = Postgres::start();
    pg.create_db("desks");
    let ledger = pg.url("desks");
    let dir = tempfile::tempdir().unwrap();
    let m = matter(dir.path());
    let srv = server();
    // Desk A runs the workflow.
    let a = dir.path().join("desk-a");
    let o = desk(
        &a,
        &ledger,
        &m,
        &run_args(&dir.path().join("out-a"), &srv.url),
    );
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    assert!(
        !a.join("ledger.sqlite").exists(),
        "the ledger is the shared one"
    );
    // Desk B, with a store of its own, gets a copy of A's draft in its matter: refused.
    let b = dir.path().join("desk-b");
    let draft = fs::read_to_string(dir.path().join("out-a/draft.md")).unwrap();
    let bare = draft.split("\n\n---\n\n").next().unwrap();
    fs::write(m.join("intake/03-notes.txt"), bare.replace(". ", ".\n")).unwrap();
    let o = desk(
        &b,
        &ledger,
        &m,
        &["sources".into(), "tests/runtime/pipeline.lex".into()],
    );
    let out = support::stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("03-notes.txt  REFUSED") && out.contains("stage `draft`"),
        "{out}"
    );
    // The same desk with a ledger of its own knows nothing of A's run.
    let o = Lexrun::new()
        .env("LEXRUN_STORE", dir.path().join("alone"))
        .args(["sources", "tests/runtime/pipeline.lex", "--matter"])
        .arg(&m)
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", support::stdout(&o));
    fs::remove_file(m.join("intake/03-notes.txt")).unwrap();
    // Desk C shares A's objects folder as well: A's answers are its cache.
    let calls = srv.calls.load(Ordering::SeqCst);
    let o = desk(
        &a,
        &ledger,
        &m,
        &run_args(&dir.path().join("out-c"), &srv.url),
    );
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    assert_eq!(
        srv.calls.load(Ordering::SeqCst),
        calls,
        "answered from the shared cache"
    );
}

/// A firm names its ledger once, in the file its workflows share (`ledger "postgres://…"`):
/// two desks with no `LEXRUN_LEDGER` meet in it; `LEXRUN_LEDGER` still takes precedence.
#[test]
fn the_workflow_names_the_firm_ledger() {
    let pg = Postgres::start();
    pg.create_db("firm");
    let dir = tempfile::tempdir().unwrap();
    let m = matter(dir.path());
    let wf = dir.path().join("wf");
    fs::create_dir_all(wf.join("lib")).unwrap();
    fs::write(
        wf.join("lib/firm.lex"),
        format!(
            "// The firm's shared ledger.\nledger \"{}\"\n",
            pg.url("firm")
        ),
    )
    .unwrap();
    let text = fs::read_to_string("tests/runtime/pipeline.lex").unwrap();
    let pipeline = wf.join("pipeline.lex");
    fs::write(
        &pipeline,
        text.replacen("use std.verify", "use std.verify\nuse \"lib/firm.lex\"", 1),
    )
    .unwrap();
    let plan = Lexrun::new().args(["plan"]).arg(&pipeline).output();
    assert!(
        support::stdout(&plan).contains("Shared ledger: postgres://"),
        "{}",
        support::stdout(&plan)
    );
    let srv = server();
    let mut args = run_args(&dir.path().join("out-a"), &srv.url);
    args[1] = pipeline.display().to_string();
    let a = dir.path().join("desk-a");
    let o = Lexrun::new()
        .env("LEXRUN_STORE", &a)
        .env_remove("LEXRUN_LEDGER")
        .args(&args)
        .arg("--matter")
        .arg(&m)
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    assert!(
        !a.join("ledger.sqlite").exists(),
        "the firm's ledger is used"
    );
    // Desk B finds a copy of A's draft refused without being told where the ledger is.
    let draft = fs::read_to_string(dir.path().join("out-a/draft.md")).unwrap();
    let bare = draft.split("\n\n---\n\n").next().unwrap();
    fs::write(m.join("intake/03-notes.txt"), bare).unwrap();
    let o = Lexrun::new()
        .env("LEXRUN_STORE", dir.path().join("desk-b"))
        .env_remove("LEXRUN_LEDGER")
        .arg("sources")
        .arg(&pipeline)
        .arg("--matter")
        .arg(&m)
        .output();
    assert_eq!(o.status.code(), Some(1), "{}", support::stdout(&o));
    assert!(support::stdout(&o).contains("03-notes.txt  REFUSED"));
    // LEXRUN_LEDGER wins over the file: an empty ledger of its own knows nothing.
    pg.create_db("other");
    let o = Lexrun::new()
        .env("LEXRUN_STORE", dir.path().join("desk-c"))
        .env("LEXRUN_LEDGER", pg.url("other"))
        .arg("sources")
        .arg(&pipeline)
        .arg("--matter")
        .arg(&m)
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", support::stdout(&o));
}

/// `sslmode=require`: the ledger is reached over TLS, the server's certificate checked
/// against the CA `PGSSLROOTCERT` names; a certificate no known CA signed is refused.
#[test]
fn a_ledger_over_tls_checks_the_servers_certificate() {
    let pg = Postgres::start_tls();
    let url = format!("{}?sslmode=require", pg.url("lexrun"));
    let dir = tempfile::tempdir().unwrap();
    let m = matter(dir.path());
    let sources_at = |url: &str, ca: Option<&Path>| {
        let mut l = Lexrun::new()
            .env("LEXRUN_STORE", dir.path().join("store"))
            .env("LEXRUN_LEDGER", url);
        l = match ca {
            Some(ca) => l.env("PGSSLROOTCERT", ca),
            None => l.env_remove("PGSSLROOTCERT"),
        };
        l.args(["sources", "tests/runtime/pipeline.lex", "--matter"])
            .arg(&m)
            .output()
    };
    let sources = |ca: Option<&Path>| sources_at(&url, ca);
    // The server takes TCP connections over TLS only: one that succeeds spoke TLS.
    let o = sources(Some(&pg.ca()));
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    let o = sources_at(&pg.url("lexrun"), Some(&pg.ca()));
    assert_eq!(o.status.code(), Some(2), "without sslmode=require, no TLS");
    // Another CA: the server's certificate is not trusted, and nothing runs.
    let other = dir.path().join("other-ca.crt");
    fs::write(&other, include_str!("support/other-ca.pem")).unwrap();
    let o = sources(Some(&other));
    assert_eq!(o.status.code(), Some(2), "{}", support::stderr(&o));
    assert!(
        support::stderr(&o).contains("cannot reach the PostgreSQL ledger"),
        "{}",
        support::stderr(&o)
    );
}

#[test]
fn the_ledger_api_works_the_same_on_postgres() {
    let pg = Postgres::start();
    pg.create_db("api");
    let url = pg.url("api");
    let dir = tempfile::tempdir().unwrap();
    let s = lexrun::store::Store::open_with(dir.path(), Some(&url)).unwrap();
    let text = DRAFT;
    let a = lexrun::store::Artifact {
        hash: blake3::hash(text.as_bytes()).to_hex().to_string(),
        text_hash: lexrun::run::intake::text_hash(text),
        run_id: "run-1".into(),
        matter: "smith".into(),
        stage: "draft".into(),
        round: 1,
        kind: "stage".into(),
        path: "out/draft.md".into(),
        model: "m".into(),
        inputs: serde_json::Value::Null,
        plan_hash: String::new(),
        node_hash: String::new(),
        created: 0,
    };
    // A run's sources, entered again as a retried commit would, are there once.
    let sources = [lexrun::store::RunSource {
        matter: "smith".into(),
        path: "intake/a.txt".into(),
        raw_hash: "r".into(),
        text_hash: "t".into(),
        ..Default::default()
    }];
    s.begin_run("run-1", "w", "p", &sources).unwrap();
    s.begin_run("run-1", "w", "p", &sources).unwrap();
    assert_eq!(
        s.run_info("run-1").unwrap()["sources"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    s.add_artifact(&a, text, &Default::default()).unwrap();
    s.finish_run("run-1", "done").unwrap();
    assert_eq!(s.last_run().as_deref(), Some("run-1"));
    assert_eq!(s.artifacts_of_run("run-1").len(), 1);
    // A second desk sees it, by hash and by fingerprints.
    let dir2 = tempfile::tempdir().unwrap();
    let s2 = lexrun::store::Store::open_with(dir2.path(), Some(&url)).unwrap();
    assert!(s2.artifact_by_hash("x", &[&a.text_hash]).unwrap().is_some());
    let f = dir2.path().join("copy.txt");
    let edited = text.replace("cold", "freezing").replace("damp", "wet");
    fs::write(&f, &edited).unwrap();
    let v = lexrun::run::intake::check(&s2, "smith", "copy.txt", &f, &edited, &[]);
    assert!(v.blocked(), "{v:?}");
    s2.record_key(
        &lexrun::store::StepAt {
            run_id: "run-2",
            workflow: "w",
            file: "w.lex",
            matter: "smith",
            stage: "draft",
            round: 1,
        },
        "k",
        &serde_json::json!({}),
        false,
    )
    .unwrap();
    s2.record_key(
        &lexrun::store::StepAt {
            run_id: "run-2",
            workflow: "w",
            file: "w.lex",
            matter: "smith",
            stage: "draft",
            round: 1,
        },
        "k",
        &serde_json::json!({}),
        false,
    )
    .unwrap();
    assert_eq!(
        s.recent_keys("w", "w.lex", "draft", 5).len(),
        1,
        "a key once"
    );
    // Claims and first sightings are shared too.
    s.add_claims(&[lexrun::store::ClaimRecord {
        matter: "smith".into(),
        kind: "date".into(),
        ident: "date:2024-03-03".into(),
        key: "{}".into(),
        text: "March 3, 2024".into(),
        run_id: "run-1".into(),
        stage: "draft".into(),
        created: 5,
        status: "unsupported".into(),
    }])
    .unwrap();
    assert!(s2.model_claims(Some("smith")).unwrap()[0].flagged());
    let t = s.see("smith", "th", "rh", "a.txt").unwrap();
    assert_eq!(s2.first_seen(None, "th"), Some(t));
    // Opening again keeps everything (the schema is not made twice).
    let again = lexrun::store::Store::open_with(dir.path(), Some(&url)).unwrap();
    assert_eq!(again.artifacts_of_run("run-1").len(), 1);
}

#[test]
fn a_server_that_is_down_stops_the_run_before_any_model_call() {
    let pg = Postgres::start();
    let port = pg.port;
    pg.stop();
    let dir = tempfile::tempdir().unwrap();
    let m = matter(dir.path());
    let srv = server();
    let ledger = format!("postgres://lexrun:hunter2@127.0.0.1:{port}/lexrun");
    let out = dir.path().join("out");
    let store = dir.path().join("store");
    let o = desk(&store, &ledger, &m, &run_args(&out, &srv.url));
    let e = support::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains(&format!(
            "cannot reach the PostgreSQL ledger `postgres://lexrun:***@127.0.0.1:{port}/lexrun`"
        )),
        "{e}"
    );
    assert!(!e.contains("hunter2"), "{e}");
    assert_eq!(srv.calls.load(Ordering::SeqCst), 0);
    assert!(!out.exists(), "nothing written");
    assert!(!store.exists(), "no store made");
    // Not a PostgreSQL URL at all.
    let o = desk(&store, "mysql://x@y/z", &m, &run_args(&out, &srv.url));
    assert_eq!(o.status.code(), Some(2));
    assert!(support::stderr(&o).contains("must be a postgres:// URL"));
}

const DESKS: usize = 8;

/// A server whose drafter names the matter its evidence names (`MATTER-k`), `delay` per
/// token; it counts the drafter's calls.
fn desk_server(delay: Duration, drafts: std::sync::Arc<std::sync::atomic::AtomicUsize>) -> Fake {
    Fake::start(Speaks::Llama, delay, move |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            r#"{"grounds": true, "reason": "Notice was given.", "needs_figures": false}"#.into()
        } else if p.contains("You are opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            drafts.fetch_add(1, Ordering::SeqCst);
            let k = p
                .split("MATTER-")
                .nth(1)
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                .unwrap_or("?")
                .to_string();
            DRAFT.replace("12 Harbor Road", &format!("{k} Harbor Road, desk {k},"))
        };
        Answer { text, fault: None }
    })
}

struct Desk {
    store: PathBuf,
    matter: PathBuf,
    out: PathBuf,
}

fn desks(dir: &Path) -> Vec<Desk> {
    (0..DESKS)
        .map(|k| {
            let m = dir.join(format!("matter-{k}"));
            fs::create_dir_all(m.join("intake")).unwrap();
            for f in ["01-letter.txt", "02-receipt.txt"] {
                let t =
                    fs::read_to_string(Path::new("tests/runtime/matter/intake").join(f)).unwrap();
                fs::write(m.join("intake").join(f), format!("MATTER-{k}\n{t}")).unwrap();
            }
            Desk {
                store: dir.join(format!("desk-{k}")),
                matter: m,
                out: dir.join(format!("out-{k}")),
            }
        })
        .collect()
}

/// One run at a desk, as a process; `extra` arguments and environment added.
fn desk_run(d: &Desk, ledger: &str, url: &str, out: &Path, env: &[(&str, &str)]) -> Lexrun {
    let mut l = Lexrun::new()
        .env("LEXRUN_STORE", &d.store)
        .env("LEXRUN_LEDGER", ledger)
        .args(run_args(out, url))
        .args(["--backoff-ms", "20", "--keep-runs", "100"])
        .arg("--matter")
        .arg(&d.matter);
    for (k, v) in env {
        l = l.env(k, v);
    }
    l.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
}

/// The run id a finished run wrote in `out`, with its exit.
fn run_ids(out: &Path) -> Vec<String> {
    let mut ids: Vec<String> = fs::read_dir(out)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join("run.json").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

#[test]
fn eight_desks_under_load_then_the_ledger_restarts() {
    let pg = Postgres::start();
    pg.create_db("firm");
    let ledger = pg.url("firm");
    let dir = tempfile::tempdir().unwrap();
    let drafts = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let srv = desk_server(Duration::ZERO, drafts.clone());
    let desks = desks(dir.path());
    const RUNS: usize = 25;
    // Every desk runs once, so that each has an output another desk can copy.
    let started = std::time::Instant::now();
    let first: Vec<_> = desks
        .iter()
        .map(|d| desk_run(d, &ledger, &srv.url, &d.out.join("r0"), &[]).spawn())
        .collect();
    for (k, c) in first.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "desk {k}: {}",
            support::stderr(&o)
        );
    }
    // Then every desk runs on, and on its fifth run finds in its matter an edited copy of
    // the next desk's draft: refused, every time, at every desk.
    std::thread::scope(|s| {
        for (k, d) in desks.iter().enumerate() {
            let (ledger, url, next) = (&ledger, &srv.url, &desks[(k + 1) % DESKS]);
            s.spawn(move || {
                for i in 1..RUNS {
                    let copy = d.matter.join("intake/03-notes.txt");
                    if i == 5 {
                        let theirs = fs::read_to_string(next.out.join("r0/draft.md")).unwrap();
                        let bare = theirs.split("\n\n---\n\n").next().unwrap();
                        fs::write(&copy, bare.replace("cold", "icy").replace(". ", ".\n")).unwrap();
                    }
                    let o = desk_run(d, ledger, url, &d.out.join(format!("r{i}")), &[]).output();
                    let e = support::stderr(&o);
                    if i == 5 {
                        assert_eq!(o.status.code(), Some(1), "desk {k}: {e}");
                        assert!(
                            e.contains("03-notes.txt") && e.contains("stage `draft`"),
                            "desk {k}: {e}"
                        );
                        fs::remove_file(&copy).unwrap();
                    } else {
                        assert_eq!(o.status.code(), Some(0), "desk {k} run {i}: {e}");
                    }
                }
            });
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    let finished = DESKS * (RUNS - 1);
    println!(
        "{DESKS} desks × {RUNS} runs against one PostgreSQL ledger: {finished} runs in {elapsed:.1} s = {:.0} runs per minute",
        finished as f64 / elapsed * 60.0
    );
    // No run lost or duplicated: every run that wrote a record is in the ledger once, done.
    let mut ids = Vec::new();
    for d in &desks {
        for i in 0..RUNS {
            ids.extend(run_ids(&d.out.join(format!("r{i}"))));
        }
    }
    assert_eq!(ids.len(), finished, "a record per run that started");
    let rows = pg.query("firm", "SELECT run_id, status FROM runs ORDER BY run_id");
    let done: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.strip_suffix("|done"))
        .collect();
    let mut want: Vec<&str> = ids.iter().map(String::as_str).collect();
    want.sort();
    assert_eq!(done, want, "every run in the ledger once, closed as done");
    assert_eq!(rows.len(), ids.len(), "no other rows: {rows:?}");

    // The server restarts under running runs: they reconnect and finish.
    let slow = desk_server(Duration::from_millis(15), drafts.clone());
    let kids: Vec<_> = desks
        .iter()
        .map(|d| desk_run(d, &ledger, &slow.url, &d.out.join("restart"), &[]).spawn())
        .collect();
    std::thread::sleep(Duration::from_millis(700));
    pg.stop();
    std::thread::sleep(Duration::from_millis(1500));
    pg.start_again();
    for (k, c) in kids.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "desk {k}: {}",
            support::stderr(&o)
        );
    }

    // The server gone for longer than a run waits: the run fails, saying so, with advice
    // for PostgreSQL; its draft reached the store, not the ledger.
    let d = &desks[0];
    let letter = d.matter.join("intake/01-letter.txt");
    let t = fs::read_to_string(&letter).unwrap();
    // New evidence, so every stage has a key no run had.
    fs::write(
        &letter,
        format!("{t}\nA further letter of March 9, 2024.\n"),
    )
    .unwrap();
    let lost_out = d.out.join("lost");
    let before = drafts.load(Ordering::SeqCst);
    let child = desk_run(
        d,
        &ledger,
        &slow.url,
        &lost_out,
        &[("LEXRUN_LEDGER_RETRY_S", "1")],
    )
    .spawn();
    // Stopped while the drafter answers.
    let t = std::time::Instant::now();
    while drafts.load(Ordering::SeqCst) == before && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(5));
    }
    pg.stop();
    let asked = slow.calls.load(Ordering::SeqCst);
    let o = child.wait_with_output().unwrap();
    let e = support::stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{e}");
    // No model asked once the ledger was lost, and one message, with PostgreSQL's remedy.
    assert_eq!(slow.calls.load(Ordering::SeqCst), asked, "{e}");
    assert_eq!(e.matches("stopped answering").count(), 1, "{e}");
    assert!(
        e.contains("pg_isready") && e.contains("LEXRUN_LEDGER"),
        "{e}"
    );
    assert!(
        e.contains("closed as failed when lexrun next reaches the ledger"),
        "{e}"
    );
    assert!(!e.contains("move it aside"), "SQLite's advice: {e}");
    let lost = run_ids(&lost_out);
    assert_eq!(lost.len(), 1, "the record is written: {e}");
    pg.start_again();
    // The next run works, closes the lost one as failed, and finds its draft by its key.
    let calls = drafts.load(Ordering::SeqCst);
    let o = desk_run(d, &ledger, &slow.url, &d.out.join("after"), &[]).output();
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    assert_eq!(
        drafts.load(Ordering::SeqCst),
        calls,
        "the stored draft was not asked of the model again"
    );
    let status = pg.query(
        "firm",
        &format!("SELECT status FROM runs WHERE run_id = '{}'", lost[0]),
    );
    assert_eq!(status, ["failed"]);
    let open = pg.query("firm", "SELECT run_id FROM runs WHERE status IS NULL");
    assert!(open.is_empty(), "runs left open: {open:?}");
}

/// Two reviewers at two desks decide on the same flagged claim at the same moment, through
/// one shared ledger: both decisions are recorded, the later supersedes the earlier, and
/// verification applies the later one.
#[test]
fn two_reviewers_deciding_at_once_are_both_recorded_and_the_later_stands() {
    let pg = Postgres::start();
    pg.create_db("review");
    let url = pg.url("review");
    let dir = tempfile::tempdir().unwrap();
    let intake = dir.path().join("smith").join("intake");
    fs::create_dir_all(&intake).unwrap();
    fs::write(
        intake.join("note.txt"),
        "The keys were handed over in the first days of spring.\n\nSMITH000001\n",
    )
    .unwrap();
    let draft = dir.path().join("smith").join("draft.md");
    fs::write(
        &draft,
        "I moved in on March 3, 2023.\n\nRent was $950.00 a month.\n",
    )
    .unwrap();
    let base = |store: &str| {
        Lexrun::new()
            .env("LEXRUN_STORE", dir.path().join(store))
            .env("LEXRUN_LEDGER", &url)
    };
    let o = base("a")
        .args(["verify", "--json", "--sources"])
        .arg(&intake)
        .arg(&draft)
        .output();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<String> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{v}");
    // Each desk decides on both claims, at once with the other.
    let spawn = |store: &str, reviewer: &str, claim: &str, how: &[&str]| {
        base(store)
            .args(["decide", claim, "--reviewer", reviewer])
            .args(how)
            .args(["--draft"])
            .arg(&draft)
            .arg("--sources")
            .arg(&intake)
            .stdout(std::process::Stdio::null())
            .spawn()
    };
    for claim in &ids {
        let a = spawn("a", "Ann", claim, &["--confirm", "--page", "note.txt:1"]);
        let b = spawn("b", "Bo", claim, &["--strike"]);
        for mut c in [a, b] {
            assert_eq!(c.wait().unwrap().code(), Some(0));
        }
    }
    let rows = pg.query(
        "review",
        "SELECT claim_id || ' ' || reviewer || ' ' || decision FROM decisions ORDER BY created, id",
    );
    assert_eq!(rows.len(), 4, "{rows:?}");
    let st = lexrun::store::Store::open_with(&dir.path().join("a"), Some(&url)).unwrap();
    let matter = lexrun::verify::decisions::matter_key("smith", Some(&dir.path().join("smith")));
    let all = st.decisions(&matter).unwrap();
    assert_eq!(all.len(), 4);
    for claim in &ids {
        let mine: Vec<_> = all.iter().filter(|d| &d.claim_id == claim).collect();
        assert_eq!(mine.len(), 2, "both recorded");
        let reviewers: Vec<&str> = mine.iter().map(|d| d.reviewer.as_str()).collect();
        assert!(reviewers.contains(&"Ann") && reviewers.contains(&"Bo"));
        assert_eq!(mine[0].superseded_by, Some(mine[1].seq), "the later stands");
        assert_eq!(mine[1].superseded_by, None);
    }
    // Verification applies the decision that stands on each claim.
    let o = base("b")
        .args(["verify", "--json", "--sources"])
        .arg(&intake)
        .arg(&draft)
        .output();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for c in v["claims"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        let standing = all.iter().rfind(|d| d.claim_id == id).unwrap();
        let expect = match standing.verdict {
            lexrun::store::Verdict::Confirmed => "supported",
            _ => "unsupported",
        };
        assert_eq!(c["status"], expect, "{v}");
    }
}
