//! A draft its verification blocks still leaves a document a person can read, and one nobody
//! can file: `<name>.blocked-draft.docx` beside the declared path (which stays empty), with a
//! notice first, a mark on every page, no jurat, each claim that blocked it removed and marked
//! by its number in the verification appendix, and the appendix of the round that decided.
//! The Word file is read back with python-docx, a reader that is not lexrun's.

use crate::support;
use support::{read_docx, run_record, stderr, Lexrun};

use std::fs;
use std::process::Command;
use std::time::Duration;

use support::servers::{Answer, Fake, Speaks};

/// The first draft misquotes the landlord: the quotation rule sends it back once.
const FIRST: &str = "1. I rented the flat at 4 Quay Street from Harbour Lets Ltd (BLK000001).\n\n\
2. The landlord wrote: \"We will keep the whole deposit for the carpet.\"\n";

/// The revision quotes rightly, but invents a date and an amount (which block) and cites a
/// page that does not exist (which is only flagged).
const REVISED: &str =
    "1. I rented the flat at 4 Quay Street from Harbour Lets Ltd (BLK000001).\n\n\
2. I paid a deposit of $1,200.00 on January 5, 2024.\n\n\
3. I moved out on March 3, 2031, and the landlord owes me $7,450.00 (BLK000009).\n\n\
4. The landlord wrote: \"We will return the deposit within 14 days.\"\n";

#[test]
fn a_blocked_affidavit_is_written_as_a_marked_draft_without_the_claims_that_blocked_it() {
    let server = Fake::start(Speaks::Llama, Duration::ZERO, |seen| Answer {
        text: if seen.prompt().contains("not supported by the evidence") {
            REVISED.into()
        } else {
            FIRST.into()
        },
        fault: None,
    });
    let out = tempfile::tempdir().unwrap();
    let o = Lexrun::new()
        .args(["run", "tests/blocked_draft/blocked.lex", "--out"])
        .arg(out.path())
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .output();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");

    // Nothing is written at a declared path; the documents are written as blocked drafts.
    for declared in ["affidavit.docx", "affidavit.pdf", "affidavit.md"] {
        assert!(
            !out.path().join(declared).exists(),
            "{declared} written\n{err}"
        );
    }
    assert!(!out.path().join("affidavit.blocked-draft.md").exists());
    let docx = out.path().join("affidavit.blocked-draft.docx");
    let pdf = out.path().join("affidavit.blocked-draft.pdf");
    assert!(docx.exists() && pdf.exists(), "{err}");
    assert!(
        err.contains("wrote ")
            && err.contains("affidavit.blocked-draft.docx — written as a blocked draft, not for filing: 2 unsupported claims removed"),
        "{err}"
    );
    assert!(
        err.contains("affidavit.docx — not written: verification blocked it (its blocked draft is affidavit.blocked-draft.docx)"),
        "{err}"
    );

    let d = read_docx(&docx);
    let paragraphs: Vec<&str> = d["paragraphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let all = paragraphs.join("\n");
    // The notice comes before everything, the caption included.
    assert_eq!(
        paragraphs[0], "BLOCKED DRAFT — NOT FOR FILING OR SIGNATURE",
        "{all}"
    );
    assert!(
        paragraphs[1].contains("2 claims in it are not supported by the matter's sources"),
        "{all}"
    );
    assert!(d["title"]
        .as_str()
        .unwrap()
        .starts_with("BLOCKED DRAFT — NOT FOR FILING"));
    let footer = d["footer"].to_string();
    assert!(
        footer.contains("BLOCKED DRAFT — NOT FOR FILING — page"),
        "{footer}"
    );
    // What blocked it is gone from the text and marked by its row in the appendix; what is
    // supported, and what a `flag` rule lets through, stays.
    assert!(
        !all.contains("March 3, 2031") && !all.contains("7,450"),
        "{all}"
    );
    let table = &d["tables"].as_array().unwrap().last().unwrap();
    let rows: Vec<Vec<&str>> = table
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        rows[0],
        ["#", "kind", "claim", "status", "source", "page", "Bates", "detail"]
    );
    let row = |claim: &str| {
        rows.iter()
            .find(|r| r[2] == claim)
            .unwrap_or_else(|| panic!("no row for {claim}: {rows:?}"))
    };
    for (claim, kind) in [("March 3, 2031", "date"), ("$7,450.00", "amount")] {
        let r = row(claim);
        assert_eq!((r[1], r[3]), (kind, "unsupported"), "{r:?}");
        assert!(r[7].starts_with("removed from this draft"), "{r:?}");
        let marker = format!("[removed: unsupported {kind} — appendix no. {}]", r[0]);
        assert!(all.contains(&marker), "no {marker:?} in\n{all}");
    }
    assert!(
        all.contains("I paid a deposit of $1,200.00 on January 5, 2024."),
        "{all}"
    );
    assert!(all.contains("(BLK000009)"), "the flagged cite stays: {all}");
    assert!(!row("BLK000009")[7].contains("removed"));
    assert_eq!(row("January 5, 2024")[3], "supported");
    // The appendix is the deciding round's: the first draft's misquotation is not in it.
    assert!(
        !rows.iter().any(|r| r[2].contains("whole deposit")),
        "{rows:?}"
    );
    assert!(all.contains("This draft was blocked"), "{all}");
    // Not to be signed: no jurat.
    assert!(!all.contains("Subscribed and sworn"), "{all}");

    // The PDF carries the same notice.
    let text = String::from_utf8_lossy(
        &Command::new("pdftotext")
            .arg(&pdf)
            .arg("-")
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    assert!(text.contains("BLOCKED DRAFT — NOT FOR FILING"), "{text}");
    assert!(!text.contains("March 3, 2031"), "{text}");

    // The run's records say the same, and the blocked draft is lexrun's in the ledger's eyes
    // (its manifest beside it, like any output).
    let (run, rec) = run_record(out.path());
    let outputs = &rec.matters[0].outputs;
    let draft = outputs
        .iter()
        .find(|o| o.path.ends_with("affidavit.blocked-draft.docx"))
        .unwrap();
    assert!(
        draft.status.starts_with("written as a blocked draft"),
        "{outputs:?}"
    );
    assert!(out
        .path()
        .join("affidavit.blocked-draft.docx.provenance.json")
        .exists());
    let md = fs::read_to_string(run.join("report.md")).unwrap();
    assert!(
        md.contains("affidavit.blocked-draft.docx` from `draft`: written as a blocked draft"),
        "{md}"
    );
}

#[test]
fn a_draft_that_passes_has_no_notice() {
    let server = Fake::start(Speaks::Llama, Duration::ZERO, |_| Answer {
        text: "1. I paid a deposit of $1,200.00 on January 5, 2024 (BLK000001).\n".into(),
        fault: None,
    });
    let out = tempfile::tempdir().unwrap();
    let o = Lexrun::new()
        .args(["run", "tests/blocked_draft/blocked.lex", "--out"])
        .arg(out.path())
        .args(["--endpoint", &format!("gpu={}", server.url)])
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!out.path().join("affidavit.blocked-draft.docx").exists());
    let d = read_docx(&out.path().join("affidavit.docx"));
    let all = d["paragraphs"].to_string();
    assert!(
        !all.contains("BLOCKED") && !d["footer"].to_string().contains("BLOCKED"),
        "{all}"
    );
    assert!(all.contains("Subscribed and sworn"), "{all}");
}
