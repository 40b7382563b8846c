//! What the layout is built from: the printer over a file's text and the units it prints.

use crate::syntax::Rule;

pub(super) struct Printer<'a> {
    pub(super) text: &'a str,
}

/// One printed unit of a block body or of the file.
#[derive(Debug)]
pub(super) enum Unit {
    Blank,
    /// A comment on its own line.
    Comment(String),
    /// A comment at the end of the line before.
    Trailing(String),
    Line(Vec<Entry>),
    /// Finished text (a block declaration, or something kept as written).
    Text(String),
}

/// A setting or a one-line declaration: `key` is what the value column is aligned after.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) key: String,
    pub(super) rest: String,
    pub(super) align: bool,
    /// Only entries of one kind align with each other (top level: the declaration's rule).
    pub(super) kind: Option<Rule>,
}

impl Entry {
    pub(super) fn whole(text: String) -> Entry {
        Entry {
            key: text,
            rest: String::new(),
            align: false,
            kind: None,
        }
    }

    pub(super) fn render(&self, width: usize) -> String {
        if self.rest.is_empty() {
            return self.key.clone();
        }
        // A value over several lines opens next to its key (`returns {`, `prompt """`).
        let width = if self.rest.contains('\n') { 0 } else { width };
        let pad = width.saturating_sub(self.key.chars().count());
        format!("{}{} {}", self.key, " ".repeat(pad), self.rest)
    }
}
