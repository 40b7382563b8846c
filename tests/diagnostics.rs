//! The diagnostics corpus: one small `.lex` (or `.test.lex`) file per mistake in
//! `tests/diagnostics/`, each starting with `// expect: E0xx[, E0yy] at line N` — the codes it
//! must report and the line of the case file the first diagnostic must point at — and its
//! rendered diagnostics in a snapshot beside it. A case with several mistakes says so on its
//! second line (`// mistakes: 3`). Adding a case is writing one file and running
//! `cargo insta review`.
//!
//! The corpus holds the language to its promises: no bad file passes silently, the first
//! diagnostic is on the line to fix, and one mistake gives at most three diagnostics.

use std::collections::BTreeSet;
use std::fs;

use camino::{Utf8Path, Utf8PathBuf};
use lexrun::check::check_path;
use lexrun::diagnostic::{render, Code};

fn cases() -> Vec<Utf8PathBuf> {
    let mut v: Vec<Utf8PathBuf> = fs::read_dir("tests/diagnostics")
        .expect("tests/diagnostics exists")
        .map(|e| Utf8PathBuf::from_path_buf(e.unwrap().path()).unwrap())
        .filter(|p| p.extension() == Some("lex") && p.is_file())
        .collect();
    v.sort();
    v
}

/// What a case's header promises.
struct Expect {
    codes: BTreeSet<String>,
    line: usize,
    mistakes: usize,
}

fn header(path: &Utf8Path) -> Expect {
    let bytes = fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    let first = lines
        .next()
        .and_then(|l| l.strip_prefix("// expect:"))
        .unwrap_or_else(|| panic!("{path} must start with `// expect: E0xx at line N`"));
    let (codes, line) = first
        .rsplit_once(" at line ")
        .unwrap_or_else(|| panic!("{path}: the header must end with `at line N`"));
    let mistakes = lines
        .next()
        .and_then(|l| l.strip_prefix("// mistakes:"))
        .map_or(1, |n| n.trim().parse().expect("a number of mistakes"));
    Expect {
        codes: codes.split(',').map(|c| c.trim().to_string()).collect(),
        line: line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{path}: `at line N`")),
        mistakes,
    }
}

fn expected(path: &Utf8Path) -> BTreeSet<String> {
    header(path).codes
}

fn check_case(path: &Utf8Path) -> lexrun::check::Checked {
    if path.as_str().ends_with(".test.lex") {
        lexrun::check::check_test_path(path)
    } else {
        check_path(path)
    }
}

/// The 1-based line a diagnostic's first label points at, in the case file itself (file 0).
fn first_line(checked: &lexrun::check::Checked) -> Option<usize> {
    let d = checked.diagnostics.first()?;
    if d.file != Some(0) {
        return None;
    }
    let at = d.labels.first()?.span.start;
    let text = &checked.sources.get(0).text;
    Some(
        text.as_bytes()[..at.min(text.len())]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1,
    )
}

#[test]
fn no_bad_file_is_silent_and_the_first_diagnostic_is_on_the_right_line() {
    let cases = cases();
    let mut silent = Vec::new();
    let mut wrong_line = Vec::new();
    let mut noisy = Vec::new();
    for case in &cases {
        let want = header(case);
        let checked = check_case(case);
        if checked.diagnostics.is_empty() {
            silent.push(case.to_string());
            continue;
        }
        let got = first_line(&checked);
        if got != Some(want.line) {
            wrong_line.push(format!("{case}: expected line {}, got {got:?}", want.line));
        }
        if checked.diagnostics.len() > 3 * want.mistakes {
            noisy.push(format!(
                "{case}: {} diagnostics for {} mistake(s)",
                checked.diagnostics.len(),
                want.mistakes
            ));
        }
    }
    let right = cases.len() - silent.len() - wrong_line.len();
    let share = 100.0 * right as f64 / cases.len() as f64;
    eprintln!(
        "diagnostics corpus: {} cases, {} silent, first diagnostic on the right line in {right} ({share:.1}%), {} with more than 3 per mistake",
        cases.len(),
        silent.len(),
        noisy.len()
    );
    assert!(silent.is_empty(), "silent: {silent:?}");
    assert!(noisy.is_empty(), "{}", noisy.join("\n"));
    assert!(share >= 98.0, "{}", wrong_line.join("\n"));
}

#[test]
fn every_case_reports_exactly_its_codes() {
    let mut failures = Vec::new();
    for case in cases() {
        let want = expected(&case);
        let checked = check_case(&case);
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
        let checked = check_case(&case);
        let rendered = render(&checked.diagnostics, &checked.sources, false);
        let name = case
            .file_name()
            .unwrap()
            .trim_end_matches(".lex")
            .to_string();
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
        .filter(|id| *id != "E016" && !covered.contains(*id))
        .collect();
    assert!(missing.is_empty(), "no corpus case for {missing:?}");
    assert!(cases().len() >= 200);
}

#[test]
fn every_error_has_a_help_line_and_a_label() {
    for case in cases() {
        for d in check_case(&case).diagnostics {
            assert!(d.help.is_some(), "{case}: {} has no help", d.code);
            assert!(
                !d.labels.is_empty() && d.file.is_some(),
                "{case}: {} points nowhere",
                d.code
            );
        }
    }
}
