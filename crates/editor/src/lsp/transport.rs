//! The base protocol, read by hand: each message is headers (`Content-Length: N`, a blank
//! line) and N bytes of JSON. Whatever arrives, the reader never ends the server and never
//! allocates more than the bytes that came: a body that is not JSON, a length that is not a
//! number or is absurd, a message without headers, a body shorter or longer than announced,
//! a batch — each is one [`Incoming::Bad`], answered by the server, and the reader finds the
//! next `Content-Length:` and reads on.

use std::io::{self, BufRead, Read, Write};

use serde_json::Value;

/// The largest body taken: a bigger one is refused unread (a `.lex` file is kilobytes).
pub const MAX_BODY: u64 = 64 << 20;
/// The longest header line taken.
const MAX_HEADER_LINE: usize = 4096;

pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;

/// One thing read from the client.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// A JSON object: a request, a notification or a response.
    Message(serde_json::Map<String, Value>),
    /// Not a message: answered with this error (and `id: null`).
    Bad { code: i32, message: String },
}

pub struct Reader<R> {
    r: R,
    /// After a bad message: bytes are passed over up to the next `Content-Length:`.
    skipping: bool,
}

const MARKER: &[u8] = b"content-length:";

impl<R: BufRead> Reader<R> {
    pub fn new(r: R) -> Self {
        Reader { r, skipping: false }
    }

    /// The next message, or `None` once the input has ended.
    pub fn next_message(&mut self) -> Option<Incoming> {
        let got = self.read();
        if matches!(got, Some(Incoming::Bad { .. })) {
            self.skipping = true;
        }
        got
    }

    fn read(&mut self) -> Option<Incoming> {
        let mut length: Option<String> = None;
        let mut seen_header = false;
        loop {
            let line = if self.skipping {
                self.skip_to_marker()?;
                self.skipping = false;
                let mut rest = self.line()?;
                let mut l = b"Content-Length:".to_vec();
                l.append(&mut rest.0);
                (l, rest.1)
            } else {
                self.line()?
            };
            let (bytes, whole) = line;
            if !whole {
                return Some(bad(format!(
                    "a header line longer than {MAX_HEADER_LINE} bytes; each message starts with `Content-Length: N`, a blank line, then N bytes of JSON"
                )));
            }
            let text = String::from_utf8_lossy(&bytes);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                if !seen_header {
                    // Blank lines between messages are passed over.
                    continue;
                }
                break;
            }
            seen_header = true;
            match text.split_once(':') {
                Some((name, value)) if is_token(name) => {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = Some(value.trim().to_string());
                    }
                }
                _ => {
                    let shown: String = text.chars().take(40).collect();
                    return Some(bad(format!(
                        "`{shown}` is not a header: each message starts with `Content-Length: N`, a blank line, then N bytes of JSON"
                    )));
                }
            }
        }
        let Some(length) = length else {
            return Some(bad(
                "a message without a `Content-Length` header; give its body's length in bytes"
                    .into(),
            ));
        };
        let n: u64 = match length.parse() {
            Ok(n) => n,
            Err(_) => {
                let shown: String = length.chars().take(40).collect();
                return Some(bad(format!(
                    "`Content-Length: {shown}` is not a number of bytes"
                )));
            }
        };
        if n > MAX_BODY {
            return Some(bad(format!(
                "a message of {n} bytes is more than lexrun lsp takes ({} MiB); it was not read",
                MAX_BODY >> 20
            )));
        }
        let mut body = Vec::new();
        // Grows with what arrives, not with what the header claims.
        if (&mut self.r).take(n).read_to_end(&mut body).ok()? < n as usize {
            return None;
        }
        Some(parse(&body))
    }

    /// The bytes buffered, reading more when there are none (again when a read is
    /// interrupted); empty at the end of the input, `None` when reading fails.
    fn fill(&mut self) -> Option<&[u8]> {
        loop {
            match self.r.fill_buf() {
                Ok([]) => return Some(&[]),
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return None,
            }
        }
        // What is buffered, without reading again.
        self.r.fill_buf().ok()
    }

    /// One line, `\n` included, and whether it fit in [`MAX_HEADER_LINE`] (the rest of a
    /// longer one is read and dropped). `None` at the end of the input.
    fn line(&mut self) -> Option<(Vec<u8>, bool)> {
        let mut out = Vec::new();
        let mut whole = true;
        loop {
            let buf = self.fill()?;
            if buf.is_empty() {
                return (!out.is_empty()).then_some((out, whole));
            }
            let (take, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            let room = MAX_HEADER_LINE.saturating_sub(out.len());
            if take > room {
                whole = false;
            }
            out.extend_from_slice(&buf[..take.min(room)]);
            self.r.consume(take);
            if done {
                return Some((out, whole));
            }
        }
    }

    /// Passes over bytes up to and including the next `Content-Length:` (any case).
    fn skip_to_marker(&mut self) -> Option<()> {
        let mut matched = 0;
        loop {
            let buf = self.fill()?;
            if buf.is_empty() {
                return None;
            }
            let mut used = 0;
            for &b in buf {
                used += 1;
                let b = b.to_ascii_lowercase();
                if b == MARKER[matched] {
                    matched += 1;
                } else {
                    // The marker's first byte occurs nowhere else in it.
                    matched = usize::from(b == MARKER[0]);
                }
                if matched == MARKER.len() {
                    self.r.consume(used);
                    return Some(());
                }
            }
            self.r.consume(used);
        }
    }
}

fn bad(message: String) -> Incoming {
    Incoming::Bad {
        code: PARSE_ERROR,
        message,
    }
}

fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.!#$%&'*+^`|~".contains(&b))
}

/// A body as a message. An escaped lone surrogate (`"\ud800"`, which a client may send for
/// half of an emoji) is read as U+FFFD instead of failing the whole message.
pub fn parse(body: &[u8]) -> Incoming {
    let value = match serde_json::from_slice::<Value>(body) {
        Ok(v) => v,
        Err(e) => {
            let repaired = replace_lone_surrogates(body);
            match serde_json::from_slice::<Value>(&repaired) {
                Ok(v) if repaired != body => v,
                _ => return bad(format!("the message is not JSON: {e}")),
            }
        }
    };
    match value {
        Value::Object(m) => Incoming::Message(m),
        Value::Array(_) => Incoming::Bad {
            code: INVALID_REQUEST,
            message: "a batch (a JSON array) is not part of the language server protocol; send one message at a time".into(),
        },
        other => Incoming::Bad {
            code: INVALID_REQUEST,
            message: format!(
                "a message must be a JSON object, not `{}`",
                other.to_string().chars().take(40).collect::<String>()
            ),
        },
    }
}

/// The body with every `\uD800`–`\uDFFF` escape that is not half of a pair made `\uFFFD`.
fn replace_lone_surrogates(body: &[u8]) -> Vec<u8> {
    fn hex4(b: &[u8]) -> Option<u16> {
        let s = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(s, 16).ok()
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    let mut in_string = false;
    while i < body.len() {
        let b = body[i];
        if !in_string {
            in_string = b == b'"';
            out.push(b);
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                out.push(b);
                i += 1;
            }
            b'\\' if body.get(i + 1) == Some(&b'u') => {
                let unit = hex4(&body[i + 2..]);
                match unit {
                    Some(0xD800..=0xDBFF)
                        if body.get(i + 6..i + 8) == Some(b"\\u")
                            && matches!(hex4(&body[i + 8..]), Some(0xDC00..=0xDFFF)) =>
                    {
                        out.extend_from_slice(&body[i..i + 12]);
                        i += 12;
                    }
                    Some(0xD800..=0xDFFF) => {
                        out.extend_from_slice(b"\\uFFFD");
                        i += 6;
                    }
                    _ => {
                        out.extend_from_slice(&body[i..i + 2]);
                        i += 2;
                    }
                }
            }
            b'\\' => {
                out.extend_from_slice(&body[i..(i + 2).min(body.len())]);
                i += 2;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// Writes one message with its header.
pub fn write(w: &mut dyn Write, msg: &Value) -> io::Result<()> {
    let body = serde_json::to_vec(msg)?;
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(&body)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8]) -> Vec<Incoming> {
        let mut r = Reader::new(io::BufReader::new(input));
        std::iter::from_fn(|| r.next_message()).collect()
    }

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    fn is_ok(i: &Incoming) -> bool {
        matches!(i, Incoming::Message(m) if m.get("method").is_some())
    }

    fn code(i: &Incoming) -> i32 {
        match i {
            Incoming::Bad { code, .. } => *code,
            Incoming::Message(_) => 0,
        }
    }

    const GOOD: &str = r#"{"jsonrpc":"2.0","method":"x"}"#;

    #[test]
    fn each_malformed_message_is_one_error_and_reading_goes_on() {
        let cases: Vec<(String, i32)> = vec![
            (framed("{not json"), PARSE_ERROR),
            ("Content-Length: abc\r\n\r\n{}".into(), PARSE_ERROR),
            (format!("{GOOD}\r\n"), PARSE_ERROR),
            ("Content-Type: x\r\n\r\n{}".into(), PARSE_ERROR),
            (format!("Content-Length: 10\r\n\r\n{GOOD}"), PARSE_ERROR),
            (framed("[1, 2]"), INVALID_REQUEST),
            (framed("42"), INVALID_REQUEST),
            (
                "Content-Length: 18446744073709551615\r\n\r\n{}".into(),
                PARSE_ERROR,
            ),
            (
                "Content-Length: 99999999999999999999999\r\n\r\n{}".into(),
                PARSE_ERROR,
            ),
            (
                format!("Content-Length: {}\r\n\r\n", "9".repeat(5000)),
                PARSE_ERROR,
            ),
            (framed(""), PARSE_ERROR),
            (framed(&"[".repeat(10_000)), PARSE_ERROR),
        ];
        for (input, want) in cases {
            let got = all(format!("{input}{}", framed(GOOD)).as_bytes());
            assert_eq!(got.len(), 2, "{input:?}: {got:?}");
            assert_eq!(code(&got[0]), want, "{input:?}: {got:?}");
            assert!(is_ok(&got[1]), "{input:?}: {got:?}");
        }
    }

    #[test]
    fn headers_are_read_as_the_protocol_allows() {
        let body = GOOD;
        let input = format!(
            "\r\ncontent-length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{body}{}",
            body.len(),
            framed(GOOD)
        );
        let got = all(input.as_bytes());
        assert!(got.iter().all(is_ok) && got.len() == 2, "{got:?}");
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let body = r#"{"method":"x","params":{"t":"a\ud800b\\ud800\ud83d\ude00 \udc00"}}"#;
        let Incoming::Message(m) = parse(body.as_bytes()) else {
            panic!("not read")
        };
        assert_eq!(m["params"]["t"], "a\u{FFFD}b\\ud800😀 \u{FFFD}");
    }

    #[test]
    fn a_message_cut_short_by_the_end_of_input_ends_reading() {
        assert!(all(b"Content-Length: 100\r\n\r\n{\"a\"").is_empty());
        assert!(all(b"").is_empty());
    }
}
