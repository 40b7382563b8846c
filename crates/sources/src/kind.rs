//! What a file really is, from its bytes: magic numbers, and for ZIP and OLE containers the
//! parts inside. The name decides only between kinds its bytes cannot tell apart (CSV or
//! HTML against plain text). What lexrun cannot read is refused here with what to do instead.

use std::io::Read;
use std::path::Path;

use serde::Serialize;

use super::error::SourceError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Pdf,
    Png,
    Jpeg,
    Tiff,
    Heic,
    Docx,
    Doc,
    Odt,
    Rtf,
    Xlsx,
    Ods,
    Xls,
    Csv,
    Html,
    Eml,
    Mbox,
    Text,
}

impl Kind {
    /// The usual extension of the kind, for temporary copies tools read by name.
    pub fn extension(self) -> &'static str {
        match self {
            Kind::Pdf => "pdf",
            Kind::Png => "png",
            Kind::Jpeg => "jpg",
            Kind::Tiff => "tif",
            Kind::Heic => "heic",
            Kind::Docx => "docx",
            Kind::Doc => "doc",
            Kind::Odt => "odt",
            Kind::Rtf => "rtf",
            Kind::Xlsx => "xlsx",
            Kind::Ods => "ods",
            Kind::Xls => "xls",
            Kind::Csv => "csv",
            Kind::Html => "html",
            Kind::Eml => "eml",
            Kind::Mbox => "mbox",
            Kind::Text => "txt",
        }
    }

    /// What a person calls it.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Pdf => "PDF",
            Kind::Png => "PNG image",
            Kind::Jpeg => "JPEG image",
            Kind::Tiff => "TIFF image",
            Kind::Heic => "HEIC photo",
            Kind::Docx => "Word document",
            Kind::Doc => "Word 97-2003 document",
            Kind::Odt => "OpenDocument text",
            Kind::Rtf => "RTF document",
            Kind::Xlsx => "Excel workbook",
            Kind::Ods => "OpenDocument spreadsheet",
            Kind::Xls => "Excel 97-2003 workbook",
            Kind::Csv => "CSV table",
            Kind::Html => "web page",
            Kind::Eml => "email",
            Kind::Mbox => "mailbox",
            Kind::Text => "text",
        }
    }
}

/// Whether a file on disk is an email or a mailbox, from its first bytes.
pub fn is_mail(path: &Path) -> bool {
    let mut head = Vec::with_capacity(1024);
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    if f.take(HEADERS_READ as u64).read_to_end(&mut head).is_err() {
        return false;
    }
    matches!(detect_head(path, &head), Ok(Kind::Eml | Kind::Mbox))
}

/// Whether the file's name ends `.EXT` (any case).
pub fn named(path: &Path, ext: &str) -> bool {
    path.extension()
        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case(ext))
}

fn ext(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default()
}

fn refuse(s: impl Into<String>) -> SourceError {
    SourceError::Refused(s.into())
}

/// The kind of `bytes`, named `path`.
pub fn detect(path: &Path, bytes: &[u8]) -> Result<Kind, SourceError> {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        return zip_kind(bytes);
    }
    if bytes.starts_with(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1") {
        return ole_kind(bytes);
    }
    detect_head(path, bytes)
}

/// The kind from the first bytes alone (containers need [`detect`]).
fn detect_head(path: &Path, bytes: &[u8]) -> Result<Kind, SourceError> {
    if bytes.is_empty() {
        return Err(SourceError::Empty);
    }
    let head = &bytes[..bytes.len().min(1024)];
    let starts = |m: &[u8]| bytes.starts_with(m);
    if memchr::memmem::find(head, b"%PDF-").is_some() {
        return Ok(Kind::Pdf);
    }
    if starts(b"\x89PNG\r\n\x1a\n") {
        return Ok(Kind::Png);
    }
    if starts(b"\xFF\xD8\xFF") {
        return Ok(Kind::Jpeg);
    }
    if starts(b"II*\x00") || starts(b"MM\x00*") {
        return Ok(Kind::Tiff);
    }
    if bytes.len() > 12 && &bytes[4..8] == b"ftyp" {
        return match &bytes[8..12] {
            b"heic" | b"heix" | b"hevc" | b"heim" | b"heis" | b"mif1" | b"msf1" => Ok(Kind::Heic),
            _ => Err(refuse(
                "a video or MP4-family file: lexrun reads documents, photos and email",
            )),
        };
    }
    if starts(b"GIF8") || starts(b"BM") {
        return Err(refuse(
            "a GIF or BMP image: convert it to PNG or PDF so it can be OCR'd",
        ));
    }
    if starts(b"{\\rtf") {
        return Ok(Kind::Rtf);
    }
    if starts(b"PK\x03\x04") || starts(b"\xD0\xCF\x11\xE0") {
        return Err(refuse("an Office or ZIP container"));
    }
    if starts(b"\x1F\x8B") || starts(b"7z\xBC\xAF") || starts(b"Rar!") {
        return Err(refuse(
            "a compressed archive: unpack it and give the files inside as sources",
        ));
    }
    // Text of some kind: mail, a web page, a table or plain text.
    let lead = String::from_utf8_lossy(&head[..head.len().min(512)]);
    let lead = lead.trim_start_matches('\u{FEFF}').trim_start();
    let lower = lead.to_ascii_lowercase();
    let e = ext(path);
    if lead.starts_with("From ") && looks_like_headers(lead.split_once('\n').map_or("", |x| x.1)) {
        return Ok(Kind::Mbox);
    }
    if e == "eml" || is_message(bytes) {
        return Ok(Kind::Eml);
    }
    if e == "msg" {
        return Err(refuse(MSG));
    }
    if lower.starts_with("<!doctype html")
        || lower.starts_with("<html")
        || (matches!(e.as_str(), "html" | "htm" | "xhtml") && lower.starts_with('<'))
    {
        return Ok(Kind::Html);
    }
    if matches!(e.as_str(), "csv" | "tsv") {
        return Ok(Kind::Csv);
    }
    Ok(Kind::Text)
}

const MSG: &str = "an Outlook .msg message, which lexrun cannot read: convert it to .eml with `msgconvert` (Debian package `libemail-outlook-message-perl`), or save it as .eml from a mail client";

/// How far into a file its header section is looked for.
const HEADERS_READ: usize = 64 << 10;

/// True when text is a whole RFC 5322 message: a header section of nothing but `Name: value`
/// fields (and their folded continuations), among them `From:` and `Date:` (the two fields
/// every message has), ended by a blank line. A note that merely opens with `From: …` is text.
fn is_message(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(HEADERS_READ)];
    let (mut from, mut date, mut blank) = (false, false, false);
    // Each line is decoded only when it is looked at: most text files stop at their first
    // line. A line break is never part of an invalid sequence, so this reads as decoding the
    // whole head first would.
    for (i, raw) in head.split(|&b| b == b'\n').enumerate() {
        let decoded = String::from_utf8_lossy(raw);
        let line: &str = if i == 0 {
            decoded.trim_start_matches('\u{FEFF}')
        } else {
            &decoded
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            blank = i > 0;
            break;
        }
        if line.starts_with([' ', '\t']) {
            if i == 0 {
                return false;
            }
            continue;
        }
        let Some((name, _)) = line.split_once(':') else {
            return false;
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
            return false;
        }
        match name.to_ascii_lowercase().as_str() {
            "from" => from = true,
            "date" => date = true,
            _ => {}
        }
    }
    blank && from && date
}

/// True when text opens like a message's header: `Name: value` lines including a mail header.
fn looks_like_headers(text: &str) -> bool {
    let mut known = false;
    for line in text.lines().take(12) {
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let Some((name, _)) = line.split_once(':') else {
            return false;
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return false;
        }
        known |= matches!(
            name.to_ascii_lowercase().as_str(),
            "from"
                | "to"
                | "subject"
                | "date"
                | "received"
                | "mime-version"
                | "message-id"
                | "return-path"
        );
    }
    known
}

fn zip_kind(bytes: &[u8]) -> Result<Kind, SourceError> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| SourceError::damaged("ZIP container", e))?;
    let names: Vec<String> = z.file_names().map(str::to_string).collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    if has("word/document.xml") {
        return Ok(Kind::Docx);
    }
    if has("xl/workbook.xml") || has("xl/workbook.bin") {
        return Ok(Kind::Xlsx);
    }
    if has("mimetype") {
        let mut m = String::new();
        if let Ok(f) = z.by_name("mimetype") {
            let _ = f.take(200).read_to_string(&mut m);
        }
        match m.trim() {
            "application/vnd.oasis.opendocument.text" => return Ok(Kind::Odt),
            "application/vnd.oasis.opendocument.spreadsheet" => return Ok(Kind::Ods),
            _ => {}
        }
    }
    if names.iter().any(|n| n.starts_with("ppt/")) || has("EncryptedPackage") {
        return Err(refuse(
            "a PowerPoint or other Office file lexrun does not read: save it as PDF",
        ));
    }
    Err(refuse(
        "a ZIP archive, not a Word, Excel or OpenDocument file: unpack it and give the files inside as sources",
    ))
}

/// Office 97-2003 files, Outlook messages and password-protected Office 2007+ files all come
/// in the same OLE container; the names of its streams (UTF-16) tell them apart.
fn ole_kind(bytes: &[u8]) -> Result<Kind, SourceError> {
    let utf16 = |s: &str| -> Vec<u8> { s.encode_utf16().flat_map(u16::to_le_bytes).collect() };
    let has = |s: &str| memchr::memmem::find(bytes, &utf16(s)).is_some();
    if has("EncryptedPackage") || has("EncryptionInfo") {
        return Err(refuse(
            "a password-protected Office file: open it with its password and save an unprotected copy",
        ));
    }
    if has("__substg1.0_") {
        return Err(refuse(MSG));
    }
    if has("Workbook") || has("Book") {
        return Ok(Kind::Xls);
    }
    if has("WordDocument") {
        return Ok(Kind::Doc);
    }
    Err(refuse(
        "an Office 97-2003 file that is neither Word nor Excel: save it as PDF",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bytes_decide_not_the_name() {
        let k = |name: &str, b: &[u8]| detect(Path::new(name), b);
        assert_eq!(k("scan.txt", b"%PDF-1.7\n").unwrap(), Kind::Pdf);
        assert_eq!(k("photo.pdf", b"\xFF\xD8\xFF\xE0").unwrap(), Kind::Jpeg);
        assert_eq!(
            k(
                "x.txt",
                b"From: a@b.example\nTo: c@d.example\nDate: Tue, 5 Mar 2024 10:00:00 +0000\nSubject: hi\n\nbody"
            )
            .unwrap(),
            Kind::Eml
        );
        // A printed email saved as text: `Sent:` is no message's field, so it is text.
        let printout = b"From: Ann Lee\nSent: Thursday, March 7, 2024 9:14 AM\nTo: Counsel\nSubject: rent\n\nThe rent is late.\n";
        assert_eq!(k("mail.txt", printout).unwrap(), Kind::Text);
        // Headers with no blank line after them, or a line that is no header: text.
        assert_eq!(
            k("a.txt", b"From: a@b\nDate: Tue, 5 Mar 2024\nSubject: x").unwrap(),
            Kind::Text
        );
        assert_eq!(
            k("b.txt", b"From: a@b\nDate: today\nnotes follow\n\nbody").unwrap(),
            Kind::Text
        );
        assert_eq!(k("c.eml", printout).unwrap(), Kind::Eml);
        assert_eq!(
            k(
                "inbox",
                b"From a@b Mon Jan  1 00:00:00 2024\nFrom: a@b\nSubject: x\n\nhi"
            )
            .unwrap(),
            Kind::Mbox
        );
        assert_eq!(k("page.txt", b"<!DOCTYPE html><p>x").unwrap(), Kind::Html);
        assert_eq!(k("t.csv", b"a,b\n1,2").unwrap(), Kind::Csv);
        assert_eq!(
            k("notes.md", b"Subject matter: leases\n").unwrap(),
            Kind::Text
        );
        assert!(matches!(k("e.txt", b""), Err(SourceError::Empty)));
        let mut ole = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
        ole.extend("EncryptedPackage".encode_utf16().flat_map(u16::to_le_bytes));
        assert!(k("a.docx", &ole)
            .unwrap_err()
            .to_string()
            .contains("password"));
        let mut msg = b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1".to_vec();
        msg.extend(
            "__substg1.0_0037001F"
                .encode_utf16()
                .flat_map(u16::to_le_bytes),
        );
        assert!(k("a.msg", &msg)
            .unwrap_err()
            .to_string()
            .contains("msgconvert"));
    }
}
