//! A model server that misbehaves in the middle of a run: it dies mid-stream, answers a
//! schema stage with text that is not JSON, loops, or stops after no tokens at all. Each is
//! one clear line on the terminal and in the run's report (a failure for the first two, a
//! warning for the others, whose text is kept as it is), and the stages that finished before
//! it are kept, their outputs written.

mod support;
use support::{run_record, stderr, Lexrun};

use std::fs;
use std::time::Duration;

use support::servers::{Answer, Fake, Fault, Seen, Speaks};

const FACTS: &str = "The tenant paid $950.00 on May 2, 2024 (NOTE000001).";
const GATE: &str = r#"{"grounds": true, "reason": "A payment is shown (NOTE000001)."}"#;

/// A server that answers the summary and the gate well, and the draft with `draft`.
fn server(draft: impl Fn() -> Answer + Send + Sync + 'static) -> Fake {
    Fake::start(Speaks::Llama, Duration::ZERO, move |s: &Seen| {
        let p = s.prompt();
        if p.contains("Summarise the materials") {
            Answer {
                text: FACTS.into(),
                fault: None,
            }
        } else if p.contains("screening") {
            Answer {
                text: GATE.into(),
                fault: None,
            }
        } else {
            draft()
        }
    })
}

struct Ran {
    code: Option<i32>,
    err: String,
    report: String,
    rec: lexrun::run::RunRecord,
    out: tempfile::TempDir,
}

fn run(server: &Fake) -> Ran {
    let out = tempfile::tempdir().unwrap();
    let o = Lexrun::new()
        .args(["run", "tests/bad_answers/flow.lex", "--out"])
        .arg(out.path())
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .args(["--retries", "1", "--backoff-ms", "10"])
        .output();
    let (run, rec) = run_record(out.path());
    Ran {
        code: o.status.code(),
        err: stderr(&o),
        report: fs::read_to_string(run.join("report.md")).unwrap(),
        rec,
        out,
    }
}

/// The stages before the bad answer finished, and their output is written.
fn earlier_stages_kept(r: &Ran) {
    let m = &r.rec.matters[0];
    for name in ["facts", "check"] {
        let s = m.steps.iter().find(|s| s.name == name).unwrap();
        assert_eq!(
            s.status,
            Some(lexrun::run::Status::Done),
            "{name}\n{}",
            r.err
        );
    }
    let facts = fs::read_to_string(r.out.path().join("facts.md")).unwrap();
    assert!(facts.contains(FACTS), "{facts}");
}

#[test]
fn a_server_that_dies_mid_stream_fails_its_stage_clearly() {
    let s = server(|| Answer {
        text: "1. I paid $950.00 on May 2, 2024 and then".into(),
        fault: Some(Fault::CutAfter(3)),
    });
    let r = run(&s);
    assert_eq!(r.code, Some(1), "{}", r.err);
    let line = r
        .err
        .lines()
        .find(|l| l.starts_with("error: step `draft` failed"))
        .unwrap_or_else(|| panic!("no error line for the draft:\n{}", r.err));
    assert!(line.contains("cut off"), "{line}");
    assert!(
        r.report.contains("draft") && r.report.contains("cut off"),
        "{}",
        r.report
    );
    earlier_stages_kept(&r);
    assert!(!r.out.path().join("draft.md").exists());
}

#[test]
fn a_schema_stage_answered_with_prose_fails_after_one_corrective_retry() {
    let s = Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| Answer {
        text: if s.prompt().contains("Summarise the materials") {
            FACTS.into()
        } else {
            "I think there are grounds, yes.".into()
        },
        fault: None,
    });
    let r = run(&s);
    assert_eq!(r.code, Some(1), "{}", r.err);
    let line = r
        .err
        .lines()
        .find(|l| l.starts_with("error: step `check` failed"))
        .unwrap_or_else(|| panic!("no error line for the gate:\n{}", r.err));
    assert!(
        line.contains("not valid JSON") && line.contains("after a corrective retry"),
        "{line}"
    );
    assert!(r.report.contains("not valid JSON"), "{}", r.report);
    let facts = fs::read_to_string(r.out.path().join("facts.md")).unwrap();
    assert!(facts.contains(FACTS), "the summary is kept: {facts}");
}

#[test]
fn a_model_that_loops_is_cut_with_a_note_and_its_prompt_still_counted() {
    let para = "I paid the deposit and the landlord kept it without any reason that the lease allows, and I asked for it back. ";
    let looping = format!("1. {}", para.repeat(8));
    let s = server(move || Answer {
        text: looping.clone(),
        fault: None,
    });
    let r = run(&s);
    assert_eq!(r.code, Some(0), "{}", r.err);
    let note = "the model was repeating itself";
    assert!(
        r.err
            .lines()
            .any(|l| l.contains("warning draft") && l.contains(note)),
        "{}",
        r.err
    );
    assert!(r.report.contains(note), "{}", r.report);
    // Cut before the server's last event, the answer still has its prompt's timings.
    let draft = r.rec.matters[0]
        .steps
        .iter()
        .find(|s| s.name == "draft")
        .unwrap();
    let timings = serde_json::to_value(draft).unwrap();
    let prompt_n = timings["timings"]["prompt_n"].as_u64().unwrap_or(0);
    assert!(
        prompt_n > 0,
        "a cut answer reports no prompt tokens: {timings}"
    );
    assert!(!r.err.contains("draft: 0 prompt tokens"), "{}", r.err);
    // Kept up to the second time round, not run into the cap.
    let text = fs::read_to_string(r.out.path().join("draft.md")).unwrap();
    assert_eq!(text.matches("landlord kept it").count(), 1, "{text}");
    earlier_stages_kept(&r);
}

#[test]
fn a_model_that_says_nothing_is_said_once_and_the_run_goes_on() {
    let s = server(|| Answer {
        text: String::new(),
        fault: None,
    });
    let r = run(&s);
    assert_eq!(r.code, Some(0), "{}", r.err);
    let note = "the model answered with no text (0 tokens, finish `stop`)";
    let lines: Vec<&str> = r.err.lines().filter(|l| l.contains(note)).collect();
    assert_eq!(lines.len(), 1, "{}", r.err);
    assert!(lines[0].contains("warning draft"), "{}", lines[0]);
    assert!(r.report.contains(note), "{}", r.report);
    earlier_stages_kept(&r);
}
