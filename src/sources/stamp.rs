//! Bates stamps as they appear at the foot of a page.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

/// A stamp at the foot of a page: a capitalised prefix and at least four digits, alone at the
/// end of one of the last lines.
static STAMP: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(
        r"(?:^|(?-u:\s))(?P<p>[A-Z][A-Z0-9_]{1,15}?)[ _-]?(?P<n>[0-9]{4,10})(?-u:\s)*$",
    )
    .dfa_size_limit(256 << 10)
    .build()
    .expect("stamp pattern compiles")
});

/// The Bates number stamped at the foot of a page, if any.
pub fn stamp_of(raw: &str) -> Option<String> {
    raw.lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(3)
        .find_map(|l| {
            STAMP
                .captures(l.trim_end())
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
    fn a_year_at_the_foot_is_not_a_stamp() {
        assert_eq!(stamp_of("Signed March 1, 2024"), None);
        assert_eq!(stamp_of("Page 2"), None);
    }
}
