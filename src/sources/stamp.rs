//! Bates stamps as they appear at the foot of a page.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

/// A stamp at the foot of a page, in the shape of a production number: a capitalised prefix,
/// maybe a space, `_` or `-`, and at least six digits (`SMITH000123`, `ABC-000123`), standing
/// where a stamp stands — alone on its line, or set apart from a footer's other text by a
/// wide gap. An identifier at the end of a sentence (`Subject: Invoices BD-1057 and BD-1073`)
/// or a short number (`FOLIO 88213`) is body text, not a stamp.
static STAMP: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(
        r"(?:^|(?-u:\s){2,}|\t)(?P<p>[A-Z][A-Z0-9_]{1,15}?)[ _-]?(?P<n>[0-9]{6,10})(?-u:\s)*$",
    )
    .dfa_size_limit(256 << 10)
    .build()
    .expect("stamp pattern compiles")
});

/// The Bates number stamped at the foot of a page, if any: on one of its last three lines
/// that are not empty, in the shape of a production number.
pub fn stamp_of(raw: &str) -> Option<String> {
    raw.lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .find_map(|l| {
            STAMP
                .captures(l.trim())
                .map(|c| format!("{}{}", &c["p"], &c["n"]))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_read_from_the_foot_of_a_page() {
        assert_eq!(
            stamp_of("Lease text\n\nSMITH000002\n").as_deref(),
            Some("SMITH000002")
        );
        assert_eq!(
            stamp_of("More\nSMITH 000003\n").as_deref(),
            Some("SMITH000003")
        );
    }

    #[test]
    fn an_identifier_in_the_text_at_the_foot_is_not_a_stamp() {
        assert_eq!(
            stamp_of("Dear Ms. Lee,\n\nSubject: Invoices BD-1057 and BD-1073").as_deref(),
            None
        );
        assert_eq!(stamp_of("HARBORSIDE INN — FOLIO 88213\nTotal"), None);
        assert_eq!(stamp_of("Invoice BD-1073 was due on June 19, 2025."), None);
        assert_eq!(stamp_of("Invoice\nBD-1073\n"), None);
        // Production numbers alone on their line, or in a footer column, are stamps.
        assert_eq!(stamp_of("text\nABC-000123\n").as_deref(), Some("ABC000123"));
        assert_eq!(
            stamp_of("text\nConfidential        BRIGHT0001234").as_deref(),
            Some("BRIGHT0001234")
        );
    }

    #[test]
    fn a_year_at_the_foot_is_not_a_stamp() {
        assert_eq!(stamp_of("Signed March 1, 2024"), None);
        assert_eq!(stamp_of("Page 2"), None);
    }
}
