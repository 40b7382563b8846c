//! Reading back what pest's tree leaves out: the white space, comments and punctuation between
//! two pairs, and the words of a pair as they will be printed.

use pest::iterators::Pair;

use super::types::Printer;
use crate::syntax::Rule;

/// What lies between two pairs of the tree.
#[derive(Debug)]
pub(super) enum GapTok<'a> {
    Punct(&'a str),
    Comment(&'a str),
}

#[derive(Debug, Default)]
pub(super) struct Gap<'a> {
    /// Each piece with the number of line breaks before it.
    pub(super) toks: Vec<(usize, GapTok<'a>)>,
    /// Line breaks after the last piece.
    pub(super) trailing_newlines: usize,
}

impl<'a> Gap<'a> {
    pub(super) fn comments(&self) -> impl Iterator<Item = (usize, &'a str)> + '_ {
        self.toks.iter().filter_map(|(nl, t)| match t {
            GapTok::Comment(c) => Some((*nl, *c)),
            GapTok::Punct(_) => None,
        })
    }

    pub(super) fn has_comment(&self) -> bool {
        self.comments().next().is_some()
    }
}

impl<'a> Printer<'a> {
    /// Reads the text between two pairs: white space, comments and punctuation.
    pub(super) fn gap(&self, from: usize, to: usize) -> Gap<'a> {
        let s = &self.text[from..to];
        let b = s.as_bytes();
        let mut gap = Gap::default();
        let mut nl = 0;
        let mut i = 0;
        while i < b.len() {
            let rest = &s[i..];
            let c = rest.chars().next().unwrap_or(' ');
            if c == '\n' {
                nl += 1;
                i += 1;
            } else if c.is_whitespace() || c == '\u{FEFF}' {
                i += c.len_utf8();
            } else if rest.starts_with("//") {
                let len = rest.find('\n').unwrap_or(rest.len());
                gap.toks.push((nl, GapTok::Comment(rest[..len].trim_end())));
                nl = 0;
                i += len;
            } else if rest.starts_with("/*") {
                let len = rest.find("*/").map_or(rest.len(), |e| e + 2);
                gap.toks.push((nl, GapTok::Comment(&rest[..len])));
                nl = 0;
                i += len;
            } else if "{}(),:+×".contains(c) {
                gap.toks.push((nl, GapTok::Punct(&rest[..c.len_utf8()])));
                nl = 0;
                i += c.len_utf8();
            } else {
                let len = rest
                    .find(|c: char| c.is_whitespace() || "{}(),:+×".contains(c))
                    .unwrap_or(rest.len());
                let len = len.max(c.len_utf8());
                gap.toks.push((nl, GapTok::Punct(&rest[..len])));
                nl = 0;
                i += len;
            }
        }
        gap.trailing_newlines = nl;
        gap
    }

    /// The words of a stretch of the tree, normalised; `None` if a comment sits inside it.
    pub(super) fn words(
        &self,
        start: usize,
        end: usize,
        children: Vec<Pair<'a, Rule>>,
    ) -> Option<Vec<String>> {
        let mut out = Vec::new();
        let mut pos = start;
        for c in children {
            let (s, e) = (c.as_span().start(), self.end(&c));
            self.gap_words(pos, s, &mut out)?;
            self.pair_words(c, &mut out)?;
            pos = e;
        }
        self.gap_words(pos, end, &mut out)?;
        Some(out)
    }

    pub(super) fn gap_words(&self, from: usize, to: usize, out: &mut Vec<String>) -> Option<()> {
        for (_, t) in self.gap(from, to).toks {
            match t {
                GapTok::Punct(p) => out.push(p.to_string()),
                GapTok::Comment(_) => return None,
            }
        }
        Some(())
    }

    pub(super) fn pair_words(&self, p: Pair<'a, Rule>, out: &mut Vec<String>) -> Option<()> {
        match p.as_rule() {
            Rule::size => {
                let mut it = p.into_inner();
                let num = it.next()?.as_str();
                let unit = it.next()?.as_str();
                out.push(format!("{num} {unit}"));
            }
            Rule::requirement => {
                out.push(p.as_str().split_whitespace().collect::<Vec<_>>().join(" "));
            }
            Rule::string | Rule::text_block | Rule::count => out.push(p.as_str().to_string()),
            _ => {
                let (s, e) = (p.as_span().start(), self.end(&p));
                let inner: Vec<Pair<Rule>> = p.clone().into_inner().collect();
                if inner.is_empty() {
                    out.push(p.as_str().to_string());
                } else {
                    out.extend(self.words(s, e, inner)?);
                }
            }
        }
        Some(())
    }

    /// Where a pair's own text ends. Pest's span of a rule that ends in an optional or
    /// repeated part also covers the white space and comments skipped before that part was
    /// found missing; they belong to what follows.
    pub(super) fn end(&self, p: &Pair<'a, Rule>) -> usize {
        let span = p.as_span();
        // A token without parts (a word, a number) is exactly its span.
        let Some(last) = p.clone().into_inner().last().map(|c| self.end(&c)) else {
            return span.end();
        };
        let mut end = last;
        let s = &self.text[last..span.end()];
        let mut i = 0;
        while i < s.len() {
            let rest = &s[i..];
            let c = rest.chars().next().unwrap_or(' ');
            if c.is_whitespace() || c == '\u{FEFF}' {
                i += c.len_utf8();
            } else if rest.starts_with("//") {
                i += rest.find('\n').unwrap_or(rest.len());
            } else if rest.starts_with("/*") {
                i += rest.find("*/").map_or(rest.len(), |e| e + 2);
            } else {
                i += c.len_utf8();
                end = last + i;
            }
        }
        end
    }

    /// The text of a pair exactly as written, for what holds a comment.
    pub(super) fn verbatim(&self, p: &Pair<'a, Rule>) -> String {
        self.text[p.as_span().start()..self.end(p)].to_string()
    }
}

/// Words joined by single spaces, with `,`, `:` and `)` against the word before and nothing
/// after `(`.
pub(super) fn join(words: &[String]) -> String {
    let mut out = String::new();
    for w in words {
        let tight = matches!(w.as_str(), "," | ":" | ")") || out.ends_with('(');
        if !out.is_empty() && !tight {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}
