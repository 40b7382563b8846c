//! The words of a text as claims and pages are compared by them.

/// Words that say nothing about where a claim comes from.
const STOP: [&str; 16] = [
    "the", "of", "and", "or", "to", "in", "on", "at", "by", "for", "is", "was", "id", "see",
    "that", "a",
];

/// The distinct words of a text that can find its nearest pages (lower-case; numbers without
/// leading zeros), at most 64.
pub(super) fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words(text) {
        let t = term(&text[w.0..w.1]);
        if (t.len() >= 2 || t.bytes().all(|b| b.is_ascii_digit()))
            && !STOP.contains(&t.as_str())
            && !out.contains(&t)
        {
            out.push(t);
            if out.len() == 64 {
                break;
            }
        }
    }
    out
}

pub(super) fn term(w: &str) -> String {
    let mut t = w.to_lowercase();
    if t.bytes().all(|b| b.is_ascii_digit()) {
        let trimmed = t.trim_start_matches('0');
        t = if trimmed.is_empty() { "0" } else { trimmed }.to_string();
    }
    t
}

/// Byte ranges of the words (letters and digits) of a text.
pub(super) fn words(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut it = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some(&(_, c)) = it.peek() {
            if c.is_alphanumeric() {
                break;
            }
            it.next();
        }
        let (s, _) = *it.peek()?;
        let mut e = s;
        while let Some(&(i, c)) = it.peek() {
            if !c.is_alphanumeric() {
                break;
            }
            e = i + c.len_utf8();
            it.next();
        }
        Some((s, e))
    })
}
