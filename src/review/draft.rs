//! The draft as HTML, with every claim marked where it stands.
//!
//! `document::markdown` reads Markdown into blocks for a Word document and keeps no byte
//! offsets, but a claim is known only by its byte span in the draft; so this reads the same
//! subset (headings, rules, block quotes, numbered paragraphs, bullets, footnotes, emphasis)
//! keeping every piece of text tied to where it came from, and wraps each claim's text in a
//! mark as it is written. Everything from the draft is escaped: it is shown, never run.

use std::fmt::Write;

use super::escape;
use crate::verify::Status;

/// A claim to mark: its span in the draft, its index in the page data, kind and status.
pub struct Mark<'a> {
    pub start: usize,
    pub end: usize,
    pub kind: &'a str,
    pub status: Status,
}

/// One piece of a block's output: text from the draft (a byte range), or markup.
enum Piece {
    Text(usize, usize),
    Tag(String),
}

/// Renders the draft. `marks` are in the order of the page data (any order of spans).
pub fn render(draft: &str, marks: &[Mark]) -> String {
    let mut order: Vec<usize> = (0..marks.len()).collect();
    order.sort_by_key(|&i| (marks[i].start, std::cmp::Reverse(marks[i].end)));
    let mut w = Writer {
        draft,
        marks,
        order,
        next: 0,
        active: Vec::new(),
        opened: vec![false; marks.len()],
        out: String::with_capacity(draft.len() * 2 + marks.len() * 160),
    };
    for block in blocks(draft) {
        w.block(&block);
    }
    w.out
}

/// A block: its HTML element, and the byte ranges of its text (one per source line).
struct Block {
    open: String,
    close: &'static str,
    lines: Vec<(usize, usize)>,
}

fn blocks(draft: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    // The block being filled, and its kind: paragraph text continues onto the next line.
    let mut cur: Option<(Block, Cont)> = None;
    let mut at = 0;
    let flush = |out: &mut Vec<Block>, cur: &mut Option<(Block, Cont)>| {
        if let Some((b, _)) = cur.take() {
            out.push(b);
        }
    };
    for raw in draft.split_inclusive('\n') {
        let start = at;
        at += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let lead = line.len() - line.trim_start().len();
        let t = line.trim();
        let s = start + lead;
        let e = s + t.len();
        if t.is_empty() {
            flush(&mut out, &mut cur);
            continue;
        }
        let hashes = t.bytes().take_while(|&b| b == b'#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
            flush(&mut out, &mut cur);
            let level = (hashes + 2).min(6);
            let skip = hashes + (t.len() - hashes - t[hashes..].trim_start().len());
            out.push(Block {
                open: format!("<h{level}>"),
                close: ["</h3>", "</h4>", "</h5>", "</h6>"][level - 3],
                lines: vec![(s + skip, e)],
            });
            continue;
        }
        if t.len() >= 3 && (t.bytes().all(|b| b == b'-') || t.bytes().all(|b| b == b'*')) {
            flush(&mut out, &mut cur);
            out.push(Block {
                open: "<hr>".into(),
                close: "",
                lines: Vec::new(),
            });
            continue;
        }
        if let Some(id_end) = footnote_def(t) {
            flush(&mut out, &mut cur);
            let rest = &t[id_end..];
            let skip = id_end + (rest.len() - rest.trim_start().len());
            // Kept where it stands: marks are written in draft order.
            out.push(Block {
                open: format!(
                    "<p class=\"note\" id=\"fn-{}\"><sup>{}</sup> ",
                    escape(&t[2..id_end - 2]),
                    escape(&t[2..id_end - 2])
                ),
                close: "</p>",
                lines: vec![(s + skip, e)],
            });
            continue;
        }
        if let Some(rest) = t.strip_prefix('>') {
            let skip = 1 + (rest.len() - rest.trim_start().len());
            match &mut cur {
                Some((b, Cont::Quote)) => b.lines.push((s + skip, e)),
                _ => {
                    flush(&mut out, &mut cur);
                    cur = Some((
                        Block {
                            open: "<blockquote><p>".into(),
                            close: "</p></blockquote>",
                            lines: vec![(s + skip, e)],
                        },
                        Cont::Quote,
                    ));
                }
            }
            continue;
        }
        if let Some(n) = numbered(t) {
            flush(&mut out, &mut cur);
            let rest = &t[n..];
            let skip = n + (rest.len() - rest.trim_start().len());
            cur = Some((
                Block {
                    open: format!(
                        "<p class=\"num\"><span class=\"n\">{}</span> ",
                        escape(&t[..n])
                    ),
                    close: "</p>",
                    lines: vec![(s + skip, e)],
                },
                Cont::Text,
            ));
            continue;
        }
        if t.starts_with("- ") || t.starts_with("* ") {
            flush(&mut out, &mut cur);
            cur = Some((
                Block {
                    open: "<ul><li>".into(),
                    close: "</li></ul>",
                    lines: vec![(s + 2, e)],
                },
                Cont::Text,
            ));
            continue;
        }
        match &mut cur {
            Some((b, Cont::Text)) => b.lines.push((s, e)),
            _ => {
                flush(&mut out, &mut cur);
                cur = Some((
                    Block {
                        open: "<p>".into(),
                        close: "</p>",
                        lines: vec![(s, e)],
                    },
                    Cont::Text,
                ));
            }
        }
    }
    flush(&mut out, &mut cur);
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Cont {
    Text,
    Quote,
}

/// `[^id]:` at the start of a line: the length of that prefix.
fn footnote_def(t: &str) -> Option<usize> {
    let rest = t.strip_prefix("[^")?;
    let close = rest.find("]:")?;
    let id = &rest[..close];
    (!id.is_empty() && !id.contains(char::is_whitespace)).then_some(2 + close + 2)
}

/// `1.` or `12)` followed by a space: the length of the number and its point.
fn numbered(t: &str) -> Option<usize> {
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 4 {
        return None;
    }
    let rest = &t.as_bytes()[digits..];
    (matches!(rest.first(), Some(b'.' | b')')) && rest.get(1) == Some(&b' ')).then_some(digits + 1)
}

/// Emphasis and footnote references inside one block's lines, as pieces. A marker without
/// its pair stays text.
fn inlines(draft: &str, lines: &[(usize, usize)]) -> Vec<Piece> {
    // The block's characters with their offsets; lines are joined by a space.
    let mut chars: Vec<(usize, char)> = Vec::new();
    for (n, &(s, e)) in lines.iter().enumerate() {
        if n > 0 {
            // The white space that ended the line before, so a claim across lines stays one.
            let end = lines[n - 1].1;
            chars.push((end, draft[end..].chars().next().unwrap_or('\n')));
        }
        chars.extend(draft[s..e].char_indices().map(|(i, c)| (s + i, c)));
    }
    let mut pieces = Vec::new();
    let mut text_from: Option<usize> = None;
    let mut text_to = 0;
    let flush_text = |pieces: &mut Vec<Piece>, from: &mut Option<usize>, to: usize| {
        if let Some(f) = from.take() {
            if to > f {
                pieces.push(Piece::Text(f, to));
            }
        }
    };
    // Closing positions of emphasis opened so far (index into `chars`), with the close tag.
    let mut closers: Vec<(usize, usize, &'static str)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if let Some(pos) = closers.iter().position(|&(at, _, _)| at == i) {
            let (_, len, tag) = closers.remove(pos);
            flush_text(&mut pieces, &mut text_from, text_to);
            pieces.push(Piece::Tag(tag.into()));
            i += len;
            continue;
        }
        let (off, c) = chars[i];
        if text_from.is_some() && off != text_to {
            flush_text(&mut pieces, &mut text_from, text_to);
        }
        let double = c == '*' && chars.get(i + 1).is_some_and(|x| x.1 == '*');
        if c == '*' || (c == '_' && (i == 0 || !chars[i - 1].1.is_alphanumeric())) {
            let len = if double { 2 } else { 1 };
            let next_is_space = chars.get(i + len).is_none_or(|x| x.1.is_whitespace());
            if !next_is_space {
                if let Some(close) = find_closer(&chars, i + len, c, len) {
                    flush_text(&mut pieces, &mut text_from, text_to);
                    let (open, shut) = if double {
                        ("<strong>", "</strong>")
                    } else {
                        ("<em>", "</em>")
                    };
                    pieces.push(Piece::Tag(open.into()));
                    closers.push((close, len, shut));
                    i += len;
                    continue;
                }
            }
        }
        if c == '[' && chars.get(i + 1).is_some_and(|x| x.1 == '^') {
            let id: String = chars[i + 2..]
                .iter()
                .take_while(|x| x.1 != ']' && !x.1.is_whitespace())
                .map(|x| x.1)
                .collect();
            let end = i + 2 + id.chars().count();
            if !id.is_empty() && chars.get(end).is_some_and(|x| x.1 == ']') {
                flush_text(&mut pieces, &mut text_from, text_to);
                pieces.push(Piece::Tag(format!(
                    "<sup class=\"ref\"><a href=\"#fn-{0}\">{0}</a></sup>",
                    escape(&id)
                )));
                i = end + 1;
                continue;
            }
        }
        if text_from.is_none() {
            text_from = Some(off);
        }
        text_to = off + c.len_utf8();
        i += 1;
    }
    flush_text(&mut pieces, &mut text_from, text_to);
    // Emphasis left open at the end of the block (never, as closers are found first) is
    // closed so the markup stays balanced.
    for (_, _, tag) in closers.into_iter().rev() {
        pieces.push(Piece::Tag(tag.into()));
    }
    pieces
}

/// Where the emphasis opened at `from` closes, in the same block: the next `c` (doubled when
/// `len` is 2) after a non-space character.
fn find_closer(chars: &[(usize, char)], from: usize, c: char, len: usize) -> Option<usize> {
    let mut j = from + 1;
    while j + len <= chars.len() {
        let here = chars[j].1 == c && (len == 1 || chars[j + 1].1 == c);
        let after_word = !chars[j - 1].1.is_whitespace();
        let single_ok = len == 2 || chars.get(j + 1).is_none_or(|x| x.1 != c);
        let boundary = c != '_' || chars.get(j + len).is_none_or(|x| !x.1.is_alphanumeric());
        if here && after_word && single_ok && boundary {
            return Some(j);
        }
        j += 1;
    }
    None
}

struct Writer<'a> {
    draft: &'a str,
    marks: &'a [Mark<'a>],
    /// Marks by start.
    order: Vec<usize>,
    next: usize,
    /// Marks whose span covers the current position.
    active: Vec<usize>,
    /// Whether a mark's first piece has been written (it carries the id and the icon).
    opened: Vec<bool>,
    out: String,
}

impl Writer<'_> {
    fn block(&mut self, b: &Block) {
        self.out.push_str(&b.open);
        for p in inlines(self.draft, &b.lines) {
            match p {
                Piece::Tag(t) => self.out.push_str(&t),
                Piece::Text(s, e) => self.text(s, e),
            }
        }
        self.out.push_str(b.close);
        self.out.push('\n');
    }

    /// Writes draft text `s..e`, split where claims begin and end; each part is wrapped in a
    /// mark for every claim covering it, outermost first.
    fn text(&mut self, s: usize, e: usize) {
        let mut at = s;
        while at < e {
            // Claims that ended are dropped; claims that start here (or were skipped over by
            // markup) become active.
            self.active.retain(|&i| self.marks[i].end > at);
            while self.next < self.order.len() && self.marks[self.order[self.next]].start <= at {
                let i = self.order[self.next];
                if self.marks[i].end > at {
                    self.active.push(i);
                }
                self.next += 1;
            }
            let mut stop = e;
            if let Some(&n) = self.order.get(self.next) {
                stop = stop.min(self.marks[n].start.max(at + 1));
            }
            for &i in &self.active {
                stop = stop.min(self.marks[i].end);
            }
            while !self.draft.is_char_boundary(stop) {
                stop += 1;
            }
            let active = self.active.clone();
            for &i in &active {
                let m = &self.marks[i];
                let first = !self.opened[i];
                self.opened[i] = true;
                let _ = write!(
                    self.out,
                    "<mark class=\"c s-{st}\" data-i=\"{i}\" data-k=\"{k}\" data-s=\"{st}\"",
                    st = m.status.as_str(),
                    k = escape(m.kind),
                );
                if first {
                    let _ = write!(
                        self.out,
                        " id=\"c{i}\" tabindex=\"-1\"><span class=\"ic\" aria-hidden=\"true\">{}</span>",
                        super::icon(m.status)
                    );
                } else {
                    self.out.push('>');
                }
            }
            self.out.push_str(&escape(&self.draft[at..stop]));
            for &i in active.iter().rev() {
                let m = &self.marks[i];
                if m.end <= stop {
                    // The status in words after the claim, so colour is never needed.
                    let _ = write!(
                        self.out,
                        "<span class=\"sw{}\">{}</span>",
                        if m.status == Status::Supported {
                            " vh"
                        } else {
                            ""
                        },
                        m.status.as_str()
                    );
                }
                self.out.push_str("</mark>");
            }
            at = stop;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark<'a>(draft: &str, text: &str, status: Status) -> Mark<'a> {
        let start = draft.find(text).unwrap();
        Mark {
            start,
            end: start + text.len(),
            kind: "date",
            status,
        }
    }

    #[test]
    fn claims_are_marked_in_place_across_emphasis() {
        let draft =
            "# Facts\n\n1. On **January 5, 2024** I paid *$100*.\n\n> \"quoted words\" here\n";
        let marks = [
            mark(draft, "January 5, 2024", Status::Supported),
            mark(draft, "$100", Status::Unsupported),
            mark(draft, "\"quoted words\"", Status::Miscited),
        ];
        let html = render(draft, &marks);
        assert!(html.contains("<h3>Facts</h3>"), "{html}");
        assert!(
            html.contains("<strong><mark class=\"c s-supported\" data-i=\"0\""),
            "{html}"
        );
        assert!(
            html.contains("January 5, 2024<span class=\"sw vh\">supported</span></mark></strong>"),
            "{html}"
        );
        assert!(
            html.contains("<em><mark class=\"c s-unsupported\" data-i=\"1\""),
            "{html}"
        );
        assert!(
            html.contains("<blockquote><p><mark class=\"c s-miscited\" data-i=\"2\""),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"sw\">miscited</span>"),
            "{html}"
        );
    }

    #[test]
    fn markup_in_the_draft_is_text() {
        let draft = "<script>alert(1)</script> {{evidence}} </mark>";
        let marks = [mark(draft, "</mark>", Status::Unsupported)];
        let html = render(draft, &marks);
        assert!(!html.contains("<script>"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt; {{evidence}}"),
            "{html}"
        );
        assert_eq!(
            html.matches("<mark").count(),
            html.matches("</mark>").count()
        );
    }

    #[test]
    fn overlapping_claims_nest_and_every_claim_is_opened_once() {
        let draft = "He wrote \"paid on May 9, 2024 in full\" later.";
        let marks = [
            mark(draft, "\"paid on May 9, 2024 in full\"", Status::Supported),
            mark(draft, "May 9, 2024", Status::Unsupported),
        ];
        let html = render(draft, &marks);
        assert_eq!(html.matches("id=\"c0\"").count(), 1);
        assert_eq!(html.matches("id=\"c1\"").count(), 1);
        assert_eq!(
            html.matches("<mark").count(),
            html.matches("</mark>").count()
        );
    }
}
