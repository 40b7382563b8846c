//! Keeping what a diagnostic shows readable when the file is not: a pasted 40 KB line is shown
//! as a window around the mistake, and a huge word in a message is cut short.

use super::label::{Label, Span};

/// A line longer than this is shown as a window around the labels on it.
const MAX_LINE: usize = 240;
/// How much of a long line is shown before the first label on it.
const BEFORE: usize = 60;
/// How much of a long line is shown from the first label on it.
const AFTER: usize = 120;
/// A word (a run without spaces) longer than this is cut in messages, labels and help.
const MAX_WORD: usize = 80;

/// Cuts every run of non-space characters longer than [`MAX_WORD`] to its start and `…`.
pub(super) fn words(s: &str) -> String {
    if s.len() <= MAX_WORD {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len().min(1024));
    let mut run = 0usize;
    let mut cut = false;
    for c in s.chars() {
        if c.is_whitespace() {
            run = 0;
            cut = false;
            out.push(c);
            continue;
        }
        run += 1;
        if run <= MAX_WORD - 20 {
            out.push(c);
        } else if !cut {
            cut = true;
            out.push('…');
        } else if c == '`' {
            // Keep a closing backtick so the quoted word still reads as quoted.
            if !out.ends_with('`') {
                out.push('`');
            }
        }
    }
    out
}

/// The text with its over-long lines cut to a window around the labels (whose spans are moved
/// to match), or `None` when no line that would be shown is too long. Lines keep their
/// numbers: only the inside of a long line changes.
pub(super) fn long_lines(text: &str, labels: &mut [Label]) -> Option<String> {
    let near_long = labels.iter().any(|l| {
        let (start, end) = line_at(text, l.span.start.min(text.len()));
        let before = line_at(text, start.saturating_sub(1));
        let after = line_at(text, (end + 1).min(text.len()));
        [(start, end), before, after]
            .iter()
            .any(|(s, e)| e - s > MAX_LINE)
    });
    if !near_long {
        return None;
    }
    let mut out = String::with_capacity(text.len().min(1 << 16));
    let moved: Vec<(usize, usize)> = labels.iter().map(|l| (l.span.start, l.span.end)).collect();
    let mut new_pos: Vec<(Option<usize>, Option<usize>)> = vec![(None, None); labels.len()];
    let mut line_start = 0usize;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let line_end = line_start + content.len();
        let (ws, we, prefix) = if content.len() > MAX_LINE {
            let first = moved
                .iter()
                .map(|m| m.0)
                .filter(|s| (line_start..=line_end).contains(s))
                .min()
                .unwrap_or(line_start);
            let ws = floor(text, first.saturating_sub(BEFORE).max(line_start));
            let we = floor(text, (first + AFTER).min(line_end));
            let prefix = if ws > line_start { "… " } else { "" };
            (ws, we, prefix)
        } else {
            (line_start, line_end, "")
        };
        let base = out.len();
        out.push_str(prefix);
        out.push_str(&text[ws..we]);
        if we < line_end {
            out.push_str(" …");
        }
        let shown_end = base + prefix.len() + (we - ws);
        let map = |p: usize| -> usize {
            if p <= ws {
                base + prefix.len()
            } else if p >= we {
                shown_end
            } else {
                base + prefix.len() + (p - ws)
            }
        };
        for (i, (s, e)) in moved.iter().enumerate() {
            let here = |p: usize| p >= line_start && p < line_start + line.len();
            if new_pos[i].0.is_none() && here(*s) {
                new_pos[i].0 = Some(map(*s));
            }
            if new_pos[i].1.is_none() && here(*e) {
                new_pos[i].1 = Some(map(*e));
            }
        }
        out.push_str(&line[content.len()..]);
        line_start += line.len();
    }
    for (l, (s, e)) in labels.iter_mut().zip(new_pos) {
        let s = s.unwrap_or(out.len());
        let e = e.unwrap_or(s).max(s);
        l.span = Span::new(s, e);
    }
    Some(out)
}

/// The start and end (without the line break) of the line holding `at`.
fn line_at(text: &str, at: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let at = at.min(bytes.len());
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
    (start, end)
}

fn floor(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Span;

    #[test]
    fn long_words_are_cut() {
        let long = format!("unexpected `{}`", "a".repeat(40_000));
        let w = words(&long);
        assert!(w.len() < 100, "{w}");
        assert!(w.ends_with("…`"), "{w}");
        assert_eq!(words("short `words` stay"), "short `words` stay");
    }

    #[test]
    fn a_long_line_becomes_a_window_around_its_label() {
        let text = format!("a\n{}X{}\nb\n", "y".repeat(5000), "z".repeat(5000));
        let at = 2 + 5000;
        let mut labels = vec![Label {
            span: Span::new(at, at + 1),
            text: String::new(),
        }];
        let clipped = long_lines(&text, &mut labels).unwrap();
        assert!(clipped.len() < 400, "{}", clipped.len());
        assert_eq!(clipped.lines().count(), 3);
        assert_eq!(&clipped[labels[0].span.start..labels[0].span.end], "X");
        let mut short = vec![Label {
            span: Span::new(0, 1),
            text: String::new(),
        }];
        assert!(long_lines("a\nb\n", &mut short).is_none());
    }
}
