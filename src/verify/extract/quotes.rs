//! Quotations: straight and curly quotes, and Markdown block quotes.

use crate::verify::claim::{Claim, Key, Kind};

/// The longest quotation looked for, in characters.
const QUOTE_MAX: usize = 4000;

/// Spans `(start, end)` of quotations between `open` and `close`: each opening mark pairs
/// with the nearest following mark if that is a closing one, at most [`QUOTE_MAX`] characters
/// on; an opening mark followed by another opening mark starts nothing. Scanned by hand: as a
/// pattern, the bounded repetition costs tens of milliseconds and megabytes to compile.
fn delimited(text: &str, open: char, close: char) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = text[pos..].find(open).map(|i| pos + i) {
        let inner = i + open.len_utf8();
        let Some(j) = text[inner..].find([open, close]).map(|j| inner + j) else {
            break;
        };
        let body = &text[inner..j];
        let fits = body.len() <= QUOTE_MAX || body.chars().count() <= QUOTE_MAX;
        if text[j..].starts_with(close) && !body.is_empty() && fits {
            out.push((i, j + close.len_utf8()));
            pos = j + close.len_utf8();
        } else {
            pos = inner;
        }
    }
    out
}

/// Quotations of two words or more: straight and curly quotes, and Markdown block quotes.
pub fn quotes(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    let mut push = |start: usize, end: usize, inner: &str| {
        // A blank line inside is two paragraphs, not one quotation.
        if inner.split_whitespace().count() < 2 || inner.contains("\n\n") {
            return;
        }
        out.push(Claim::new(
            Kind::Quote,
            text,
            start,
            end,
            Key::Quote {
                text: inner.to_string(),
            },
        ));
    };
    for (open, close) in [('“', '”'), ('"', '"')] {
        for (start, end) in delimited(text, open, close) {
            push(
                start,
                end,
                &text[start + open.len_utf8()..end - close.len_utf8()],
            );
        }
    }
    // Block quotes: consecutive lines starting with `>`.
    let mut block: Option<(usize, usize, String)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(body) = trimmed.strip_prefix('>') {
            let b = block.get_or_insert((offset, offset, String::new()));
            b.1 = offset + line.trim_end().len();
            b.2.push_str(body.trim());
            b.2.push(' ');
        } else if let Some((s, e, q)) = block.take() {
            push(s, e, q.trim());
        }
        offset += line.len();
    }
    if let Some((s, e, q)) = block.take() {
        push(s, e, q.trim());
    }
    out.sort_by_key(|c| c.start);
    // A quotation inside a block quote is checked as part of the block.
    let blocks: Vec<(usize, usize)> = out
        .iter()
        .filter(|c| {
            text[c.start..].starts_with('>') || text[c.start..].trim_start().starts_with('>')
        })
        .map(|c| (c.start, c.end))
        .collect();
    out.retain(|c| {
        !blocks
            .iter()
            .any(|(s, e)| (c.start, c.end) != (*s, *e) && c.start >= *s && c.end <= *e)
    });
    out
}
