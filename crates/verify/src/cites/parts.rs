//! A citation's parts after its volume: the words its reporter may be spelled over, its pin
//! cite and the year in its parenthetical.

/// The most words a reporter spelling is read over (the longest in the catalogue has 11).
const MAX_WORDS: usize = 12;

/// The words after a volume: byte spans of whitespace-separated tokens, and whether a blank
/// line (a page break or a paragraph in PDF text) comes before any of them. A citation that
/// a page break splits (`434\n\n\nA.2d 1372`) is rejoined, but only where the words after the
/// break are a reporter the catalogue knows.
pub(super) fn words_after(text: &str, mut p: usize) -> (Vec<(usize, usize)>, Vec<bool>) {
    let b = text.as_bytes();
    let mut words = Vec::new();
    let mut broken = Vec::new();
    while words.len() <= MAX_WORDS {
        let ws = p;
        let mut newlines = 0;
        while p < b.len() && b[p].is_ascii_whitespace() {
            newlines += usize::from(b[p] == b'\n');
            p += 1;
        }
        if p == ws || newlines > 4 || p - ws > 12 || p >= b.len() {
            break;
        }
        let start = p;
        while p < b.len() && !b[p].is_ascii_whitespace() {
            p += 1;
        }
        words.push((start, p));
        broken.push(newlines > 1);
    }
    (words, broken)
}

fn skip_spaces(text: &str, mut p: usize) -> usize {
    let b = text.as_bytes();
    while p < b.len() && b[p].is_ascii_whitespace() {
        p += 1;
    }
    p
}

/// A pin cite: `5`, `5-7`, `5–07`, `*3` (Westlaw's star pages), `5 n.4`.
fn pin_digits(text: &str, from: usize) -> Option<(String, usize)> {
    let b = text.as_bytes();
    let mut p = from;
    if b.get(p) == Some(&b'*') {
        p += 1;
    }
    let d = b[p..].iter().take_while(|c| c.is_ascii_digit()).count();
    if d == 0 || d > 6 {
        return None;
    }
    p += d;
    let mut pin: String = text[from..p].to_string();
    // A range: `-`, `–` or `—`, spaces allowed.
    let q = skip_spaces(text, p);
    for dash in ["-", "–", "—"] {
        if text[q..].starts_with(dash) {
            let r = skip_spaces(text, q + dash.len());
            let d2 = b[r..].iter().take_while(|c| c.is_ascii_digit()).count();
            if (1..=6).contains(&d2) && !b.get(r + d2).is_some_and(u8::is_ascii_digit) {
                pin.push('-');
                pin.push_str(&text[r..r + d2]);
                p = r + d2;
            }
            break;
        }
    }
    // A footnote: `5 n.4`, `5 & n.4`.
    if b.get(p).is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    Some((pin, p))
}

pub(super) fn pin_after_comma(text: &str, from: usize) -> Option<(String, usize)> {
    let mut p = skip_spaces(text, from);
    if text[p..].starts_with("at ") {
        p = skip_spaces(text, p + 2);
    }
    // A paragraph pinpoint (`2018 IL App (2d) 170001, ¶ 27`).
    if let Some(r) = text[p..].strip_prefix('¶') {
        let q = skip_spaces(
            text,
            p + '¶'.len_utf8() + (r.len() - r.trim_start_matches('¶').len()),
        );
        let (pin, end) = pin_digits(text, q)?;
        return Some((format!("¶{pin}"), end));
    }
    let (pin, end) = pin_digits(text, p)?;
    // `…, 99 (2000)` but not `…, 2000 WL` or a following citation's volume (`…, 12 F.3d 4`).
    let after = skip_spaces(text, end);
    if text[after..]
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase())
    {
        return None;
    }
    Some((pin, end))
}

pub(super) fn pin_at(text: &str, from: usize) -> Option<(String, usize)> {
    pin_digits(text, skip_spaces(text, from))
}

/// `(9th Cir. 1999)`, `(2000)`, `(Cal. Ct. App. Jan. 5, 2001)`: the last year inside a
/// parenthesis right after the citation.
pub(super) fn year_parenthetical(text: &str, from: usize) -> Option<(u16, usize)> {
    let p = skip_spaces(text, from);
    if !text[p..].starts_with('(') || p - from > 2 {
        return None;
    }
    let inner = &text[p + 1..];
    let close = inner.char_indices().take(120).find_map(|(i, c)| match c {
        ')' => Some(Some(i)),
        '(' => Some(None),
        _ => None,
    })??;
    let body = &inner[..close];
    let b = body.as_bytes();
    let mut year = None;
    let mut i = 0;
    while i + 4 <= b.len() {
        let run = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if run == 4 && (i == 0 || !b[i - 1].is_ascii_digit()) {
            let y: u16 = body[i..i + 4].parse().ok()?;
            if (1600..=2099).contains(&y) {
                year = Some(y);
            }
        }
        i += run.max(1);
    }
    year.map(|y| (y, p + 1 + close + 1))
}
