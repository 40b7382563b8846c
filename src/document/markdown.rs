//! The Markdown a drafting model writes, read into blocks a document can lay out: headings,
//! numbered paragraphs, bullets, block quotes, footnotes, emphasis. Malformed Markdown is
//! never an error: a marker without its pair is kept as text.

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

pub fn parse(text: &str) -> Doc {
    let text = text.replace("\r\n", "\n");
    // Footnote definitions first, so references can be numbered.
    let mut note_ids: Vec<String> = Vec::new();
    let mut note_texts: Vec<String> = Vec::new();
    let mut body = Vec::new();
    for line in text.lines() {
        if let Some((id, rest)) = footnote_def(line) {
            note_ids.push(id.to_string());
            note_texts.push(rest.trim().to_string());
        } else {
            body.push(line);
        }
    }
    let mut doc = Doc::default();
    let mut para: Vec<&str> = Vec::new();
    let mut kind: Option<Kind> = None;
    let flush = |doc: &mut Doc, para: &mut Vec<&str>, kind: &mut Option<Kind>, ids: &[String]| {
        if para.is_empty() {
            return;
        }
        let joined = para.join(" ");
        let inl = inlines(joined.trim(), ids);
        doc.blocks.push(match kind.take() {
            Some(Kind::Numbered(n)) => Block::Numbered(n, inl),
            Some(Kind::Bullet) => Block::Bullet(inl),
            Some(Kind::Quote) => Block::Quote(inl),
            None => Block::Para(inl),
        });
        para.clear();
    };
    for line in body {
        let t = line.trim();
        if t.is_empty() {
            flush(&mut doc, &mut para, &mut kind, &note_ids);
            continue;
        }
        if let Some((level, rest)) = heading(t) {
            flush(&mut doc, &mut para, &mut kind, &note_ids);
            doc.blocks
                .push(Block::Heading(level, inlines(rest, &note_ids)));
            continue;
        }
        if t.len() >= 3 && (t.chars().all(|c| c == '-') || t.chars().all(|c| c == '*')) {
            flush(&mut doc, &mut para, &mut kind, &note_ids);
            doc.blocks.push(Block::Rule);
            continue;
        }
        if let Some(rest) = t.strip_prefix('>') {
            if kind != Some(Kind::Quote) {
                flush(&mut doc, &mut para, &mut kind, &note_ids);
                kind = Some(Kind::Quote);
            }
            para.push(rest.trim_start());
            continue;
        }
        if let Some((n, rest)) = numbered(t) {
            flush(&mut doc, &mut para, &mut kind, &note_ids);
            kind = Some(Kind::Numbered(n));
            para.push(rest);
            continue;
        }
        if let Some(rest) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
            flush(&mut doc, &mut para, &mut kind, &note_ids);
            kind = Some(Kind::Bullet);
            para.push(rest);
            continue;
        }
        if kind == Some(Kind::Quote) {
            flush(&mut doc, &mut para, &mut kind, &note_ids);
        }
        para.push(t);
    }
    flush(&mut doc, &mut para, &mut kind, &note_ids);
    doc.notes = note_texts.iter().map(|t| inlines(t, &note_ids)).collect();
    doc
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Numbered(String),
    Bullet,
    Quote,
}

fn footnote_def(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("[^")?;
    let (id, rest) = rest.split_once("]:")?;
    (!id.is_empty() && !id.contains(char::is_whitespace)).then_some((id, rest))
}

fn heading(t: &str) -> Option<(u8, &str)> {
    let level = t.chars().take_while(|&c| c == '#').count();
    if (1..=6).contains(&level) && t[level..].starts_with(' ') {
        Some((level as u8, t[level..].trim()))
    } else {
        None
    }
}

fn numbered(t: &str) -> Option<(String, &str)> {
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 4 {
        return None;
    }
    let rest = &t[digits..];
    let rest = rest
        .strip_prefix(". ")
        .or_else(|| rest.strip_prefix(") "))?;
    Some((t[..digits].to_string(), rest.trim_start()))
}

/// Emphasis and footnote references. Unpaired markers stay as they were written.
pub fn inlines(text: &str, notes: &[String]) -> Vec<Inline> {
    const MARKERS: [(&str, bool); 4] = [("**", true), ("__", true), ("*", false), ("_", false)];
    let mut out = Vec::new();
    let mut buf = String::new();
    let b = text.as_bytes();
    let mut i = 0;
    'outer: while i < text.len() {
        let rest = &text[i..];
        if let Some(after) = rest.strip_prefix("[^") {
            if let Some(end) = after.find(']') {
                if let Some(n) = notes.iter().position(|x| x == &after[..end]) {
                    push_text(&mut out, &mut buf);
                    out.push(Inline::Note(n + 1));
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
                    push_text(&mut out, &mut buf);
                    let kids = inlines(inner, notes);
                    out.push(if bold {
                        Inline::Bold(kids)
                    } else {
                        Inline::Italic(kids)
                    });
                    i = start + len + marker.len();
                    continue 'outer;
                }
            }
            break;
        }
        let ch = rest.chars().next().unwrap_or(' ');
        buf.push(ch);
        i += ch.len_utf8();
    }
    push_text(&mut out, &mut buf);
    out
}

fn push_text(out: &mut Vec<Inline>, buf: &mut String) {
    if !buf.is_empty() {
        out.push(Inline::Text(std::mem::take(buf)));
    }
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
}
