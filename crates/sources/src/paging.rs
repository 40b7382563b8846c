//! Pages for text that has none of its own (a Word file without page breaks, an email body, a
//! saved web page): a new page after [`PAGE_CHARS`] characters, at the end of a paragraph, so a
//! page number is stable for the same text however it is wrapped.

use super::pdf_text::PageText;

/// About one printed page of single-spaced 12-point text (roughly 500 words).
pub const PAGE_CHARS: usize = 3_000;

/// `text` in pages: an explicit form feed always starts a page; otherwise a page ends at the
/// first paragraph end (a blank line, or a line end) past [`PAGE_CHARS`].
pub fn pages(text: &str, from: &str) -> Vec<PageText> {
    let mut out = Vec::new();
    for part in text.split('\u{000C}') {
        let mut page = String::new();
        for line in part.split_inclusive('\n') {
            page.push_str(line);
            if page.len() >= PAGE_CHARS {
                out.push(std::mem::take(&mut page));
            }
        }
        if !page.trim().is_empty() || out.is_empty() {
            out.push(page);
        }
    }
    out.into_iter()
        .enumerate()
        .map(|(i, text)| PageText {
            page: i as u32 + 1,
            text,
            from: from.into(),
        })
        .collect()
}

/// Splits one overlong line (a paragraph with no line ends) at a word boundary past
/// [`PAGE_CHARS`], so that [`pages`] can break it.
pub fn wrap_long(paragraph: &str) -> String {
    if paragraph.len() < PAGE_CHARS {
        return paragraph.to_string();
    }
    let mut out = String::with_capacity(paragraph.len() + 8);
    let mut since = 0;
    for w in paragraph.split_inclusive(' ') {
        out.push_str(w);
        since += w.len();
        if since >= PAGE_CHARS / 4 {
            out.push('\n');
            since = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_breaks_at_a_line_end_past_the_page_length() {
        let line = "x".repeat(99) + "\n";
        let text = line.repeat(70);
        let p = pages(&text, "text");
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].text.len(), 3_000);
        assert_eq!(p[2].page, 3);
        assert_eq!(pages("a\u{000C}b", "text").len(), 2);
        assert_eq!(pages("", "text").len(), 1);
    }
}
