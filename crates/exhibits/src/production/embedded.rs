//! The files a document carries inside it, which a production accounts for as members of
//! its family like an email's attachments: a PDF's embedded files (its `EmbeddedFiles` name
//! tree and its file-attachment annotations) and an Office document's embedded objects
//! (`word/embeddings/`, `xl/embeddings/`, `ppt/embeddings/`).

use std::collections::BTreeSet;
use std::io::Read as _;

use lopdf::{Dictionary, Document, Object, ObjectId};

use crate::sources::Kind;

/// The most embedded files read out of one document, and the largest one.
const MOST: usize = 200;
const LARGEST: u64 = 256 * 1024 * 1024;

/// One file carried inside a document: its name, and its bytes or why they cannot be had.
pub(super) struct Embedded {
    pub(super) name: String,
    pub(super) bytes: Result<Vec<u8>, String>,
}

/// The files embedded in a document of `kind` made of `bytes`, in the order they are found.
pub(super) fn files(kind: Kind, bytes: &[u8]) -> Vec<Embedded> {
    let mut out = match kind {
        Kind::Pdf => pdf(bytes),
        Kind::Docx | Kind::Xlsx => office(bytes),
        _ => Vec::new(),
    };
    // Names stay unique within their document, as an email's attachments' do.
    let mut seen: Vec<String> = Vec::new();
    for e in &mut out {
        let base = e.name.clone();
        let mut n = 1;
        while seen.contains(&e.name) {
            n += 1;
            e.name = format!("{base} ({n})");
        }
        seen.push(e.name.clone());
    }
    out.truncate(MOST);
    out
}

fn pdf(bytes: &[u8]) -> Vec<Embedded> {
    let has = |m: &[u8]| memchr::memmem::find(bytes, m).is_some();
    if !has(b"/EmbeddedFile") && !has(b"/FileAttachment") && !has(b"/ObjStm") {
        return Vec::new();
    }
    let Ok(doc) = Document::load_mem(bytes) else {
        return Vec::new();
    };
    let mut specs: Vec<&Dictionary> = Vec::new();
    let mut seen: BTreeSet<ObjectId> = BTreeSet::new();
    if let Ok(names) = doc
        .catalog()
        .and_then(|c| c.get(b"Names"))
        .and_then(|n| deref(&doc, n).as_dict())
        .and_then(|n| n.get(b"EmbeddedFiles"))
    {
        name_tree(&doc, deref(&doc, names), &mut specs, 0);
    }
    for (_, page) in doc.get_pages() {
        for a in doc.get_page_annotations(page).unwrap_or_default() {
            let attachment = a
                .get(b"Subtype")
                .and_then(Object::as_name)
                .is_ok_and(|s| s == b"FileAttachment");
            if let (true, Ok(fs)) = (attachment, a.get(b"FS")) {
                if let Ok(d) = deref(&doc, fs).as_dict() {
                    specs.push(d);
                }
            }
        }
    }
    let mut out = Vec::new();
    for (i, spec) in specs.into_iter().enumerate() {
        let name = spec
            .get(b"UF")
            .or_else(|_| spec.get(b"F"))
            .ok()
            .and_then(|o| deref(&doc, o).as_str().ok())
            .map(pdf_string)
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| format!("embedded file {}", i + 1));
        let name = name.replace(['/', '\\'], "_");
        let stream = spec
            .get(b"EF")
            .ok()
            .and_then(|ef| deref(&doc, ef).as_dict().ok())
            .and_then(|ef| ef.get(b"UF").or_else(|_| ef.get(b"F")).ok());
        let Some(stream) = stream else {
            out.push(Embedded {
                name,
                bytes: Err("the PDF names it but does not hold its bytes".into()),
            });
            continue;
        };
        if let Object::Reference(id) = stream {
            if !seen.insert(*id) {
                continue;
            }
        }
        let bytes = match deref(&doc, stream).as_stream() {
            Ok(s) => match s.decompressed_content() {
                Ok(b) => Ok(b),
                Err(_) if s.filters().map(|f| f.is_empty()).unwrap_or(true) => {
                    Ok(s.content.clone())
                }
                Err(e) => Err(format!("its bytes cannot be decoded: {e}")),
            },
            Err(_) => Err("the PDF's entry for it is not a file stream".into()),
        };
        out.push(Embedded { name, bytes });
    }
    out
}

fn deref<'a>(doc: &'a Document, o: &'a Object) -> &'a Object {
    doc.dereference(o).map(|(_, o)| o).unwrap_or(o)
}

/// The file specifications of a name tree, depth first.
fn name_tree<'a>(doc: &'a Document, node: &'a Object, out: &mut Vec<&'a Dictionary>, depth: u32) {
    let Ok(node) = node.as_dict() else {
        return;
    };
    if depth > 32 {
        return;
    }
    if let Ok(names) = node.get(b"Names").and_then(|n| deref(doc, n).as_array()) {
        for pair in names.chunks(2) {
            if let Some(Ok(d)) = pair.get(1).map(|v| deref(doc, v).as_dict()) {
                out.push(d);
            }
        }
    }
    if let Ok(kids) = node.get(b"Kids").and_then(|k| deref(doc, k).as_array()) {
        for k in kids {
            name_tree(doc, deref(doc, k), out, depth + 1);
        }
    }
}

/// A PDF text string: UTF-16 with its byte-order mark, else PDFDocEncoding (read as
/// Latin-1, which it matches for letters).
fn pdf_string(b: &[u8]) -> String {
    match b {
        [0xFE, 0xFF, rest @ ..] => {
            let units: Vec<u16> = rest
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        _ => b.iter().map(|&c| c as char).collect(),
    }
}

fn office(bytes: &[u8]) -> Vec<Embedded> {
    let Ok(mut zip) = zip::ZipArchive::new(std::io::Cursor::new(bytes)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for i in 0..zip.len() {
        let Ok(mut f) = zip.by_index(i) else {
            continue;
        };
        let path = f.name().to_string();
        let inside = ["word/embeddings/", "xl/embeddings/", "ppt/embeddings/"]
            .iter()
            .any(|p| path.starts_with(p));
        if !inside || f.is_dir() {
            continue;
        }
        let name = path.rsplit('/').next().unwrap_or(&path).to_string();
        let bytes = if f.size() > LARGEST {
            Err(format!("it is {} bytes, more than lexrun reads", f.size()))
        } else {
            let mut b = Vec::new();
            f.read_to_end(&mut b)
                .map(|_| b)
                .map_err(|e| format!("it cannot be unpacked: {e}"))
        };
        out.push(Embedded { name, bytes });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_docx_embedding_is_found_and_nothing_else() {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let o = zip::write::SimpleFileOptions::default();
        w.start_file("word/document.xml", o).unwrap();
        std::io::Write::write_all(&mut w, b"<w:document/>").unwrap();
        w.start_file("word/embeddings/Sheet1.xlsx", o).unwrap();
        std::io::Write::write_all(&mut w, b"PK-sheet").unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let found = files(Kind::Docx, &bytes);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "Sheet1.xlsx");
        assert_eq!(found[0].bytes.as_deref().unwrap(), b"PK-sheet");
        assert!(files(Kind::Text, &bytes).is_empty());
    }
}
