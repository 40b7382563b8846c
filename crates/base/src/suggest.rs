//! "Did you mean …?" for names a person mistyped.

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    if word.is_empty() {
        return None;
    }
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .filter(|c| *c != word)
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (word.len().max(c.len()) / 3).max(1))
        .min_by_key(|(d, c)| (*d, c.len()))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::did_you_mean;

    #[test]
    fn finds_close_names_only() {
        assert_eq!(did_you_mean("drafer", ["drafter", "gate"]), Some("drafter"));
        assert_eq!(did_you_mean("stgae", ["stage", "pool"]), Some("stage"));
        assert_eq!(did_you_mean("zzz", ["drafter", "gate"]), None);
        assert_eq!(did_you_mean("", ["a"]), None);
    }
}
