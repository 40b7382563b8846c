//! Every redacted string looked for in one pass over each file the read-back reads.

use std::collections::BTreeSet;

use crate::exhibits::winansi;

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
}

impl<'a> Finder<'a> {
    pub(super) fn new(needles: Vec<&'a Redacted>) -> Finder<'a> {
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
        }
    }

    /// Which needles `hay` holds in one of their byte forms, by index.
    pub(super) fn in_bytes(&self, hay: &[u8]) -> BTreeSet<usize> {
        let Some(ac) = &self.bytes else {
            return (self.forms.iter().zip(&self.bytes_of))
                .filter(|(f, _)| memchr::memmem::find(hay, f).is_some())
                .map(|(_, i)| *i)
                .collect();
        };
        ac.find_overlapping_iter(hay)
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
