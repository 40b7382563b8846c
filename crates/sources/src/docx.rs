//! Word `.docx`: paragraphs in order, each table row as one line (`cell | cell`), the default
//! header as the first line of every page and the default footer as the last, and each
//! footnote at the foot of the page that refers to it (`[2] text`).
//!
//! Pages: a Word file holds no pages, only where they broke. A page starts at each explicit
//! break (a page break, "page break before", a new section), and where Word last laid the page
//! out (`lastRenderedPageBreak`, which Word writes on saving), so page numbers match what the
//! author saw. A file with none of these (as many converters write) is cut into pages of
//! [`paging::PAGE_CHARS`] characters at paragraph ends.

use std::collections::BTreeMap;

use quick_xml::events::{BytesStart, Event};

use super::error::SourceError;
use super::pdf_text::PageText;
use super::{limits, paging};

const WHAT: &str = "Word document";

/// What the body of a part says, in order.
#[derive(Debug, PartialEq)]
enum Item {
    Line(String),
    Break,
    NoteRef(String),
    NoteStart(String),
    NoteEnd,
    HeaderRef(String),
    FooterRef(String),
}

fn attr(e: &BytesStart, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == name)
        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
}

fn entity(name: &[u8]) -> Option<char> {
    Some(match name {
        b"amp" => '&',
        b"lt" => '<',
        b"gt" => '>',
        b"quot" => '"',
        b"apos" => '\'',
        _ => return None,
    })
}

/// One XML part as [`Item`]s. Tables: cells joined with ` | `, a row per line.
fn items(xml: &str) -> Result<Vec<Item>, SourceError> {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut out = Vec::new();
    let mut para = String::new();
    let mut in_t = false;
    let mut in_r = false;
    // Per open table: the row's finished cells and the cell being written.
    let mut tables: Vec<(Vec<String>, String)> = Vec::new();
    let mut in_sect = false;
    let mut sect_continuous = false;
    loop {
        let ev = r.read_event().map_err(|e| SourceError::damaged(WHAT, e))?;
        match ev {
            Event::Eof => break,
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(ev, Event::Empty(_));
                match e.name().as_ref() {
                    b"w:t" => in_t = !empty,
                    b"w:r" => in_r = !empty,
                    b"w:tab" if in_r => para.push('\t'),
                    b"w:br" => match attr(e, b"w:type").as_deref() {
                        Some("page") => {
                            flush(&mut para, &mut tables, &mut out);
                            out.push(Item::Break);
                        }
                        _ => para.push('\n'),
                    },
                    b"w:cr" => para.push('\n'),
                    b"w:noBreakHyphen" => para.push('-'),
                    b"w:lastRenderedPageBreak" if tables.is_empty() => {
                        if !para.trim().is_empty() {
                            flush(&mut para, &mut tables, &mut out);
                        }
                        out.push(Item::Break);
                    }
                    b"w:pageBreakBefore"
                        if attr(e, b"w:val").as_deref() != Some("false") && tables.is_empty() =>
                    {
                        out.push(Item::Break)
                    }
                    b"w:footnoteReference" => {
                        if let Some(id) = attr(e, b"w:id") {
                            para.push_str(&format!("[{id}]"));
                            out.push(Item::NoteRef(id));
                        }
                    }
                    b"w:footnote" => {
                        let t = attr(e, b"w:type").unwrap_or_default();
                        if t.is_empty() || t == "normal" {
                            out.push(Item::NoteStart(attr(e, b"w:id").unwrap_or_default()));
                        }
                    }
                    b"w:tbl" => tables.push((Vec::new(), String::new())),
                    b"w:sectPr" => {
                        in_sect = true;
                        sect_continuous = false;
                    }
                    b"w:type" if in_sect => {
                        sect_continuous = attr(e, b"w:val").as_deref() == Some("continuous")
                    }
                    b"w:headerReference" if attr(e, b"w:type").as_deref() == Some("default") => {
                        out.extend(attr(e, b"r:id").map(Item::HeaderRef))
                    }
                    b"w:footerReference" if attr(e, b"w:type").as_deref() == Some("default") => {
                        out.extend(attr(e, b"r:id").map(Item::FooterRef))
                    }
                    _ => {}
                }
            }
            Event::End(e) => match e.name().as_ref() {
                b"w:t" => in_t = false,
                b"w:r" => in_r = false,
                b"w:p" => flush(&mut para, &mut tables, &mut out),
                b"w:tc" => {
                    if let Some((cells, cell)) = tables.last_mut() {
                        cells.push(std::mem::take(cell).trim().to_string());
                    }
                }
                b"w:tr" => {
                    if let Some((cells, _)) = tables.last_mut() {
                        let row = std::mem::take(cells).join(" | ");
                        para = row;
                        let done = tables.pop();
                        flush(&mut para, &mut tables, &mut out);
                        tables.extend(done);
                    }
                }
                b"w:tbl" => {
                    tables.pop();
                }
                b"w:footnote" => out.push(Item::NoteEnd),
                b"w:sectPr" => {
                    in_sect = false;
                    // A section inside a paragraph ends a section of the body: the next one
                    // starts a page unless it runs on.
                    if !sect_continuous {
                        out.push(Item::Break);
                    }
                }
                _ => {}
            },
            Event::Text(t) if in_t => {
                para.push_str(&t.decode().map_err(|e| SourceError::damaged(WHAT, e))?)
            }
            Event::GeneralRef(g) if in_t => {
                if let Ok(Some(c)) = g.resolve_char_ref() {
                    para.push(c);
                } else if let Some(c) = entity(g.as_ref()) {
                    para.push(c);
                }
            }
            _ => {}
        }
    }
    // The body's own last section closes the document: no page after it.
    if out.last() == Some(&Item::Break) {
        out.pop();
    }
    Ok(out)
}

/// Ends a paragraph: into the open table cell, or as a line of the body.
fn flush(para: &mut String, tables: &mut [(Vec<String>, String)], out: &mut Vec<Item>) {
    let text = std::mem::take(para);
    match tables.last_mut() {
        Some((_, cell)) => {
            if !cell.is_empty() {
                cell.push(' ');
            }
            cell.push_str(text.trim());
        }
        None => out.push(Item::Line(text)),
    }
}

/// The plain text of a header or footer part.
fn part_text(xml: &str) -> Result<String, SourceError> {
    Ok(items(xml)?
        .into_iter()
        .filter_map(|i| match i {
            Item::Line(l) if !l.trim().is_empty() => Some(l.trim().to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n"))
}

/// `Id` → part path, from `word/_rels/document.xml.rels`.
fn relationships(xml: &str) -> BTreeMap<String, String> {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut out = BTreeMap::new();
    while let Ok(ev) = r.read_event() {
        match ev {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"Relationship" => {
                if let (Some(id), Some(t)) = (attr(&e, b"Id"), attr(&e, b"Target")) {
                    let t = t.trim_start_matches('/');
                    let path = if t.starts_with("word/") {
                        t.to_string()
                    } else {
                        format!("word/{t}")
                    };
                    out.insert(id, path);
                }
            }
            _ => {}
        }
    }
    out
}

/// The pages of a `.docx` file's bytes.
pub fn pages(bytes: &[u8]) -> Result<Vec<PageText>, SourceError> {
    limits::check_zip(bytes, WHAT)?;
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| SourceError::damaged(WHAT, e))?;
    let body = limits::zip_part(&mut z, "word/document.xml", WHAT)?
        .ok_or_else(|| SourceError::damaged(WHAT, "it has no word/document.xml"))?;
    let rels = limits::zip_part(&mut z, "word/_rels/document.xml.rels", WHAT)?
        .map(|x| relationships(&x))
        .unwrap_or_default();
    let mut notes = BTreeMap::new();
    if let Some(x) = limits::zip_part(&mut z, "word/footnotes.xml", WHAT)? {
        let mut id = None;
        let mut text = String::new();
        for i in items(&x)? {
            match i {
                Item::NoteStart(n) => id = Some(n),
                Item::Line(l) if id.is_some() => {
                    if !text.is_empty() {
                        text.push(' ');
                    }
                    text.push_str(l.trim());
                }
                Item::NoteEnd => {
                    if let Some(n) = id.take() {
                        notes.insert(n, std::mem::take(&mut text));
                    }
                }
                _ => {}
            }
        }
    }
    let body = items(&body)?;
    let mut header = String::new();
    let mut footer = String::new();
    for i in &body {
        let (slot, id) = match i {
            Item::HeaderRef(id) => (&mut header, id),
            Item::FooterRef(id) => (&mut footer, id),
            _ => continue,
        };
        if let Some(path) = rels.get(id) {
            if let Some(x) = limits::zip_part(&mut z, path, WHAT)? {
                *slot = part_text(&x)?;
            }
        }
    }
    let explicit = body.contains(&Item::Break);
    // Each page's lines and the footnotes it refers to.
    let mut raw: Vec<(String, Vec<String>)> = vec![Default::default()];
    for i in body {
        let (text, refs) = raw.last_mut().expect("one page at least");
        match i {
            Item::Line(l) => {
                text.push_str(&paging::wrap_long(&l));
                text.push('\n');
            }
            Item::NoteRef(n) => refs.push(n),
            Item::Break => raw.push(Default::default()),
            _ => {}
        }
    }
    // Without breaks of its own, the text is cut at fixed lengths; a footnote still goes to
    // the page that refers to it.
    if !explicit {
        let (text, refs) = raw.pop().unwrap_or_default();
        for p in paging::pages(&text, "docx") {
            let mine = refs
                .iter()
                .filter(|n| p.text.contains(&format!("[{n}]")))
                .cloned()
                .collect();
            raw.push((p.text, mine));
        }
    }
    // An empty last page (a break at the very end) is not a page.
    if raw.len() > 1
        && raw
            .last()
            .is_some_and(|(t, r)| t.trim().is_empty() && r.is_empty())
    {
        raw.pop();
    }
    Ok(raw
        .into_iter()
        .enumerate()
        .map(|(i, (text, refs))| {
            let mut page = String::new();
            if !header.is_empty() {
                page.push_str(&header);
                page.push('\n');
            }
            page.push_str(&text);
            for n in refs {
                if let Some(t) = notes.get(&n) {
                    page.push_str(&format!("[{n}] {t}\n"));
                }
            }
            if !footer.is_empty() {
                page.push_str(&footer);
                page.push('\n');
            }
            PageText {
                page: i as u32 + 1,
                text: page,
                from: "docx".into(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn docx(body: &str, extra: &[(&str, &str)]) -> Vec<u8> {
        let mut buf = std::io::Cursor::new(Vec::new());
        let mut z = zip::ZipWriter::new(&mut buf);
        let o = zip::write::SimpleFileOptions::default();
        z.start_file("word/document.xml", o).unwrap();
        write!(
            z,
            r#"<w:document xmlns:w="w" xmlns:r="r"><w:body>{body}</w:body></w:document>"#
        )
        .unwrap();
        for (name, x) in extra {
            z.start_file(*name, o).unwrap();
            z.write_all(x.as_bytes()).unwrap();
        }
        z.finish().unwrap();
        buf.into_inner()
    }

    fn p(t: &str) -> String {
        format!("<w:p><w:r><w:t>{t}</w:t></w:r></w:p>")
    }

    #[test]
    fn pages_break_where_the_author_broke_them_with_tables_notes_and_footer() {
        let body = format!(
            "{}{}<w:p><w:r><w:br w:type=\"page\"/><w:t>Rent fell due on March 1, 2024</w:t></w:r><w:r><w:footnoteReference w:id=\"2\"/></w:r></w:p>\
             <w:tbl><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr></w:tbl>\
             <w:sectPr><w:footerReference w:type=\"default\" r:id=\"rId9\"/></w:sectPr>",
            p("Lease &amp; notice"),
            p("Page one ends"),
            p("Date"),
            p("$1,250.00"),
        );
        let notes = r#"<w:footnotes><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:t>--</w:t></w:r></w:p></w:footnote><w:footnote w:id="2"><w:p><w:r><w:t>Per the ledger.</w:t></w:r></w:p></w:footnote></w:footnotes>"#;
        let rels =
            r#"<Relationships><Relationship Id="rId9" Target="footer1.xml"/></Relationships>"#;
        let footer = r#"<w:ftr><w:p><w:r><w:t>SMITH000007</w:t></w:r></w:p></w:ftr>"#;
        let bytes = docx(
            &body,
            &[
                ("word/footnotes.xml", notes),
                ("word/_rels/document.xml.rels", rels),
                ("word/footer1.xml", footer),
            ],
        );
        let pages = pages(&bytes).unwrap();
        assert_eq!(pages.len(), 2);
        assert_eq!(
            pages[0].text,
            "Lease & notice\nPage one ends\n\nSMITH000007\n"
        );
        assert_eq!(
            pages[1].text,
            "Rent fell due on March 1, 2024[2]\nDate | $1,250.00\n[2] Per the ledger.\nSMITH000007\n"
        );
    }

    #[test]
    fn without_breaks_pages_have_a_fixed_length() {
        let body: String = (0..100)
            .map(|i| p(&format!("{i:03} {}", "word ".repeat(10))))
            .collect();
        let pages = pages(&docx(&body, &[])).unwrap();
        assert_eq!(pages.len(), 2);
        assert!(
            pages[1].text.starts_with("055 "),
            "{}",
            &pages[1].text[..20]
        );
    }

    #[test]
    fn a_docx_without_its_body_is_damaged() {
        let bytes = docx("", &[]);
        let mut z = zip::ZipArchive::new(std::io::Cursor::new(&bytes[..])).unwrap();
        assert!(z.by_name("word/document.xml").is_ok());
        let e = pages(b"PK\x03\x04garbage").unwrap_err().to_string();
        assert!(e.contains("damaged Word document"), "{e}");
    }
}
