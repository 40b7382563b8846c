//! The draft as HTML, with every claim marked where it stands.
//!
//! The draft is read by `document::markdown`, as the Word document is: its blocks keep the
//! byte ranges of their lines, and the markup is read over a block's joined text with a map
//! back to the draft, so each claim (known by its byte span in the draft) is wrapped in a mark
//! as its text is written. Everything from the draft is escaped: it is shown, never run.

use std::fmt::Write;

use crate::document::markdown::{self, Joined, Kind, Node, SourceBlock};
use crate::escape;
use crate::verify::Status;

/// A claim to mark: its span in the draft, its index in the page data, kind and status.
pub struct Mark<'a> {
    pub start: usize,
    pub end: usize,
    pub kind: &'a str,
    pub status: Status,
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
    let blocks = markdown::blocks(draft);
    let notes = markdown::note_ids(draft, &blocks);
    for block in &blocks {
        w.block(block, &notes);
    }
    w.out
}

/// A block's HTML element: how it opens and how it closes.
fn element(draft: &str, b: &SourceBlock) -> (String, &'static str) {
    let label = &draft[b.label.clone()];
    match b.kind {
        Kind::Heading(level) => {
            let level = (level as usize + 2).min(6);
            (
                format!("<h{level}>"),
                ["</h3>", "</h4>", "</h5>", "</h6>"][level - 3],
            )
        }
        Kind::Rule => ("<hr>".into(), ""),
        Kind::Note => (
            format!(
                "<p class=\"note\" id=\"fn-{0}\"><sup>{0}</sup> ",
                escape::html(label)
            ),
            "</p>",
        ),
        Kind::Quote => ("<blockquote><p>".into(), "</p></blockquote>"),
        Kind::Numbered => (
            format!(
                "<p class=\"num\"><span class=\"n\">{}</span> ",
                escape::html(label)
            ),
            "</p>",
        ),
        Kind::Bullet => ("<ul><li>".into(), "</li></ul>"),
        Kind::Para => ("<p>".into(), "</p>"),
    }
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
    fn block(&mut self, b: &SourceBlock, notes: &[String]) {
        let (open, close) = element(self.draft, b);
        self.out.push_str(&open);
        let joined = markdown::join(self.draft, &b.lines);
        let nodes = markdown::nodes(&joined.text, notes);
        self.nodes(&joined, &nodes, notes);
        self.out.push_str(close);
        self.out.push('\n');
    }

    /// Writes inline markup, its text where it stands in the draft.
    fn nodes(&mut self, joined: &Joined, nodes: &[Node], notes: &[String]) {
        for n in nodes {
            match n {
                Node::Text(r) => {
                    for s in joined.source(r.clone()) {
                        self.text(s.start, s.end);
                    }
                }
                Node::Bold(k) => {
                    self.out.push_str("<strong>");
                    self.nodes(joined, k, notes);
                    self.out.push_str("</strong>");
                }
                Node::Italic(k) => {
                    self.out.push_str("<em>");
                    self.nodes(joined, k, notes);
                    self.out.push_str("</em>");
                }
                Node::Note(n) => {
                    let _ = write!(
                        self.out,
                        "<sup class=\"ref\"><a href=\"#fn-{0}\">{0}</a></sup>",
                        escape::html(&notes[n - 1])
                    );
                }
            }
        }
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
                    k = escape::html(m.kind),
                );
                if first {
                    let _ = write!(
                        self.out,
                        " id=\"c{i}\" tabindex=\"-1\"><span class=\"ic\" aria-hidden=\"true\">{}</span>",
                        super::marks::icon(m.status)
                    );
                } else {
                    self.out.push('>');
                }
            }
            self.out.push_str(&escape::html(&self.draft[at..stop]));
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

    #[test]
    fn the_draft_is_read_as_the_document_reads_it() {
        // Signature lines, snake_case and a reference to no footnote stay text; `__` is bold.
        let draft = "Signed: ______ on file_name_here, __firmly__ [^none]\n\n[^a]: A note.[^a]\n";
        let html = render(draft, &[]);
        assert!(
            html.starts_with(
                "<p>Signed: ______ on file_name_here, <strong>firmly</strong> [^none]</p>\n"
            ),
            "{html}"
        );
        assert!(
            html.contains(
                "<p class=\"note\" id=\"fn-a\"><sup>a</sup> A note.<sup class=\"ref\"><a href=\"#fn-a\">a</a></sup></p>"
            ),
            "{html}"
        );
    }
}
