//! Shapes no real workflow has, refused before they can exhaust the parser's stack or time.

use crate::diagnostic::{Code, Diagnostic, FileId, Span};

/// Conditions and record types nest; past this depth the file is surely a mistake, and a
/// bounded depth keeps the tree walkers from exhausting the stack on hostile input.
pub(super) const MAX_NESTING: usize = 32;

/// Larger than any workflow a person writes; the generated 1,000-stage benchmark is 275 KiB.
const MAX_FILE: usize = 16 << 20;

/// Blocks left open at the end of the file: past this many, parsing would only repeat the
/// search for their ends (quadratic time), so the file is refused with the first one shown.
const MAX_UNCLOSED: usize = 4;

/// Finds shapes no real workflow has, before they can exhaust the parser's stack or time:
/// `{` or `(` more than 32 deep, a long chain of `list of`, many unclosed blocks, a huge
/// file. Strings and comments are skipped.
pub(super) fn too_deep(text: &str, file: FileId) -> Option<Diagnostic> {
    if text.len() > MAX_FILE {
        return Some(
            Diagnostic::new(
                Code::Syntax,
                format!(
                    "this file is {} MiB, larger than any workflow",
                    text.len() >> 20
                ),
            )
            .in_file(file)
            .label(Span::new(0, 0), "")
            .help("split it into files joined with `use \"other.lex\"`"),
        );
    }
    let bytes = text.as_bytes();
    let mut open_braces: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut lists = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        if rest.starts_with(b"\"\"\"") {
            i += 3 + text[i + 3..].find("\"\"\"").map_or(text.len(), |e| e + 3);
            continue;
        }
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if rest.starts_with(b"//") => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if rest.starts_with(b"/*") => {
                i += text[i..].find("*/").map_or(text.len(), |e| e + 1);
            }
            b'{' => {
                depth += 1;
                open_braces.push(i);
            }
            b'(' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                open_braces.pop();
            }
            b')' => depth = depth.saturating_sub(1),
            b'l' if rest.starts_with(b"list") => {
                lists += 1;
                i += 3;
            }
            c if c.is_ascii_whitespace() => {}
            _ if rest.starts_with(b"of") => i += 1,
            _ => lists = 0,
        }
        if depth > MAX_NESTING || lists > MAX_NESTING {
            let at = i.min(text.len());
            let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
            return Some(
                Diagnostic::new(Code::Syntax, "this is nested too deeply to be a workflow")
                    .in_file(file)
                    .label(Span::new(at, end), format!("more than {MAX_NESTING} levels deep here"))
                    .help("check for a missing `}` or `)`; real blocks, conditions and types nest only a few levels"),
            );
        }
        i += 1;
    }
    if open_braces.len() > MAX_UNCLOSED {
        let at = open_braces[0];
        return Some(
            Diagnostic::new(
                Code::Syntax,
                format!("{} blocks are never closed", open_braces.len()),
            )
            .in_file(file)
            .label(Span::new(at, at + 1), "the first is opened here")
            .help("every `{` needs its `}`; check the blocks from here on"),
        );
    }
    None
}
