//! `lexrun runs`: the runs the ledger holds.

use crate::support;

use support::{copy_dir, fresh_store, stderr, stdout, Lexrun};

#[test]
fn runs_lists_each_run_with_its_matter_status_and_unsupported_claims() {
    let lib = tempfile::tempdir().unwrap();
    copy_dir(std::path::Path::new("workflows"), lib.path());
    let store = fresh_store();
    let wf = lib.path().join("affidavit.lex");
    for (cassette, code) in [("affidavit-smith", 0), ("affidavit-fabricated", 1)] {
        let o = Lexrun::new()
            .args([
                "run",
                wf.to_str().unwrap(),
                "--store",
                store.to_str().unwrap(),
            ])
            .args([
                "--replay",
                lib.path()
                    .join(format!("cassettes/{cassette}.jsonl"))
                    .to_str()
                    .unwrap(),
            ])
            .output();
        assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    }
    let o = Lexrun::new()
        .args(["runs", "--store", store.to_str().unwrap()])
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = stdout(&o);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].starts_with("started (UTC)"), "{table}");
    // Newest first: the run whose fabricated citation blocked a step failed; the other is
    // done, with the one figure its verification flagged.
    let cells = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    let (newest, oldest) = (cells(lines[1]), cells(lines[2]));
    assert_eq!(
        newest[2..5],
        ["affidavit", "smith-v-acme", "failed"],
        "{table}"
    );
    assert!(newest[6].parse::<u32>().unwrap() > 0, "{table}");
    assert_eq!(
        oldest[2..7],
        ["affidavit", "smith-v-acme", "done", "1", "0"],
        "{table}"
    );
    assert!(newest[7].starts_with("run-"));

    let o = Lexrun::new()
        .args(["runs", wf.to_str().unwrap(), "--json"])
        .args(["--store", store.to_str().unwrap()])
        .output();
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 2, "{runs}");
    assert_eq!(runs[0]["status"], "failed");
    assert_eq!(runs[1]["matters"][0], "smith-v-acme");

    let o = Lexrun::new()
        .args(["runs", "summary", "--store", store.to_str().unwrap()])
        .output();
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).is_empty());
    assert!(
        stderr(&o).contains("no runs of `summary`"),
        "{}",
        stderr(&o)
    );
}
