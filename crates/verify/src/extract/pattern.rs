//! The pieces every extractor shares: how a pattern is built, the pinpoint and `Id.`
//! patterns, and the checks on a match's surroundings.

use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

/// Builds a pattern with a small lazy-DFA cache: the verifier runs several patterns over the
/// whole evidence on two threads, and the default cache (2 MiB per pattern and thread) would
/// cost more memory than the evidence itself.
pub(crate) fn re(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).dfa_size_limit(256 << 10).build()
}

pub(super) const PIN: &str = r"[0-9]{1,5}(?:(?-u:\s)*[-–—](?-u:\s)*[0-9]{1,5})?";

pub(super) static ID_CITE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?:^|[\t\n\x0B\x0C\r (;,])(?P<id>[Ii]d\.|[Ii]bid\.?)(?:(?-u:\s)+at(?-u:\s)+(?P<lines>[0-9]{{1,4}}:[0-9]{{1,2}}(?:(?-u:\s)*[-–—](?-u:\s)*[0-9]{{1,4}}(?::[0-9]{{1,2}})?)?)|,?(?-u:\s)+at(?-u:\s)+(?P<pin>\*?{PIN})|,?(?-u:\s)+(?:at(?-u:\s)+)?(?P<para>¶¶?(?-u:\s)*[0-9]+(?:(?-u:\s)*[-–—](?-u:\s)*[0-9]+)?(?:,(?-u:\s)*[0-9]+(?:(?-u:\s)*[-–—](?-u:\s)*[0-9]+)?)*))?"
    ))
    .expect("Id. pattern compiles")
});

pub(super) fn valid_year(y: u16) -> bool {
    (1600..=2099).contains(&y)
}

pub(super) fn valid_date(y: i32, m: u32, d: u32) -> bool {
    (1600..=2200).contains(&y) && crate::calendar::is_valid(y as i64, m, d)
}

pub(super) fn preceded_by_digit_or_letter(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric())
}

pub(super) fn followed_by_digit(text: &str, at: usize) -> bool {
    text[at..]
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
}

pub(super) fn pin_of(s: Option<regex::Match>) -> Option<String> {
    s.map(|m| {
        m.as_str()
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| if c == '–' || c == '—' { '-' } else { c })
            .collect()
    })
}
