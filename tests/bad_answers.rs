//! A model server that misbehaves in the middle of a run: it dies mid-stream, answers a
//! schema stage with text that is not JSON, loops, streams without end, stops after no tokens
//! at all, or leaves blanks to fill. Each is one clear line on the terminal and in the run's
//! report, and the stages that finished before it are kept, their outputs written. None ends
//! as a clean finish: an empty answer is asked for again, then fails; a cut answer or one with
//! placeholders is incomplete, written only as a marked draft, and the run exits 4.

use crate::support;
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
fn a_model_that_loops_is_cut_and_its_stage_is_incomplete_not_done() {
    let para = "I paid the deposit and the landlord kept it without any reason that the lease allows, and I asked for it back. ";
    let looping = format!("1. {}", para.repeat(8));
    let s = server(move || Answer {
        text: looping.clone(),
        fault: None,
    });
    let r = run(&s);
    assert_eq!(
        r.code,
        Some(4),
        "a cut answer is not a clean finish:\n{}",
        r.err
    );
    let note = "the model was repeating itself";
    assert!(
        r.err
            .lines()
            .any(|l| l.contains("warning draft") && l.contains(note)),
        "{}",
        r.err
    );
    assert!(
        r.err
            .lines()
            .any(|l| l.starts_with("incomplete: step `draft`") && l.contains("cut")),
        "{}",
        r.err
    );
    assert!(!r.err.contains("every output written"), "{}", r.err);
    assert!(r.report.contains(note), "{}", r.report);
    assert!(r.report.contains("| incomplete |"), "{}", r.report);
    // Cut before the server's last event, the answer still has its prompt's timings.
    let draft = r.rec.matters[0]
        .steps
        .iter()
        .find(|s| s.name == "draft")
        .unwrap();
    assert_eq!(draft.status, Some(lexrun::run::Status::Incomplete));
    assert_eq!(r.rec.matters[0].status, lexrun::run::Status::Incomplete);
    let timings = serde_json::to_value(draft).unwrap();
    let prompt_n = timings["timings"]["prompt_n"].as_u64().unwrap_or(0);
    assert!(
        prompt_n > 0,
        "a cut answer reports no prompt tokens: {timings}"
    );
    assert!(!r.err.contains("draft: 0 prompt tokens"), "{}", r.err);
    // Nothing at the declared path; the marked draft beside it, kept up to the second time
    // round, not run into the cap.
    assert!(!r.out.path().join("draft.md").exists());
    let text = fs::read_to_string(r.out.path().join("draft.incomplete-draft.md")).unwrap();
    assert!(
        text.starts_with(
            "> **INCOMPLETE DRAFT — NOT FOR FILING**: `draft` is incomplete: its answer was cut"
        ),
        "{text}"
    );
    assert_eq!(text.matches("landlord kept it").count(), 1, "{text}");
    let out = &r.rec.matters[0].outputs;
    assert!(
        out.iter().any(|o| o.path.ends_with("draft.md")
            && o.status.starts_with("not written: `draft` is incomplete")),
        "{out:?}"
    );
    earlier_stages_kept(&r);
}

#[test]
fn a_stream_without_end_never_exits_0() {
    // A server that would stream one sentence for ever (here: ten thousand times, slowly):
    // the run ends in an incomplete stage or an error, never exit 0.
    let endless =
        "The tenant asks for the deposit back, and the landlord does not answer the letter. "
            .repeat(10_000);
    let s = Fake::start(Speaks::Llama, Duration::from_millis(1), move |s: &Seen| {
        let p = s.prompt();
        let text = if p.contains("Summarise the materials") {
            FACTS.to_string()
        } else if p.contains("screening") {
            GATE.to_string()
        } else {
            endless.clone()
        };
        Answer { text, fault: None }
    });
    let r = run(&s);
    assert!(
        matches!(r.code, Some(1) | Some(4)),
        "an endless stream ended {:?}:\n{}",
        r.code,
        r.err
    );
    let draft = r.rec.matters[0]
        .steps
        .iter()
        .rfind(|s| s.name == "draft")
        .unwrap();
    assert!(
        matches!(
            draft.status,
            Some(lexrun::run::Status::Incomplete | lexrun::run::Status::Failed)
        ),
        "{draft:?}"
    );
    assert!(!r.out.path().join("draft.md").exists());
}

#[test]
fn a_model_that_says_nothing_is_asked_once_more_then_fails_its_stage() {
    let s = server(|| Answer {
        text: String::new(),
        fault: None,
    });
    let r = run(&s);
    assert_eq!(r.code, Some(1), "an empty answer is not done:\n{}", r.err);
    let asked = s
        .requests()
        .iter()
        .filter(|x| x.prompt().contains("Write the affidavit"))
        .count();
    assert_eq!(asked, 2, "the empty answer is asked for once more");
    assert!(
        r.err.contains(
            "the model answered with no text (0 tokens, finish `stop`); asking once more"
        ),
        "{}",
        r.err
    );
    let line = r
        .err
        .lines()
        .find(|l| l.starts_with("error: step `draft` failed"))
        .unwrap_or_else(|| panic!("no error line for the draft:\n{}", r.err));
    assert!(line.contains("answered with no text twice"), "{line}");
    assert!(
        r.report.contains("answered with no text twice"),
        "{}",
        r.report
    );
    assert!(!r.out.path().join("draft.md").exists());
    earlier_stages_kept(&r);
}

#[test]
fn a_draft_with_blanks_to_fill_is_incomplete_and_written_only_as_a_marked_draft() {
    let s = server(|| {
        Answer {
        text: "On [Date], [Demonstrator's Name] showed the unit. I paid $950.00 on May 2, 2024 (NOTE000001). Signed: ________ on XX/XX/XXXX.".into(),
        fault: None,
    }
    });
    let r = run(&s);
    assert_eq!(r.code, Some(4), "{}", r.err);
    let line = r
        .err
        .lines()
        .find(|l| l.starts_with("incomplete: step `draft`"))
        .unwrap_or_else(|| panic!("no incomplete line for the draft:\n{}", r.err));
    for blank in [
        "`[Date]`",
        "`[Demonstrator's Name]`",
        "`________`",
        "`XX/XX/XXXX`",
    ] {
        assert!(line.contains(blank), "{blank} in {line}");
    }
    assert!(r.err.contains("written only as marked drafts"), "{}", r.err);
    assert!(!r.out.path().join("draft.md").exists());
    let text = fs::read_to_string(r.out.path().join("draft.incomplete-draft.md")).unwrap();
    assert!(
        text.contains("INCOMPLETE DRAFT") && text.contains("placeholder"),
        "{text}"
    );
    assert!(text.contains("I paid $950.00"), "{text}");
    earlier_stages_kept(&r);
}

#[test]
fn a_cut_answer_from_lexruns_cache_is_still_incomplete() {
    let para = "I paid the deposit and the landlord kept it without any reason that the lease allows, and I asked for it back. ";
    let looping = format!("1. {}", para.repeat(8));
    let s = server(move || Answer {
        text: looping.clone(),
        fault: None,
    });
    let store = tempfile::tempdir().unwrap();
    let mut codes = Vec::new();
    let mut cached = Vec::new();
    for _ in 0..2 {
        let out = tempfile::tempdir().unwrap();
        let o = Lexrun::new()
            .args(["run", "tests/bad_answers/flow.lex", "--out"])
            .arg(out.path())
            .arg("--store")
            .arg(store.path())
            .args(["--endpoint", &format!("gpu={}", s.url)])
            .output();
        let (_, rec) = run_record(out.path());
        let draft = rec.matters[0]
            .steps
            .iter()
            .find(|s| s.name == "draft")
            .unwrap()
            .clone();
        codes.push((o.status.code(), draft.status));
        cached.push(draft.cached);
    }
    assert_eq!(cached, vec![false, true]);
    assert_eq!(
        codes,
        vec![(Some(4), Some(lexrun::run::Status::Incomplete)); 2]
    );
}

/// The workflow copied into a folder of its own with `edit` applied to its text; run against
/// `server`.
fn run_edited(server: &Fake, edit: impl Fn(String) -> String) -> (Ran, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    support::copy_dir(std::path::Path::new("tests/bad_answers"), dir.path());
    let flow = dir.path().join("flow.lex");
    fs::write(&flow, edit(fs::read_to_string(&flow).unwrap())).unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = Lexrun::new()
        .args(["run", "flow.lex", "--out"])
        .arg(out.path())
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .current_dir(dir.path())
        .output();
    let (run, rec) = run_record(out.path());
    (
        Ran {
            code: o.status.code(),
            err: stderr(&o),
            report: fs::read_to_string(run.join("report.md")).unwrap(),
            rec,
            out,
        },
        dir,
    )
}

#[test]
fn a_long_draft_that_passes_with_nothing_to_check_says_so() {
    // 352 words of prose that never repeats itself, and no date, amount, Bates number,
    // citation or quotation.
    let words = [
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "polite",
        "short",
        "long",
        "angry",
        "careful",
        "hopeful",
        "formal",
        "brief",
        "urgent",
        "patient",
        "detailed",
        "handwritten",
        "typed",
        "emailed",
        "final",
        "calm",
        "plain",
        "clear",
        "firm",
        "kind",
        "weary",
        "last",
    ];
    let prose: String = words
        .iter()
        .map(|w| format!("The {w} letter asked for repairs; the landlord sent no reply. "))
        .collect();
    let s = server(move || Answer {
        text: prose.clone(),
        fault: None,
    });
    let (r, _dir) = run_edited(&s, |flow| {
        flow.replace(
            "output \"facts.md\"",
            "verify draft against file {\n  rules std.verify.strict\n  on failure block\n}\n\noutput \"facts.md\"",
        )
        .replace("use std.prompts", "use std.prompts\nuse std.verify")
        .replace("from draft unverified", "from draft")
    });
    assert_eq!(r.code, Some(0), "{}", r.err);
    let v = &r.rec.matters[0].verifications;
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].claims, 0);
    let note = v[0].note.as_deref().unwrap_or_default();
    assert!(
        note.contains("passed with 0 checkable claims in 352 words"),
        "{note}"
    );
    assert!(
        r.err
            .contains("warning verify draft: passed with 0 checkable claims"),
        "{}",
        r.err
    );
    assert!(
        r.report
            .contains("almost nothing in this text cites the record"),
        "{}",
        r.report
    );
    let vr = fs::read_to_string(&v[0].report).unwrap();
    assert!(
        vr.contains("**Note:** passed with 0 checkable claims"),
        "{vr}"
    );
}

#[test]
fn an_unverified_document_says_so_and_an_incomplete_one_is_a_marked_draft() {
    let s = server(|| Answer {
        text: "Dear [Name],\n\nThe tenant paid $950.00 on May 2, 2024 (NOTE000001).\n".into(),
        fault: None,
    });
    let (r, _dir) = run_edited(&s, |flow| {
        flow.replace(
            "output \"draft.md\" from draft unverified",
            "output \"draft.docx\" from draft unverified",
        )
    });
    assert_eq!(r.code, Some(4), "{}", r.err);
    assert!(!r.out.path().join("draft.docx").exists());
    let d = support::read_docx(&r.out.path().join("draft.incomplete-draft.docx"));
    let text = d["paragraphs"].to_string();
    assert!(
        text.contains("INCOMPLETE DRAFT — NOT FOR FILING OR SIGNATURE")
            && text.contains("`[Name]`"),
        "{text}"
    );
    assert!(
        d["footer"]
            .to_string()
            .contains("INCOMPLETE DRAFT — NOT FOR FILING"),
        "{d}"
    );
    assert!(
        text.contains("Not verified: no `verify` block checks the stage `draft`"),
        "{text}"
    );
    // The Markdown of an unverified stage says it at its end.
    let facts = fs::read_to_string(r.out.path().join("facts.md")).unwrap();
    assert!(facts.contains("**Not verified:"), "{facts}");
}
