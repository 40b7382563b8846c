//! Whether a model's answer is finished: an answer lexrun cut (the model repeating itself,
//! the token limit) or one that still holds blanks to fill (`[Date]`, `[Client's Name]`,
//! `____`, `TBD`, `XX/XX/XXXX`) is *incomplete*. It may feed later stages, but whatever is
//! made of it leaves the run only as a marked draft, and the run's exit code says so.
//!
//! And whether a verification that passed had anything to check: a draft of substance in
//! which the verifier found almost no claim passed because there was nothing to hold it to.

use std::sync::LazyLock;

use regex::Regex;

use crate::backend::stream::REPETITION;

/// Why an answer is incomplete, or `None` when it is a finished answer: cut by lexrun or the
/// server (`finish`), or holding placeholders.
pub(super) fn why_incomplete(text: &str, finish: Option<&str>, tokens: u64) -> Option<String> {
    let cut = match finish {
        Some(REPETITION) => Some(format!(
            "its answer was cut: the model was repeating itself, and lexrun stopped reading after {tokens} tokens, so the text ends where the loop began"
        )),
        Some("length") => Some(format!(
            "its answer was cut at the token limit ({tokens} tokens): the text may stop mid-sentence (raise the stage's `max_tokens`, or ask for less)"
        )),
        _ => None,
    };
    let blanks = placeholders(text);
    let blanks = (!blanks.is_empty()).then(|| {
        let shown: Vec<String> = blanks.iter().take(5).map(|b| format!("`{b}`")).collect();
        format!(
            "its text holds {} placeholder{} left to fill: {}{}",
            blanks.len(),
            if blanks.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if blanks.len() > 5 { ", …" } else { "" }
        )
    });
    match (cut, blanks) {
        (None, None) => None,
        (Some(c), None) => Some(c),
        (None, Some(b)) => Some(b),
        (Some(c), Some(b)) => Some(format!("{c}; and {b}")),
    }
}

/// Words that make a bracketed phrase a blank to fill (`[Date]`, `[Client's Name]`,
/// `[Insert amount]`) rather than an editor's alteration of a quotation (`[t]he`, `[sic]`,
/// `[the Landlord]`).
const BLANK_WORDS: &[&str] = &[
    "name",
    "names",
    "date",
    "dates",
    "address",
    "amount",
    "number",
    "no",
    "phone",
    "telephone",
    "email",
    "e-mail",
    "signature",
    "zip",
    "insert",
    "enter",
    "placeholder",
    "day",
    "month",
    "year",
    "figure",
    "sum",
    "tbd",
];

/// Small words a blank's title may hold besides capitalised ones (`[Date of Notice]`).
const JOINERS: &[&str] = &[
    "of", "or", "and", "the", "for", "to", "/", "&", "-", "a", "an",
];

static BRACKETED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[([^\[\]\n]{1,60})\]").expect("a valid pattern"));
static UNDERSCORES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"_{4,}").expect("valid"));
static TBD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b(?:TBD|TBA)\b").expect("valid"));
static MASKED_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:x{1,2}|mm|dd)/(?:x{1,2}|dd|mm)/(?:x{2,4}|yyyy|yy)\b").expect("valid")
});
static MASKED_AMOUNT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\$ ?X{1,3}(?:,XXX)*(?:\.XX)?\b").expect("valid"));
static TEMPLATE_FIELD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{\{[^{}\n]{1,40}\}\}").expect("valid"));

/// The placeholders in `text`, in order, each once.
pub(super) fn placeholders(text: &str) -> Vec<String> {
    let mut found: Vec<(usize, String)> = Vec::new();
    for c in BRACKETED.captures_iter(text) {
        let whole = c.get(0).expect("a match");
        // A Markdown link's text is not a blank.
        if text[whole.end()..].starts_with('(') {
            continue;
        }
        if is_blank(&c[1]) {
            found.push((whole.start(), whole.as_str().to_string()));
        }
    }
    for m in UNDERSCORES.find_iter(text) {
        // A line of nothing but underscores is a Markdown rule.
        let line_start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[m.end()..]
            .find('\n')
            .map_or(text.len(), |i| m.end() + i);
        if text[line_start..line_end]
            .chars()
            .all(|c| c == '_' || c.is_whitespace())
        {
            continue;
        }
        found.push((m.start(), m.as_str().to_string()));
    }
    for re in [&*TBD, &*MASKED_DATE, &*MASKED_AMOUNT, &*TEMPLATE_FIELD] {
        for m in re.find_iter(text) {
            found.push((m.start(), m.as_str().to_string()));
        }
    }
    found.sort();
    let mut seen = std::collections::BTreeSet::new();
    found
        .into_iter()
        .filter(|(_, s)| seen.insert(s.clone()))
        .map(|(_, s)| s)
        .collect()
}

/// Whether the inside of a bracket is a blank's title: capitalised words (or small joiners)
/// of which one names what is to be filled in, or an instruction to insert something.
fn is_blank(inner: &str) -> bool {
    let words: Vec<&str> = inner.split_whitespace().collect();
    if words.is_empty() || words.len() > 6 {
        return false;
    }
    let first = words[0].to_lowercase();
    if first == "insert" || first == "enter" {
        return true;
    }
    let bare = |w: &str| {
        w.trim_end_matches("'s")
            .trim_end_matches("’s")
            .trim_matches(|c: char| !c.is_alphanumeric() && c != '-')
            .to_lowercase()
    };
    let titled = words.iter().all(|w| {
        JOINERS.contains(&w.to_lowercase().as_str())
            || w.chars().next().is_some_and(char::is_uppercase)
    });
    titled
        && words
            .iter()
            .any(|w| BLANK_WORDS.contains(&bare(w).as_str()))
}

/// Words in a text, as a reader counts them.
pub(super) fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

/// How many words make a draft one of substance, in which a verifier finding (almost)
/// nothing to check is itself worth saying.
pub(super) const SUBSTANTIAL_WORDS: usize = 300;

/// The note on a verification that passed a draft of substance with almost nothing in it to
/// check (0 or 1 claims in [`SUBSTANTIAL_WORDS`] words or more), or `None`.
pub(super) fn thin_pass(text: &str, claims: usize) -> Option<String> {
    let words = word_count(text);
    (words >= SUBSTANTIAL_WORDS && claims <= 1).then(|| {
        format!(
            "passed with {claims} checkable claim{} in {words} words: almost nothing in this text cites the record (no Bates numbers, dates, amounts, citations or quotations to check), so the pass says little; read it against the sources",
            if claims == 1 { "" } else { "s" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanks_left_to_fill_are_found() {
        let text =
            "Dated [Date]. Signed by [Demonstrator's Name], for [CLIENT NAME] on XX/XX/XXXX.\n\
                    Amount: $X,XXX.XX. Hearing: TBD. Signature: ________ and {{ matter.client }}.";
        assert_eq!(
            placeholders(text),
            vec![
                "[Date]",
                "[Demonstrator's Name]",
                "[CLIENT NAME]",
                "XX/XX/XXXX",
                "$X,XXX.XX",
                "TBD",
                "________",
                "{{ matter.client }}"
            ]
        );
        assert_eq!(
            placeholders("[Insert the amount owed]"),
            vec!["[Insert the amount owed]"]
        );
    }

    #[test]
    fn an_editors_brackets_and_rules_are_not_blanks() {
        let text = "\"[T]he tenant shall [sic] pay\" [emphasis added]; [the Landlord] agreed.\n\
                    See [the lease](lease.pdf) and [Name](https://example.com).\n\n________\n\n\
                    The plan; paid $1,200 on 03/04/2024 [Exhibit 4].";
        assert_eq!(placeholders(text), Vec::<String>::new());
    }

    #[test]
    fn a_cut_answer_and_blanks_are_both_said() {
        assert!(why_incomplete("Fine text.", Some("stop"), 40).is_none());
        let w = why_incomplete("The payment", Some(REPETITION), 412).unwrap();
        assert!(
            w.contains("repeating itself") && w.contains("412 tokens"),
            "{w}"
        );
        let w = why_incomplete("Dear [Name], …", Some("length"), 512).unwrap();
        assert!(w.contains("token limit") && w.contains("`[Name]`"), "{w}");
    }

    #[test]
    fn a_long_draft_with_nothing_to_check_is_a_thin_pass() {
        let long = "The tenant paid rent and the landlord did not repair. ".repeat(40);
        assert!(thin_pass(&long, 1)
            .unwrap()
            .contains("1 checkable claim in 400 words"));
        assert!(thin_pass(&long, 2).is_none());
        assert!(thin_pass("A short note.", 0).is_none());
    }
}
