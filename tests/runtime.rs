//! Running workflows against model servers: the real llama.cpp server with the tiny model,
//! the Ollama protocol test server, and fault injection. Each test starts its own servers on
//! free ports and points the workflow's pools at them with `--endpoint`.

use crate::support;
use support::{fresh_store, lexrun, stderr, Lexrun};

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{json, Value};
use support::servers::{self, Answer, Fake, Fault, Seen, Speaks};

/// The one run folder in `out`, and its record.
fn record(out: &Path) -> (PathBuf, Value) {
    let run = fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("run-"))
        .expect("a run folder");
    let rec = serde_json::from_slice(&fs::read(run.join("run.json")).unwrap()).unwrap();
    (run, rec)
}

fn steps(rec: &Value, matter: usize) -> Vec<(String, String, u64)> {
    rec["matters"][matter]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["status"].as_str().unwrap_or("").to_string(),
                s["round"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

fn step<'a>(rec: &'a Value, name: &str) -> &'a Value {
    rec["matters"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {rec:#}"))
}

const FIGURES: &str = r#"{"amounts": [{"amount": 1250.00, "date": "2024-04-01", "purpose": "April rent", "bates": "TEST000002"}], "total": 1250.00}"#;

/// An Ollama test server that answers the figures stage.
fn ollama() -> Fake {
    Fake::start(Speaks::Ollama, Duration::ZERO, |_| Answer {
        text: FIGURES.into(),
        fault: None,
    })
}

/// A llama.cpp-protocol test server whose answers depend on the prompt: the gate and the
/// reviewer answer JSON, the drafter a short affidavit.
fn scripted(gate: &'static str, review: impl Fn(usize) -> String + Send + Sync + 'static) -> Fake {
    let reviews = std::sync::atomic::AtomicUsize::new(0);
    Fake::start(Speaks::Llama, Duration::ZERO, move |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening a new matter") {
            gate.to_string()
        } else if p.contains("opposing counsel") {
            review(reviews.fetch_add(1, std::sync::atomic::Ordering::SeqCst))
        } else {
            "1. I rented the flat under a lease dated January 5, 2024 (TEST000001).\n\
             2. I paid $1,250.00 for April 2024 (TEST000002).\n"
                .to_string()
        };
        Answer { text, fault: None }
    })
}

const GATE_YES: &str = r#"{"grounds": true, "reason": "The letter (TEST000001) shows notice.", "needs_figures": true}"#;

fn run_pipeline(
    llama_a: &str,
    llama_b: &str,
    rtx: &str,
    extra: &[&str],
) -> (Output, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run".to_string(),
        "tests/runtime/pipeline.lex".into(),
        "--out".into(),
        out.path().display().to_string(),
        "--endpoint".into(),
        format!("gpu_a={llama_a}"),
        "--endpoint".into(),
        format!("gpu_b={llama_b}"),
        "--endpoint".into(),
        format!("rtx={rtx}"),
        "--backoff-ms".into(),
        "20".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    (lexrun(&refs), out)
}

#[test]
fn affidavit_example_runs_against_the_real_llama_server() {
    let llama = servers::llama();
    let ollama = ollama();
    let out = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run".to_string(),
        "workflows/affidavit.lex".into(),
        "--out".into(),
        out.path().display().to_string(),
    ];
    for pool in ["board_a", "board_b", "pair_01", "pair_23"] {
        args.push("--endpoint".into());
        args.push(format!("{pool}={}", llama.url));
    }
    args.push("--endpoint".into());
    args.push(format!("rtx={}", ollama.url));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = lexrun(&refs);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (run, rec) = record(out.path());
    let names: Vec<(String, String, u64)> = steps(&rec, 0);
    let done: Vec<&str> = names
        .iter()
        .filter(|s| s.1 == "done")
        .map(|s| s.0.as_str())
        .collect();
    assert_eq!(
        done,
        ["gate", "draft", "reason", "attack", "figures"],
        "{rec:#}"
    );
    // Real timings from the real server; the model as the server names it.
    let gate = step(&rec, "gate");
    assert!(
        gate["identity"].as_str().unwrap().contains("tiny-llama"),
        "{gate:#}"
    );
    assert!(gate["timings"]["predicted_n"].as_u64().unwrap() > 0);
    assert!(
        gate["prompt_tokens"].as_u64().unwrap() > 1000,
        "the evidence packet is counted"
    );
    // The packet leads every prompt, so the server reuses it from its cache.
    let draft = step(&rec, "draft");
    let cache_n = draft["timings"]["cache_n"].as_u64().unwrap();
    assert!(
        cache_n > 1000,
        "draft reused only {cache_n} cached tokens: {draft:#}"
    );
    // The node hash ties each step to the plan.
    let plan = lexrun(&["plan", "workflows/affidavit.lex", "--format", "json"]);
    let plan: Value = serde_json::from_slice(&plan.stdout).unwrap();
    let node = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "gate")
        .unwrap();
    assert_eq!(gate["node_hash"], node["hash"]);
    assert_eq!(rec["plan_hash"], plan["hash"]);
    // The gate's answer is valid JSON of its declared shape.
    let answer: Value =
        serde_json::from_slice(&fs::read(run.join("gate/answer.json")).unwrap()).unwrap();
    assert!(answer["grounds"].is_boolean() && answer["reason"].is_string());
    let prompt = fs::read_to_string(run.join("draft/prompt.md")).unwrap();
    assert!(
        prompt.starts_with("=== client · intake/01-client-letter.txt"),
        "{prompt}"
    );
    // Ollama got the schema, the context and keep_alive.
    let calls = ollama.requests();
    assert_eq!(calls.len(), 1);
    let body = &calls[0].body;
    assert_eq!(body["model"], "gemma4:26b");
    assert_eq!(body["options"]["num_ctx"], 32768);
    assert_eq!(body["format"]["required"], json!(["amounts", "total"]));
    assert!(body["keep_alive"].is_string());
    // Outputs, and the run's report.
    assert!(out.path().join("affidavit.md").is_file());
    let figures: Value =
        serde_json::from_slice(&fs::read(out.path().join("figures.json")).unwrap()).unwrap();
    assert_eq!(figures["total"], 1250.0);
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        report.contains("| gate | 1 | done | pair_01 · gatekeeper |"),
        "{report}"
    );
}

#[test]
fn native_completion_endpoint_and_schema() {
    let llama = servers::llama();
    let ollama = ollama();
    let native = format!("{}/completion", llama.url);
    let (o, out) = run_pipeline(&native, &native, &ollama.url, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (run, rec) = record(out.path());
    let gate = step(&rec, "gate");
    assert!(
        gate["timings"]["predicted_n"].as_u64().unwrap() > 0,
        "{gate:#}"
    );
    let answer: Value =
        serde_json::from_slice(&fs::read(run.join("gate/answer.json")).unwrap()).unwrap();
    assert!(answer["needs_figures"].is_boolean());
}

#[test]
fn a_prompt_over_the_context_is_an_error_not_a_truncation() {
    let llama = servers::llama();
    let dir = tempfile::tempdir().unwrap();
    let lex = fs::read_to_string("tests/runtime/pipeline.lex")
        .unwrap()
        .replace(
            "matter \"matter\"",
            &format!(
                "matter \"{}\"",
                Path::new("tests/runtime/matter")
                    .canonicalize()
                    .unwrap()
                    .display()
            ),
        )
        .replacen("ctx 16k", "ctx 512", 1);
    let file = dir.path().join("small.lex");
    fs::write(&file, lex).unwrap();
    let out = dir.path().join("out");
    let o = lexrun(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--endpoint",
        &format!("gpu_a={}", llama.url),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("step `gate` failed")
            && err.contains("tokens (counted)")
            && err.contains("has a context of 512 tokens"),
        "{err}"
    );
}

#[test]
fn a_gate_that_says_no_stops_the_workflow() {
    let llama = scripted(
        r#"{"grounds": false, "reason": "No notice was given.", "needs_figures": false}"#,
        |_| String::new(),
    );
    let ollama = ollama();
    let (o, out) = run_pipeline(&llama.url, &llama.url, &ollama.url, &[]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    // Said once, as a stop with the gate's reason; not also as a failure.
    let stops: Vec<&str> = err.lines().filter(|l| l.starts_with("stopped: ")).collect();
    assert_eq!(stops.len(), 1, "{err}");
    assert!(stops[0].contains("No notice was given."), "{err}");
    assert!(!err.contains("error:"), "{err}");
    assert!(err.contains("stopped by a gate"), "{err}");
    let (run, rec) = record(out.path());
    assert_eq!(
        steps(&rec, 0),
        [
            ("gate".into(), "stopped".into(), 1),
            ("draft".into(), "skipped".into(), 1),
            ("review".into(), "skipped".into(), 1),
            ("figures".into(), "skipped".into(), 1),
        ]
    );
    assert_eq!(
        ollama.requests().len(),
        0,
        "the Ollama host was never woken"
    );
    let report = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("stopped"), "{report}");
    assert!(!out.path().join("draft.md").exists());
}

#[test]
fn the_reviewer_sends_the_draft_back_until_it_passes() {
    let llama = scripted(GATE_YES, |n| {
        if n < 2 {
            format!(
                r#"{{"passes": false, "objections": ["Paragraph {} cites nothing."]}}"#,
                n + 1
            )
        } else {
            r#"{"passes": true, "objections": []}"#.into()
        }
    });
    let ollama = ollama();
    let (o, out) = run_pipeline(&llama.url, &llama.url, &ollama.url, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (run, rec) = record(out.path());
    let s = steps(&rec, 0);
    let rounds: Vec<(&str, u64)> = s
        .iter()
        .filter(|x| x.0 == "draft" || x.0 == "review")
        .map(|x| (x.0.as_str(), x.2))
        .collect();
    assert_eq!(
        rounds,
        [
            ("draft", 1),
            ("draft", 2),
            ("draft", 3),
            ("review", 1),
            ("review", 2),
            ("review", 3)
        ]
    );
    // The second draft was told what the reviewer found.
    let p2 = fs::read_to_string(run.join("draft/round-2/prompt.md")).unwrap();
    assert!(p2.contains("Paragraph 1 cites nothing."), "{p2}");
    let p3 = fs::read_to_string(run.join("draft/round-3/prompt.md")).unwrap();
    assert!(
        p3.contains("Paragraph 2 cites nothing.") && p3.contains("revision 3"),
        "{p3}"
    );
    // The output is the last version, verified, with the report appended.
    let draft = fs::read_to_string(out.path().join("draft.md")).unwrap();
    assert!(
        draft.contains("TEST000002") && draft.contains("supported"),
        "{draft}"
    );
}

#[test]
fn a_review_that_passes_while_objecting_does_not_end_the_loop() {
    // `revise draft until passes`: the reviewer's first answer says it passes and objects in
    // the same breath; it is read as not passing, so the draft is revised.
    let llama = scripted(GATE_YES, |n| {
        if n == 0 {
            r#"{"passes": true, "objections": ["Paragraph 1 does not say who signed the lease."]}"#
                .into()
        } else {
            r#"{"passes": true, "objections": []}"#.into()
        }
    });
    let ollama = ollama();
    let (o, out) = run_pipeline(&llama.url, &llama.url, &ollama.url, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let (run, rec) = record(out.path());
    let rounds: Vec<(String, u64)> = steps(&rec, 0)
        .into_iter()
        .filter(|x| x.0 == "draft" || x.0 == "review")
        .map(|x| (x.0, x.2))
        .collect();
    assert_eq!(
        rounds,
        [
            ("draft".to_string(), 1),
            ("draft".to_string(), 2),
            ("review".to_string(), 1),
            ("review".to_string(), 2)
        ]
    );
    let review = rec["matters"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "review" && s["round"] == 1)
        .unwrap();
    let warned = review["warnings"].to_string();
    assert!(
        warned.contains("contradicts itself") && warned.contains("`passes: false`"),
        "{review:#}"
    );
    assert!(err.contains("contradicts itself"), "{err}");
    // The settled answer is what the run read; the model's words are kept as written.
    let answer: Value =
        serde_json::from_slice(&fs::read(run.join("review/answer.json")).unwrap()).unwrap();
    assert_eq!(answer["passes"], false);
    let p2 = fs::read_to_string(run.join("draft/round-2/prompt.md")).unwrap();
    assert!(p2.contains("does not say who signed the lease"), "{p2}");
}

#[test]
fn a_review_that_never_passes_leaves_only_an_incomplete_draft() {
    // `revise draft until passes, at most 2 rounds`: the reviewer objects every time. The last
    // version is what later stages read, but it goes out only as a marked draft, exit 4.
    let llama = scripted(GATE_YES, |_| {
        r#"{"passes": false, "objections": ["Paragraph 1 does not say who signed the lease."]}"#
            .into()
    });
    let ollama = ollama();
    let (o, out) = run_pipeline(&llama.url, &llama.url, &ollama.url, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("never passed it"), "{err}");
    assert!(
        !out.path().join("draft.md").exists(),
        "a final draft.md was written"
    );
    let marked = fs::read_to_string(out.path().join("draft.incomplete-draft.md")).unwrap();
    assert!(marked.contains("never passed it"), "{marked}");
    let (_, rec) = record(out.path());
    let last = rec["matters"][0]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|s| s["name"] == "draft")
        .unwrap()
        .clone();
    assert_eq!(last["round"], 3, "{last:#}");
    assert_eq!(last["status"], "incomplete", "{last:#}");
}

#[test]
fn verification_blocks_a_fabricated_citation() {
    let llama = Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening") {
            GATE_YES.to_string()
        } else if p.contains("opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            "1. I paid $1,250.00 (TEST000002). See Smith v. Jones, 123 F.3d 456 (9th Cir. 1999); \
             and Bates RTX003060.\n"
                .into()
        };
        Answer { text, fault: None }
    });
    let ollama = ollama();
    let (o, out) = run_pipeline(&llama.url, &llama.url, &ollama.url, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("verification blocked `draft`"),
        "{}",
        stderr(&o)
    );
    assert!(
        !out.path().join("draft.md").exists(),
        "blocked content is not written"
    );
    let (run, rec) = record(out.path());
    let v = &rec["matters"][0]["verifications"];
    let draft_v = v
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["stage"] == "draft")
        .unwrap();
    assert_eq!(draft_v["decision"], "blocked");
    let report = fs::read_to_string(run.join("verify-draft/report.md")).unwrap();
    assert!(
        report.contains("123 F.3d 456") && report.contains("RTX003060"),
        "{report}"
    );
    // The review page of the blocked draft, with the run's provenance, listed in the index.
    let page = fs::read_to_string(run.join("verify-draft/report.html")).unwrap();
    assert!(
        page.contains("<!-- lexrun:provenance kind=review run=run-")
            && page.contains(" stage=draft round=1 model=drafter plan_hash="),
        "{}",
        &page[..600.min(page.len())]
    );
    assert!(page.contains("data-s=\"unsupported\"") && page.contains("RTX003060"));
    let index = fs::read_to_string(run.join("review.html")).unwrap();
    assert!(index.contains("verify-draft/report.html"), "{index}");
    // Figures are flagged, not blocked, and still written.
    assert!(out.path().join("figures.json").is_file());
}

#[test]
fn several_matters_share_the_pools() {
    let llama = Fake::start(Speaks::Llama, Duration::from_millis(15), |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening") {
            r#"{"grounds": true, "reason": "ok", "needs_figures": false}"#.to_string()
        } else if p.contains("opposing counsel") {
            r#"{"passes": true, "objections": []}"#.into()
        } else {
            "one two three four five six seven eight nine ten".into()
        };
        Answer { text, fault: None }
    });
    let gpu_b = Fake::start(Speaks::Llama, Duration::from_millis(15), |_| Answer {
        text: "one two three four five six seven eight nine ten eleven twelve".into(),
        fault: None,
    });
    let ollama = ollama();
    let (o, out) = run_pipeline(
        &llama.url,
        &gpu_b.url,
        &ollama.url,
        &[
            "--matter",
            "tests/runtime/matter",
            "--matter",
            "tests/runtime/matter2",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (run, rec) = record(out.path());
    assert_eq!(rec["matters"].as_array().unwrap().len(), 2);
    for m in ["matter", "matter2"] {
        assert!(out.path().join(m).join("draft.md").is_file(), "{m}");
        assert!(run.join(m).join("gate/answer.json").is_file(), "{m}");
    }
    // While one matter's draft ran on gpu_b, gpu_a worked on the other matter.
    let a = llama.requests();
    let b = gpu_b.requests();
    let who = |s: &Seen| s.prompt().contains("Omar Jones");
    let overlap = b.iter().any(|d| {
        a.iter()
            .any(|g| who(g) != who(d) && g.at < d.done.unwrap() && d.at < g.done.unwrap())
    });
    assert!(
        overlap,
        "the pools never worked on different matters at once"
    );
}

#[test]
fn faults_are_retried_and_reported() {
    let ollama = ollama();
    // Cut streams, 500s, malformed events and a hang, one each: all retried.
    let llama = scripted(GATE_YES, |_| r#"{"passes": true, "objections": []}"#.into());
    llama.fail_next([
        Fault::CutAfter(2),
        Fault::Status(500),
        Fault::Malformed,
        Fault::HangAfter(1),
        Fault::ErrorLine(1),
    ]);
    let (o, out) = run_pipeline(
        &llama.url,
        &llama.url,
        &ollama.url,
        &["--idle-timeout", "1", "--retries", "5"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_, rec) = record(out.path());
    let gate = step(&rec, "gate");
    let retries: Vec<&str> = gate["retries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(retries.len(), 5, "{retries:#?}");
    assert!(retries[0].contains("cut off"), "{}", retries[0]);
    assert!(retries[1].contains("HTTP 500"), "{}", retries[1]);
    assert!(retries[2].contains("not its protocol"), "{}", retries[2]);
    assert!(retries[3].contains("sent nothing for 1s"), "{}", retries[3]);
    assert!(retries[4].contains("reported an error"), "{}", retries[4]);

    // Ollama's error line under HTTP 200 is a failure too, and retried.
    let ollama = ollama_with(Some(Fault::ErrorLine(1)));
    let llama = scripted(GATE_YES, |_| r#"{"passes": true, "objections": []}"#.into());
    let (o, out) = run_pipeline(&llama.url, &llama.url, &ollama.url, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_, rec) = record(out.path());
    let retries = step(&rec, "figures")["retries"].to_string();
    assert!(retries.contains("unexpected EOF"), "{retries}");
}

fn ollama_with(first: Option<Fault>) -> Fake {
    let f = ollama();
    f.fail_next(first);
    f
}

#[test]
fn a_server_still_loading_is_waited_for() {
    let llama = scripted(GATE_YES, |_| r#"{"passes": true, "objections": []}"#.into());
    llama.loading_for(Duration::from_millis(1500));
    let ollama = ollama();
    let (o, out) = run_pipeline(&llama.url, &llama.url, &ollama.url, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("Loading model"),
        "the wait is visible: {}",
        stderr(&o)
    );
    let (_, rec) = record(out.path());
    assert_eq!(step(&rec, "gate")["status"], "done");
}

#[test]
fn a_dead_server_fails_its_stages_and_keeps_the_rest() {
    let llama = scripted(GATE_YES, |_| r#"{"passes": true, "objections": []}"#.into());
    let dead = format!("http://127.0.0.1:{}", servers::free_port());
    let (o, out) = run_pipeline(&llama.url, &llama.url, &dead, &["--retries", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("step `figures` failed")
            && err.contains("cannot connect")
            && err.contains("--endpoint"),
        "{err}"
    );
    // Everything that could finish did, and was written.
    let (run, rec) = record(out.path());
    assert_eq!(step(&rec, "draft")["status"], "done");
    assert!(out.path().join("draft.md").is_file());
    assert!(run.join("gate/output.md").is_file());

    // A server that keeps failing: a clear failure after the retries.
    let llama = scripted(GATE_YES, |_| String::new());
    llama.fail_next([Fault::Status(500), Fault::Status(500), Fault::Status(500)]);
    let (o, _out) = run_pipeline(&llama.url, &llama.url, &dead, &["--retries", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("step `gate` failed") && stderr(&o).contains("HTTP 500"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_answer_that_breaks_its_schema_gets_one_corrective_retry() {
    let n = std::sync::atomic::AtomicUsize::new(0);
    let llama = Fake::start(Speaks::Llama, Duration::ZERO, move |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("screening") {
            if n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                r#"{"grounds": "yes"}"#.to_string()
            } else {
                GATE_YES.to_string()
            }
        } else if p.contains("opposing counsel") {
            "I cannot answer in JSON.".into()
        } else {
            "1. A draft.".into()
        };
        Answer { text, fault: None }
    });
    let ollama = ollama();
    let (o, out) = run_pipeline(&llama.url, &llama.url, &ollama.url, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (run, rec) = record(out.path());
    let gate = step(&rec, "gate");
    assert_eq!(gate["status"], "done");
    assert!(gate["retries"][0]
        .as_str()
        .unwrap()
        .contains("answer.grounds should be bool"));
    let second = llama
        .requests()
        .into_iter()
        .filter(|s| s.prompt().contains("screening"))
        .nth(1)
        .unwrap();
    assert!(second
        .prompt()
        .contains("Your previous answer was rejected: answer.grounds should be bool"));
    let err = stderr(&o);
    assert!(
        err.contains("step `review` failed")
            && err.contains("after a corrective retry")
            && err.contains("not valid JSON"),
        "{err}"
    );
    assert!(run.join("review/rejected-answer.txt").is_file());
}

#[test]
fn ctrl_c_keeps_what_finished() {
    let llama = Fake::start(Speaks::Llama, Duration::from_millis(200), |s: &Seen| {
        let text = if s.prompt().contains("screening") {
            r#"{"grounds": true, "reason": "ok", "needs_figures": false}"#.to_string()
        } else {
            "a b c d e f g h i j k l m n o p q r s t u v w x y z".into()
        };
        Answer { text, fault: None }
    });
    let out = tempfile::tempdir().unwrap();
    let mut child = Lexrun::new()
        .env("LEXRUN_STORE", fresh_store())
        .args([
            "run",
            "tests/runtime/pipeline.lex",
            "--out",
            out.path().to_str().unwrap(),
        ])
        .args(["--endpoint", &format!("gpu_a={}", llama.url)])
        .args(["--endpoint", &format!("gpu_b={}", llama.url)])
        .stderr(std::process::Stdio::piped())
        .spawn();
    // Wait until the draft is being written, then interrupt.
    let start = std::time::Instant::now();
    while llama.requests().len() < 2 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let (run, rec) = record(out.path());
    assert_eq!(rec["cancelled"], true);
    assert_eq!(step(&rec, "gate")["status"], "done");
    assert_eq!(step(&rec, "draft")["status"], "cancelled");
    assert!(
        run.join("gate/answer.json").is_file(),
        "the finished stage is kept"
    );
}

#[test]
fn an_openai_compatible_pool() {
    let llama = scripted(GATE_YES, |_| r#"{"passes": true, "objections": []}"#.into());
    let ollama = ollama();
    let dir = tempfile::tempdir().unwrap();
    let abs_matter = Path::new("tests/runtime/matter").canonicalize().unwrap();
    let lex = fs::read_to_string("tests/runtime/pipeline.lex")
        .unwrap()
        .replacen("serve   llama_cpp at", "serve   openai at", 1)
        .replacen(
            "gguf    \"models/tiny-llama-v2.gguf\"",
            "tag     \"gatekeeper\"",
            1,
        )
        .replace(
            "matter \"matter\"",
            &format!("matter \"{}\"", abs_matter.display()),
        );
    let file = dir.path().join("openai.lex");
    fs::write(&file, lex).unwrap();
    let out = dir.path().join("out");
    let o = lexrun(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--endpoint",
        &format!("gpu_a={}", llama.url),
        "--endpoint",
        &format!("gpu_b={}", llama.url),
        "--endpoint",
        &format!("rtx={}", ollama.url),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let gate = llama
        .requests()
        .into_iter()
        .find(|s| s.prompt().contains("screening"))
        .unwrap();
    // The OpenAI dialect: the schema as response_format, no llama.cpp extensions.
    assert_eq!(gate.body["response_format"]["type"], "json_schema");
    assert_eq!(gate.body["stream"], true);
    assert!(gate.body.get("cache_prompt").is_none() && gate.body.get("id_slot").is_none());
    let (_, rec) = record(&out);
    assert!(
        step(&rec, "gate")["timings"]["predicted_n"]
            .as_u64()
            .unwrap()
            > 0
    );
}
