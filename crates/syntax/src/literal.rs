//! Literals: a file's bytes as UTF-8, string escapes, `"""` blocks, and numbers with their
//! units (counts, sizes, durations).

use pest::iterators::Pair;

use super::ast::Spanned;
use super::grammar::Rule;
use super::parse::Builder;
use crate::diagnostic::{Code, Span};

/// Checks that a file's bytes are UTF-8. On failure the diagnostic points at the first bad
/// byte in the lossy text that is returned for display.
pub fn decode(bytes: &[u8]) -> Result<&str, (String, usize)> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        (String::from_utf8_lossy(bytes).into_owned(), at)
    })
}

pub(crate) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('u') => {
                let hex: String = chars.by_ref().skip(1).take_while(|c| *c != '}').collect();
                let ch = u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                out.push(ch);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Removes the first line break and the indentation common to every line, so a `"""` block
/// can sit indented in the file and still render flush left.
/// Extensions that make a quoted prompt a template file rather than inline text.
pub const PROMPT_FILE_EXTENSIONS: &[&str] =
    &["hbs", "handlebars", "md", "markdown", "txt", "prompt"];

/// Whether a quoted prompt names a file rather than being the prompt's text: one line
/// without `{{` that ends in a prompt file's extension (`prompts/demand.md`, `gate.hbs`), or
/// one word with a path separator (`../shared/letter`). The checker also reads as a file any
/// other one word that is a file beside the workflow.
pub fn names_a_file(s: &str) -> bool {
    if s.is_empty() || s.contains('\n') || s.contains("{{") {
        return false;
    }
    let ext = s.rsplit_once('.').is_some_and(|(stem, e)| {
        !stem.is_empty() && PROMPT_FILE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str())
    });
    ext || (!s.contains(char::is_whitespace) && (s.contains('/') || s.contains('\\')))
}

pub fn dedent(raw: &str) -> String {
    let body = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    let indent = body
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    let mut out = String::with_capacity(body.len());
    for line in body.lines() {
        out.push_str(
            line.get(indent..)
                .unwrap_or(line.trim_start_matches([' ', '\t'])),
        );
        out.push('\n');
    }
    // Keep the closing `"""` line from adding a trailing blank line.
    while out.ends_with("\n\n") || out.ends_with(" \n") {
        out.pop();
    }
    let trimmed = out.trim_end_matches([' ', '\t']).len();
    out.truncate(trimmed);
    out
}

/// Numbers with their units, and strings, as the tree holds them.
impl Builder {
    pub(super) fn string(&mut self, p: Pair<Rule>) -> Spanned<String> {
        let span = self.span(&p);
        let raw = p.into_inner().next().map_or("", |i| i.as_str());
        Spanned::new(unescape(raw), span)
    }

    pub(super) fn int_u64(&mut self, p: Pair<Rule>) -> Option<Spanned<u64>> {
        let span = self.span(&p);
        match p.as_str().parse::<u64>() {
            Ok(v) => Some(Spanned::new(v, span)),
            Err(_) => {
                self.too_large(span, u64::MAX as f64);
                None
            }
        }
    }

    pub(super) fn int_u32(&mut self, p: Pair<Rule>) -> Option<Spanned<u32>> {
        let span = self.span(&p);
        match p.as_str().parse::<u32>() {
            Ok(v) => Some(Spanned::new(v, span)),
            Err(_) => {
                self.too_large(span, u32::MAX as f64);
                None
            }
        }
    }

    pub(super) fn too_large(&mut self, span: Span, max: f64) {
        self.err(
            Code::NumberTooLarge,
            span,
            "this number is too large",
            "too large",
            &format!("the largest value allowed here is {max}"),
        );
    }

    pub(super) fn decimal(&mut self, p: Pair<Rule>) -> Option<Spanned<f64>> {
        let span = self.span(&p);
        match p.as_str().parse::<f64>() {
            Ok(v) if v.is_finite() && v.abs() < 1e15 => Some(Spanned::new(v, span)),
            _ => {
                self.too_large(span, 1e15);
                None
            }
        }
    }

    /// `32k` → 32768, `2M` → 2097152: context sizes count tokens in powers of two, as
    /// llama.cpp does.
    pub(super) fn count(&mut self, p: Pair<Rule>) -> Option<Spanned<u64>> {
        let span = self.span(&p);
        let text = p.as_str();
        let (num, mult) = match text.chars().last() {
            Some('k' | 'K') => (&text[..text.len() - 1], 1024.0),
            Some('M') => (&text[..text.len() - 1], 1024.0 * 1024.0),
            _ => (text, 1.0),
        };
        let v = num.parse::<f64>().ok()? * mult;
        if v.fract() != 0.0 {
            self.err(
                Code::InvalidValue,
                span,
                "a context size must be a whole number of tokens",
                "not whole",
                "write e.g. `32k` or `32768`",
            );
            return None;
        }
        if v > 1e12 {
            self.too_large(span, 1e12);
            return None;
        }
        Some(Spanned::new(v as u64, span))
    }

    pub(super) fn size(&mut self, p: Pair<Rule>) -> Option<Spanned<u64>> {
        let span = self.span(&p);
        let mut it = p.into_inner();
        let num: f64 = it.next()?.as_str().parse().ok()?;
        let unit = it.next()?.as_str();
        let mult: f64 = match unit {
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            "TiB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
            "KB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            _ => 1e12,
        };
        let v = num * mult;
        if !(v.is_finite() && v < 1.0e18) {
            self.too_large(span, 1.0e18);
            return None;
        }
        Some(Spanned::new(v.round() as u64, span))
    }

    pub(super) fn duration(&mut self, p: Pair<Rule>) -> Option<Spanned<u64>> {
        let span = self.span(&p);
        let t = p.as_str();
        let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
            (n, 1u64)
        } else if let Some(n) = t.strip_suffix('s') {
            (n, 1000)
        } else if let Some(n) = t.strip_suffix('m') {
            (n, 60_000)
        } else {
            (t.strip_suffix('h').unwrap_or(t), 3_600_000)
        };
        match num.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)) {
            Some(ms) => Some(Spanned::new(ms, span)),
            None => {
                self.too_large(span, u64::MAX as f64);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedent_strips_common_indent() {
        assert_eq!(dedent("\n    a\n      b\n    "), "a\n  b\n");
    }

    #[test]
    fn unescape_handles_escapes() {
        assert_eq!(unescape(r#"a\"b\n\u{41}"#), "a\"b\nA");
    }
}

#[cfg(test)]
mod prompt_file_tests {
    use super::names_a_file;

    #[test]
    fn a_quoted_path_names_a_file_and_a_sentence_does_not() {
        for f in [
            "prompts/demand.md",
            "gate.hbs",
            "../secret/other.txt",
            "my prompts/letter.md",
            "shared/letter",
            "prompts\\memo",
        ] {
            assert!(names_a_file(f), "{f}");
        }
        for t in [
            "Summarise {{evidence}}",
            "Write the letter.",
            "Reply in JSON/text only",
            "notes.md {{evidence}}",
            "",
        ] {
            assert!(!names_a_file(t), "{t}");
        }
    }
}
