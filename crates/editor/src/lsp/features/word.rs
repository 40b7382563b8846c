//! The word under the cursor, which hover and completion start from.

/// The word (letters, digits, `_` and `.`) around a byte offset.
pub(super) fn word_at(text: &str, offset: usize) -> (usize, &str) {
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.';
    let offset = offset.min(text.len());
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| ok(c))
        .last()
        .map_or(offset, |(i, _)| i);
    let end = text[offset..]
        .char_indices()
        .find(|&(_, c)| !ok(c))
        .map_or(text.len(), |(i, _)| offset + i);
    (start, &text[start..end])
}
