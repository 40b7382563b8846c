//! Sentences of a draft, for the reach of a cite: paragraphs end at blank lines; a sentence
//! ends at `.`, `?` or `!` before a new sentence's start, but not after an abbreviation or an
//! initial, and never inside a citation or statute (whose periods are no sentence's end).

/// Words whose period does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "v", "vs", "inc", "co", "corp", "ltd", "llc", "no", "nos", "mr", "mrs", "ms", "dr", "st",
    "ave", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "e.g", "i.e", "cf", "etc", "al", "p", "pp", "ex", "exh", "para", "sec", "art", "ch", "id",
    "ibid", "u.s", "n.a", "jr", "sr", "esq", "ph.d", "ct", "cir", "supp", "app", "rev", "stat",
];

/// A sentence: its byte range and the paragraph it belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sentence {
    pub start: usize,
    pub end: usize,
    pub paragraph: usize,
}

/// Splits text into sentences. Paragraphs end at blank lines; a sentence ends at `.`, `?` or
/// `!` (with any closing quotation marks or brackets) before a space and a capital, a digit, an
/// opening bracket or quotation mark — except after an abbreviation, a lone initial, or inside
/// one of `keep` (the citations and statutes found, whose periods are no sentence's end).
pub fn sentences(text: &str, keep: &[(usize, usize)]) -> Vec<Sentence> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut paragraph = 0;
    let mut start = 0;
    let mut i = 0;
    // `i` only grows, so the spans are taken in order of their start and the furthest end of
    // those begun so far says whether `i` is inside one: linear in the text, not text × spans.
    let mut spans = keep.to_vec();
    spans.sort_unstable();
    let (mut next_span, mut reach) = (0, 0);
    let mut inside = |at: usize| {
        while next_span < spans.len() && spans[next_span].0 <= at {
            reach = reach.max(spans[next_span].1);
            next_span += 1;
        }
        at < reach
    };
    while i < b.len() {
        // A blank line ends the paragraph.
        if b[i] == b'\n' {
            let mut j = i + 1;
            while j < b.len() && matches!(b[j], b' ' | b'\t' | b'\r') {
                j += 1;
            }
            if j < b.len() && b[j] == b'\n' {
                push(&mut out, text, start, i, paragraph);
                paragraph += 1;
                start = j + 1;
                i = j + 1;
                continue;
            }
        }
        if matches!(b[i], b'.' | b'?' | b'!') && !inside(i) {
            let mut e = i + 1;
            // Closing quotation marks and brackets stay with the sentence.
            loop {
                let rest = &text[e..];
                let c = rest.chars().next();
                match c {
                    Some(c @ ('"' | '\'' | ')' | ']' | '”' | '’')) => e += c.len_utf8(),
                    _ => break,
                }
            }
            let after = &text[e..];
            let ws = after.len() - after.trim_start().len();
            let next = after.trim_start().chars().next();
            let ends = ws > 0
                && next.is_none_or(|c| {
                    c.is_uppercase()
                        || c.is_ascii_digit()
                        || matches!(c, '(' | '[' | '"' | '“' | '‘')
                })
                && !(b[i] == b'.' && abbreviation_before(text, i));
            if ends {
                push(&mut out, text, start, e, paragraph);
                start = e;
                i = e;
                continue;
            }
        }
        i += 1;
    }
    push(&mut out, text, start, text.len(), paragraph);
    out
}

fn push(out: &mut Vec<Sentence>, text: &str, start: usize, end: usize, paragraph: usize) {
    let s = &text[start..end];
    let lead = s.len() - s.trim_start().len();
    let trail = s.len() - s.trim_end().len();
    if s.trim().is_empty() {
        return;
    }
    out.push(Sentence {
        start: start + lead,
        end: end - trail,
        paragraph,
    });
}

fn abbreviation_before(text: &str, dot: usize) -> bool {
    let word: String = text[..dot]
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let lower = word.to_lowercase();
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    // A lone initial (`J.`), an abbreviation, a run of initials (`U.S.`); but a number
    // (`1.`) ends a list item's number like a sentence.
    (letters == 1 && word.chars().all(|c| c.is_alphabetic() || c == '.'))
        || ABBREVIATIONS.contains(&lower.as_str())
        || (word.contains('.') && letters <= 4 && !word.chars().any(|c| c.is_ascii_digit()))
}
