//! Folding text to the form copies are compared in, so that a copy dressed up to look new is
//! still the same text: Unicode compatibility forms (NFKC: full-width letters, ligatures,
//! superscripts), invisible characters (zero-width spaces and joiners, soft hyphens, word
//! joiners, byte-order marks), look-alike letters from other scripts (Cyrillic `а` for Latin
//! `a`: the confusable skeleton of Unicode TR39), case, and accents.

use std::sync::LazyLock;

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;
use unicode_security::confusable_detection::skeleton;

/// Characters that change nothing a reader sees, removed before anything else so that they
/// cannot split a word in two.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// One character, lower-cased, to its skeleton, lower-cased again, without accents.
fn fold_char(c: char, out: &mut String) {
    for l in c.to_lowercase() {
        let mut buf = [0u8; 4];
        for s in skeleton(l.encode_utf8(&mut buf)) {
            if is_combining_mark(s) {
                continue;
            }
            out.extend(s.to_lowercase());
        }
    }
}

/// The folded form of every ASCII character, computed once through the same path as any
/// other character: most evidence is ASCII, and a table lookup is what keeps fingerprinting
/// as fast as before.
static ASCII: LazyLock<Vec<String>> = LazyLock::new(|| {
    (0u8..128)
        .map(|b| {
            let mut s = String::new();
            fold_char(b as char, &mut s);
            s
        })
        .collect()
});

/// `text` folded: NFKC, invisible characters removed, then per character lower case, the
/// TR39 skeleton, lower case again, combining marks dropped.
pub fn fold(text: &str) -> String {
    let table = &*ASCII;
    let mut out = String::with_capacity(text.len());
    if text.is_ascii() {
        push_ascii(text.as_bytes(), table, &mut out);
        return out;
    }
    // Normalisation cannot reach across the start of an ASCII character (each is a starter
    // that nothing before it composes with), so the text is cut there: ASCII characters whose
    // next character is ASCII too go through the table, and each remaining piece (an ASCII
    // character, then the characters up to the next ASCII one) through NFKC on its own. On
    // mostly-ASCII evidence this is several times faster than normalising the whole text,
    // with the same result.
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let Some(n) = b[i..].iter().position(|&x| x >= 0x80) else {
            push_ascii(&b[i..], table, &mut out);
            break;
        };
        // The ASCII character just before the run may compose with it: it goes with the run.
        let run_start = if n > 0 { i + n - 1 } else { i };
        push_ascii(&b[i..run_start], table, &mut out);
        let run_end = b[i + n..]
            .iter()
            .position(|&x| x < 0x80)
            .map_or(b.len(), |m| i + n + m);
        fold_normalised(&text[run_start..run_end], table, &mut out);
        i = run_end;
    }
    out
}

/// The words of `text` as [`fold`] folds it (the runs of alphanumeric characters), each
/// followed by one space, appended to `out` — the same bytes as folding the text and then
/// splitting it, in one pass and without the folded copy. `in_word` says whether `out` ends
/// inside a word; it carries across calls, so that a text can be given in pieces that a
/// non-alphanumeric character separates.
pub fn fold_words(text: &str, out: &mut Vec<u8>, in_word: &mut bool) {
    let table = &*ASCII;
    let one = &*ONE;
    let b = text.as_bytes();
    let mut i = 0;
    let mut piece = String::new();
    while i < b.len() {
        let Some(n) = b[i..].iter().position(|&x| x >= 0x80) else {
            ascii_words(&b[i..], one, table, out, in_word);
            break;
        };
        let run_start = if n > 0 { i + n - 1 } else { i };
        ascii_words(&b[i..run_start], one, table, out, in_word);
        let run_end = b[i + n..]
            .iter()
            .position(|&x| x < 0x80)
            .map_or(b.len(), |m| i + n + m);
        piece.clear();
        fold_normalised(&text[run_start..run_end], table, &mut piece);
        for c in piece.chars() {
            word_char(c, out, in_word);
        }
        i = run_end;
    }
}

/// One folded character into the words: part of a word, or the end of one.
fn word_char(c: char, out: &mut Vec<u8>, in_word: &mut bool) {
    if c.is_alphanumeric() {
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        *in_word = true;
    } else if *in_word {
        out.push(b' ');
        *in_word = false;
    }
}

/// ASCII bytes folded into the words, a byte at a time.
fn ascii_words(
    bytes: &[u8],
    one: &[u8; 128],
    table: &[String],
    out: &mut Vec<u8>,
    in_word: &mut bool,
) {
    let same = &*SAME;
    let mut i = 0;
    while i < bytes.len() {
        // A run of letters and digits that fold to themselves, copied at once.
        let start = i;
        while i < bytes.len() && same[bytes[i] as usize] {
            i += 1;
        }
        if i > start {
            out.extend_from_slice(&bytes[start..i]);
            *in_word = true;
        }
        let Some(&x) = bytes.get(i) else { break };
        i += 1;
        match one[x as usize] {
            0 => {
                for c in table[x as usize].chars() {
                    word_char(c, out, in_word);
                }
            }
            f if f.is_ascii_alphanumeric() => {
                out.push(f);
                *in_word = true;
            }
            _ if *in_word => {
                out.push(b' ');
                *in_word = false;
            }
            _ => {}
        }
    }
}

/// The ASCII letters and digits that fold to themselves.
static SAME: LazyLock<[bool; 128]> = LazyLock::new(|| {
    let mut same = [false; 128];
    for (b, s) in ASCII.iter().enumerate() {
        same[b] = s.len() == 1 && s.as_bytes()[0] == b as u8 && (b as u8).is_ascii_alphanumeric();
    }
    same
});

/// Each ASCII byte's folded form when it is one byte (upper case to lower), else 0.
static ONE: LazyLock<[u8; 128]> = LazyLock::new(|| {
    let mut one = [0u8; 128];
    for (b, s) in ASCII.iter().enumerate() {
        if s.len() == 1 {
            one[b] = s.as_bytes()[0];
        }
    }
    one
});

/// ASCII bytes folded through the table: one byte each (upper case to lower) in all but the
/// rare cases the table maps to more.
fn push_ascii(bytes: &[u8], table: &[String], out: &mut String) {
    let one = &*ONE;
    out.reserve(bytes.len());
    for &x in bytes {
        match one[x as usize] {
            0 => out.push_str(&table[x as usize]),
            f => out.push(char::from(f)),
        }
    }
}

/// One piece of text through the general path: invisible characters out, NFKC, then each
/// character folded.
fn fold_normalised(piece: &str, table: &[String], out: &mut String) {
    for c in piece.chars().filter(|c| !invisible(*c)).nfkc() {
        if c.is_ascii() {
            out.push_str(&table[c as usize]);
        } else if !invisible(c) {
            fold_char(c, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_fold_to_the_same_text() {
        let plain = fold("The landlord never inspected the mold in Unit 3B.");
        // Cyrillic а, е, о, р, с, х; a zero-width space and a soft hyphen inside words;
        // full-width letters; a ligature.
        for disguised in [
            "The lаndlоrd nеvеr inspесtеd thе mоld in Unit 3B.",
            "The land\u{200B}lord ne\u{00AD}ver in\u{2060}spected the mold in Unit 3B.",
            "The ｌａｎｄｌｏｒｄ never inspected the mold in Unit 3B.",
            "The landlord never inspected the mold in Unit 3B.\u{FEFF}",
            "THE LANDLORD NEVER INSPECTED THE MOLD IN UNIT 3B.",
            "The landlord never inspected the mold in Unit 3B.",
        ] {
            assert_eq!(fold(disguised), plain, "{disguised}");
        }
        assert_eq!(fold("e\u{FB00}ect"), fold("effect"));
        assert_ne!(fold("The tenant"), fold("The landlord"));
    }

    #[test]
    fn cutting_at_ascii_characters_changes_nothing() {
        // Pieces that compose across ASCII letters (a combining accent after `e`, Hangul
        // jamo, a compatibility ligature, an invisible character between letter and mark).
        let alphabet: Vec<char> =
            "ae e\u{301}\u{327}\u{1100}\u{1161}\u{FB01}\u{200B}\u{00AD}§—“ｌа1.\u{0BC6}\u{0BBE}"
                .chars()
                .collect();
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..20_000 {
            let len = (seed % 12) as usize;
            let mut t = String::new();
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                t.push(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            let table = &*ASCII;
            let mut whole = String::new();
            fold_normalised(&t, table, &mut whole);
            assert_eq!(fold(&t), whole, "{t:?}");
        }
    }

    #[test]
    fn the_ascii_table_agrees_with_the_general_path() {
        for b in 0u8..128 {
            let mut s = String::new();
            fold_char(b as char, &mut s);
            // Forcing the non-ASCII path with a non-ASCII neighbour gives the same folding.
            let mixed = fold(&format!("{}é", b as char));
            assert!(mixed.starts_with(&s), "{b}: {mixed:?} vs {s:?}");
        }
    }
}
