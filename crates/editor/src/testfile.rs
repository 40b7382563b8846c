//! The canonical layout of a `.test.lex` file: a test's lines indented by two spaces, one
//! space between words (strings kept byte for byte), one blank line between tests, comments
//! kept where they were.

use std::path::Path;

use crate::diagnostic::Span;
use crate::syntax::test_file;

/// An error of a test file: message, where, and how to fix it.
pub type TestFileError = (String, Span, String);

/// Formats a `.test.lex` file; a file `lexrun test` cannot read is left alone.
pub fn format_test_lex(_path: &Path, text: &str) -> Result<String, Vec<TestFileError>> {
    let (_, problems) = test_file::problems(text);
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut out: Vec<String> = Vec::new();
    let mut depth = 0usize;
    let mut blank = false;
    // The line before closed a test, so the next one starts a new paragraph.
    let mut after_close = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() {
            blank = true;
            continue;
        }
        let (code, comment) = split_comment(line);
        let code = squeeze(code);
        let closes = code.starts_with('}');
        if closes {
            depth = depth.saturating_sub(1);
        }
        let opens_before = out.last().is_some_and(|l| l.ends_with('{'));
        if !out.is_empty() && ((depth == 0 && after_close) || (blank && !opens_before && !closes)) {
            out.push(String::new());
        }
        let mut l = "  ".repeat(depth);
        l.push_str(&code);
        if let Some(c) = comment {
            if !code.is_empty() {
                l.push_str("  ");
            }
            l.push_str(c);
        }
        out.push(l);
        if code.ends_with('{') {
            depth += 1;
        }
        after_close = closes && depth == 0;
        blank = false;
    }
    let mut s = out.join("\n");
    s.push('\n');
    Ok(s)
}

/// The code of a line and its `//` comment, if any (a `//` inside a string is not one).
fn split_comment(line: &str) -> (&str, Option<&str>) {
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_str => escaped = true,
            '"' => in_str = !in_str,
            '/' if !in_str && line[i..].starts_with("//") => {
                return (line[..i].trim_end(), Some(&line[i..]));
            }
            _ => {}
        }
    }
    (line, None)
}

/// Runs of white space outside strings become one space.
fn squeeze(code: &str) -> String {
    let mut out = String::new();
    let mut in_str = false;
    let mut escaped = false;
    let mut space = false;
    for c in code.chars() {
        if in_str {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        if c == '"' {
            in_str = true;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_squeezes_and_separates_tests() {
        let src = "// top\ntest \"a  b\"   {\nworkflow    \"w.lex\"\n   expect  exit 0 // why\n}\ntest \"c\" {\n  workflow \"w.lex\"\n\n\n  expect gate.x == \"a  b\"\n}\n";
        let got = format_test_lex(Path::new("x.test.lex"), src).unwrap();
        assert_eq!(
            got,
            "// top\ntest \"a  b\" {\n  workflow \"w.lex\"\n  expect exit 0  // why\n}\n\ntest \"c\" {\n  workflow \"w.lex\"\n\n  expect gate.x == \"a  b\"\n}\n"
        );
        assert_eq!(format_test_lex(Path::new("x.test.lex"), &got).unwrap(), got);
    }

    #[test]
    fn content_expectations_are_laid_out_like_the_others() {
        let src = "test \"a\" {\n workflow \"w.lex\"\n   expect   draft  not   empty\n expect draft contains   \"Jane  Smith\"\n expect draft at  least 40 words\n expect verify reason claims at least  3\n}\n";
        let got = format_test_lex(Path::new("x.test.lex"), src).unwrap();
        assert_eq!(
            got,
            "test \"a\" {\n  workflow \"w.lex\"\n  expect draft not empty\n  expect draft contains \"Jane  Smith\"\n  expect draft at least 40 words\n  expect verify reason claims at least 3\n}\n"
        );
    }

    #[test]
    fn an_unreadable_test_file_is_refused() {
        assert!(format_test_lex(Path::new("x.test.lex"), "test \"a\" {\n  nonsense\n}\n").is_err());
    }
}
