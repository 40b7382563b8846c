//! Email: a message (`.eml`, MIME) and a mailbox export (`mbox`), parsed with `mail-parser`.
//! A message's first page opens with its headers (From, To, Cc, Date, Subject, and the names
//! of its attachments), then its text body; an HTML-only body is read as text (`html`). Each
//! attachment is read as a source of its own, whatever its kind, named after the message
//! (`letter.eml › invoice.pdf`); a forwarded message inside is read the same way, to
//! [`MAX_DEPTH`] levels. A mailbox's messages are named by their place in it
//! (`inbox.mbox › message 3`).

use std::path::Path;

use mail_parser::{Address, HeaderValue, Message, MessageParser, MimeHeaders};

use super::{html, kind, paging, read_bytes, Document, Kind, Options, SourceError};

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
    let msg = MessageParser::default()
        .parse(bytes)
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

#[cfg(test)]
mod tests {
    use super::*;

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
