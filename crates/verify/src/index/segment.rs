//! Quotations as parts between ellipses, and where each part is found on a page.

use crate::normalize::normalize;
use regex::Regex;

/// A quotation's parts between ellipses, normalised, with the punctuation at their ends
/// dropped (a draft may end a quotation with a comma where the source has a full stop).
pub(super) fn quote_segments(quote: &str) -> Vec<Segment> {
    normalize(quote)
        .replace(". . .", "...")
        .split("...")
        .map(|s| {
            s.trim()
                .trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '.' | '"' | '\''))
                .trim()
                .to_string()
        })
        .filter(|s| !s.is_empty())
        .map(|s| Segment::new(&s))
        .collect()
}

/// One part of a quotation between ellipses. Bracketed alterations are allowed: a changed
/// letter's case (`[T]he`) and a small insertion in place of up to three words (`[the
/// landlord]`).
pub(super) enum Segment {
    Literal(String, Box<memchr::memmem::Finder<'static>>),
    Altered { pattern: Regex, anchor: String },
}

impl Segment {
    fn literal(s: &str) -> Segment {
        Segment::Literal(
            s.to_string(),
            Box::new(memchr::memmem::Finder::new(s.as_bytes()).into_owned()),
        )
    }

    fn new(s: &str) -> Segment {
        if !s.contains('[') {
            return Segment::literal(s);
        }
        let mut pat = String::new();
        let mut literals: Vec<String> = Vec::new();
        let mut cur = String::new();
        let mut rest = s;
        while let Some(open) = rest.find('[') {
            let Some(close) = rest[open..].find(']').map(|c| open + c) else {
                break;
            };
            let before = &rest[..open];
            cur.push_str(before);
            pat.push_str(&regex::escape(before));
            let inside = &rest[open + 1..close];
            let glued = rest[close + 1..]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric);
            if glued && inside.chars().count() <= 2 {
                // `[T]he`: the same letters in either case.
                pat.push_str(&format!("(?i:{})", regex::escape(inside)));
            } else {
                // An insertion or replacement: up to three of the source's words, or none.
                pat.push_str(r"(?:[^\s]+\s?){0,3}");
            }
            literals.push(std::mem::take(&mut cur));
            rest = &rest[close + 1..];
        }
        cur.push_str(rest);
        pat.push_str(&regex::escape(rest));
        literals.push(cur);
        let anchor = literals
            .iter()
            .map(|l| l.trim())
            .max_by_key(|l| l.len())
            .unwrap_or("")
            .to_string();
        match Regex::new(&pat) {
            Ok(pattern) => Segment::Altered { pattern, anchor },
            Err(_) => Segment::literal(s),
        }
    }

    pub(super) fn anchor(&self) -> &str {
        match self {
            Segment::Literal(s, _) => s,
            Segment::Altered { anchor, .. } => anchor,
        }
    }

    /// A match that contains the anchor hit at `hit`.
    pub(super) fn match_around(&self, text: &str, hit: usize) -> Option<(usize, usize)> {
        match self {
            Segment::Literal(s, _) => Some((hit, hit + s.len())),
            Segment::Altered { pattern, .. } => {
                let mut from = hit.saturating_sub(400);
                while !text.is_char_boundary(from) {
                    from -= 1;
                }
                pattern
                    .find_iter(&text[from..])
                    .map(|m| (from + m.start(), from + m.end()))
                    .find(|(s, e)| *s <= hit && hit < *e)
            }
        }
    }

    pub(super) fn find(&self, text: &str, from: usize) -> Option<(usize, usize)> {
        let from = from.min(text.len());
        if !text.is_char_boundary(from) {
            return None;
        }
        match self {
            Segment::Literal(s, finder) => finder
                .find(&text.as_bytes()[from..])
                .map(|i| (from + i, from + i + s.len())),
            Segment::Altered { pattern, .. } => pattern
                .find(&text[from..])
                .map(|m| (from + m.start(), from + m.end())),
        }
    }
}
