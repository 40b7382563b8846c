//! Writes small PDFs for tests and benchmarks: pages of text lines, optionally rotated,
//! cropped, or with raw operators before the text.
#![allow(dead_code)]

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream};

pub struct PageSpec<'a> {
    pub text: &'a str,
    pub rotate: i64,
    pub crop: Option<[i64; 4]>,
    /// Raw operators before the text, e.g. an unbalanced `cm`.
    pub prelude: &'a str,
}

pub fn page(text: &str) -> PageSpec<'_> {
    PageSpec {
        text,
        rotate: 0,
        crop: None,
        prelude: "",
    }
}

pub fn pdf(pages: &[PageSpec]) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font = doc.add_object(
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Times-Roman" },
    );
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids = Vec::new();
    for p in pages {
        let mut ops = Vec::new();
        for (i, line) in p.text.lines().enumerate() {
            ops.push(Operation::new("BT", vec![]));
            ops.push(Operation::new("Tf", vec!["F1".into(), 12.into()]));
            ops.push(Operation::new(
                "Td",
                vec![72.into(), (700 - 16 * i as i64).into()],
            ));
            ops.push(Operation::new("Tj", vec![Object::string_literal(line)]));
            ops.push(Operation::new("ET", vec![]));
        }
        let mut bytes = p.prelude.as_bytes().to_vec();
        bytes.extend(Content { operations: ops }.encode().unwrap());
        let content = doc.add_object(Stream::new(dictionary! {}, bytes));
        let mut d = dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content, "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        };
        if p.rotate != 0 {
            d.set("Rotate", p.rotate);
        }
        if let Some(c) = p.crop {
            d.set(
                "CropBox",
                c.iter().map(|v| Object::Integer(*v)).collect::<Vec<_>>(),
            );
        }
        kids.push(Object::from(doc.add_object(d)));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// Writes a PDF whose pages hold `texts`, wrapped at about 80 characters a line.
pub fn text_pdf(path: &std::path::Path, texts: &[&str]) {
    let wrapped: Vec<String> = texts
        .iter()
        .map(|t| {
            let mut lines = Vec::new();
            let mut cur = String::new();
            for w in t.split_whitespace() {
                if cur.len() + w.len() > 80 {
                    lines.push(std::mem::take(&mut cur));
                }
                if !cur.is_empty() {
                    cur.push(' ');
                }
                cur.push_str(w);
            }
            lines.push(cur);
            lines.join("\n")
        })
        .collect();
    let pages: Vec<PageSpec> = wrapped.iter().map(|t| page(t)).collect();
    std::fs::write(path, pdf(&pages)).unwrap();
}

/// A PDF written by hand, object by object (`objects[i]` is object `i + 1`, without its
/// `obj`/`endobj`), object 1 the catalog, with a correct cross-reference table: for page
/// trees and content streams no PDF library writes.
pub fn raw_pdf(objects: &[String]) -> Vec<u8> {
    let mut out = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend(format!("{} 0 obj\n{o}\nendobj\n", i + 1).into_bytes());
    }
    let xref = out.len();
    out.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).into_bytes());
    for o in offsets {
        out.extend(format!("{o:010} 00000 n \n").into_bytes());
    }
    out.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .into_bytes(),
    );
    out
}

/// A content stream object holding `ops`.
pub fn stream(ops: &str) -> String {
    format!("<< /Length {} >>\nstream\n{ops}\nendstream", ops.len())
}
