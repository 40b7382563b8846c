//! `lexrun check` on a `.test.lex` file: the file reads as tests, and the workflow, matter and
//! cassette each test names are there. (Running the tests is `lexrun test`.)

use camino::Utf8Path;

use super::checked::Checked;
use crate::diagnostic::{Code, Diagnostic, SourceMap, Span};
use crate::syntax::test_file::parse_tests;

/// Checks a `.test.lex` file read from disk.
pub fn check_test_path(path: &Utf8Path) -> Checked {
    match std::fs::read(path) {
        Ok(bytes) => check_test_bytes(path, &bytes),
        Err(e) => Checked::unreadable(path, &e),
    }
}

/// Checks the text of a `.test.lex` file as if it were at `path`.
pub fn check_test_bytes(path: &Utf8Path, bytes: &[u8]) -> Checked {
    let mut sources = SourceMap::default();
    let text = String::from_utf8_lossy(bytes).into_owned();
    let id = sources.add(path.as_str(), text.clone());
    let error = |message: String, span: Span, help: String| {
        Diagnostic::new(Code::TestFile, message)
            .in_file(id)
            .label(span, "here")
            .help(help)
    };
    let mut diagnostics = Vec::new();
    if let Err((_, at)) = crate::syntax::decode(bytes) {
        diagnostics.push(
            Diagnostic::new(Code::InvalidUtf8, "this file is not valid UTF-8 text")
                .in_file(id)
                .label(Span::new(at, at + 1), "first invalid byte")
                .help("save the file as UTF-8"),
        );
    }
    let (tests, errors) = parse_tests(&text);
    diagnostics.extend(errors.into_iter().map(|e| error(e.message, e.span, e.help)));
    let dir = path.parent().unwrap_or(Utf8Path::new(""));
    let mut stages_of: std::collections::BTreeMap<String, Option<Vec<String>>> = Default::default();
    for t in &tests {
        let body = &text[t.span.start.min(text.len())..t.span.end.min(text.len())];
        // Where a quoted argument is written inside the test, for the label.
        let at = |value: &str| {
            let quoted = format!("\"{value}\"");
            body.find(&quoted)
                .map(|i| Span::new(t.span.start + i, t.span.start + i + quoted.len()))
                .unwrap_or(Span::new(t.span.start, t.span.start + 4))
        };
        match &t.workflow {
            None => diagnostics.push(error(
                format!("test \"{}\" names no workflow", t.name),
                Span::new(t.span.start, t.span.start + 4),
                "add `workflow \"FILE.lex\"`".into(),
            )),
            Some(w) if !dir.join(w).is_file() => diagnostics.push(error(
                format!(
                    "test \"{}\" names the workflow `{w}`, which does not exist",
                    t.name
                ),
                at(w),
                "paths in a test file are relative to the test file".into(),
            )),
            Some(w) => {
                // Every stage an expectation names is one of the workflow's.
                // Each workflow is checked once however many tests name it.
                let stages = stages_of.entry(w.clone()).or_insert_with(|| {
                    super::check_path(&dir.join(w))
                        .workflow
                        .map(|wf| wf.steps.into_iter().map(|s| s.name).collect())
                });
                if let Some(stages) = stages {
                    let stages: Vec<&str> = stages.iter().map(String::as_str).collect();
                    for (e, sp) in t.expects.iter().zip(&t.expect_spans) {
                        let Some(stage) = e.stage().filter(|s| !stages.contains(s)) else {
                            continue;
                        };
                        let help = match crate::suggest::did_you_mean(stage, stages.iter().copied())
                        {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => format!(
                                "its stages are {}",
                                stages
                                    .iter()
                                    .map(|s| format!("`{s}`"))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        };
                        diagnostics.push(error(
                            format!("workflow `{w}` has no stage `{stage}`"),
                            *sp,
                            help,
                        ));
                    }
                }
            }
        }
        if let Some(c) = t.cassette.as_ref().filter(|c| !dir.join(c).is_file()) {
            diagnostics.push(error(
                format!("test \"{}\" replays the cassette `{c}`, which does not exist", t.name),
                at(c),
                "record it with `lexrun run … --record FILE`, or fix the path (relative to the test file)".into(),
            ));
        }
        if let Some(m) = t.matter.as_ref().filter(|m| !dir.join(m).is_dir()) {
            diagnostics.push(error(
                format!(
                    "test \"{}\" names the matter folder `{m}`, which does not exist",
                    t.name
                ),
                at(m),
                "paths in a test file are relative to the test file".into(),
            ));
        }
    }
    if tests.is_empty() && diagnostics.is_empty() {
        diagnostics.push(error(
            "this test file declares no tests".into(),
            Span::new(0, text.len().min(1)),
            "a test file holds `test \"NAME\" { workflow \"FILE.lex\" … }` blocks".into(),
        ));
    }
    diagnostics.sort_by_key(|d| d.position());
    Checked {
        sources,
        diagnostics,
        workflow: None,
        unreadable: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expectation_about_a_stage_the_workflow_lacks_is_an_error() {
        let text = "test \"t\" {\n  workflow \"affidavit.lex\"\n  expect drat not empty\n  expect draft contains \"Jane\"\n  expect verify reasn claims at least 1\n}\n";
        // Beside the example workflows, at the top of the repository.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../workflows/new.test.lex");
        let c = check_test_bytes(Utf8Path::new(path), text.as_bytes());
        let got: Vec<String> = c
            .diagnostics
            .iter()
            .map(|d| format!("{} | {}", d.message, d.help.clone().unwrap_or_default()))
            .collect();
        assert_eq!(
            got,
            vec![
                "workflow `affidavit.lex` has no stage `drat` | did you mean `draft`?",
                "workflow `affidavit.lex` has no stage `reasn` | did you mean `reason`?",
            ]
        );
        let at = c.diagnostics[0].labels[0].span;
        assert_eq!(&text[at.start..at.end], "expect drat not empty");
    }
}
