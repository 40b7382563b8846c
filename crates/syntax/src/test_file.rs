//! `*.test.lex` files, read by the workflow grammar (`test_file` in `grammar/lex.pest`): the
//! same strings, escapes, numbers, dates and comments as a `.lex` file. A line the grammar
//! does not know is swallowed by the same catch-all as in a workflow, and reported here.

use pest::iterators::Pair;
use pest::Parser as _;

use super::grammar::{with_pest, LexParser, Rule};
use super::literal::unescape;
use crate::diagnostic::Span;

/// One `test "NAME" { … }` block, as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TestDecl {
    pub name: String,
    /// From `test` to the end of the block.
    pub span: Span,
    pub workflow: Option<String>,
    pub matter: Option<String>,
    pub cassette: Option<String>,
    pub expects: Vec<ExpectDecl>,
    /// Where each of `expects` is written.
    pub expect_spans: Vec<Span>,
}

impl ExpectDecl {
    /// The stage (or verified stage) the expectation is about.
    pub fn stage(&self) -> Option<&str> {
        match self {
            ExpectDecl::Exit(_) => None,
            ExpectDecl::Step { stage, .. }
            | ExpectDecl::Field { stage, .. }
            | ExpectDecl::Verify { stage, .. }
            | ExpectDecl::Rounds { stage, .. }
            | ExpectDecl::Count { stage, .. }
            | ExpectDecl::Filled { stage }
            | ExpectDecl::Says { stage, .. }
            | ExpectDecl::Words { stage, .. } => Some(stage),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExpectDecl {
    Exit(u8),
    /// `expect STAGE runs|skipped|failed|blocked|stopped`.
    Step {
        stage: String,
        state: String,
    },
    /// `expect STAGE.FIELD == VALUE`.
    Field {
        stage: String,
        field: String,
        value: Literal,
    },
    /// `expect verify STAGE passes|blocks|flags`.
    Verify {
        stage: String,
        verdict: String,
    },
    Rounds {
        stage: String,
        rounds: u32,
    },
    /// `expect verify STAGE claims|unsupported [at least] N`.
    Count {
        stage: String,
        what: String,
        at_least: bool,
        n: u32,
    },
    /// `expect STAGE not empty`: the stage's last text holds more than white space.
    Filled {
        stage: String,
    },
    /// `expect STAGE contains "PHRASE"`.
    Says {
        stage: String,
        phrase: String,
    },
    /// `expect STAGE at least N words`.
    Words {
        stage: String,
        at_least: u32,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Bool(bool),
    Number(f64),
    Text(String),
    Date(String),
}

/// A problem in a test file: what, where, and how to fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct TestFileError {
    pub message: String,
    pub span: Span,
    pub help: String,
}

const ENTRIES: &str = "a test holds `workflow \"FILE\"`, `matter \"DIR\"`, `cassette \"FILE\"` and `expect` lines: `expect exit 0`, `expect STAGE runs|skipped|failed|blocked|stopped`, `expect STAGE.FIELD == VALUE`, `expect verify STAGE passes|blocks|flags`, `expect verify STAGE claims|unsupported [at least] N`, `expect STAGE rounds N`, `expect STAGE not empty`, `expect STAGE contains \"PHRASE\"`, `expect STAGE at least N words`";

fn span(p: &Pair<Rule>) -> Span {
    let s = p.as_span();
    Span::new(s.start(), s.end())
}

fn error(message: impl Into<String>, span: Span, help: impl Into<String>) -> TestFileError {
    TestFileError {
        message: message.into(),
        span,
        help: help.into(),
    }
}

/// A whole test file's problems as (message, where, how to fix): what `parse_tests` finds,
/// and a test that names no workflow. Empty when `lexrun test` can run the file.
pub fn problems(text: &str) -> (Vec<TestDecl>, Vec<(String, Span, String)>) {
    let (decls, errors) = parse_tests(text);
    let mut out: Vec<(String, Span, String)> = errors
        .into_iter()
        .map(|e| (e.message, e.span, e.help))
        .collect();
    let mut kept = Vec::with_capacity(decls.len());
    for d in decls {
        if d.workflow.is_none() {
            out.push((
                format!("test \"{}\" names no workflow", d.name),
                d.span,
                "add `workflow \"FILE.lex\"`".into(),
            ));
        } else {
            kept.push(d);
        }
    }
    (kept, out)
}

/// A test file's problems as diagnostics, rendered for the terminal.
pub fn render_problems(
    file: &std::path::Path,
    text: &str,
    errors: &[(String, Span, String)],
) -> String {
    use crate::diagnostic::{Code, Diagnostic, SourceMap};
    let mut sources = SourceMap::default();
    let id = sources.add(file.display().to_string(), text.to_string());
    let diags: Vec<Diagnostic> = errors
        .iter()
        .map(|(m, sp, help)| {
            Diagnostic::new(Code::TestFile, m.clone())
                .in_file(id)
                .label(*sp, "here")
                .help(help.clone())
        })
        .collect();
    crate::diagnostic::render(&diags, &sources, false)
}

/// Parses a test file: every test that reads, and every problem, in file order.
pub fn parse_tests(text: &str) -> (Vec<TestDecl>, Vec<TestFileError>) {
    let mut tests = Vec::new();
    let mut errors = Vec::new();
    let file = match with_pest(false, || LexParser::parse(Rule::test_file, text)) {
        Ok(mut pairs) => pairs.next(),
        Err(e) => {
            let at = match e.location {
                pest::error::InputLocation::Pos(p) => p,
                pest::error::InputLocation::Span((s, _)) => s,
            };
            errors.push(error(
                "this test file cannot be read",
                Span::new(at, text.len()),
                "a test file holds `test \"NAME\" { … }` blocks",
            ));
            return (tests, errors);
        }
    };
    for p in file.into_iter().flat_map(Pair::into_inner) {
        match p.as_rule() {
            Rule::test_decl => tests.push(test(p, &mut errors)),
            Rule::bad_test => errors.push(error(
                "expected `test \"NAME\" {`",
                span(&p),
                "a test file holds `test \"NAME\" { … }` blocks",
            )),
            _ => {}
        }
    }
    (tests, errors)
}

fn string(p: Pair<Rule>) -> String {
    unescape(p.into_inner().next().map_or("", |i| i.as_str()))
}

/// The string argument of an entry such as `workflow "FILE"`.
fn argument(p: Pair<Rule>) -> String {
    p.into_inner()
        .find(|i| i.as_rule() == Rule::string)
        .map(string)
        .unwrap_or_default()
}

fn test(p: Pair<Rule>, errors: &mut Vec<TestFileError>) -> TestDecl {
    let mut t = TestDecl {
        span: span(&p),
        ..TestDecl::default()
    };
    let mut closed = false;
    for e in p.into_inner() {
        match e.as_rule() {
            Rule::string => t.name = string(e),
            Rule::test_workflow => t.workflow = Some(argument(e)),
            Rule::test_matter => t.matter = Some(argument(e)),
            Rule::test_cassette => t.cassette = Some(argument(e)),
            Rule::expect => match expectation(e.clone()) {
                Some(x) => {
                    t.expects.push(x);
                    let sp = span(&e);
                    let len = e.as_str().trim_end().len();
                    t.expect_spans.push(Span::new(sp.start, sp.start + len));
                }
                None => errors.push(error("this expectation is out of range", span(&e), ENTRIES)),
            },
            Rule::bad_entry => {
                let text = e.as_str().trim_end();
                let message = if !text.starts_with("expect") {
                    "lexrun test does not know this line"
                } else if text.contains("==") {
                    "the value should be true, false, a number, a date or \"text\""
                } else {
                    "lexrun test does not know this expectation"
                };
                let s = span(&e);
                errors.push(error(
                    message,
                    Span::new(s.start, s.start + text.len()),
                    ENTRIES,
                ));
            }
            Rule::test_close => closed = true,
            _ => {}
        }
    }
    if !closed {
        errors.push(error(
            format!("test \"{}\" is not closed", t.name),
            t.span,
            "end the test with `}`",
        ));
    }
    t
}

fn expectation(p: Pair<Rule>) -> Option<ExpectDecl> {
    let x = p.into_inner().find(|i| i.as_rule() != Rule::kw_expect)?;
    let rule = x.as_rule();
    let mut parts = x.into_inner();
    let mut next = || parts.next();
    Some(match rule {
        Rule::expect_exit => {
            next();
            ExpectDecl::Exit(next()?.as_str().parse().ok()?)
        }
        Rule::expect_verify => {
            next();
            let stage = next()?.as_str().to_string();
            ExpectDecl::Verify {
                stage,
                verdict: next()?.as_str().to_string(),
            }
        }
        Rule::expect_rounds => {
            let stage = next()?.as_str().to_string();
            next();
            ExpectDecl::Rounds {
                stage,
                rounds: next()?.as_str().parse().ok()?,
            }
        }
        Rule::expect_count => {
            next();
            let stage = next()?.as_str().to_string();
            let what = next()?.as_str().to_string();
            let mut n = next()?;
            let at_least = n.as_rule() == Rule::at_least;
            if at_least {
                n = next()?;
            }
            ExpectDecl::Count {
                stage,
                what,
                at_least,
                n: n.as_str().parse().ok()?,
            }
        }
        Rule::expect_filled => ExpectDecl::Filled {
            stage: next()?.as_str().to_string(),
        },
        Rule::expect_says => {
            let stage = next()?.as_str().to_string();
            next();
            ExpectDecl::Says {
                stage,
                phrase: string(next()?),
            }
        }
        Rule::expect_words => {
            let stage = next()?.as_str().to_string();
            next();
            ExpectDecl::Words {
                stage,
                at_least: next()?.as_str().parse().ok()?,
            }
        }
        Rule::expect_field => {
            let stage = next()?.as_str().to_string();
            let field = next()?.as_str().to_string();
            let v = next()?;
            let value = match v.as_rule() {
                Rule::kw_true => Literal::Bool(true),
                Rule::kw_false => Literal::Bool(false),
                Rule::date_lit => Literal::Date(v.as_str().to_string()),
                Rule::decimal => Literal::Number(v.as_str().parse().ok()?),
                _ => Literal::Text(string(v)),
            };
            ExpectDecl::Field {
                stage,
                field,
                value,
            }
        }
        _ => {
            let stage = next()?.as_str().to_string();
            ExpectDecl::Step {
                stage,
                state: next()?.as_str().to_string(),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_dates_read_as_in_a_workflow() {
        let (t, e) = parse_tests(
            "test \"a\\tb\" {\n  workflow \"w.lex\" // the workflow\n  expect gate.note == \"two\\nlines\"\n  expect gate.filed == 2024-01-05\n  expect gate.total == -12.5\n}\n",
        );
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(t[0].name, "a\tb");
        assert_eq!(
            t[0].expects,
            vec![
                ExpectDecl::Field {
                    stage: "gate".into(),
                    field: "note".into(),
                    value: Literal::Text("two\nlines".into()),
                },
                ExpectDecl::Field {
                    stage: "gate".into(),
                    field: "filed".into(),
                    value: Literal::Date("2024-01-05".into()),
                },
                ExpectDecl::Field {
                    stage: "gate".into(),
                    field: "total".into(),
                    value: Literal::Number(-12.5),
                },
            ]
        );
    }

    #[test]
    fn content_expectations_read() {
        let (t, e) = parse_tests(
            "test \"a\" {\n  workflow \"w.lex\"\n  expect draft not empty\n  expect draft contains \"Jane \\\"J\\\" Smith\"\n  expect draft at least 40 words\n  expect verify reason claims at least 5\n  expect verify reason unsupported 0\n}\n",
        );
        assert!(e.is_empty(), "{e:?}");
        assert_eq!(
            t[0].expects,
            vec![
                ExpectDecl::Filled {
                    stage: "draft".into()
                },
                ExpectDecl::Says {
                    stage: "draft".into(),
                    phrase: "Jane \"J\" Smith".into()
                },
                ExpectDecl::Words {
                    stage: "draft".into(),
                    at_least: 40
                },
                ExpectDecl::Count {
                    stage: "reason".into(),
                    what: "claims".into(),
                    at_least: true,
                    n: 5
                },
                ExpectDecl::Count {
                    stage: "reason".into(),
                    what: "unsupported".into(),
                    at_least: false,
                    n: 0
                },
            ]
        );
        let (_, e) = parse_tests("test \"a\" {\n  workflow \"w.lex\"\n  expect draft contains\n  expect verify reason claims many\n}\n");
        assert_eq!(e.len(), 2, "{e:?}");
    }

    #[test]
    fn text_outside_a_test_is_one_error_and_the_next_test_still_reads() {
        let text = "colour blue\ntest \"b\" {\n  workflow \"w.lex\"\n  expect exit 3\n}\n";
        let (t, e) = parse_tests(text);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(&text[e[0].span.start..e[0].span.end], "colour blue");
        assert_eq!(t[0].expects, vec![ExpectDecl::Exit(3)]);
    }
}
