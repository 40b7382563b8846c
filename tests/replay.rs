//! Record and replay: cassettes from the real llama.cpp server replay with the server gone;
//! a changed prompt misses exactly where it changed, with a diff; `lexrun test` runs the
//! example library (`workflows/examples.test.lex`) from its cassettes, compares snapshots,
//! and `--accept` stores new ones; corrupt cassettes and test files are clear errors.
//!
//! The example cassettes in `workflows/cassettes/` come from a scripted test server:
//! `cargo test --test tests replay::record_example_cassettes -- --ignored` writes them again.

use crate::support;
use support::{lexrun, stderr as err};

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use support::servers::{self, Answer, Fake, Seen, Speaks};

fn figures_server() -> Fake {
    Fake::start(Speaks::Ollama, Duration::ZERO, |_| {
        Answer {
        text: r#"{"amounts": [{"amount": 1250.00, "date": "2024-04-01", "purpose": "April rent", "bates": "TEST000002"}], "total": 1250.00}"#.into(),
        fault: None,
    }
    })
}

#[test]
fn a_recording_from_the_real_server_replays_without_it() {
    let llama = servers::start_llama(&["-np", "1", "-c", "32768"]);
    let ollama = figures_server();
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("pipeline.jsonl");
    let live = dir.path().join("live");
    let ends = |a: &str, o: &str| {
        vec![
            "--endpoint".to_string(),
            format!("gpu_a={a}"),
            "--endpoint".into(),
            format!("gpu_b={a}"),
            "--endpoint".into(),
            format!("rtx={o}"),
        ]
    };
    let mut args: Vec<String> = vec![
        "run".into(),
        "tests/runtime/pipeline.lex".into(),
        "--out".into(),
        live.display().to_string(),
    ];
    args.extend(ends(&llama.url, &ollama.url));
    args.extend(["--record".into(), cassette.display().to_string()]);
    let o = lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = fs::read_to_string(&cassette).unwrap();
    assert!(text.starts_with("{\"cassette\":1,"));
    assert!(!text.to_ascii_lowercase().contains("authorization"));

    // Servers gone: replay.
    let dead = format!("http://127.0.0.1:{}", servers::free_port());
    let replayed = dir.path().join("replayed");
    let mut args: Vec<String> = vec![
        "run".into(),
        "tests/runtime/pipeline.lex".into(),
        "--out".into(),
        replayed.display().to_string(),
    ];
    args.extend(ends(&dead, &dead));
    args.extend(["--replay".into(), cassette.display().to_string()]);
    let o = lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // The same text; only the provenance comment (which names the run) differs.
    let body = |p: std::path::PathBuf| {
        let t = fs::read_to_string(p).unwrap();
        t.split("<!-- lexrun:provenance")
            .next()
            .unwrap()
            .to_string()
    };
    for f in ["draft.md", "figures.json"] {
        assert_eq!(
            body(live.join(f)),
            body(replayed.join(f)),
            "{f} differs between the live run and its replay"
        );
    }

    // One prompt changed: exactly that stage misses, with a readable diff.
    let changed = dir.path().join("changed.lex");
    let lex = fs::read_to_string("tests/runtime/pipeline.lex").unwrap().replace(
        "  prompt  std.prompts.adversary\n",
        "  prompt  \"\"\"\n    {{evidence}}\n    You are opposing counsel. Attack this draft:\n    {{reviewed}}\n    Reply with JSON matching this schema:\n    {{schema}}\n  \"\"\"\n",
    );
    let abs_matter = Path::new("tests/runtime/matter").canonicalize().unwrap();
    fs::write(
        &changed,
        lex.replace(
            "matter \"matter\"",
            &format!("matter \"{}\"", abs_matter.display()),
        ),
    )
    .unwrap();
    let out3 = dir.path().join("changed-out");
    let mut args: Vec<String> = vec![
        "run".into(),
        changed.display().to_string(),
        "--out".into(),
        out3.display().to_string(),
    ];
    args.extend(ends(&dead, &dead));
    args.extend(["--replay".into(), cassette.display().to_string()]);
    let o = lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("step `review` failed: stage `review`: this request is not in cassette"),
        "{e}"
    );
    assert!(
        e.contains("-You are opposing counsel. Check the draft below against the record above.")
            && e.contains("+You are opposing counsel. Attack this draft:"),
        "{e}"
    );
    assert!(
        !e.contains("step `gate` failed")
            && !e.contains("step `draft` failed")
            && !e.contains("step `figures` failed"),
        "{e}"
    );
}

#[test]
fn a_corrupt_cassette_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("bad.jsonl");
    fs::write(&c, "{\"cassette\":1,\"note\":\"x\"}\n{\"pool\":\"gpu_a\",\"identity\":{\"model\":\"m\"}}\n{not json\n").unwrap();
    let o = lexrun(&[
        "run",
        "tests/runtime/pipeline.lex",
        "--replay",
        c.to_str().unwrap(),
        "--out",
        dir.path().join("o").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("bad.jsonl`, line 3: not JSON"),
        "{}",
        err(&o)
    );
    // An edited exchange is caught by its key.
    let good = fs::read_to_string("workflows/cassettes/affidavit-smith.jsonl").unwrap();
    let edited = good.replacen("\"prompt\":\"=== client", "\"prompt\":\"=== CLIENT", 1);
    fs::write(&c, edited).unwrap();
    let o = lexrun(&[
        "run",
        "workflows/affidavit.lex",
        "--replay",
        c.to_str().unwrap(),
        "--out",
        dir.path().join("o").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("was edited"), "{}", err(&o));
}

#[test]
fn the_example_library_passes() {
    let o = lexrun(&["test", "workflows"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let e = err(&o);
    assert!(e.trim_end().ends_with("9 passed, 0 failed"), "{e}");
}

#[test]
fn a_snapshot_mismatch_fails_with_a_diff_and_accept_fixes_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let summary = root.join("workflows/summary.lex");
    let cassette = root.join("workflows/cassettes/summary-rivera.jsonl");
    let t = dir.path().join("one.test.lex");
    fs::write(
        &t,
        format!(
            "test \"rivera\" {{\n  workflow \"{}\"\n  cassette \"{}\"\n  expect exit 0\n  expect verify summary flags\n}}\n",
            summary.display(),
            cassette.display()
        ),
    )
    .unwrap();
    // No snapshot yet: a failure that shows the new one.
    let o = lexrun(&["test", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).contains("new snapshot") && err(&o).contains("0 passed, 1 failed"),
        "{}",
        err(&o)
    );
    let o = lexrun(&["test", t.to_str().unwrap(), "--accept"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let snap = dir.path().join("snapshots/one__rivera.snap");
    let stored = fs::read_to_string(&snap).unwrap();
    assert!(
        stored.starts_with("---\nsource: one.test.lex\n"),
        "{stored}"
    );
    assert!(
        !stored.contains(dir.path().to_str().unwrap()),
        "paths are redacted"
    );
    // Someone edits the snapshot: the next run shows the difference.
    fs::write(&snap, stored.replace("flagged", "passed")).unwrap();
    let o = lexrun(&["test", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err(&o).contains("-  summary round 1: ") || err(&o).contains("+  summary round 1: "),
        "{}",
        err(&o)
    );
    let o = lexrun(&["test", t.to_str().unwrap(), "--accept"]);
    assert_eq!(o.status.code(), Some(0));
    let o = lexrun(&["test", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("1 passed, 0 failed"));
    // Edited into nonsense: the file is named, with the fix.
    for nonsense in ["just some notes\n", "---\nsource: x\n---\nall good\n"] {
        fs::write(&snap, nonsense).unwrap();
        let o = lexrun(&["test", t.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        let e = err(&o);
        assert!(
            e.contains(&format!(
                "the snapshot `{}` is not one lexrun test wrote",
                snap.display()
            )) && e.contains("git checkout --"),
            "{e}"
        );
        assert_eq!(
            fs::read_to_string(&snap).unwrap(),
            nonsense,
            "nothing is overwritten"
        );
    }
}

#[test]
fn test_file_errors_point_at_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("bad.test.lex");
    fs::write(
        &t,
        "test \"x\" {\n  workflow \"a.lex\"\n  expect gate perhaps\n}\n",
    )
    .unwrap();
    let o = lexrun(&["test", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = err(&o);
    assert!(
        e.contains("lex::E100")
            && e.contains("expect gate perhaps")
            && e.contains("does not know this expectation"),
        "{e}"
    );
}

/// The router's light path: a summary request reaches the small model's server only; every
/// other pool points at a port where nothing listens, and the run still succeeds.
#[test]
fn a_summary_request_wakes_only_the_small_model() {
    let small = scripted("", "", 0);
    let dir = tempfile::tempdir().unwrap();
    let dead = format!("http://127.0.0.1:{}", servers::free_port());
    let (out, store) = (dir.path().join("out"), dir.path().join("store"));
    let mut args: Vec<String> = [
        "run",
        "workflows/router.lex",
        "--matter",
        "workflows/matters/rivera-v-harbor",
        "--out",
        out.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--retries",
        "0",
    ]
    .map(String::from)
    .to_vec();
    for pool in ["board_a", "board_b", "pair_23", "rtx"] {
        args.extend(["--endpoint".into(), format!("{pool}={dead}")]);
    }
    args.extend(["--endpoint".into(), format!("pair_01={}", small.url)]);
    let o = lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let asked: Vec<String> = small
        .requests()
        .iter()
        .filter(|s| !s.prompt().is_empty())
        .map(|s| s.prompt())
        .collect();
    assert_eq!(asked.len(), 2, "the route and the summary: {asked:#?}");
    assert!(asked[0].contains("intake desk") && asked[1].contains("Summarise"));
    assert!(out.join("summary.md").exists());
    assert!(!out.join("affidavit.md").exists());
}

const SMITH_FACTS: &str = "1. I have rented Unit 3B at 1420 Harbor View Drive, Oakland, California since June 1, 2022 (SMITH000001).\n\
2. My rent is $2,150.00 per month (SMITH000002).\n\
3. On November 14, 2023 I reported black mold in the bedroom to Acme Property Management by email, and again on December 2, 2023 (SMITH000004).\n\
4. The lease provides: \"Landlord shall commence repairs within thirty (30) days of written notice of a condition affecting habitability.\" (SMITH000003)\n\
5. I paid Bay Area Mold Solutions $3,875.00 on January 9, 2024 (SMITH000006).\n";

/// Answers by what the prompt asks for: the stdlib prompts' own words.
fn scripted(gate: &'static str, reason_extra: &'static str, reviews_failing: usize) -> Fake {
    let reviews = Arc::new(AtomicUsize::new(0));
    let research = Arc::new(AtomicUsize::new(0));
    Fake::start(Speaks::Llama, Duration::ZERO, move |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            gate.to_string()
        } else if p.contains("intake desk of a litigation firm") {
            // The router: the request decides the work.
            if p.contains("please summarise it") {
                r#"{"work": "summary", "reason": "The attorney asks for a summary of the new Rivera file before meeting the client."}"#.into()
            } else {
                r#"{"work": "affidavit", "reason": "The attorney asks for Jane Smith's affidavit, to be signed before a notary."}"#.into()
            }
        } else if p.contains("Write the affidavit of the client") {
            format!("I, Jane Smith, being duly sworn, state:\n\n{SMITH_FACTS}")
        } else if p.contains("senior litigator reviewing a draft") {
            // Each revision answers the reviewer: it names who received the emails.
            let revised = if p.contains("This is revision") {
                "6. I sent both emails to maintenance@acme-pm.example, the address the lease gives for notices (SMITH000003).\n"
            } else {
                ""
            };
            format!("# Affidavit of Jane Smith\n\nI, Jane Smith, being duly sworn, state:\n\n{SMITH_FACTS}{revised}{reason_extra}")
        } else if p.contains("You are opposing counsel") {
            let n = reviews.fetch_add(1, Ordering::SeqCst);
            if n < reviews_failing {
                format!(
                    r#"{{"passes": false, "objections": ["Round {}: paragraph 3 should say who received the emails."]}}"#,
                    n + 1
                )
            } else {
                r#"{"passes": true, "objections": []}"#.into()
            }
        } else if p.contains("You are preparing a motion for summary judgment") {
            if research.fetch_add(1, Ordering::SeqCst) == 0 {
                // The first answer invents an authority; verification sends it back.
                r#"{"undisputed_facts": [{"fact": "Midstate approved invoices 7781 and 7809 on October 4, 2023.", "bates": "JONES000104"}], "authorities": [{"citation": "Smith v. Jones, 123 F.3d 456 (9th Cir. 1999)", "proposition": "approved invoices are admissions", "bates": "JONES000105"}], "amount_due": 214750.00}"#.into()
            } else {
                r#"{"undisputed_facts": [{"fact": "Midstate approved invoices 7781 and 7809 on October 4, 2023.", "bates": "JONES000104"}], "authorities": [{"citation": "Celotex Corp. v. Catrett, 477 U.S. 317, 322 (1986)", "proposition": "summary judgment standard", "bates": "JONES000105"}], "amount_due": 214750.00}"#.into()
            }
        } else if p.contains("You are drafting a motion") {
            "NOTICE OF MOTION AND MOTION FOR SUMMARY JUDGMENT\n\n\
             1. Midstate Builders Corp. agreed to pay $412,600.00 for the Work (JONES000101).\n\
             2. Invoice 7781 for $96,450.00 is dated August 15, 2023 (JONES000102); invoice 7809 for $118,300.00 is dated September 29, 2023 (JONES000103).\n\
             3. On October 4, 2023 Midstate wrote: \"We do not dispute the amounts.\" (JONES000104)\n\
             4. Summary judgment is proper where \"there is no genuine dispute as to any material fact\", Fed. R. Civ. P. 56(a); Celotex Corp. v. Catrett, 477 U.S. 317, 322 (1986).\n"
                .into()
        } else if p.contains("Summarise the materials above") {
            "Luis Rivera slipped on spilled milk at Harbor Grocery Co. on February 10, 2024 (RIVERA000001). \
             The spill was reported at about 6:15 p.m. and no sign was placed (RIVERA000002). \
             His medical charges total $5,005.00 (RIVERA000003); he was discharged on February 11, 2024.\n"
                .into()
        } else {
            String::new()
        };
        Answer { text, fault: None }
    })
}

fn smith_figures() -> Fake {
    Fake::start(Speaks::Ollama, Duration::ZERO, |_| {
        Answer {
        text: r#"{"amounts": [{"amount": 3875.00, "date": "2024-01-09", "purpose": "mold testing and removal", "bates": "SMITH000006"}, {"amount": 509.58, "date": "2024-01-12", "purpose": "hotel during the work", "bates": "SMITH000007"}], "total": 4384.58}"#.into(),
        fault: None,
    }
    })
}

fn record(workflow: &str, cassette: &str, llama: &Fake, ollama: &Fake, note: &str, expect: i32) {
    record_in(workflow, "", cassette, llama, ollama, note, expect)
}

/// Records `workflow` over `matter` (relative to the workflow; empty: the workflow's own).
fn record_in(
    workflow: &str,
    matter: &str,
    cassette: &str,
    llama: &Fake,
    ollama: &Fake,
    note: &str,
    expect: i32,
) {
    let out = tempfile::tempdir().unwrap();
    let path = format!("workflows/cassettes/{cassette}");
    let _ = fs::remove_file(&path);
    let mut args = vec![
        "run".to_string(),
        workflow.into(),
        "--out".into(),
        out.path().display().to_string(),
        "--record".into(),
        path.clone(),
    ];
    if !matter.is_empty() {
        args.extend(["--matter".into(), format!("workflows/{matter}")]);
    }
    for pool in ["board_a", "board_b", "pair_01", "pair_23", "desk"] {
        if workflow.contains("summary") != (pool == "desk") {
            continue;
        }
        args.extend(["--endpoint".into(), format!("{pool}={}", llama.url)]);
    }
    if !workflow.contains("summary") {
        args.extend(["--endpoint".into(), format!("rtx={}", ollama.url)]);
    }
    let o = lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(expect), "{}", err(&o));
    // The header says where the answers came from (and keeps the workflow's name).
    let text = fs::read_to_string(&path).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut header: serde_json::Value = serde_json::from_str(first).unwrap();
    header["note"] = note.into();
    fs::write(&path, format!("{header}\n{rest}")).unwrap();
    // A prompt the scripted server does not know would be answered with nothing.
    assert_eq!(
        empty_answers(Path::new(&path)),
        Vec::<String>::new(),
        "{path}"
    );
}

/// The stages of a cassette whose recorded answer is empty (or only white space).
fn empty_answers(cassette: &Path) -> Vec<String> {
    let text = fs::read_to_string(cassette).unwrap();
    text.lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("response").is_some())
        .filter(|v| {
            v["response"]["text"]
                .as_str()
                .is_none_or(|t| t.trim().is_empty())
        })
        .map(|v| v["stage"].as_str().unwrap_or("?").to_string())
        .collect()
}

#[test]
fn every_example_cassette_answers_with_text() {
    let mut empty = Vec::new();
    let mut seen = 0;
    for e in fs::read_dir("workflows/cassettes").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            seen += 1;
            for stage in empty_answers(&p) {
                empty.push(format!("{}: stage `{stage}`", p.display()));
            }
        }
    }
    assert!(
        seen >= 8,
        "the example cassettes are in workflows/cassettes"
    );
    assert!(
        empty.is_empty(),
        "empty answers in the example cassettes (record them again): {empty:#?}"
    );
}

/// The scripted server's answers, and a store the runs share.
fn smith_gate() -> &'static str {
    r#"{"grounds": true, "reason": "The lease requires repairs within thirty days of written notice (SMITH000003); notice was given on November 14, 2023 (SMITH000004).", "needs_figures": true}"#
}

fn affidavit_args(
    llama: &Fake,
    ollama: &Fake,
    out: &Path,
    store: &Path,
    extra: &[&str],
) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "run".into(),
        "workflows/affidavit.lex".into(),
        "--out".into(),
        out.display().to_string(),
        "--store".into(),
        store.display().to_string(),
        "--retries".into(),
        "0".into(),
    ];
    for pool in ["board_a", "board_b", "pair_01", "pair_23"] {
        args.extend(["--endpoint".into(), format!("{pool}={}", llama.url)]);
    }
    args.extend(["--endpoint".into(), format!("rtx={}", ollama.url)]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

fn asked(f: &Fake, what: &str) -> usize {
    f.requests()
        .iter()
        .filter(|s| s.prompt().contains(what))
        .count()
}

/// A recording made while lexrun's cache answers some stages (or all) holds those answers
/// too: the cassette replays every stage with no server and no cache.
#[test]
fn a_recording_with_a_warm_cache_keeps_the_cached_answers() {
    let (l, o) = (scripted(smith_gate(), "", 0), smith_figures());
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let run = |out: &str, extra: &[&str]| {
        let args = affidavit_args(&l, &o, &dir.path().join(out), &store, extra);
        lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let first = run("warm", &[]);
    assert_eq!(first.status.code(), Some(0), "{}", err(&first));
    let gates = asked(&l, "screening a new matter");
    for (name, extra) in [
        ("all-cached", vec![]),
        ("part-cached", vec!["--refresh", "attack"]),
    ] {
        let cassette = dir.path().join(format!("{name}.jsonl"));
        let mut extra: Vec<&str> = extra;
        extra.extend(["--record", cassette.to_str().unwrap()]);
        let o2 = run(name, &extra);
        assert_eq!(o2.status.code(), Some(0), "{name}: {}", err(&o2));
        assert_eq!(
            asked(&l, "screening a new matter"),
            gates,
            "{name}: the gate was answered from the cache"
        );
        for stage in ["gate", "draft", "reason", "attack", "figures"] {
            let text = fs::read_to_string(&cassette).unwrap();
            assert!(
                text.contains(&format!("\"stage\":\"{stage}\"")),
                "{name}: the cassette holds no `{stage}`:\n{text}"
            );
        }
        // Servers gone, no store: every stage replays.
        let dead = format!("http://127.0.0.1:{}", servers::free_port());
        let mut args: Vec<String> = vec![
            "run".into(),
            "workflows/affidavit.lex".into(),
            "--out".into(),
            dir.path()
                .join(format!("{name}-replayed"))
                .display()
                .to_string(),
            "--no-cache".into(),
            "--replay".into(),
            cassette.display().to_string(),
        ];
        for pool in ["board_a", "board_b", "pair_01", "pair_23", "rtx"] {
            args.extend(["--endpoint".into(), format!("{pool}={dead}")]);
        }
        let o3 = lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(o3.status.code(), Some(0), "{name}: {}", err(&o3));
    }
}

/// A cassette recorded for another workflow is refused before anything runs, naming the
/// file and the fix, whether its header names the workflow or (an older cassette) not.
#[test]
fn a_cassette_of_another_workflow_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let smith = fs::read_to_string("workflows/cassettes/affidavit-smith.jsonl").unwrap();
    let (_, rest) = smith.split_once('\n').unwrap();
    let old = dir.path().join("old.jsonl");
    fs::write(&old, format!("{{\"cassette\":1,\"note\":\"x\"}}\n{rest}")).unwrap();
    for (cassette, says) in [
        (
            "workflows/cassettes/affidavit-smith.jsonl".to_string(),
            "it was recorded for workflow `affidavit`, not `summary`",
        ),
        (
            old.display().to_string(),
            "workflow `summary` has none of them: it was recorded for another workflow",
        ),
    ] {
        let o = lexrun(&[
            "run",
            "workflows/summary.lex",
            "--replay",
            &cassette,
            "--out",
            dir.path().join("o").to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", err(&o));
        let e = err(&o);
        assert!(
            e.contains(&cassette) && e.contains(says) && e.contains("--record"),
            "{e}"
        );
    }
}

/// A test file in `dir` replaying `cassette` over `workflow` (paths from the repository).
fn one_test(
    dir: &Path,
    workflow: &str,
    matter: Option<&str>,
    cassette: &Path,
    lines: &str,
) -> std::path::PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let t = dir.join("one.test.lex");
    let matter = matter
        .map(|m| format!("  matter \"{}\"\n", root.join(m).display()))
        .unwrap_or_default();
    fs::write(
        &t,
        format!(
            "test \"one\" {{\n  workflow \"{}\"\n{matter}  cassette \"{}\"\n{lines}}}\n",
            root.join(workflow).display(),
            cassette.display()
        ),
    )
    .unwrap();
    t
}

/// A run that asked what its cassette does not hold is never stored as a snapshot, even
/// with `--accept` and `expect exit 1`; the message says to record the cassette again.
#[test]
fn accept_refuses_a_run_that_missed_its_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The affidavit request's cassette, asked about the Rivera matter: the router's prompt
    // is not in it.
    let t = one_test(
        dir.path(),
        "workflows/router.lex",
        Some("workflows/matters/rivera-v-harbor"),
        &root.join("workflows/cassettes/router-affidavit.jsonl"),
        "  expect exit 1\n",
    );
    for flag in ["--accept", "--accept-failures"] {
        let o = lexrun(&["test", t.to_str().unwrap(), flag]);
        assert_eq!(o.status.code(), Some(1), "{}", err(&o));
        let e = err(&o);
        assert!(
            e.contains("`route` round 1")
                && e.contains("record it again against live servers")
                && e.contains("--record")
                && !e.contains("--accept stores")
                && e.contains("0 passed, 1 failed"),
            "{e}"
        );
        assert!(!dir.path().join("snapshots/one__one.snap").exists());
        assert!(!dir.path().join("snapshots/one__one.snap.new").exists());
    }
}

/// A run in which a step failed is stored only with `--accept-failures`.
#[test]
fn a_failed_step_is_stored_only_with_accept_failures() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("unreadable-gate.jsonl");
    // A gate that answers prose where JSON is asked for, twice: the gate fails.
    let l = scripted("There are grounds, I think.", "", 0);
    let args = affidavit_args(
        &l,
        &smith_figures(),
        &dir.path().join("rec"),
        &dir.path().join("store"),
        &["--record", cassette.to_str().unwrap()],
    );
    let o = lexrun(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let t = one_test(
        dir.path(),
        "workflows/affidavit.lex",
        None,
        &cassette,
        "  expect exit 1\n  expect gate failed\n",
    );
    let snap = dir.path().join("snapshots/one__one.snap");
    let o = lexrun(&["test", t.to_str().unwrap(), "--accept"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let e = err(&o);
    assert!(
        e.contains("is not stored")
            && e.contains("`gate` round 1 failed")
            && e.contains("record the cassette again")
            && e.contains("--accept-failures"),
        "{e}"
    );
    assert!(!snap.exists());
    let o = lexrun(&["test", t.to_str().unwrap(), "--accept-failures"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(fs::read_to_string(&snap)
        .unwrap()
        .contains("gate round 1: failed"));
    let o = lexrun(&["test", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

/// A test says what a stage wrote and what its verification counted; each unmet
/// expectation says what was found.
#[test]
fn a_test_asserts_what_a_stage_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cassette = root.join("workflows/cassettes/summary-rivera.jsonl");
    let good = "  expect summary not empty\n  expect summary contains \"Luis Rivera\"\n  expect summary at least 20 words\n  expect verify summary claims at least 3\n  expect verify summary unsupported 1\n";
    let t = one_test(dir.path(), "workflows/summary.lex", None, &cassette, good);
    let o = lexrun(&["test", t.to_str().unwrap(), "--accept"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let bad = "  expect summary contains \"Jane Doe\"\n  expect summary at least 500 words\n  expect verify summary claims 99\n  expect verify summary unsupported at least 5\n  expect nothing not empty\n";
    let t = one_test(dir.path(), "workflows/summary.lex", None, &cassette, bad);
    let o = lexrun(&["test", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let e = err(&o);
    for says in [
        "expected `summary` to contain \"Jane Doe\", it wrote \"Luis Rivera slipped",
        "expected `summary` to write at least 500 words, it wrote ",
        "expected verify summary claims 99, it found ",
        "expected verify summary unsupported at least 5, it found 1",
        "expected `nothing` to write text, it wrote none",
    ] {
        assert!(e.contains(says), "{says}\n{e}");
    }
}

#[test]
#[ignore = "writes workflows/cassettes/; run by hand when the examples change"]
fn record_example_cassettes() {
    let scripted_note = "Recorded by lexrun from a scripted test server (tests/replay.rs), not a model: its answers are written to exercise ";
    let l = scripted(
        r#"{"grounds": true, "reason": "The lease requires repairs within thirty days of written notice (SMITH000003); notice was given on November 14, 2023 (SMITH000004).", "needs_figures": true}"#,
        "",
        2,
    );
    record("workflows/affidavit.lex", "affidavit-smith.jsonl", &l, &smith_figures(), &format!("{scripted_note}a reviewer that forces two revise rounds, then a draft every claim of which the verifier finds in the evidence."), 0);
    let l = scripted(
        r#"{"grounds": true, "reason": "Notice was given (SMITH000004).", "needs_figures": false}"#,
        "6. See Green v. Superior Court, 10 Cal. 3d 616 (1974); the landlord admitted liability on February 30, 2024 (SMITH000099).\n",
        0,
    );
    record("workflows/affidavit.lex", "affidavit-fabricated.jsonl", &l, &smith_figures(), &format!("{scripted_note}a draft with a fabricated citation, an impossible date and an unstamped Bates number, which the verifier blocks."), 1);
    let l = scripted(
        r#"{"grounds": false, "reason": "The materials show no written notice to the landlord.", "needs_figures": false}"#,
        "",
        0,
    );
    record("workflows/affidavit.lex", "affidavit-no-grounds.jsonl", &l, &smith_figures(), &format!("{scripted_note}a gate that finds no grounds, which stops the workflow before any large model is woken."), 3);
    let l = scripted(
        r#"{"grounds": true, "reason": "Midstate approved both invoices and does not dispute the amounts (JONES000104).", "needs_figures": true}"#,
        "",
        0,
    );
    record("workflows/motion.lex", "motion-jones.jsonl", &l, &smith_figures(), &format!("{scripted_note}research that first cites an authority absent from the record (verification sends it back once), then a motion the verifier supports."), 0);
    let l = scripted("", "", 0);
    record("workflows/summary.lex", "summary-rivera.jsonl", &l, &smith_figures(), &format!("{scripted_note}a summary with one date the file does not show, which the review rules flag."), 0);
    let l = scripted("", "", 1);
    record("workflows/router.lex", "router-affidavit.jsonl", &l, &smith_figures(), &format!("{scripted_note}a request for an affidavit, routed to the whole pipeline, which one objection sends back once."), 0);
    record_in("workflows/router.lex", "matters/rivera-v-harbor", "router-summary.jsonl", &l, &smith_figures(), &format!("{scripted_note}a request for a summary, routed to the small model alone; the summary's one date the file does not show is flagged."), 0);
}
