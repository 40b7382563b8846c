//! The Markdown a drafting model writes: headings, numbered paragraphs, bullets, block quotes,
//! footnotes, emphasis. It is read here once, for the Word document and the review page alike:
//! [`blocks`] finds the blocks with the byte ranges of their lines in the source, [`join`]
//! joins a block's lines into the text its markup is read over (with a map back to the source,
//! so the review page can mark a claim where it stands), and [`nodes`] reads that markup.
//! [`parse`] gives the blocks a document lays out. Malformed Markdown is never an error: a
//! marker without its pair is kept as text.

use std::ops::Range;

#[derive(Clone, Debug, PartialEq)]
pub enum Inline {
    Text(String),
    Bold(Vec<Inline>),
    Italic(Vec<Inline>),
    /// `[^id]`: the number of the footnote it points to (1-based, in order of definition).
    Note(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    Heading(u8, Vec<Inline>),
    /// A numbered paragraph: its number as written, and its text.
    Numbered(String, Vec<Inline>),
    Bullet(Vec<Inline>),
    Quote(Vec<Inline>),
    Para(Vec<Inline>),
    Rule,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Doc {
    pub blocks: Vec<Block>,
    /// Footnote texts, in the order their numbers were given.
    pub notes: Vec<Vec<Inline>>,
}

/// What a block of the source is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Heading(u8),
    /// A numbered paragraph; its label is its number with the point (`12.`, `3)`).
    Numbered,
    Bullet,
    Quote,
    Para,
    Rule,
    /// A footnote's definition, `[^id]: text`; its label is the id.
    Note,
}

/// A block as it stands in the source.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceBlock {
    pub kind: Kind,
    /// Where the block's number or footnote id is (empty for the other kinds).
    pub label: Range<usize>,
    /// The byte ranges of its text, one for each source line, markers left out.
    pub lines: Vec<Range<usize>>,
}

/// The blocks of `text`, in order. Footnote definitions stand where they are written.
pub fn blocks(text: &str) -> Vec<SourceBlock> {
    let mut out = Vec::new();
    // The block whose text may go on onto the next line.
    let mut open: Option<SourceBlock> = None;
    let mut at = 0;
    for raw in text.split_inclusive('\n') {
        let start = at;
        at += raw.len();
        let s = start + (raw.len() - raw.trim_start().len());
        let t = raw.trim();
        let e = s + t.len();
        let one = |kind, label, from: usize| {
            let text = s + from..e;
            SourceBlock {
                kind,
                label,
                lines: vec![text],
            }
        };
        match line(t) {
            Line::Blank => out.extend(open.take()),
            Line::Heading(level, from) => {
                out.extend(open.take());
                out.push(one(Kind::Heading(level), s..s, from));
            }
            Line::Rule => {
                out.extend(open.take());
                out.push(SourceBlock {
                    kind: Kind::Rule,
                    label: s..s,
                    lines: Vec::new(),
                });
            }
            Line::Note(id, from) => {
                out.extend(open.take());
                out.push(one(Kind::Note, s + 2..s + 2 + id, from));
            }
            Line::Quote(from) => match &mut open {
                Some(b) if b.kind == Kind::Quote => b.lines.push(s + from..e),
                _ => {
                    out.extend(open.take());
                    open = Some(one(Kind::Quote, s..s, from));
                }
            },
            Line::Numbered(label, from) => {
                out.extend(open.take());
                open = Some(one(Kind::Numbered, s..s + label, from));
            }
            Line::Bullet => {
                out.extend(open.take());
                open = Some(one(Kind::Bullet, s..s, 2));
            }
            Line::Text => match &mut open {
                Some(b) if b.kind != Kind::Quote => b.lines.push(s..e),
                _ => {
                    out.extend(open.take());
                    open = Some(one(Kind::Para, s..s, 0));
                }
            },
        }
    }
    out.extend(open);
    out
}

/// What one trimmed line is, with the length of its marker where the text comes after one.
enum Line {
    Blank,
    Heading(u8, usize),
    Rule,
    /// The id's length, and where the text begins.
    Note(usize, usize),
    Quote(usize),
    /// The length of the number with its point, and where the text begins.
    Numbered(usize, usize),
    Bullet,
    Text,
}

fn line(t: &str) -> Line {
    let after = |marker: usize| marker + (t.len() - marker - t[marker..].trim_start().len());
    if t.is_empty() {
        return Line::Blank;
    }
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    if (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
        return Line::Heading(hashes as u8, after(hashes));
    }
    if t.len() >= 3 && (t.bytes().all(|b| b == b'-') || t.bytes().all(|b| b == b'*')) {
        return Line::Rule;
    }
    if let Some(id) = footnote_def(t) {
        return Line::Note(id, after(id + 4));
    }
    if t.starts_with('>') {
        return Line::Quote(after(1));
    }
    if let Some(n) = numbered(t) {
        return Line::Numbered(n, after(n));
    }
    if t.starts_with("- ") || t.starts_with("* ") {
        return Line::Bullet;
    }
    Line::Text
}

/// `[^id]:` at the start of a line: the length of the id.
fn footnote_def(t: &str) -> Option<usize> {
    let rest = t.strip_prefix("[^")?;
    let id = &rest[..rest.find("]:")?];
    (!id.is_empty() && !id.contains(char::is_whitespace)).then_some(id.len())
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

/// The ids of the footnotes `blocks` define, in order: a reference `[^id]` is numbered by
/// the first place its id has here.
pub fn note_ids(text: &str, blocks: &[SourceBlock]) -> Vec<String> {
    blocks
        .iter()
        .filter(|b| b.kind == Kind::Note)
        .map(|b| text[b.label.clone()].to_string())
        .collect()
}

/// A block's lines joined by single spaces and trimmed: the text its markup is read over.
pub struct Joined<'a> {
    source: &'a str,
    pub text: String,
    /// Where each part of `text` stands in the source, in order.
    parts: Vec<Part>,
}

/// A stretch of a line's text (`len` bytes of the joined text at `at`, the same bytes of the
/// source at `from`), or the space that joins two lines (`join`), standing for the white
/// space of the source at `from` after the first line's text.
struct Part {
    at: usize,
    len: usize,
    from: usize,
    join: bool,
}

/// Joins `lines` of `source`.
pub fn join<'a>(source: &'a str, lines: &[Range<usize>]) -> Joined<'a> {
    let mut text = String::new();
    let mut parts = Vec::new();
    for (n, r) in lines.iter().enumerate() {
        if n > 0 {
            parts.push(Part {
                at: text.len(),
                len: 1,
                from: lines[n - 1].end,
                join: true,
            });
            text.push(' ');
        }
        parts.push(Part {
            at: text.len(),
            len: r.len(),
            from: r.start,
            join: false,
        });
        text.push_str(&source[r.clone()]);
    }
    // Trimmed as a whole: a bullet's text may begin with spaces, and a blank quoted line
    // leaves a join with nothing beside it.
    let lead = text.len() - text.trim_start().len();
    let keep = text.trim().len();
    text.drain(..lead);
    text.truncate(keep);
    let parts = parts
        .into_iter()
        .filter_map(|p| {
            let lo = p.at.max(lead);
            let hi = (p.at + p.len).min(lead + keep);
            (lo < hi).then(|| Part {
                at: lo - lead,
                len: hi - lo,
                from: if p.join { p.from } else { p.from + lo - p.at },
                join: p.join,
            })
        })
        .collect();
    Joined {
        source,
        text,
        parts,
    }
}

impl Joined<'_> {
    /// Where `range` of the joined text stands in the source: one range for each stretch the
    /// source has without a break, a joining space standing for the white space it replaced.
    pub fn source(&self, range: Range<usize>) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = Vec::new();
        for p in &self.parts {
            let lo = p.at.max(range.start);
            let hi = (p.at + p.len).min(range.end);
            if lo >= hi {
                continue;
            }
            let r = if p.join {
                let len = self.source[p.from..]
                    .chars()
                    .next()
                    .map_or(0, char::len_utf8);
                p.from..p.from + len
            } else {
                p.from + lo - p.at..p.from + hi - p.at
            };
            match out.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ if r.is_empty() => {}
                _ => out.push(r),
            }
        }
        out
    }
}

/// Inline markup read over a joined text, by byte ranges of that text.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Text(Range<usize>),
    Bold(Vec<Node>),
    Italic(Vec<Node>),
    /// `[^id]` for a defined footnote: its number (1-based, in order of definition).
    Note(usize),
}

/// Emphasis and footnote references in `text`; `notes` are the ids defined. Unpaired markers,
/// and references to no footnote, stay as they were written.
pub fn nodes(text: &str, notes: &[String]) -> Vec<Node> {
    nodes_at(text, 0, notes)
}

/// [`nodes`] of `text`, which stands at `base` in the text the ranges are of.
fn nodes_at(text: &str, base: usize, notes: &[String]) -> Vec<Node> {
    const MARKERS: [(&str, bool); 4] = [("**", true), ("__", true), ("*", false), ("_", false)];
    let mut out = Vec::new();
    // Where the text not yet pushed begins.
    let mut from: Option<usize> = None;
    let push_text = |out: &mut Vec<Node>, from: &mut Option<usize>, to: usize| {
        if let Some(f) = from.take() {
            out.push(Node::Text(base + f..base + to));
        }
    };
    let b = text.as_bytes();
    let mut i = 0;
    'outer: while i < text.len() {
        let rest = &text[i..];
        if let Some(after) = rest.strip_prefix("[^") {
            if let Some(end) = after.find(']') {
                if let Some(n) = notes.iter().position(|x| x == &after[..end]) {
                    push_text(&mut out, &mut from, i);
                    out.push(Node::Note(n + 1));
                    i += end + 3;
                    continue;
                }
            }
        }
        for (marker, bold) in MARKERS {
            if !rest.starts_with(marker) {
                continue;
            }
            // `_` inside a word (snake_case, file names) is not emphasis, and neither is a
            // marker inside a longer run of its character (signature lines: `______`).
            let mc = marker.as_bytes()[0];
            let before = if i > 0 { b[i - 1] } else { b' ' };
            let in_word = before == mc || (mc == b'_' && before.is_ascii_alphanumeric());
            let start = i + marker.len();
            if let (false, Some(len)) = (in_word, text[start..].find(marker)) {
                let inner = &text[start..start + len];
                let after = b.get(start + len + marker.len()).copied().unwrap_or(b' ');
                let run_on =
                    after == mc || inner.starts_with(mc as char) || inner.ends_with(mc as char);
                if !run_on && !inner.is_empty() && !inner.starts_with(' ') && !inner.ends_with(' ')
                {
                    push_text(&mut out, &mut from, i);
                    let kids = nodes_at(inner, base + start, notes);
                    out.push(if bold {
                        Node::Bold(kids)
                    } else {
                        Node::Italic(kids)
                    });
                    i = start + len + marker.len();
                    continue 'outer;
                }
            }
            break;
        }
        from.get_or_insert(i);
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    push_text(&mut out, &mut from, i);
    out
}

/// Markdown as the blocks a document lays out, with its footnotes.
pub fn parse(text: &str) -> Doc {
    let found = blocks(text);
    let ids = note_ids(text, &found);
    let mut doc = Doc::default();
    for b in &found {
        let inl = inlines(&join(text, &b.lines).text, &ids);
        doc.blocks.push(match b.kind {
            Kind::Heading(level) => Block::Heading(level, inl),
            Kind::Numbered => {
                let number = &text[b.label.start..b.label.end - 1];
                Block::Numbered(number.to_string(), inl)
            }
            Kind::Bullet => Block::Bullet(inl),
            Kind::Quote => Block::Quote(inl),
            Kind::Para => Block::Para(inl),
            Kind::Rule => Block::Rule,
            Kind::Note => {
                doc.notes.push(inl);
                continue;
            }
        });
    }
    doc
}

/// Emphasis and footnote references, with their text. Unpaired markers stay as they were
/// written.
pub fn inlines(text: &str, notes: &[String]) -> Vec<Inline> {
    fn with_text(text: &str, ns: Vec<Node>) -> Vec<Inline> {
        ns.into_iter()
            .map(|n| match n {
                Node::Text(r) => Inline::Text(text[r].to_string()),
                Node::Bold(k) => Inline::Bold(with_text(text, k)),
                Node::Italic(k) => Inline::Italic(with_text(text, k)),
                Node::Note(n) => Inline::Note(n),
            })
            .collect()
    }
    with_text(text, nodes(text, notes))
}

/// The text of inlines, without markup.
pub fn plain(inl: &[Inline]) -> String {
    let mut s = String::new();
    for x in inl {
        match x {
            Inline::Text(t) => s.push_str(t),
            Inline::Bold(k) | Inline::Italic(k) => s.push_str(&plain(k)),
            Inline::Note(n) => s.push_str(&n.to_string()),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_an_affidavit() {
        let d = parse(
            "# Affidavit of Jane Smith\n\nI, Jane Smith, state:\n\n1. I rented the flat\n   at 12 Harbor Road.[^1]\n2. I paid **$1,250.00**.\n\n> \"Please repair it.\"\n> — the email\n\n- a bullet\n\n---\n[^1]: Lease, SMITH000002.\n",
        );
        assert_eq!(
            d.blocks[0],
            Block::Heading(1, vec![Inline::Text("Affidavit of Jane Smith".into())])
        );
        assert_eq!(
            d.blocks[2],
            Block::Numbered(
                "1".into(),
                vec![
                    Inline::Text("I rented the flat at 12 Harbor Road.".into()),
                    Inline::Note(1)
                ]
            )
        );
        assert_eq!(
            d.blocks[3],
            Block::Numbered(
                "2".into(),
                vec![
                    Inline::Text("I paid ".into()),
                    Inline::Bold(vec![Inline::Text("$1,250.00".into())]),
                    Inline::Text(".".into())
                ]
            )
        );
        assert!(
            matches!(&d.blocks[4], Block::Quote(q) if plain(q) == "\"Please repair it.\" — the email")
        );
        assert!(matches!(d.blocks[5], Block::Bullet(_)));
        assert_eq!(d.blocks[6], Block::Rule);
        assert_eq!(plain(&d.notes[0]), "Lease, SMITH000002.");
    }

    #[test]
    fn malformed_markup_is_kept_as_text() {
        for t in [
            "**unclosed bold",
            "a * b * c",
            "snake_case_name",
            "[^missing] ref",
            "**",
            "*",
            "#no space",
            "1.no space",
            "é*ü*",
            "Executed on ______, 20____.",
            "***",
        ] {
            let d = parse(t);
            let all: String = d
                .blocks
                .iter()
                .map(|b| match b {
                    Block::Para(i) | Block::Heading(_, i) | Block::Numbered(_, i) => plain(i),
                    _ => String::new(),
                })
                .collect();
            let expect = t.replace('*', "");
            assert!(all == t || all == expect, "{t:?} → {all:?}");
        }
        assert_eq!(plain(&inlines("a *b* c", &[])), "a b c");
    }

    #[test]
    fn blocks_keep_where_their_text_stands() {
        let src = "1. I paid *$100*\n   on May 9.[^n]\n\n-   a bullet\n[^n]: Receipt.\n";
        let bs = blocks(src);
        let kinds: Vec<Kind> = bs.iter().map(|b| b.kind).collect();
        assert_eq!(kinds, [Kind::Numbered, Kind::Bullet, Kind::Note]);
        assert_eq!(&src[bs[0].label.clone()], "1.");
        assert_eq!(&src[bs[2].label.clone()], "n");
        let ids = note_ids(src, &bs);
        let j = join(src, &bs[0].lines);
        assert_eq!(j.text, "I paid *$100* on May 9.[^n]");
        let ns = nodes(&j.text, &ids);
        let Node::Italic(kids) = &ns[1] else {
            panic!("{ns:?}")
        };
        let Node::Text(r) = &kids[0] else {
            panic!("{kids:?}")
        };
        let amount = src.find("$100").unwrap()..src.find("*\n").unwrap();
        assert_eq!(j.source(r.clone()), [amount]);
        // The text after the emphasis runs across the line break: one stretch for the space
        // that ended the line and the next line's text, which begins after its indent.
        let Node::Text(r) = &ns[2] else {
            panic!("{ns:?}")
        };
        let eol = src.find("*\n").unwrap() + 1;
        let on = src.find("on May").unwrap();
        assert_eq!(
            j.source(r.clone()),
            [eol..eol + 1, on..on + "on May 9.".len()]
        );
        assert_eq!(ns[3], Node::Note(1));
        // A bullet's text is trimmed as the document trims it.
        assert_eq!(join(src, &bs[1].lines).text, "a bullet");
    }

    #[test]
    fn a_footnote_definition_ends_the_block_before_it() {
        let d = parse("Rent was paid.\n[^1]: Receipt.\nThe landlord kept it.[^1]\n");
        assert_eq!(d.blocks.len(), 2, "{d:?}");
        assert_eq!(plain(&d.notes[0]), "Receipt.");
        assert!(matches!(&d.blocks[1], Block::Para(p) if p.last() == Some(&Inline::Note(1))));
    }
}
