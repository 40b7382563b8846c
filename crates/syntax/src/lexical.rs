//! Mistakes found before the grammar runs, because the grammar can only describe them badly:
//! a `/*` comment or a `"""` text that is never closed (everything after it would be
//! swallowed), quoted text that runs to the end of its line, and characters that are not
//! ASCII where the language expects names and symbols — a Cyrillic `а` inside `intake`, curly
//! quotes pasted from a word processor, a no-break space.
//!
//! Each is reported once, where it starts. The parser then reads a repaired copy of the text
//! (same length, so every span still points into the file): curly quotes and odd spaces become
//! their ASCII forms, and an unclosed comment or text ends the file, with the blocks around it
//! closed. Parser errors on the lines already explained are dropped.

use crate::diagnostic::{Code, Diagnostic, FileId, Span};

/// What the scan found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub diagnostics: Vec<Diagnostic>,
    /// The text the parser should read, when it differs from the file.
    pub repaired: Option<String>,
    /// Byte ranges (whole lines) whose parser errors are explained already.
    pub quiet: Vec<(usize, usize)>,
    /// Where an unclosed comment or text starts: nothing after it is read.
    pub cut: Option<usize>,
}

impl Scan {
    /// Whether a parser diagnostic at `at` follows from a mistake found here.
    pub fn explains(&self, at: usize) -> bool {
        self.cut.is_some_and(|c| at >= c) || self.quiet.iter().any(|(s, e)| (*s..=*e).contains(&at))
    }
}

pub(crate) fn scan(text: &str, file: FileId) -> Scan {
    let bytes = text.as_bytes();
    let mut out = Scan::default();
    let mut repaired: Option<Vec<u8>> = None;
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        match bytes[i] {
            b'/' if rest.starts_with(b"//") => {
                i = memchr::memchr(b'\n', rest).map_or(bytes.len(), |e| i + e);
                continue;
            }
            b'/' if rest.starts_with(b"/*") => match memchr::memmem::find(&rest[2..], b"*/") {
                // A comment over several lines whose first `*/` sits inside quoted text (as
                // in `"intake/**/*.pdf"`) was meant to end long before: it is unclosed.
                Some(e) if !ends_in_quotes(text, i, i + 2 + e) => {
                    i += e + 4;
                    continue;
                }
                _ => {
                    out.diagnostics.push(
                        Diagnostic::new(Code::Syntax, "this comment is never closed")
                            .in_file(file)
                            .label(Span::new(i, i + 2), "the comment opens here")
                            .help("end the comment with `*/`; everything after `/*` is part of it until then. For a note on one line, start it with `//`"),
                    );
                    cut(&mut out, &mut repaired, text, i, depth);
                    break;
                }
            },
            b'"' if rest.starts_with(b"\"\"\"") => {
                match memchr::memmem::find(&rest[3..], b"\"\"\"") {
                    Some(e) => i += e + 6,
                    None => {
                        out.diagnostics.push(
                            Diagnostic::new(Code::Syntax, "this `\"\"\"` text is never closed")
                                .in_file(file)
                                .label(Span::new(i, i + 3), "the text opens here")
                                .help("end the text with `\"\"\"` (three straight double quotes), usually on a line of its own; everything after the opening `\"\"\"` is part of the text until then"),
                        );
                        cut(&mut out, &mut repaired, text, i, depth);
                        break;
                    }
                }
                continue;
            }
            b'"' => {
                i = string(text, i, file, &mut out, &mut repaired);
                continue;
            }
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b if b >= 0x80 => {
                i = non_ascii(text, i, file, &mut out, &mut repaired);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.repaired = repaired.map(|b| String::from_utf8(b).unwrap_or_else(|_| text.to_string()));
    out
}

/// Whether the `*/` at `close` ends a comment begun on an earlier line inside quoted text.
fn ends_in_quotes(text: &str, open: usize, close: usize) -> bool {
    let (start, _) = line_of(text, close);
    start > open && text[start..close].matches('"').count() % 2 == 1
}

/// Ends the readable text at `at`: the blocks open there are closed, the rest is blank.
fn cut(out: &mut Scan, repaired: &mut Option<Vec<u8>>, text: &str, at: usize, depth: usize) {
    let buf = repaired.get_or_insert_with(|| text.as_bytes().to_vec());
    let room = text.len() - at;
    for (k, b) in buf[at..].iter_mut().enumerate() {
        *b = if depth <= room && k < depth {
            b'}'
        } else {
            b' '
        };
    }
    out.cut = Some(at);
}

/// A `"…"` string from its opening quote: returns where scanning continues.
fn string(
    text: &str,
    open: usize,
    file: FileId,
    out: &mut Scan,
    repaired: &mut Option<Vec<u8>>,
) -> usize {
    let bytes = text.as_bytes();
    let mut j = open + 1;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            b'\n' => break,
            _ => j += 1,
        }
    }
    let line_end = j.min(bytes.len());
    // Closed with a curly quote pasted from a word processor: say so, and read it as straight.
    if let Some(k) = text[open + 1..line_end]
        .find('\u{201D}')
        .map(|k| open + 1 + k)
    {
        out.diagnostics.push(curly(file, k, '\u{201D}'));
        replace(repaired, text, k, "\"  ");
        return k + 3;
    }
    out.diagnostics.push(
        Diagnostic::new(Code::Syntax, "this quoted text is never closed")
            .in_file(file)
            .label(Span::new(open, open + 1), "the quote opens here")
            .help("add the closing `\"` before the end of the line; quoted text stays on one line (use `\"\"\"` … `\"\"\"` for text over several lines)"),
    );
    out.quiet.push(line_of(text, open));
    line_end
}

fn curly(file: FileId, at: usize, c: char) -> Diagnostic {
    Diagnostic::new(
        Code::NonAscii,
        format!("`{c}` ({}) is a curly quote; lexrun reads only straight quotes `\"`", char_name(c)),
    )
    .in_file(file)
    .label(Span::new(at, at + c.len_utf8()), "curly quote")
    .help("retype the quotes around the text as straight quotes `\"`; word processors turn them curly, so edit .lex files in a plain text editor")
}

fn replace(repaired: &mut Option<Vec<u8>>, text: &str, at: usize, with: &str) {
    let buf = repaired.get_or_insert_with(|| text.as_bytes().to_vec());
    buf[at..at + with.len()].copy_from_slice(with.as_bytes());
}

/// A character that is not ASCII outside quoted text and comments: returns where scanning
/// continues.
fn non_ascii(
    text: &str,
    at: usize,
    file: FileId,
    out: &mut Scan,
    repaired: &mut Option<Vec<u8>>,
) -> usize {
    let Some(c) = text[at..].chars().next() else {
        return text.len();
    };
    let len = c.len_utf8();
    match c {
        // `vram 4 × 32 GiB` is part of the language.
        '×' => at + len,
        // A byte-order mark opening the file (what Windows Notepad writes) is no character
        // of the text; the grammar reads it as a space.
        '\u{FEFF}' if at == 0 => at + len,
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{2033}' => {
            out.diagnostics.push(curly(file, at, c));
            let line = line_of(text, at);
            if c == '\u{201D}' {
                // A closing curly quote with no opening one.
                replace(repaired, text, at, "\"  ");
                out.quiet.push(line);
                return at + len;
            }
            // The opening quote becomes straight at its end and the closing one at its start,
            // so the text between them is read unchanged.
            replace(repaired, text, at, "  \"");
            let open = at + len;
            match text[open..line.1].find(['\u{201D}', '\u{201C}', '"']) {
                Some(k) => {
                    let k = open + k;
                    let close = text[k..].chars().next().unwrap_or('"');
                    if close != '"' {
                        replace(repaired, text, k, "\"  ");
                    }
                    k + close.len_utf8()
                }
                None => {
                    out.quiet.push(line);
                    line.1
                }
            }
        }
        c if c.is_whitespace() => {
            out.diagnostics.push(
                Diagnostic::new(
                    Code::NonAscii,
                    format!("a {} (U+{:04X}) looks like a space but is not one", char_name(c), c as u32),
                )
                .in_file(file)
                .label(Span::new(at, at + len), "this space")
                .help("retype it as an ordinary space; text pasted from a word processor or a web page often carries such spaces"),
            );
            replace(repaired, text, at, &"    "[..len]);
            at + len
        }
        _ => {
            let (start, end) = word_around(text, at);
            let word = &text[start..end];
            let mut d = if is_word_char(c) {
                let ascii = skeleton(word);
                let looks = ascii_twin(c);
                let message = match &looks {
                    Some(twin) => format!(
                        "`{c}` ({}) looks like `{twin}` but is a different letter",
                        char_name(c)
                    ),
                    None => format!("`{word}` is not an ASCII name: `{c}` is {}", char_name(c)),
                };
                let help = match (&looks, ascii.is_ascii() && ascii != word) {
                    (Some(_), true) => format!(
                        "names must be ASCII: retype it as `{ascii}` (letters a–z, digits and `_`)"
                    ),
                    _ => "names must be ASCII: use letters a–z, digits and `_`, e.g. `draft_2`"
                        .to_string(),
                };
                Diagnostic::new(Code::NonAscii, message).help(help)
            } else {
                Diagnostic::new(
                    Code::NonAscii,
                    format!("`{c}` ({}) is not part of the .lex language", char_name(c)),
                )
                .help("outside quoted text and comments a .lex file is plain ASCII; retype this character, or put the text in quotes")
            };
            d = d
                .in_file(file)
                .label(Span::new(at, at + len), format!("U+{:04X}", c as u32));
            out.diagnostics.push(d);
            out.quiet.push(line_of(text, at));
            // One diagnostic per word: skip the rest of it.
            end.max(at + len)
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || (!c.is_ascii() && !c.is_whitespace() && unicode_mark(c))
}

/// Combining marks and invisible format characters, which hide inside names.
fn unicode_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x200B..=0x200D | 0x2060 | 0xFE00..=0xFE0F | 0xFEFF)
}

/// The name around `at`: letters, digits, `_`, marks and invisible characters.
fn word_around(text: &str, at: usize) -> (usize, usize) {
    let start = text[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word_char(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = text[at..]
        .char_indices()
        .find(|(_, c)| !is_word_char(*c))
        .map_or(text.len(), |(i, _)| at + i);
    (start, end)
}

/// The name as it is meant, when every character has an ASCII look-alike (invisible ones
/// dropped); otherwise the name itself.
pub fn skeleton(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        if c.is_ascii() {
            out.push(c);
        } else if unicode_mark(c) {
            continue;
        } else if let Some(t) = ascii_twin(c) {
            out.push_str(&t);
        } else {
            return word.to_string();
        }
    }
    out
}

/// The ASCII text a character is confusable with (Unicode's confusables data, as rustc uses
/// it), or `None` when it looks like no ASCII text.
fn ascii_twin(c: char) -> Option<String> {
    if c.is_ascii() {
        return None;
    }
    let mut buf = [0u8; 4];
    let twin: String =
        unicode_security::confusable_detection::skeleton(c.encode_utf8(&mut buf)).collect();
    (twin.is_ascii() && !twin.is_empty()).then_some(twin)
}

pub(crate) fn char_name(c: char) -> String {
    unicode_names2::name(c).map_or_else(|| format!("U+{:04X}", c as u32), |n| n.to_string())
}

/// The start and end (without the line break) of the line holding `at`.
fn line_of(text: &str, at: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unclosed_comment_cuts_the_text_and_closes_its_block() {
        let text = "stage a {\n  /* note\n  model m\n}\n";
        let s = scan(text, 0);
        assert_eq!(s.diagnostics.len(), 1);
        assert_eq!(s.cut, Some(12));
        let r = s.repaired.unwrap();
        assert_eq!(r.len(), text.len());
        assert!(r.starts_with("stage a {\n  }"), "{r:?}");
    }

    #[test]
    fn the_character_right_after_a_comment_is_read() {
        // A letter that is not ASCII straight after `*/` is seen whole, not from its middle.
        let s = scan("/**/\u{0A32}", 0);
        assert_eq!(s.diagnostics.len(), 1, "{:?}", s.diagnostics);
    }

    #[test]
    fn closed_things_are_left_alone() {
        let s = scan("a /* x */ \"\"\"\n y \"\"\" \"q\" // é\n", 0);
        assert!(s.diagnostics.is_empty() && s.repaired.is_none());
    }

    #[test]
    fn look_alike_letters_are_named() {
        let s = scan("reads int\u{0430}ke\n", 0);
        assert_eq!(s.diagnostics.len(), 1);
        let m = &s.diagnostics[0].message;
        assert!(
            m.contains("CYRILLIC SMALL LETTER A") && m.contains("`a`"),
            "{m}"
        );
        assert_eq!(skeleton("int\u{0430}ke"), "intake");
    }

    #[test]
    fn curly_quotes_are_read_as_straight() {
        let text = "prompt \u{201C}prompts/gate.hbs\u{201D}\n";
        let s = scan(text, 0);
        assert_eq!(s.diagnostics.len(), 1, "{:?}", s.diagnostics);
        let r = s.repaired.unwrap();
        assert_eq!(r.len(), text.len());
        assert!(r.contains("\"prompts/gate.hbs\""), "{r:?}");
    }
}
