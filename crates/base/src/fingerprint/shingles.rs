//! Fingerprints of a text for recognising copies: hashes of word 3-grams over the text
//! folded (`fold`: compatibility forms, invisible characters, look-alike letters, case and
//! accents) and split into words (so re-wrapping, punctuation and file format do not matter), winnowed (the smallest hash of every two neighbours) so that a long text keeps a
//! sparse, position-independent subset. Two texts that share any run of four words share a
//! fingerprint, so a copy with one word in five changed is still recognised.

const K: usize = 3;
const W: usize = 2;

/// A 64-bit hash of each word of the folded text.
fn words(text: &str) -> Vec<u64> {
    let folded = super::fold::fold(text);
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            // FNV-1a over the folded bytes.
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for b in w.bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            h
        })
        .collect()
}

/// The hash of the folded text's words in order: the same for any copy that differs only in
/// wrapping, punctuation, file format, case or disguise.
pub fn text_hash(text: &str) -> String {
    text_hash_pages(&[text])
}

/// [`text_hash`] of the pages joined by line breaks, without joining them.
pub fn text_hash_pages(pages: &[impl AsRef<str>]) -> String {
    // The words, each followed by one space, hashed in one call (many small updates cost
    // more than the hashing itself).
    let mut words = Vec::with_capacity(pages.iter().map(|p| p.as_ref().len() + 1).sum());
    let mut in_word = false;
    for p in pages {
        super::fold::fold_words(p.as_ref(), &mut words, &mut in_word);
        // The line break between pages ends a word.
        if in_word {
            words.push(b' ');
            in_word = false;
        }
    }
    blake3::hash(&words).to_hex().to_string()
}

/// Words hashed as lexrun did before folding text (lower case only): the fingerprints a
/// ledger of format 1 holds, still compared so that nothing it recorded is lost.
fn legacy_words(text: &str) -> Vec<u64> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for c in w.chars().flat_map(char::to_lowercase) {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    h ^= b as u64;
                    h = h.wrapping_mul(0x0100_0000_01b3);
                }
            }
            h
        })
        .collect()
}

/// The fingerprints lexrun computed before folding text, for ledgers of format 1.
pub fn legacy_fingerprints(text: &str) -> Vec<u64> {
    winnow(legacy_words(text))
}

/// The text hash lexrun computed before folding text, for ledgers of format 1.
pub fn legacy_text_hash(text: &str) -> String {
    let mut h = blake3::Hasher::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        h.update(w.to_lowercase().as_bytes());
        h.update(b" ");
    }
    h.finalize().to_hex().to_string()
}

/// splitmix64's finaliser: spreads the bits of a combined n-gram hash.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn hash(ws: &[u64]) -> u64 {
    mix(ws.iter().fold(0u64, |acc, w| acc.rotate_left(23) ^ w))
}

/// The winnowed fingerprints of `text`, sorted and unique.
pub fn fingerprints(text: &str) -> Vec<u64> {
    winnow(words(text))
}

fn winnow(ws: Vec<u64>) -> Vec<u64> {
    if ws.is_empty() {
        return Vec::new();
    }
    if ws.len() < K {
        return vec![hash(&ws)];
    }
    let grams: Vec<u64> = ws.windows(K).map(hash).collect();
    let mut out: Vec<u64> = if grams.len() <= W {
        grams.iter().copied().min().into_iter().collect()
    } else {
        grams
            .windows(W)
            .filter_map(|w| w.iter().copied().min())
            .collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// The share of `a`'s fingerprints found in `b` (both sorted).
pub fn containment(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    let n = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
    n as f64 / a.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text hash by its definition: fold the text, split it into words, hash the words
    /// each followed by a space.
    fn reference_hash(text: &str) -> String {
        let folded = crate::fingerprint::fold::fold(text);
        let mut words = String::new();
        for w in folded
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            words.push_str(w);
            words.push(' ');
        }
        blake3::hash(words.as_bytes()).to_hex().to_string()
    }

    #[test]
    fn hashing_pages_is_hashing_their_folded_words_joined() {
        let old = |pages: &[String]| reference_hash(&pages.join("\n"));
        let alphabet: Vec<char> =
            "aZ9 .,e\u{301}\u{327}\u{1100}\u{1161}\u{FB01}\u{200B}\u{00AD}§—“ｌа\u{2460}\n"
                .chars()
                .collect();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..5_000 {
            let pages: Vec<String> = (0..next() % 4)
                .map(|_| {
                    (0..next() % 10)
                        .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                        .collect()
                })
                .collect();
            assert_eq!(text_hash_pages(&pages), old(&pages), "{pages:?}");
        }
    }

    #[test]
    fn the_text_hash_is_the_hash_of_the_folded_words() {
        for t in [
            "Rent: $2,150.00 (SMITH000002).",
            "  a  b ",
            "",
            "Ünïcode — § 1983 ﬁle",
        ] {
            assert_eq!(text_hash(t), reference_hash(t), "{t}");
        }
    }

    const TEXT: &str =
        "I have rented Unit 3B at 1420 Harbor View Drive since June 1, 2022. My rent is \
        $2,150.00 per month and I paid a security deposit when I moved in. On November 14, 2023 I \
        noticed black mold spreading on the bedroom wall under the window and reported it to the \
        landlord by email the same day and again on December 2, 2023. Nobody came to inspect it.";

    #[test]
    fn look_alike_copies_have_the_same_fingerprints() {
        let disguised: String = TEXT
            .chars()
            .map(|c| match c {
                'a' => 'а',
                'e' => 'е',
                'o' => 'о',
                _ => c,
            })
            .collect::<String>()
            .replace("mold", "mo\u{200B}ld")
            .replace("landlord", "land\u{00AD}lord");
        assert_eq!(fingerprints(&disguised), fingerprints(TEXT));
        assert_eq!(text_hash(&disguised), text_hash(TEXT));
    }

    #[test]
    fn rewrapping_and_case_do_not_matter() {
        let a = fingerprints(TEXT);
        let b = fingerprints(&TEXT.to_uppercase().replace(' ', "\n"));
        assert_eq!(a, b);
        assert!(a.len() > 10);
    }

    #[test]
    fn edited_copies_keep_a_share_unrelated_text_none() {
        let a = fingerprints(TEXT);
        let words: Vec<&str> = TEXT.split(' ').collect();
        let edited: Vec<String> = words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if i % 10 == 3 {
                    "changed".to_string()
                } else {
                    w.to_string()
                }
            })
            .collect();
        let c = containment(&a, &fingerprints(&edited.join(" ")));
        assert!(c > 0.3, "{c}");
        let other = fingerprints("The invoice from Bay Area Mold Solutions lists testing and removal of mold in Unit 3B, paid in full on January 9, 2024, by the tenant.");
        assert!(containment(&a, &other) < 0.05);
    }
}
