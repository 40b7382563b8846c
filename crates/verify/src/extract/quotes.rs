//! Quotations: straight and curly quotes, and Markdown block quotes.

use crate::claim::{Claim, Key, Kind};

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

/// Where a filing's caption block ends: the parties' names quoted there (`"JOHN DOE"`) are
/// its caption, not quotations.
const CAPTION_BYTES: usize = 3000;

/// Words that may stand between a definition's opening parenthesis and its quoted term:
/// `(the "Agreement")`, `(hereinafter, the "Lease")`, `(collectively, "Defendants")`.
const DEFINING: &[&str] = &[
    "the",
    "hereinafter",
    "collectively",
    "together",
    "jointly",
    "individually",
    "each",
    "a",
    "an",
    "referred",
    "to",
    "as",
    "herein",
    "and",
    "or",
    "also",
    "known",
];

/// Whether a quotation defines a short name rather than quoting a source: a term of six
/// words or fewer alone in a parenthesis (`("Reyes Decl.")`, `(the "Purchase Agreement")`,
/// `(the "Agreement" or "Lease")`), or a party's name in capitals in the caption block.
fn defines_a_term(text: &str, start: usize, end: usize, inner: &str) -> bool {
    let words = inner.split_whitespace().count();
    if words > 6 {
        return false;
    }
    let capitals =
        inner.chars().any(|c| c.is_alphabetic()) && !inner.chars().any(char::is_lowercase);
    if capitals && start < CAPTION_BYTES {
        // A caption's line: names and roles, no sentence.
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
        let lower = text[line_start..line_end]
            .split_whitespace()
            .filter(|w| w.starts_with(char::is_lowercase))
            .count();
        if lower <= 4 {
            return true;
        }
    }
    // A name, not a phrase: its words of four letters or more are capitalised.
    let named = inner
        .split_whitespace()
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 4)
        .all(|w| w.starts_with(char::is_uppercase));
    if !named {
        return false;
    }
    let before = &text[..start];
    let Some(open) = before.rfind(['(', ')']) else {
        return false;
    };
    if !before[open..].starts_with('(') || start - open > 60 {
        return false;
    }
    // What stands between the parenthesis and the term, earlier terms left out (`the
    // "Agreement" or`).
    let mut lead = String::new();
    let mut quoted = false;
    for c in before[open + 1..].chars() {
        if matches!(c, '"' | '“' | '”') {
            quoted = !quoted;
        } else if !quoted {
            lead.push(c);
        }
    }
    let lead_ok = lead
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .all(|w| DEFINING.contains(&w.to_lowercase().as_str()));
    let after = &text[end..];
    let close = after.find(')');
    let reopen = after.find('(');
    lead_ok
        && close.is_some_and(|c| c <= 80 && reopen.is_none_or(|r| r > c))
        && !after[..close.unwrap_or(0)].contains(['.', ';'])
}

/// Quotations of two words or more: straight and curly quotes, and Markdown block quotes;
/// never a defined term or a caption's party.
pub fn quotes(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    let mut push = |start: usize, end: usize, inner: &str| {
        // A blank line inside is two paragraphs, not one quotation.
        if inner.split_whitespace().count() < 2 || inner.contains("\n\n") {
            return;
        }
        if !text[start..].starts_with('>') && defines_a_term(text, start, end, inner) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn found(t: &str) -> Vec<String> {
        quotes(t).into_iter().map(|c| c.key.to_string()).collect()
    }

    #[test]
    fn defined_terms_and_caption_names_are_no_quotations() {
        let caption =
            "JOHN DOE, an individual,\n\"JOHN DOE\" Plaintiff,\nv.\n\"ACME WIDGET CORP.\"\n\n";
        let body = "Ms. Reyes signed a declaration (\"Reyes Decl.\") and the lease (the \"Purchase Agreement\" or \"Lease Contract\"). \
                    The court found a \"duty to repair\" (\"a duty to repair\") and wrote \"THE SELLER MAKES NO WARRANTY OF ANY KIND\".";
        let t = format!("{caption}{body}");
        assert_eq!(
            found(&t),
            [
                "duty to repair",
                "a duty to repair",
                "THE SELLER MAKES NO WARRANTY OF ANY KIND"
            ]
        );
    }
}
