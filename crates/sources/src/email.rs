//! Email: a message (`.eml`, MIME) and a mailbox export (`mbox`), parsed with `mail-parser`.
//! A message's first page opens with its headers (From, To, Cc, Date, Subject, and the names
//! of its attachments), then its text body; an HTML-only body is read as text (`html`). Each
//! attachment is read as a source of its own, whatever its kind, named after the message
//! (`letter.eml › invoice.pdf`); a forwarded message inside is read the same way, to
//! [`MAX_DEPTH`] levels. A mailbox's messages are named by their place in it
//! (`inbox.mbox › message 3`).

use std::path::Path;

use mail_parser::{Address, HeaderValue, Message, MessageParser, MimeHeaders};

use super::error::SourceError;
use super::kind::{self, Kind};
use super::parts::{Document, Options};
use super::{html, paging, read_bytes};

/// Messages attached to messages attached to … are read this deep, and no deeper.
pub const MAX_DEPTH: usize = 8;

/// A message and its attachments: the message first. `verbatim` keeps its header lines
/// exactly as written (a message saved as a text file, whose every line is evidence);
/// otherwise the headers a reader sees are kept, decoded, and transport headers left out.
pub fn message(
    bytes: &[u8],
    opts: &Options,
    depth: usize,
    verbatim: bool,
) -> Result<Vec<Document>, SourceError> {
    let closed = close_unterminated(bytes);
    let msg = MessageParser::default()
        .parse(closed.as_deref().unwrap_or(bytes))
        .ok_or_else(|| SourceError::damaged("email", "no message could be parsed from it"))?;
    if msg.headers().is_empty() {
        return Err(SourceError::damaged("email", "it has no message headers"));
    }
    read_message(&msg, opts, depth, verbatim)
}

/// Headers that carry the message rather than say anything a reader sees in it.
fn is_transport(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("content-")
        || n.starts_with("x-")
        || n.starts_with("arc-")
        || n.starts_with("list-")
        || n.starts_with("dkim")
        || n.starts_with("thread-")
        || matches!(
            n.as_str(),
            "received"
                | "return-path"
                | "mime-version"
                | "message-id"
                | "references"
                | "in-reply-to"
                | "authentication-results"
                | "received-spf"
                | "domainkey-signature"
                | "delivered-to"
                | "precedence"
                | "importance"
                | "priority"
                | "user-agent"
                | "accept-language"
                | "errors-to"
                | "envelope-to"
        )
}

/// The message's header lines as text: every one a reader sees, in the order written.
fn header_text(msg: &Message<'_>, verbatim: bool) -> String {
    let part = msg.root_part();
    let raw = msg.raw_message.as_ref();
    let span = |a: u32, b: u32| {
        raw.get(a as usize..b as usize)
            .map(decode_8bit)
            .unwrap_or_default()
    };
    if verbatim {
        let mut head = span(part.offset_header, part.offset_body)
            .replace('\r', "")
            .trim_end()
            .to_string();
        head.push('\n');
        return head;
    }
    let mut head = String::new();
    for h in msg.headers() {
        let name = h.name.as_str();
        if is_transport(name) {
            continue;
        }
        let value = match &h.value {
            HeaderValue::Address(a) => addresses(Some(a)),
            HeaderValue::Text(t) => t.to_string(),
            HeaderValue::TextList(l) => l.join(", "),
            _ => String::new(),
        };
        // Dates, and what the parser could not make out, as written (unfolded).
        let value = if value.trim().is_empty() {
            span(h.offset_start, h.offset_end)
        } else {
            value
        };
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        if !value.is_empty() {
            head.push_str(&format!("{name}: {value}\n"));
        }
    }
    head
}

/// Header bytes as text: UTF-8, else Latin-1 (8-bit header bytes with no declared charset).
fn decode_8bit(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_string(),
        Err(_) => b.iter().map(|&c| c as char).collect(),
    }
}

fn read_message(
    msg: &Message<'_>,
    opts: &Options,
    depth: usize,
    verbatim: bool,
) -> Result<Vec<Document>, SourceError> {
    if depth > MAX_DEPTH {
        return Err(SourceError::Refused(format!(
            "messages forwarded inside each other more than {MAX_DEPTH} deep: save the innermost one on its own"
        )));
    }
    let names = attachment_names(msg);
    let mut head = header_text(msg, verbatim);
    if !names.is_empty() {
        head.push_str(&format!("Attachments: {}\n", names.join(", ")));
    }
    let mut body = String::new();
    for part in msg.text_bodies() {
        let text = part.text_contents().unwrap_or_default();
        if part.is_text_html() {
            body.push_str(&html::to_text(text));
        } else {
            body.push_str(text);
        }
        if !body.ends_with('\n') {
            body.push('\n');
        }
    }
    // A message with only an HTML body lists it among its HTML bodies, not its text ones.
    if body.trim().is_empty() {
        for part in msg.html_bodies() {
            body.push_str(&html::to_text(part.text_contents().unwrap_or_default()));
        }
    }
    let text = format!("{head}\n{}", body.replace('\r', ""));
    let mut docs = vec![Document {
        within: Vec::new(),
        kind: Kind::Eml,
        pages: paging::pages(&text, "email"),
        embedded: None,
        unreadable: None,
        notes: Vec::new(),
    }];
    // An attachment that cannot be read is named with its reason; the message, and every
    // other attachment, are still read.
    for (part, name) in msg.attachments().zip(&names) {
        let inner = match part.message() {
            Some(m) => read_message(m, opts, depth + 1, false),
            None => read_bytes(Path::new(name), part.contents(), opts, depth + 1),
        };
        let inner = inner.unwrap_or_else(|e| {
            vec![Document {
                within: Vec::new(),
                kind: kind::detect(Path::new(name), part.contents()).unwrap_or(Kind::Text),
                pages: Vec::new(),
                embedded: None,
                unreadable: Some(e.to_string()),
                notes: Vec::new(),
            }]
        });
        for mut d in inner {
            d.within.insert(0, name.clone());
            if d.within.len() == 1 {
                d.embedded = Some(part.contents().to_vec());
            }
            docs.push(d);
        }
    }
    Ok(docs)
}

/// Each attachment's file name; unnamed ones are numbered, and repeated names get ` (2)`.
fn attachment_names(msg: &Message<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, part) in msg.attachments().enumerate() {
        let base = part
            .attachment_name()
            .map(|n| n.replace(['/', '\\'], "_"))
            .or_else(|| {
                part.message()
                    .and_then(|m| m.subject())
                    .map(|s| format!("{s}.eml"))
            })
            .unwrap_or_else(|| {
                let ext = part
                    .content_type()
                    .and_then(|c| c.subtype())
                    .unwrap_or("bin");
                format!("attachment {}.{ext}", i + 1)
            });
        let mut name = base.clone();
        let mut n = 1;
        while out.contains(&name) {
            n += 1;
            name = format!("{base} ({n})");
        }
        out.push(name);
    }
    out
}

fn addresses(a: Option<&Address<'_>>) -> String {
    let Some(a) = a else {
        return String::new();
    };
    a.iter()
        .map(|x| match (x.name(), x.address()) {
            (Some(n), Some(ad)) => format!("{n} <{ad}>"),
            (None, Some(ad)) => ad.to_string(),
            (Some(n), None) => n.to_string(),
            (None, None) => String::new(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A mailbox export: every message, each as `message N` with its attachments after it.
pub fn mailbox(bytes: &[u8], opts: &Options, depth: usize) -> Result<Vec<Document>, SourceError> {
    let mut docs = Vec::new();
    for (i, raw) in split_mbox(bytes).into_iter().enumerate() {
        let label = format!("message {}", i + 1);
        let inner = message(raw, opts, depth, false).unwrap_or_else(|e| {
            vec![Document {
                within: Vec::new(),
                kind: Kind::Eml,
                pages: Vec::new(),
                embedded: None,
                unreadable: Some(e.to_string()),
                notes: Vec::new(),
            }]
        });
        for mut d in inner {
            d.within.insert(0, label.clone());
            if d.within.len() == 1 {
                d.embedded = Some(raw.to_vec());
            }
            docs.push(d);
        }
    }
    if docs.is_empty() {
        return Err(SourceError::damaged("mailbox", "it holds no messages"));
    }
    if docs.iter().all(|d| d.unreadable.is_some()) {
        let why = docs[0].unreadable.clone().unwrap_or_default();
        return Err(SourceError::damaged(
            "mailbox",
            format!("none of its messages can be read (message 1: {why})"),
        ));
    }
    Ok(docs)
}

/// The messages of an mbox: each starts at a line beginning `From ` (its envelope line, which
/// is not part of the message).
fn split_mbox(bytes: &[u8]) -> Vec<&[u8]> {
    let mut starts: Vec<usize> = Vec::new();
    if bytes.starts_with(b"From ") {
        starts.push(0);
    }
    starts.extend(memchr::memmem::find_iter(bytes, b"\nFrom ").map(|i| i + 1));
    let mut out = Vec::new();
    for (k, &s) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(bytes.len());
        let msg = &bytes[s..end];
        let body = memchr::memchr(b'\n', msg).map_or(&msg[msg.len()..], |n| &msg[n + 1..]);
        out.push(body);
    }
    out
}

/// The boundary a header block's `Content-Type: multipart/…` declares.
fn declared_boundary(headers: &str) -> Option<String> {
    let mut unfolded = String::new();
    for line in headers.lines() {
        if line.starts_with([' ', '\t']) {
            unfolded.push(' ');
            unfolded.push_str(line.trim());
        } else {
            unfolded.push('\n');
            unfolded.push_str(line);
        }
    }
    let ct = unfolded
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("content-type:"))?;
    let lower = ct.to_ascii_lowercase();
    if !lower["content-type:".len()..]
        .trim_start()
        .starts_with("multipart/")
    {
        return None;
    }
    let at = lower.find("boundary")? + "boundary".len();
    let rest = ct[at..].trim_start().strip_prefix('=')?.trim_start();
    let b = match rest.strip_prefix('"') {
        Some(q) => q.split('"').next()?,
        None => rest.split([';', ' ', '\t']).next()?,
    };
    (!b.is_empty()).then(|| b.to_string())
}

/// Which multipart under way `line` is a delimiter of (`--B` or `--B--`), innermost first.
fn delimiter(open: &[(Vec<u8>, bool)], line: &[u8]) -> Option<usize> {
    let rest = line.strip_prefix(b"--")?;
    open.iter().rposition(|(b, _)| {
        rest.strip_prefix(b.as_slice())
            .is_some_and(|t| t.is_empty() || t == b"--")
    })
}

/// A multipart body whose inner multipart is never closed before the enclosing one's next
/// delimiter (a forwarded message saved as its headers alone, `boundary=X` and no part of
/// it): by the MIME rules the enclosing delimiter ends it, but the parser would take every
/// later part as the inner one's. The delimiters that close such inner multiparts are put
/// in before the enclosing delimiter; no line of any part changes. `None` when every
/// multipart is closed.
fn close_unterminated(bytes: &[u8]) -> Option<Vec<u8>> {
    if !bytes
        .windows(8)
        .any(|w| w.eq_ignore_ascii_case(b"boundary"))
    {
        return None;
    }
    let crlf = bytes.windows(2).any(|w| w == b"\r\n");
    let nl: &[u8] = if crlf { b"\r\n" } else { b"\n" };
    let mut out = Vec::with_capacity(bytes.len() + 64);
    // Each multipart under way: its boundary, and whether a part of it has begun.
    let mut open: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut in_headers = true;
    let mut headers = String::new();
    let mut changed = false;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let bare = line.trim_ascii_end();
        // A delimiter of a multipart under way: `--B` or `--B--`.
        let hit = delimiter(&open, bare);
        if in_headers && hit.is_none() && !bare.is_empty() {
            headers.push_str(&String::from_utf8_lossy(bare));
            headers.push('\n');
            out.extend_from_slice(line);
            continue;
        }
        if in_headers {
            // The header block ends: a blank line, or (a message of headers alone) the
            // enclosing delimiter itself.
            let is_message = headers.lines().any(|l| {
                let l = l.to_ascii_lowercase();
                l.starts_with("content-type:") && l.contains("message/rfc822")
            });
            if let Some(b) = declared_boundary(&headers) {
                open.push((b.into_bytes(), false));
            }
            headers.clear();
            if hit.is_none() {
                // A forwarded message's own headers follow its part's headers.
                in_headers = is_message;
                out.extend_from_slice(line);
                continue;
            }
        }
        let hit = delimiter(&open, bare);
        if let Some(k) = hit {
            if k + 1 < open.len() {
                if !out.ends_with(b"\n") {
                    out.extend_from_slice(nl);
                }
                for (b, begun) in open.drain(k + 1..).rev() {
                    if in_headers {
                        out.extend_from_slice(nl);
                    }
                    if !begun {
                        // A multipart of no part: the parser wants one, empty.
                        out.extend_from_slice(b"--");
                        out.extend_from_slice(&b);
                        out.extend_from_slice(nl);
                        out.extend_from_slice(nl);
                    }
                    out.extend_from_slice(b"--");
                    out.extend_from_slice(&b);
                    out.extend_from_slice(b"--");
                    out.extend_from_slice(nl);
                }
                changed = true;
            }
            let closing = bare.ends_with(b"--") && bare.len() == open[k].0.len() + 4;
            open[k].1 = true;
            if closing {
                open.truncate(k);
            }
            in_headers = !closing;
        }
        out.extend_from_slice(line);
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two messages forwarded as their headers alone, each declaring a multipart body it
    /// does not have, then a third with its body: each is an attachment of its own.
    pub(super) const HEADERS_ONLY: &str = "From: Ann Lee <ann@example.com>\r\nTo: counsel@example.com\r\nSubject: Three forwards\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed;\r\n boundary=\"outer\"\r\n\r\n--outer\r\nContent-Type: text/plain\r\n\r\nSee the three messages below.\r\n--outer\r\nContent-Type: message/rfc822; name=one.txt\r\nContent-Disposition: attachment; filename=one.txt\r\n\r\nFrom: Bo <bo@example.com>\r\nSubject: First\r\nContent-Type: multipart/alternative; boundary=aaa \r\n--outer\r\nContent-Type: message/rfc822; name=two.txt\r\nContent-Disposition: attachment; filename=two.txt\r\n\r\nFrom: Cy <cy@example.com>\r\nSubject: Second\r\nContent-Type: multipart/alternative; boundary=bbb\r\n--outer\r\nContent-Type: message/rfc822; name=three.txt\r\nContent-Disposition: attachment; filename=three.txt\r\n\r\nFrom: Di <di@example.com>\r\nSubject: Third\r\nContent-Type: multipart/alternative;\r\n boundary=\"ccc\"\r\n\r\n--ccc\r\nContent-Type: text/plain\r\n\r\nThe deposit was $2,500.00.\r\n--ccc--\r\n--outer--\r\n";

    #[test]
    fn forwarded_messages_of_headers_alone_end_at_the_enclosing_delimiter() {
        let docs = message(HEADERS_ONLY.as_bytes(), &Options::default(), 0, false).unwrap();
        let names: Vec<String> = docs.iter().map(|d| d.shown("m.eml")).collect();
        assert_eq!(
            names,
            [
                "m.eml",
                "m.eml › one.txt",
                "m.eml › two.txt",
                "m.eml › three.txt"
            ]
        );
        assert!(docs[0].pages[0]
            .text
            .contains("See the three messages below."));
        assert!(docs[2].pages[0].text.contains("Subject: Second"));
        assert!(docs[3].pages[0].text.contains("The deposit was $2,500.00."));
    }

    #[test]
    fn a_well_formed_message_is_parsed_as_written() {
        assert!(close_unterminated(MAIL.as_bytes()).is_none());
        assert!(close_unterminated(HEADERS_ONLY.as_bytes()).is_some());
        // A body that only talks of a boundary declares none.
        let talk = MAIL.replace(
            "Rent due March 1, 2024.",
            "Content-Type: multipart/mixed; boundary=zzz",
        );
        assert!(close_unterminated(talk.as_bytes()).is_none());
    }

    const MAIL: &str = "From: Ann Lee <ann@example.com>\r\nTo: counsel@example.com\r\nDate: Tue, 5 Mar 2024 10:00:00 +0000\r\nSubject: Fwd: rent\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/html\r\n\r\n<p>See the <b>invoice</b> &amp; note.</p>\r\n--b1\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=\"note.txt\"\r\n\r\nRent due March 1, 2024.\r\n--b1--\r\n";

    #[test]
    fn headers_open_the_page_and_attachments_are_sources_of_their_own() {
        let docs = message(MAIL.as_bytes(), &Options::default(), 0, false).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(
            docs[0].pages[0].text,
            "From: Ann Lee <ann@example.com>\nTo: counsel@example.com\nDate: Tue, 5 Mar 2024 10:00:00 +0000\nSubject: Fwd: rent\nAttachments: note.txt\n\nSee the invoice & note.\n"
        );
        assert_eq!(docs[1].shown("letter.eml"), "letter.eml › note.txt");
        assert_eq!(docs[1].pages[0].text.trim(), "Rent due March 1, 2024.");
        assert_eq!(
            docs[1].embedded.as_deref(),
            Some(&b"Rent due March 1, 2024."[..])
        );
    }

    #[test]
    fn a_mailbox_names_each_message_by_its_place() {
        let mbox = format!("From a@b Tue Mar  5 10:00:00 2024\n{}\nFrom a@b Tue Mar  5 11:00:00 2024\nFrom: x@example.com\nSubject: two\n\nsecond\n", MAIL.replace("\r\n", "\n"));
        let docs = mailbox(mbox.as_bytes(), &Options::default(), 0).unwrap();
        let names: Vec<String> = docs.iter().map(|d| d.shown("in.mbox")).collect();
        assert_eq!(
            names,
            [
                "in.mbox › message 1",
                "in.mbox › message 1 › note.txt",
                "in.mbox › message 2"
            ]
        );
    }
}
