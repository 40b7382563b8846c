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
        for b in text.bytes() {
            out.push_str(&table[b as usize]);
        }
        return out;
    }
    for c in text.chars().filter(|c| !invisible(*c)).nfkc() {
        if c.is_ascii() {
            out.push_str(&table[c as usize]);
        } else if !invisible(c) {
            fold_char(c, &mut out);
        }
    }
    out
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
