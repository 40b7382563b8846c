//! What a vector page's fonts say about each character code: how wide its glyph is and
//! which text it stands for. Only fonts whose answers are certain are read — simple Type 1
//! and TrueType fonts with their widths (or one of the standard fonts whose widths are
//! known), and composite fonts with `Identity-H` codes and a `ToUnicode` map; any other
//! font sends its page down the raster path.

use std::collections::HashMap;

use lopdf::{Dictionary, Document, Object};

use crate::bates::number as num;
use crate::metrics;

/// One font of a page, as far as redaction needs it.
pub struct Font {
    /// Codes are two bytes (a composite font) rather than one.
    pub two_byte: bool,
    widths: HashMap<u32, f64>,
    default_width: f64,
    unicode: HashMap<u32, String>,
}

impl Font {
    /// The glyph's advance, per 1000 units of font size.
    pub fn width(&self, code: u32) -> f64 {
        self.widths
            .get(&code)
            .copied()
            .unwrap_or(self.default_width)
    }

    /// The text the code stands for, if the font says.
    pub fn text(&self, code: u32) -> Option<&str> {
        self.unicode.get(&code).map(String::as_str)
    }

    /// Reads a font dictionary; `None` if it is of a kind this path does not read.
    pub fn read(doc: &Document, font: &Dictionary) -> Option<Font> {
        let subtype = font.get(b"Subtype").ok()?.as_name().ok()?;
        match subtype {
            b"Type1" | b"TrueType" | b"MMType1" => simple(doc, font),
            b"Type0" => composite(doc, font),
            _ => None,
        }
    }
}

fn deref<'a>(doc: &'a Document, o: &'a Object) -> &'a Object {
    doc.dereference(o).map(|(_, o)| o).unwrap_or(o)
}

fn get<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
    d.get(key).ok().map(|o| deref(doc, o))
}

/// A simple font: one byte a code, widths from `/Widths` (or a standard font's metrics),
/// text from `ToUnicode` or the font's encoding.
fn simple(doc: &Document, font: &Dictionary) -> Option<Font> {
    let base = get(doc, font, b"BaseFont")
        .and_then(|o| o.as_name().ok())
        .unwrap_or(b"");
    let mut unicode = HashMap::new();
    if let Some(map) = to_unicode(doc, font) {
        unicode = map;
    }
    let encoding = font.get_font_encoding(doc).ok()?;
    for code in 0u32..256 {
        if unicode.contains_key(&code) {
            continue;
        }
        if let Ok(s) = encoding.bytes_to_string(&[code as u8]) {
            if !s.is_empty() {
                unicode.insert(code, s);
            }
        }
    }
    let mut widths = HashMap::new();
    let mut default_width = get(doc, font, b"FontDescriptor")
        .and_then(|d| d.as_dict().ok())
        .and_then(|d| get(doc, d, b"MissingWidth"))
        .and_then(num)
        .unwrap_or(0.0);
    match get(doc, font, b"Widths").and_then(|o| o.as_array().ok()) {
        Some(ws) => {
            let first = get(doc, font, b"FirstChar").and_then(num)?;
            if !(0.0..=255.0).contains(&first) || ws.len() > 256 {
                return None;
            }
            for (i, w) in ws.iter().enumerate() {
                widths.insert(first as u32 + i as u32, num(deref(doc, w))?);
            }
        }
        None => {
            let name = std::str::from_utf8(base).ok()?;
            let table = metrics::standard(name)?;
            for (code, text) in &unicode {
                let mut cs = text.chars();
                let (Some(c), None) = (cs.next(), cs.next()) else {
                    continue;
                };
                if let Some(w) = metrics::width(table, c) {
                    widths.insert(*code, w);
                }
            }
            // A code the table does not know has no certain width.
            default_width = f64::NAN;
        }
    }
    Some(Font {
        two_byte: false,
        widths,
        default_width,
        unicode,
    })
}

/// A composite font with two-byte `Identity-H` codes: widths from its descendant's `/W`
/// and `/DW`, text from `ToUnicode` (required).
fn composite(doc: &Document, font: &Dictionary) -> Option<Font> {
    let enc = get(doc, font, b"Encoding")?.as_name().ok()?;
    if enc != b"Identity-H" {
        return None;
    }
    let unicode = to_unicode(doc, font)?;
    let desc = get(doc, font, b"DescendantFonts")?.as_array().ok()?;
    let cid = deref(doc, desc.first()?).as_dict().ok()?;
    let default_width = get(doc, cid, b"DW").and_then(num).unwrap_or(1000.0);
    let mut widths = HashMap::new();
    if let Some(w) = get(doc, cid, b"W").and_then(|o| o.as_array().ok()) {
        let w: Vec<&Object> = w.iter().map(|o| deref(doc, o)).collect();
        let mut i = 0;
        while i < w.len() {
            let first = num(w[i])?;
            if !(0.0..=65_535.0).contains(&first) || widths.len() > 65_536 {
                return None;
            }
            let first = first as u32;
            match w.get(i + 1)? {
                Object::Array(list) => {
                    for (k, v) in list.iter().enumerate() {
                        widths.insert(first.checked_add(k as u32)?, num(deref(doc, v))?);
                    }
                    i += 2;
                }
                last => {
                    let last = num(last)?;
                    let width = num(w.get(i + 2)?)?;
                    if !(0.0..=65_535.0).contains(&last) || (last as u32) < first {
                        return None;
                    }
                    let last = last as u32;
                    for c in first..=last {
                        widths.insert(c, width);
                    }
                    i += 3;
                }
            }
        }
    }
    Some(Font {
        two_byte: true,
        widths,
        default_width,
        unicode,
    })
}

/// A font's `ToUnicode` map, read from its `bfchar` and `bfrange` sections.
fn to_unicode(doc: &Document, font: &Dictionary) -> Option<HashMap<u32, String>> {
    let stream = get(doc, font, b"ToUnicode")?.as_stream().ok()?;
    let bytes = stream
        .decompressed_content()
        .unwrap_or_else(|_| stream.content.clone());
    let text = String::from_utf8_lossy(&bytes);
    let mut map = HashMap::new();
    let mut rest = text.as_ref();
    loop {
        let char_at = rest.find("beginbfchar");
        let range_at = rest.find("beginbfrange");
        let (at, range) = match (char_at, range_at) {
            (Some(c), Some(r)) if r < c => (r, true),
            (Some(c), _) => (c, false),
            (None, Some(r)) => (r, true),
            (None, None) => break,
        };
        let (open, close) = if range {
            ("beginbfrange", "endbfrange")
        } else {
            ("beginbfchar", "endbfchar")
        };
        let after = &rest[at + open.len()..];
        let end = after.find(close)?;
        let body = &after[..end];
        if range {
            bfrange(body, &mut map)?;
        } else {
            for pair in hexes(body).chunks(2) {
                if let [src, dst] = pair {
                    map.insert(code(src), utf16(dst)?);
                }
            }
        }
        rest = &after[end + close.len()..];
    }
    Some(map)
}

/// The `bfrange` entries: `<lo> <hi> <dst>` (incremented) or `<lo> <hi> [<d1> <d2> …]`.
fn bfrange(body: &str, map: &mut HashMap<u32, String>) -> Option<()> {
    let mut rest = body.trim_start();
    while !rest.is_empty() {
        let (lo, r) = hex_token(rest)?;
        let (hi, r) = hex_token(r.trim_start())?;
        let r = r.trim_start();
        let (lo, hi) = (code(&lo), code(&hi));
        if hi < lo || hi - lo > 65_535 || map.len() > 1 << 17 {
            return None;
        }
        if let Some(list) = r.strip_prefix('[') {
            let close = list.find(']')?;
            for (k, dst) in hexes(&list[..close]).iter().enumerate() {
                map.insert(lo.checked_add(k as u32)?, utf16(dst)?);
            }
            rest = list[close + 1..].trim_start();
        } else {
            let (dst, r) = hex_token(r)?;
            let mut units: Vec<u16> = dst
                .chunks(2)
                .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                .collect();
            for c in lo..=hi {
                map.insert(c, String::from_utf16(&units).ok()?);
                if let Some(last) = units.last_mut() {
                    *last = last.wrapping_add(1);
                }
            }
            rest = r.trim_start();
        }
    }
    Some(())
}

/// Every `<…>` hex string in `s`, as bytes.
fn hexes(s: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find('<') {
        match hex_token(&rest[i..]) {
            Some((h, r)) => {
                out.push(h);
                rest = r;
            }
            None => break,
        }
    }
    out
}

/// One `<…>` hex string at the start of `s`, and what follows it.
fn hex_token(s: &str) -> Option<(Vec<u8>, &str)> {
    let s = s.strip_prefix('<')?;
    let end = s.find('>')?;
    let digits: Vec<u8> = s[..end]
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(digits.len() / 2 + 1);
    for pair in digits.chunks(2) {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = match pair.get(1) {
            Some(b) => (*b as char).to_digit(16)?,
            None => 0,
        };
        out.push((hi * 16 + lo) as u8);
    }
    Some((out, &s[end + 1..]))
}

fn code(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0u32, |a, b| (a << 8) | *b as u32)
}

fn utf16(bytes: &[u8]) -> Option<String> {
    let units: Vec<u16> = bytes
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
        .collect();
    String::from_utf16(&units).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_to_unicode_stream_is_read_past_its_other_sections() {
        let mut doc = Document::with_version("1.5");
        let cmap = b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
1 begincodespacerange <0000> <FFFF> endcodespacerange\n\
2 beginbfchar <0001> <0041> <0002> <00660066> endbfchar\n\
1 beginbfrange <0020> <007E> <0020> endbfrange\nendcmap end end\n";
        let id = doc.add_object(lopdf::Stream::new(lopdf::dictionary! {}, cmap.to_vec()));
        let font = lopdf::dictionary! { "ToUnicode" => id };
        let map = to_unicode(&doc, &font).unwrap();
        assert_eq!(map[&1], "A");
        assert_eq!(map[&2], "ff");
        assert_eq!(map[&0x35], "5");
    }

    #[test]
    fn a_to_unicode_map_reads_chars_and_ranges() {
        let mut map = HashMap::new();
        bfrange(
            "<0003> <0005> <0041>\n<0010> <0011> [<0078> <00660069>]",
            &mut map,
        )
        .unwrap();
        assert_eq!(map[&3], "A");
        assert_eq!(map[&5], "C");
        assert_eq!(map[&0x10], "x");
        assert_eq!(map[&0x11], "fi");
        assert_eq!(hexes("<0001> <0032>"), vec![vec![0, 1], vec![0, 0x32]]);
    }
}
