//! What the redaction patterns take out of a value: the spans a pattern matches, a value
//! with each redacted stretch replaced by its label (load-file fields, the privilege log),
//! and the strings redacted from a document's metadata, which the re-reading looks for.

use super::types::{Doc, Pattern};

/// What a pattern redacts in `text`: each match, or its first group where it has one.
pub(super) fn spans(regex: &regex::Regex, text: &str) -> Vec<(usize, usize)> {
    regex
        .captures_iter(text)
        .filter_map(|c| c.get(1).or_else(|| c.get(0)))
        .filter(|m| m.start() < m.end())
        .map(|m| (m.start(), m.end()))
        .collect()
}

/// A value with every redacted stretch replaced by its label.
pub(super) fn redact_text(s: &str, patterns: &[Pattern]) -> String {
    let mut v = s.to_string();
    for p in patterns {
        let mut out = String::new();
        let mut at = 0;
        for (a, b) in spans(&p.regex, &v) {
            out.push_str(&v[at..a]);
            out.push_str(&format!("[{}]", p.label()));
            at = b;
        }
        out.push_str(&v[at..]);
        v = out;
    }
    v
}

/// The strings the patterns redact from a document's file name and email headers, each
/// with its label.
pub(super) fn redacted_meta(d: &Doc, patterns: &[Pattern]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in [
        &d.file_name,
        &d.meta.from,
        &d.meta.to,
        &d.meta.cc,
        &d.meta.subject,
    ] {
        for p in patterns {
            for (a, b) in spans(&p.regex, s) {
                out.push((s[a..b].to_string(), p.label()));
            }
        }
    }
    out
}
