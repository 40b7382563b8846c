//! `quotes must match exactly`: a quotation the index found (folded for case, quotation marks
//! and ellipses) is held to its page character for character. Only runs of white space may
//! differ, since a line break in a source is a space in a draft.

use super::claim::{Key, Kind, Outcome, Status};
use super::evidence::Evidence;

/// Marks every supported quotation that is not on its page character for character as
/// unsupported, saying what the page reads instead.
pub fn hold_quotes_exactly(outcomes: &mut [Outcome], ev: &Evidence) {
    let wanted: Vec<(usize, (String, u32))> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.claim.kind == Kind::Quote && o.status == Status::Supported)
        .filter_map(|(i, o)| o.source.as_ref().map(|l| (i, (l.file.clone(), l.page))))
        .collect();
    if wanted.is_empty() {
        return;
    }
    let pages = ev.page_texts(&wanted.iter().map(|(_, w)| w.clone()).collect::<Vec<_>>());
    for ((i, (_, page)), text) in wanted.into_iter().zip(pages) {
        let o = &mut outcomes[i];
        let Key::Quote { text: quoted } = &o.claim.key else {
            continue;
        };
        if text.is_some_and(|t| contains_exactly(&t, quoted)) {
            continue;
        }
        o.status = Status::Unsupported;
        o.reason = Some(format!(
            "page {page} has these words, but not character for character (`quotes must match exactly`); quote the page as it reads, or use `quotes must match`"
        ));
    }
}

/// Whether `needle` is in `hay` with the same characters, any run of white space in either
/// matching any run in the other.
pub fn contains_exactly(hay: &str, needle: &str) -> bool {
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let needle = squeeze(needle);
    !needle.is_empty() && squeeze(hay).contains(&needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_white_space_may_differ() {
        let page = "The tenant shall  pay\nrent on the first day.";
        assert!(contains_exactly(page, "shall pay rent"));
        assert!(contains_exactly(page, "tenant shall pay\trent on"));
        assert!(!contains_exactly(page, "Shall pay rent"), "case");
        assert!(!contains_exactly(page, "shall … rent"), "ellipsis");
        assert!(!contains_exactly(page, "[shall] pay rent"), "brackets");
        assert!(
            !contains_exactly("the “rent” is due", "the \"rent\" is due"),
            "marks"
        );
        assert!(!contains_exactly(page, "  "));
    }
}
