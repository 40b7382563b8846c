//! `lexrun fmt`: the canonical layout of every example, stdlib and diagnostic-corpus file that
//! parses (insta snapshots in `tests/fmt/`), idempotence, plans unchanged by formatting, and
//! the command's `--check` mode.

use crate::support;

use std::path::{Path, PathBuf};

use camino::Utf8Path;
use lexrun::editor::fmt_files::{discover, format_file};
use proptest::prelude::*;

fn corpus() -> Vec<PathBuf> {
    discover(&[
        PathBuf::from("workflows"),
        PathBuf::from("stdlib"),
        PathBuf::from("tests/diagnostics"),
        PathBuf::from("tests/runtime"),
    ])
}

fn snapshot_name(p: &Path) -> String {
    p.to_string_lossy()
        .trim_end_matches(".lex")
        .replace(['/', '.'], "-")
}

fn plan_hash(path: &Path, text: &str) -> Option<String> {
    let path = Utf8Path::from_path(path).unwrap();
    let checked = lexrun::check::check_bytes(path, text.as_bytes().to_vec());
    checked.workflow.map(|w| lexrun::plan::lower(&w).hash)
}

#[test]
fn every_file_that_parses_has_its_layout_snapshot() {
    let mut refused = Vec::new();
    for path in corpus() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            refused.push(format!("{} (not UTF-8)", path.display()));
            continue;
        };
        match format_file(&path, &text, false) {
            Ok(formatted) => {
                insta::with_settings!({
                    snapshot_path => "fmt",
                    prepend_module_to_snapshot => false,
                    omit_expression => true,
                    info => &path.display().to_string(),
                }, {
                    insta::assert_snapshot!(snapshot_name(&path), formatted);
                });
            }
            Err(_) => refused.push(path.display().to_string()),
        }
    }
    // What does not parse is left alone; the list changes only when the corpus does.
    insta::with_settings!({snapshot_path => "fmt", prepend_module_to_snapshot => false, omit_expression => true}, {
        insta::assert_snapshot!("refused", refused.join("\n"));
    });
}

#[test]
fn formatting_is_idempotent_and_keeps_every_plan() {
    let mut planned = 0;
    for path in corpus() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(once) = format_file(&path, &text, false) else {
            continue;
        };
        let twice = format_file(&path, &once, false).expect("formatted text parses");
        assert_eq!(once, twice, "{} is not stable under fmt", path.display());
        let before = plan_hash(&path, &text);
        if before.is_some() {
            planned += 1;
        }
        assert_eq!(
            before,
            plan_hash(&path, &once),
            "{}: the plan changed",
            path.display()
        );
    }
    assert!(planned >= 4, "the examples plan");
}

#[test]
fn the_project_files_are_formatted() {
    let mut unformatted = Vec::new();
    for path in discover(&[PathBuf::from("workflows"), PathBuf::from("stdlib")]) {
        let text = std::fs::read_to_string(&path).unwrap();
        if format_file(&path, &text, false).ok().as_ref() != Some(&text) {
            unformatted.push(path.display().to_string());
        }
    }
    assert!(
        unformatted.is_empty(),
        "run `lexrun fmt workflows stdlib`: {unformatted:?}"
    );
}

#[test]
fn check_prints_a_diff_and_exits_1_and_fmt_rewrites() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.lex");
    std::fs::write(&f, "workflow w\npool p {\ngpus 0\n}\n").unwrap();
    let o = support::lexrun(&["fmt", "--check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("-gpus 0") && out.contains("+  gpus 0"),
        "{out}"
    );
    assert!(support::stderr(&o).contains("1 of 1 file is not formatted"));

    let o = support::lexrun(&["fmt", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        "workflow w\n\npool p {\n  gpus 0\n}\n"
    );
    let o = support::lexrun(&["fmt", "--check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
}

#[test]
fn a_file_with_syntax_errors_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.lex");
    let text = "workflow w\npool p {\n  gpus 0\n  vram lots\n}\n";
    std::fs::write(&f, text).unwrap();
    let o = support::lexrun(&["fmt", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = support::stderr(&o);
    assert!(
        err.contains("lex::E") && err.contains("not formatted"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
}

/// Rewrites the white space between tokens of `text` (never inside strings, text blocks or
/// comments): each run without a line break becomes 1–3 spaces; each run with line breaks
/// keeps them and gets random indentation, and may gain a comment line.
fn scramble(text: &str, choices: &[u8], keep_lines: bool) -> String {
    let mut out = String::new();
    let mut k = 0;
    let mut next = || {
        k += 1;
        choices[k % choices.len()]
    };
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &text[i..];
        let protected = if let Some(body) = rest.strip_prefix("\"\"\"") {
            3 + body.find("\"\"\"").map_or(body.len(), |e| e + 3)
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && b[i + j] != b'"' {
                j += if b[i + j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else {
            0
        };
        if protected > 0 {
            out.push_str(&rest[..protected]);
            i += protected;
            continue;
        }
        if b[i] == b' ' || b[i] == b'\t' || b[i] == b'\n' {
            let len = rest
                .find(|c: char| !matches!(c, ' ' | '\t' | '\n'))
                .unwrap_or(rest.len());
            let lines = rest[..len].matches('\n').count();
            if lines == 0 {
                out.push_str(&" ".repeat(1 + next() as usize % 3));
            } else {
                let n = if keep_lines {
                    lines
                } else {
                    1 + next() as usize % 3
                };
                for _ in 0..n {
                    out.push_str(&" ".repeat(next() as usize % 3));
                    out.push('\n');
                }
                if !keep_lines && next() % 7 == 0 {
                    out.push_str("// a note\n");
                }
                out.push_str(&"\t ".repeat(next() as usize % 3));
            }
            i += len;
            continue;
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

fn examples() -> Vec<(PathBuf, String)> {
    ["affidavit", "motion", "summary", "exhibits"]
        .iter()
        .map(|n| {
            let p = PathBuf::from(format!("workflows/{n}.lex"));
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Only the white space on a line differs: the layout is the same, whatever it was.
    #[test]
    fn spacing_does_not_change_the_layout(which in 0usize..4, choices in prop::collection::vec(any::<u8>(), 1..64)) {
        let (path, text) = &examples()[which];
        let canonical = format_file(path, text, false).unwrap();
        let scrambled = scramble(text, &choices, true);
        let formatted = format_file(path, &scrambled, false).map_err(|e| TestCaseError::fail(e.0))?;
        prop_assert_eq!(&formatted, &canonical);
    }

    /// Line breaks and comment lines added anywhere: fmt is idempotent and the plan is the same.
    #[test]
    fn formatting_keeps_the_plan_hash(which in 0usize..4, choices in prop::collection::vec(any::<u8>(), 1..64)) {
        let (path, text) = &examples()[which];
        let scrambled = scramble(text, &choices, false);
        let want = plan_hash(path, text).expect("the example plans");
        prop_assert_eq!(plan_hash(path, &scrambled), Some(want.clone()), "scrambling changed the plan");
        let once = format_file(path, &scrambled, false).map_err(|e| TestCaseError::fail(e.0))?;
        let twice = format_file(path, &once, false).map_err(|e| TestCaseError::fail(e.0))?;
        prop_assert_eq!(&once, &twice);
        prop_assert_eq!(plan_hash(path, &once), Some(want));
        prop_assert_eq!(once.matches("// a note").count(), scrambled.matches("// a note").count());
    }
}

const PIECES: &[&str] = &[
    "workflow w\n",
    "pool p {",
    "model m on p {",
    "stage s",
    " after s",
    " when s.a",
    "{",
    "}",
    "\n",
    "\n\n",
    "  ",
    "// c\n",
    "/* b */",
    "gpus 0, 1",
    "vram 2 x 32GiB",
    "ctx 8k  kv q8_0",
    "model m",
    "reads s,",
    "returns { a: bool,\n b: list of record { c: text } }",
    "stop when not a",
    "revise s until a, at most 2 rounds",
    "prompt \"\"\"\n  {{x}}\n\"\"\"",
    "temperature 0.2",
    "output \"o.md\" from s",
    "use std.prompts",
    "verify s against c {",
    "dates must appear or flag",
    "on failure revise, at most 2 rounds",
    "(",
    ")",
    " and ",
    "\"str // not a comment\"",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// Any soup of pieces: fmt never panics, and what it formats parses and is stable.
    #[test]
    fn whatever_parses_formats_stably(pieces in prop::collection::vec(0..PIECES.len(), 0..40)) {
        let text: String = pieces.iter().map(|&i| PIECES[i]).collect();
        if let Ok(once) = lexrun::editor::format::format_lex(&text) {
            let twice = lexrun::editor::format::format_lex(&once);
            prop_assert_eq!(twice.as_ref(), Ok(&once), "not stable:\n{}\n---\n{}", text, once);
            prop_assert_eq!(
                once.matches("// c").count() + once.matches("/* b */").count(),
                text.matches("// c").count() + text.matches("/* b */").count()
            );
        }
    }
}
