//! Finding where quotations may begin in the evidence, word by word. Each quotation's opening
//! is keyed by up to three of its whole words (skipping its first and last word, which a
//! source may extend: `[T]he` quotes `The`); a page's words are hashed in one pass, and a run
//! of words whose hash is a key names the quotations that may start there. The caller
//! compares the quotation's text at that place, so a hash collision costs one comparison and
//! never a wrong answer. Quotations too short to key (two words) are found by substring.
//! Openings wanted only as whole words (to say that a source has a quotation's first words
//! but not the rest) are keyed by their first three words.
//!
//! Every occurrence is found: a word inside a quotation, with words on both sides, is a whole
//! word of the page wherever the quotation occurs, so the key's words are consecutive words
//! of the page there.

use foldhash::HashMap;
use memchr::memmem::Finder;

/// Words are runs of ASCII letters and digits and non-ASCII characters; everything else
/// separates them.
const WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c >= 0x80;
        b += 1;
    }
    t
};

const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

/// A word's hash, eight bytes at a time.
fn hash_word(w: &[u8]) -> u64 {
    let mut h = w.len() as u64;
    let mut chunks = w.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
        h = (h ^ v).wrapping_mul(MIX).rotate_left(31);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // The last bytes as a little-endian word padded with zeros, shifted in one by one:
        // a word's tail is short, and copying it into a buffer would cost a call.
        let v = rest
            .iter()
            .rev()
            .fold(0u64, |v, &b| (v << 8) | u64::from(b));
        h = (h ^ v).wrapping_mul(MIX).rotate_left(31);
    }
    h ^ (h >> 29)
}

/// Combines the hashes of consecutive words, in order.
fn combine(acc: u64, word: u64) -> u64 {
    (acc.rotate_left(17) ^ word).wrapping_mul(MIX)
}

/// Calls `f(start, end, hash)` for each word of a text.
fn each_word(text: &str, mut f: impl FnMut(usize, u64)) {
    let b = text.as_bytes();
    let mut i = 0;
    loop {
        while i < b.len() && !WORD[usize::from(b[i])] {
            i += 1;
        }
        if i == b.len() {
            return;
        }
        let start = i;
        while i < b.len() && WORD[usize::from(b[i])] {
            i += 1;
        }
        f(start, hash_word(&b[start..i]));
    }
}

/// The words of a text: (start, hash).
fn words(text: &str) -> Vec<(usize, u64)> {
    let mut out = Vec::new();
    each_word(text, |s, h| out.push((s, h)));
    out
}

/// A quotation that may start at a key: its number, and how far its key's first word is
/// from its start.
#[derive(Clone, Copy, Debug)]
struct Entry {
    quote: usize,
    offset: usize,
}

/// The keys of a set of quotation openings.
pub struct Keys {
    /// By key length (one to three words): combined hash → entries.
    by_len: [HashMap<u64, Vec<Entry>>; 3],
    /// One bit per combined hash's top 16 bits, to pass over most words at once.
    filter: Vec<u64>,
    /// Quotations with no inner word to key on, found by substring.
    short: Vec<(usize, Finder<'static>)>,
}

const MAX_KEY: usize = 3;

impl Keys {
    /// `openings[i]` is what candidate `i` begins with (normalised text), and whether only
    /// whole-word occurrences are wanted (then its first three words are the key).
    pub fn new(openings: &[(&str, bool)]) -> Keys {
        let mut keys = Keys {
            by_len: Default::default(),
            filter: vec![0; 1 << 10],
            short: Vec::new(),
        };
        for (quote, &(opening, whole)) in openings.iter().enumerate() {
            let w = words(opening);
            if whole && !w.is_empty() {
                let key = &w[..w.len().min(MAX_KEY)];
                keys.add(quote, key);
                continue;
            }
            if w.len() < 3 {
                if !opening.is_empty() {
                    let finder = Finder::new(opening.as_bytes()).into_owned();
                    keys.short.push((quote, finder));
                }
                continue;
            }
            let inner = &w[1..w.len() - 1];
            keys.add(quote, &inner[..inner.len().min(MAX_KEY)]);
        }
        keys
    }

    fn add(&mut self, quote: usize, key: &[(usize, u64)]) {
        let h = key.iter().fold(0, |acc, (_, h)| combine(acc, *h));
        self.set_filter(h);
        self.by_len[key.len() - 1]
            .entry(h)
            .or_default()
            .push(Entry {
                quote,
                offset: key[0].0,
            });
    }

    fn set_filter(&mut self, h: u64) {
        let bit = (h >> 48) as usize;
        self.filter[bit / 64] |= 1 << (bit % 64);
    }

    fn maybe(&self, h: u64) -> bool {
        let bit = (h >> 48) as usize;
        self.filter[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// Calls `f(quote, start)` for every place on `text` where a quotation may begin: its key
    /// words are there (for short quotations, its whole text is). Places come in no
    /// particular order; `start` is a byte offset, not always a character boundary.
    pub fn candidates(&self, text: &str, mut f: impl FnMut(usize, usize)) {
        let [one, two, three] = self.by_len.each_ref().map(|m| !m.is_empty());
        if one || two || three {
            let mut check = |k: usize, combined: u64, first: usize| {
                if !self.maybe(combined) {
                    return;
                }
                if let Some(entries) = self.by_len[k].get(&combined) {
                    for e in entries {
                        if let Some(s) = first.checked_sub(e.offset) {
                            f(e.quote, s);
                        }
                    }
                }
            };
            // The last three words' starts and hashes, newest last.
            let (mut s1, mut s2) = (usize::MAX, usize::MAX);
            let (mut h1, mut h2) = (0u64, 0u64);
            each_word(text, |s3, h3| {
                if one {
                    check(0, combine(0, h3), s3);
                }
                if two && s2 != usize::MAX {
                    check(1, combine(combine(0, h2), h3), s2);
                }
                if three && s1 != usize::MAX {
                    check(2, combine(combine(combine(0, h1), h2), h3), s1);
                }
                (s1, s2, h1, h2) = (s2, s3, h2, h3);
            });
        }
        for (quote, finder) in &self.short {
            let mut from = 0;
            while let Some(i) = finder.find(&text.as_bytes()[from..]) {
                f(*quote, from + i);
                from += i + 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(openings: &[&str], text: &str) -> Vec<(usize, usize)> {
        let with: Vec<(&str, bool)> = openings.iter().map(|o| (*o, false)).collect();
        let keys = Keys::new(&with);
        let mut out = Vec::new();
        keys.candidates(text, |q, s| {
            if text.as_bytes()[s..].starts_with(openings[q].as_bytes()) {
                out.push((q, s));
            }
        });
        out.sort_unstable();
        out
    }

    /// Every place each opening occurs, by plain substring search.
    fn brute(openings: &[&str], text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (q, o) in openings.iter().enumerate() {
            for s in 0..text.len() {
                if !o.is_empty() && text.as_bytes()[s..].starts_with(o.as_bytes()) {
                    out.push((q, s));
                }
            }
        }
        out
    }

    #[test]
    fn every_occurrence_is_a_candidate() {
        let text = "(\"The landlord shall repair\" and the landlord shall repair, he landlord shall repair it)";
        let openings = [
            "The landlord shall repair",
            "he landlord shall repair",
            "landlord shall repair",
            "shall repair",
        ];
        let found = starts(&openings, text);
        assert_eq!(found, brute(&openings, text));
        assert_eq!(found.len(), 10);
    }

    #[test]
    fn keys_ignore_what_surrounds_the_words() {
        // Non-ASCII words, punctuation glued to words, a partial first and last word.
        let text = "Sección «el arrendador deberá reparar» hoy";
        assert_eq!(starts(&["l arrendador deberá rep"], text), vec![(0, 12)]);
        assert!(starts(&["el arrendador debería reparar"], text).is_empty());
    }

    #[test]
    fn whole_word_openings_match_only_whole_words() {
        let text = "the landlord shall; he landlord shall";
        let keys = Keys::new(&[("he landlord shall", true)]);
        let mut got = Vec::new();
        keys.candidates(text, |q, s| got.push((q, s)));
        assert_eq!(got, vec![(0, 20)]);
    }

    proptest::proptest! {
        #[test]
        fn candidates_cover_every_occurrence(
            words in proptest::collection::vec(
                proptest::sample::select(vec!["a", "the", "rent", "é", "(b)", "x-y", "\"q\"", "12,5", ""]),
                1..40,
            ),
            seps in proptest::collection::vec(proptest::sample::select(vec![" ", ", ", " (", "'", ""]), 40),
            cuts in proptest::collection::vec((0usize..200, 1usize..60), 1..6),
        ) {
            let text: String = words.iter().zip(&seps).map(|(w, s)| format!("{w}{s}")).collect();
            let openings: Vec<&str> = cuts
                .iter()
                .filter_map(|(s, len)| {
                    let s = s % text.len().max(1);
                    let e = (s + len).min(text.len());
                    text.get(s..e)
                })
                .collect();
            proptest::prop_assert_eq!(starts(&openings, &text), brute(&openings, &text));
        }
    }
}
