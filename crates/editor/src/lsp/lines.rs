//! Byte offsets ↔ LSP positions (line, UTF-16 column), as the protocol counts them.

use lsp_types::{Position, Range};

use crate::diagnostic::Span;

pub struct Lines<'a> {
    text: &'a str,
    /// Byte offset where each line starts.
    starts: std::borrow::Cow<'a, [usize]>,
}

/// Where each line of `text` starts, by byte offset.
pub fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    starts
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Self {
        Lines {
            text,
            starts: line_starts(text).into(),
        }
    }

    /// With the line starts of `text` found before ([`line_starts`]).
    pub fn with_starts(text: &'a str, starts: &'a [usize]) -> Self {
        Lines {
            text,
            starts: starts.into(),
        }
    }

    pub fn position(&self, offset: usize) -> Position {
        let offset = self.floor(offset.min(self.text.len()));
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let col: usize = self.text[self.starts[line]..offset]
            .chars()
            .map(char::len_utf16)
            .sum();
        Position::new(line as u32, col as u32)
    }

    pub fn range(&self, span: Span) -> Range {
        Range::new(
            self.position(span.start),
            self.position(span.end.max(span.start)),
        )
    }

    /// The byte offset of a position; past the end of a line means its end.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map_or(self.text.len(), |&e| e.saturating_sub(1));
        let mut units = 0u32;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }

    fn floor(&self, mut i: usize) -> usize {
        while !self.text.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_utf16_units() {
        let l = Lines::new("ab\n× é𝄞x\n");
        assert_eq!(l.position(3), Position::new(1, 0));
        let x = "ab\n× é𝄞".len();
        assert_eq!(l.position(x), Position::new(1, 5));
        assert_eq!(l.offset(Position::new(1, 5)), x);
        assert_eq!(l.offset(Position::new(9, 0)), l.text.len());
        assert_eq!(l.offset(Position::new(0, 99)), 2);
    }
}
