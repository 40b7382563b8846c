//! The diagnostics corpus: one small `.lex` file per mistake in `tests/diagnostics/`, each
//! starting with `// expect: E0xx[, E0yy]`, and its rendered diagnostics in a snapshot beside
//! it. Adding a case is writing one file and running `cargo insta review`.

use std::collections::BTreeSet;
use std::fs;

use camino::{Utf8Path, Utf8PathBuf};
use lexrun::check::check_path;
use lexrun::diagnostic::{render, Code};

fn cases() -> Vec<Utf8PathBuf> {
    let mut v: Vec<Utf8PathBuf> = fs::read_dir("tests/diagnostics")
        .expect("tests/diagnostics exists")
        .map(|e| Utf8PathBuf::from_path_buf(e.unwrap().path()).unwrap())
        .filter(|p| p.extension() == Some("lex"))
        .collect();
    v.sort();
    v
}

fn expected(path: &Utf8Path) -> BTreeSet<String> {
    let bytes = fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let line = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// expect:"))
        .unwrap_or_else(|| panic!("{path} must start with `// expect: E0xx`"));
    line.split(',').map(|c| c.trim().to_string()).collect()
}

#[test]
fn every_case_reports_exactly_its_codes() {
    let mut failures = Vec::new();
    for case in cases() {
        let want = expected(&case);
        let checked = check_path(&case);
        let got: BTreeSet<String> = checked
            .diagnostics
            .iter()
            .map(|d| d.code.id().to_string())
            .collect();
        if got != want {
            failures.push(format!("{case}: expected {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_case_matches_its_snapshot() {
    for case in cases() {
        let checked = check_path(&case);
        let rendered = render(&checked.diagnostics, &checked.sources, false);
        let name = case.file_stem().unwrap().to_string();
        insta::with_settings!({
            snapshot_path => "diagnostics",
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => format!("lexrun check {case}"),
        }, {
            insta::assert_snapshot!(name, rendered);
        });
    }
}

#[test]
fn the_corpus_covers_every_code_a_file_can_produce() {
    let covered: BTreeSet<String> = cases().iter().flat_map(|c| expected(c)).collect();
    // E016 is an unreadable file: covered by tests/cli.rs, since a corpus file is readable.
    let missing: Vec<&str> = Code::ALL
        .iter()
        .map(|c| c.id())
        // E100 is about `.test.lex` files: covered by tests/replay.rs.
        .filter(|id| *id != "E016" && *id != "E100" && !covered.contains(*id))
        .collect();
    assert!(missing.is_empty(), "no corpus case for {missing:?}");
    assert!(cases().len() >= 40);
}

#[test]
fn every_error_has_a_help_line_and_a_label() {
    for case in cases() {
        for d in check_path(&case).diagnostics {
            assert!(d.help.is_some(), "{case}: {} has no help", d.code);
            assert!(
                !d.labels.is_empty() && d.file.is_some(),
                "{case}: {} points nowhere",
                d.code
            );
        }
    }
}
