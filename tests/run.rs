//! Running workflows: the CPU-only exhibits example end to end over its sample matter, run
//! records, declared outputs, and the refusals and failures a user can meet.

use std::fs;
use std::path::Path;

use crate::support;
use support::{copy_dir, lexrun, run_record, Lexrun};

#[test]
fn the_exhibits_workflow_runs_end_to_end() {
    let out = tempfile::tempdir().unwrap();
    let o = lexrun(&[
        "run",
        "workflows/exhibits.lex",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for f in ["exhibits-binder.pdf", "exhibit-index.md", "draft-check.md"] {
        assert!(out.path().join(f).is_file(), "{f} was not written");
    }
    let index = fs::read_to_string(out.path().join("exhibit-index.md")).unwrap();
    assert!(
        index.contains("| A | client letter scan | SMITH000001 | 1 |"),
        "{index}"
    );
    assert!(
        index.contains("| D | invoices | SMITH000006–SMITH000007 | 2 |"),
        "{index}"
    );
    let check = fs::read_to_string(out.path().join("draft-check.md")).unwrap();
    // The sample draft's invented case; its execution date is the document's own; everything
    // else, each on the page its sentence cites, including what only the OCR'd scan shows
    // (January 3, 2024), is supported.
    assert!(check.contains("21 supported, 1 unsupported"), "{check}");
    assert!(
        check.contains(
            "Dates of the document itself, not checked against the evidence: March 18, 2024"
        ),
        "{check}"
    );
    assert!(check.contains("10 Cal. 3d 616"), "{check}");
    let (run, record) = run_record(out.path());
    let steps: Vec<&str> = record.matters[0]
        .steps
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(steps, vec!["stamped", "binder", "index", "text", "check"]);
    assert_eq!(record.workflow, "exhibits");
    assert!(run.join("stamped/bates-map.json").is_file());
    // The check's review page, with the scanned letter's page as an image, and the run's
    // index of review pages.
    let page = fs::read_to_string(run.join("check/report.html")).unwrap();
    assert!(page.contains("<!-- lexrun:provenance kind=review run=run-"));
    assert!(page.contains("\"img\":\"data:image/jpeg;base64,"));
    let index = fs::read_to_string(run.join("review.html")).unwrap();
    assert!(index.contains("<a href=\"check/report.html\">"), "{index}");
    // `lexrun FILE.lex` is the same command, writing to `out/` beside the workflow: run over
    // a private copy of the example and its matter.
    let copy = tempfile::tempdir().unwrap();
    fs::copy("workflows/exhibits.lex", copy.path().join("exhibits.lex")).unwrap();
    copy_dir(
        Path::new("workflows/matters/smith-v-acme"),
        &copy.path().join("matters/smith-v-acme"),
    );
    let o = Lexrun::new()
        .current_dir(copy.path())
        .arg("exhibits.lex")
        .output();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(copy.path().join("out/exhibits-binder.pdf").is_file());
}

#[test]
fn refusals_and_failures() {
    let out = tempfile::tempdir().unwrap();
    let o = lexrun(&[
        "run",
        "workflows/exhibits.lex",
        "--matter",
        "no/such/matter",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no/such/matter"));

    // A matter without the draft the verify-draft step checks: that step fails, exit 1.
    let matter = tempfile::tempdir().unwrap();
    fs::create_dir(matter.path().join("exhibits")).unwrap();
    for f in ["02-lease.pdf", "04-invoices.pdf"] {
        fs::copy(
            format!("workflows/matters/smith-v-acme/exhibits/{f}"),
            matter.path().join("exhibits").join(f),
        )
        .unwrap();
    }
    let o = lexrun(&[
        "run",
        "workflows/exhibits.lex",
        "--matter",
        matter.path().to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("step `check` failed") && err.contains("affidavit-draft.md"),
        "{err}"
    );

    let o = lexrun(&["run", "tests/diagnostics/stage-cycle.lex"]);
    assert_eq!(o.status.code(), Some(1), "a file with errors is not run");
}

/// The bad-answers workflow copied into a folder of its own, its first stage's prompt a
/// letter that reads the matter's record, and the matter's record as given (none: `None`).
fn letter_workflow(record: Option<(&str, &str)>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(Path::new("tests/bad_answers"), dir.path());
    let flow = fs::read_to_string(dir.path().join("flow.lex")).unwrap().replacen(
        "  prompt std.prompts.summary\n",
        "  prompt \"\"\"\n    {{evidence}}\n    Write to {{matter.addressee}} for {{matter.client}} about what is owed.\n  \"\"\"\n",
        1,
    );
    fs::write(dir.path().join("flow.lex"), flow).unwrap();
    if let Some((name, text)) = record {
        fs::write(dir.path().join("matter").join(name), text).unwrap();
    }
    dir
}

#[test]
fn a_template_reads_the_matters_own_record_and_a_broken_record_names_its_line() {
    use std::time::Duration;
    use support::servers::{Answer, Fake, Seen, Speaks};
    let server = Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| Answer {
        text: if s.prompt().contains("screening") {
            r#"{"grounds": true, "reason": "A payment is shown (NOTE000001)."}"#.into()
        } else {
            "The tenant paid $950.00 on May 2, 2024 (NOTE000001).".into()
        },
        fault: None,
    });
    let run = |dir: &Path| {
        let out = tempfile::tempdir().unwrap();
        let o = Lexrun::new()
            .args(["run", "flow.lex", "--out"])
            .arg(out.path())
            .args(["--endpoint", &format!("gpu={}", server.url)])
            .current_dir(dir)
            .output();
        (o, out)
    };
    // matter.toml: its fields in the prompt.
    let dir = letter_workflow(Some((
        "matter.toml",
        "client = \"Bright Dental LLC\"\naddressee = \"Harbor Supply Co.\"\n",
    )));
    let (o, _out) = run(dir.path());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(0), "{err}");
    let asked = server.requests();
    assert!(
        asked.iter().any(|r| r
            .prompt()
            .contains("Write to Harbor Supply Co. for Bright Dental LLC about")),
        "{:?}",
        asked.iter().map(|r| r.prompt()).collect::<Vec<_>>()
    );
    // matter.json works the same.
    let before = server.requests().len();
    let dir = letter_workflow(Some((
        "matter.json",
        r#"{"client": "Bright Dental LLC", "addressee": "Harbor Supply Co."}"#,
    )));
    let (o, _out) = run(dir.path());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(server.requests().len() > before);
    // A record with a mistake: the run does not start, and the error names file and line.
    let before = server.requests().len();
    let dir = letter_workflow(Some((
        "matter.toml",
        "client = \"Bright Dental LLC\"\naddressee = Harbor Supply Co.\n",
    )));
    let (o, _out) = run(dir.path());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("matter.toml") && err.contains("line 2"),
        "{err}"
    );
    assert_eq!(server.requests().len(), before, "no model was asked");
    // No record: the stage fails saying which field to add, never a prompt with a hole.
    let dir = letter_workflow(None);
    let (o, _out) = run(dir.path());
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`{{matter.addressee}}`") && err.contains("matter.toml"),
        "{err}"
    );
}

#[test]
fn a_source_stamped_with_its_declared_prefix_keeps_its_short_numbers() {
    use std::time::Duration;
    use support::servers::{Answer, Fake, Seen, Speaks};
    let server = Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| Answer {
        text: if s.prompt().contains("screening") {
            r#"{"grounds": true, "reason": "The clinic has not paid (NOTE0042)."}"#.into()
        } else {
            "The clinic has not paid (NOTE0042).".into()
        },
        fault: None,
    });
    let dir = tempfile::tempdir().unwrap();
    copy_dir(Path::new("tests/bad_answers"), dir.path());
    let flow = dir.path().join("flow.lex");
    let text = fs::read_to_string(&flow)
        .unwrap()
        .replacen("width 6", "width 4", 1)
        .replacen(
            "output \"facts.md\"",
            "verify facts against file {\n  bates must exist\n  on failure block\n}\n\noutput \"facts.md\"",
            1,
        );
    fs::write(&flow, text).unwrap();
    // Stamped already, four digits wide, with the prefix the workflow declares.
    let email = dir.path().join("matter/intake/01-note.txt");
    fs::write(
        &email,
        "Dear Ms. Lee,\n\nThe clinic has not paid.\n\nNOTE0042\n",
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = Lexrun::new()
        .args(["run", "flow.lex", "--out"])
        .arg(out.path())
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .current_dir(dir.path())
        .output();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (run, rec) = run_record(out.path());
    let prompt = fs::read_to_string(run.join("facts/prompt.md")).unwrap();
    assert!(prompt.contains("· 1 page · NOTE0042 ==="), "{prompt}");
    assert!(!prompt.contains("NOTE0001"), "renumbered: {prompt}");
    let v = &rec.matters[0].verifications;
    assert_eq!((v[0].claims, v[0].unsupported), (1, 0), "{v:?}");
}

#[test]
fn a_bates_source_without_stamps_is_numbered_page_by_page_and_an_invoice_number_is_no_stamp() {
    use std::time::Duration;
    use support::servers::{Answer, Fake, Seen, Speaks};
    let server = Fake::start(Speaks::Llama, Duration::ZERO, |s: &Seen| Answer {
        text: if s.prompt().contains("screening") {
            r#"{"grounds": true, "reason": "Two invoices are unpaid (NOTE000001)."}"#.into()
        } else {
            "Two invoices are unpaid (NOTE000001).".into()
        },
        fault: None,
    });
    let dir = tempfile::tempdir().unwrap();
    copy_dir(Path::new("tests/bad_answers"), dir.path());
    // The summary is verified against the source: its Bates cite must exist.
    let flow = dir.path().join("flow.lex");
    let text = fs::read_to_string(&flow).unwrap().replacen(
        "output \"facts.md\"",
        "verify facts against file {\n  bates must exist\n  on failure block\n}\n\noutput \"facts.md\"",
        1,
    );
    fs::write(&flow, text).unwrap();
    // The client's email, unstamped, ending in the invoice numbers it is about.
    let email = dir.path().join("matter/intake/01-note.txt");
    let original = "Dear Ms. Lee,\n\nThe clinic has not paid. Please see the attached.\n\nSubject: Invoices BD-1057 and BD-1073\n";
    fs::write(&email, original).unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = Lexrun::new()
        .args(["run", "flow.lex", "--out"])
        .arg(out.path())
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .current_dir(dir.path())
        .output();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (run, _) = run_record(out.path());
    let prompt = fs::read_to_string(run.join("facts/prompt.md")).unwrap();
    // `sources file { … bates "NOTE" start 1 width 6 }`: the page is numbered in what the
    // model reads, at its foot and in its header; the invoice number is not its stamp.
    assert!(
        prompt.contains("=== file · intake/01-note.txt · 1 page · NOTE000001 ==="),
        "{prompt}"
    );
    assert!(
        prompt.contains("Subject: Invoices BD-1057 and BD-1073\n\nNOTE000001"),
        "{prompt}"
    );
    assert!(!prompt.contains("BD1073"), "{prompt}");
    // The verifier's index and the review page know the number too.
    let (_, rec) = run_record(out.path());
    let v = &rec.matters[0].verifications;
    assert_eq!((v[0].claims, v[0].unsupported), (1, 0), "{v:?}");
    let page = fs::read_to_string(run.join("verify-facts/report.html")).unwrap();
    assert!(
        page.contains("NOTE000001"),
        "the review page shows the page's number"
    );
    // The client's file is never touched.
    assert_eq!(fs::read_to_string(&email).unwrap(), original);
}
