//! Bates stamps as they appear at the foot of a page.

use std::sync::{LazyLock, RwLock};

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

/// A shorter number alone on its line (`ACME0042`, `ACME-0042`): a stamp only when its
/// prefix is one the workflow or the command declares (`bates "ACME" width 4`,
/// `--bates-prefix ACME`), so an invoice number (`BD-1073`) on a line of its own is not.
static SHORT: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(r"^(?P<p>[A-Z][A-Z0-9_]{1,15}?)[ _-]?(?P<n>[0-9]{4,10})$")
        .build()
        .expect("short stamp pattern compiles")
});

/// The Bates prefixes declared in this process: by the workflow's sources, or `--bates-prefix`.
static DECLARED: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Declares Bates prefixes, whose numbers are stamps when alone on a line at a page's foot
/// even with fewer than six digits.
pub fn declare_prefixes(prefixes: &[String]) {
    if let Ok(mut d) = DECLARED.write() {
        for p in prefixes {
            if !p.is_empty() && !d.contains(p) {
                d.push(p.clone());
            }
        }
    }
}

/// The Bates number stamped at the foot of a page, if any: on one of its last three lines
/// that are not empty, in the shape of a production number, or with a declared prefix alone
/// on its line.
pub fn stamp_of(raw: &str) -> Option<String> {
    raw.lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .find_map(|l| {
            let l = l.trim();
            STAMP
                .captures(l)
                .or_else(|| {
                    SHORT.captures(l).filter(|c| {
                        DECLARED
                            .read()
                            .map(|d| d.iter().any(|p| p == &c["p"]))
                            .unwrap_or(false)
                    })
                })
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
    fn a_short_number_is_a_stamp_only_with_a_declared_prefix() {
        assert_eq!(stamp_of("Lease text\n\nQZKD0042\n"), None);
        declare_prefixes(&["QZKD".to_string()]);
        assert_eq!(
            stamp_of("Lease text\n\nQZKD0042\n").as_deref(),
            Some("QZKD0042")
        );
        assert_eq!(stamp_of("Invoice QZKD0042 is due."), None);
    }

    #[test]
    fn a_year_at_the_foot_is_not_a_stamp() {
        assert_eq!(stamp_of("Signed March 1, 2024"), None);
        assert_eq!(stamp_of("Page 2"), None);
    }
}
