//! Every redacted string looked for in one pass over each file the read-back reads.

use std::collections::BTreeSet;

use super::types::Pattern;
use crate::winansi;

/// A string that was redacted, where, and whether it is looked for everywhere (a pattern's
/// match) or only on its page (what a declared box covered).
#[derive(Clone, Debug)]
pub struct Redacted {
    pub text: String,
    pub label: String,
    pub place: String,
    /// The page's Bates number when only a box covered it.
    pub page: Option<String>,
}

/// Runs of whitespace made one space.
pub(super) fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

pub(super) fn byte_forms(s: &str) -> Vec<Vec<u8>> {
    let mut v = vec![s.as_bytes().to_vec()];
    if let Ok(w) = winansi::encode(s) {
        v.push(w);
    }
    if let Ok(l) = winansi::literal(s) {
        v.push(l);
    }
    v.dedup();
    v
}

/// Every needle looked for in one pass over a file: its byte forms as written, and its
/// letters squashed (no spaces, lower case) as a text layer or OCR shows them.
pub(super) struct Finder<'a> {
    pub(super) needles: Vec<&'a Redacted>,
    bytes: Option<aho_corasick::AhoCorasick>,
    bytes_of: Vec<usize>,
    squashed: Option<aho_corasick::AhoCorasick>,
    /// The patterns themselves, searched one by one if an automaton could not be built.
    forms: Vec<Vec<u8>>,
    squashed_forms: Vec<String>,
    /// For each needle, the rule that matched it when that rule asks for whole words (`\b`):
    /// the needle counts only where the rule itself would match it, never inside a longer
    /// word (`company` in `accompanying`).
    rules: Vec<Option<regex::Regex>>,
}

/// Whether `c` is part of a word, as the rules' `\b` reads it.
fn word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80
}

impl<'a> Finder<'a> {
    pub(super) fn new(needles: Vec<&'a Redacted>, patterns: &[Pattern]) -> Finder<'a> {
        let rules = needles
            .iter()
            .map(|r| {
                if r.page.is_some() {
                    return None;
                }
                patterns
                    .iter()
                    .filter(|p| p.regex.as_str().contains(r"\b"))
                    .find(|p| {
                        p.regex
                            .find(&r.text)
                            .is_some_and(|m| m.start() == 0 && m.end() == r.text.len())
                    })
                    .map(|p| p.regex.clone())
            })
            .collect();
        let mut forms = Vec::new();
        let mut bytes_of = Vec::new();
        for (i, r) in needles.iter().enumerate() {
            for f in byte_forms(&r.text).into_iter().filter(|f| !f.is_empty()) {
                forms.push(f);
                bytes_of.push(i);
            }
        }
        let squashed: Vec<String> = needles.iter().map(|r| squash(&r.text)).collect();
        // (`needles` keeps only strings of four letters or more, so no pattern is empty.)
        let build = |pats: &[&[u8]]| {
            aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::Standard)
                .build(pats)
                .ok()
        };
        let form_refs: Vec<&[u8]> = forms.iter().map(Vec::as_slice).collect();
        let sq_refs: Vec<&[u8]> = squashed.iter().map(|s| s.as_bytes()).collect();
        Finder {
            bytes: build(&form_refs),
            bytes_of,
            squashed: build(&sq_refs),
            needles,
            forms,
            squashed_forms: squashed,
            rules,
        }
    }

    /// Whether needle `i` found at `hay[a..b]` stands as its rule would match it: not inside
    /// a longer word when the rule asks for whole words.
    fn stands(&self, i: usize, hay: &[u8], a: usize, b: usize) -> bool {
        if self.rules[i].is_none() {
            return true;
        }
        let text = self.needles[i].text.as_bytes();
        let open = !text.first().is_some_and(|&c| word_byte(c)) || a == 0 || !word_byte(hay[a - 1]);
        let close =
            !text.last().is_some_and(|&c| word_byte(c)) || b >= hay.len() || !word_byte(hay[b]);
        open && close
    }

    /// Which needles a text a person reads (a text layer, OCR, a text file or a load file)
    /// holds, by index: a needle whose rule asks for whole words where that rule matches it
    /// in the text, with the rule's own case; any other as its letters, squashed (see
    /// `squash`), so OCR's stray spaces do not hide it.
    pub(super) fn in_text(&self, text: &str) -> BTreeSet<usize> {
        let mut out: BTreeSet<usize> = self
            .in_squashed(&squash(text))
            .into_iter()
            .filter(|&i| self.rules[i].is_none())
            .collect();
        let shown = collapse(text);
        for (i, rule) in self.rules.iter().enumerate() {
            let Some(rule) = rule else {
                continue;
            };
            let want = squash(&self.needles[i].text);
            if rule.find_iter(&shown).any(|m| squash(m.as_str()) == want) {
                out.insert(i);
            }
        }
        out
    }

    /// Which needles `hay` holds in one of their byte forms, by index.
    pub(super) fn in_bytes(&self, hay: &[u8]) -> BTreeSet<usize> {
        let Some(ac) = &self.bytes else {
            return (self.forms.iter().zip(&self.bytes_of))
                .filter(|(f, i)| {
                    memchr::memmem::find_iter(hay, f).any(|a| self.stands(**i, hay, a, a + f.len()))
                })
                .map(|(_, i)| *i)
                .collect();
        };
        ac.find_overlapping_iter(hay)
            .filter(|m| {
                let i = self.bytes_of[m.pattern().as_usize()];
                self.stands(i, hay, m.start(), m.end())
            })
            .map(|m| self.bytes_of[m.pattern().as_usize()])
            .collect()
    }

    /// Which needles a squashed text (see `squash`) holds, by index.
    pub(super) fn in_squashed(&self, hay: &str) -> BTreeSet<usize> {
        let Some(ac) = &self.squashed else {
            return (self.squashed_forms.iter().enumerate())
                .filter(|(_, f)| hay.contains(f.as_str()))
                .map(|(i, _)| i)
                .collect();
        };
        ac.find_overlapping_iter(hay)
            .map(|m| m.pattern().as_usize())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word_rule() -> Pattern {
        Pattern {
            name: "pattern".into(),
            regex: regex::Regex::new(r"\b(company|world)\b").unwrap(),
            reason: "Name".into(),
        }
    }

    #[test]
    fn a_whole_word_rule_is_found_as_a_word_and_never_inside_one() {
        let r = Redacted {
            text: "company".into(),
            label: "REDACTED – NAME".into(),
            place: "a.txt page 1".into(),
            page: None,
        };
        let f = Finder::new(vec![&r], &[word_rule()]);
        // Inside longer words, or in another case than the rule's: nothing.
        assert!(f.in_text("the accompanying papers").is_empty());
        assert!(f.in_text("Hewlett-Packard Company").is_empty());
        assert!(f
            .in_bytes(b"/Notice (accompanying font licence)")
            .is_empty());
        // The word itself, in a text layer, OCR or the bytes of a stream: found.
        assert_eq!(f.in_text("sent by the company, in March").len(), 1);
        assert_eq!(f.in_text("the\ncompany").len(), 1);
        assert_eq!(f.in_bytes(b"BT (the company) Tj ET").len(), 1);
        // A string a box covered is still found anywhere on its page.
        let boxed = Redacted {
            page: Some("T001".into()),
            ..r.clone()
        };
        let f = Finder::new(vec![&boxed], &[word_rule()]);
        assert_eq!(f.in_text("the accompanying papers").len(), 1);
    }
}
