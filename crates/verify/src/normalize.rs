//! Text normalisation shared by drafts and evidence, so that typography never decides whether
//! a claim is supported: typographic quotes and dashes, ligatures, odd spaces, words hyphenated
//! across line breaks, and runs of white space all compare equal to their plain forms.

/// Normalises text for matching. Line breaks inside paragraphs become spaces; a word broken
/// with a hyphen at the end of a line is joined again.
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    let mut rest = s;
    // Most evidence is plain ASCII: copy runs of ordinary characters and single spaces at
    // once, turn other ASCII white space and control characters into one pending space here,
    // and look closely only at hyphens and non-ASCII characters.
    loop {
        let bytes = rest.as_bytes();
        let plain = |b: u8| b.is_ascii_graphic() && b != b'-';
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if plain(b) {
                // A run of ordinary characters and single spaces between them, copied at once.
                let mut j = i + 1;
                while j < bytes.len()
                    && (plain(bytes[j])
                        || bytes[j] == b' ' && bytes.get(j + 1).is_some_and(|&n| plain(n)))
                {
                    j += 1;
                }
                if pending_space {
                    out.push(' ');
                    pending_space = false;
                }
                out.push_str(&rest[i..j]);
                i = j;
            } else if b.is_ascii() && b != b'-' {
                pending_space = !out.is_empty();
                i += 1;
            } else {
                break;
            }
        }
        rest = &rest[i..];
        if rest.is_empty() {
            break;
        }
        let special = rest
            .char_indices()
            .find(|&(i, c)| i > 0 && c.is_ascii_graphic() && c != '-')
            .map_or(rest.len(), |(i, _)| i);
        let used = normalize_into(rest, special, &mut out, &mut pending_space);
        rest = &rest[used..];
    }
    out
}

/// The careful path for a run of white space, hyphens and non-ASCII characters: handles
/// `s[..upto]` (looking further ahead for a hyphenated word) and returns how much it used.
fn normalize_into(s: &str, upto: usize, out: &mut String, pending_space: &mut bool) -> usize {
    let mut chars = s.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if at >= upto {
            return at;
        }
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2007}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{3000}' => ' ',
            '\u{00AD}' | '\u{200B}' | '\u{FEFF}' => continue,
            '\u{FB00}' => {
                push(out, pending_space, "ff");
                continue;
            }
            '\u{FB01}' => {
                push(out, pending_space, "fi");
                continue;
            }
            '\u{FB02}' => {
                push(out, pending_space, "fl");
                continue;
            }
            '\u{FB03}' => {
                push(out, pending_space, "ffi");
                continue;
            }
            '\u{FB04}' => {
                push(out, pending_space, "ffl");
                continue;
            }
            '\u{2026}' => {
                push(out, pending_space, "...");
                continue;
            }
            c => c,
        };
        // "evi-\n  dence" → "evidence": a hyphen after a letter, then a line break, then a
        // lower-case letter.
        if c == '-' && out.chars().last().is_some_and(char::is_alphabetic) && !*pending_space {
            let mut look = chars.clone();
            let mut saw_newline = false;
            while let Some(&(_, n)) = look.peek() {
                if n == '\n' || n == '\r' {
                    saw_newline = true;
                } else if !n.is_whitespace() {
                    break;
                }
                look.next();
            }
            if saw_newline && look.peek().is_some_and(|(_, n)| n.is_lowercase()) {
                chars = look;
                continue;
            }
        }
        if c.is_whitespace() || c.is_control() {
            *pending_space = !out.is_empty();
            continue;
        }
        if *pending_space {
            out.push(' ');
            *pending_space = false;
        }
        out.push(c);
    }
    s.len()
}

fn push(out: &mut String, pending_space: &mut bool, s: &str) {
    if *pending_space {
        out.push(' ');
        *pending_space = false;
    }
    out.push_str(s);
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn typography_compares_plain() {
        assert_eq!(
            normalize("“Landlord’s  duty”\u{00A0}—\tﬁne"),
            "\"Landlord's duty\" - fine"
        );
        assert_eq!(normalize("the evi-\n   dence shows"), "the evidence shows");
        // A hyphen before a capital is a real hyphen.
        assert_eq!(normalize("Smith-\nJones"), "Smith- Jones");
        assert_eq!(normalize("a\u{2026}b"), "a...b");
        assert_eq!(normalize("  lead\n\ntrail  "), "lead trail");
    }
}
