//! A PDF page produced as itself: its content stream is read glyph by glyph, the glyphs of
//! every redacted word are taken out of it (the text after them keeps its place), each
//! redaction gets a black box with its label, and the page is written as a PDF of its own
//! with only what its content uses — no annotations, no metadata, no other page's objects.
//!
//! Only pages whose every glyph can be read with certainty take this path: no images or
//! forms (a scan's pixels can only be redacted in the pixels), no annotations with their own
//! appearance, no declared boxes (a box may cover drawings), fonts `fonts.rs` reads, and a
//! text whose letters and digits, and whose pattern matches, are exactly those `pdftotext`
//! read from the same page when the document was collected. Any other page is rasterised.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::path::Path;

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Dictionary, Document, Object, ObjectId, Stream};

use super::glyphs::{interpret, page_fonts, Glyph};
use super::page::{Label, PxBox, BAND};
use super::words::Word;
use crate::bates::{inherited, number as num, rect};

/// A source PDF, opened once for all its pages.
pub struct Source {
    doc: Document,
    pages: Vec<ObjectId>,
}

impl Source {
    /// Opens `pdf`; `None` if lopdf cannot read it (its pages are then rasterised).
    pub fn open(pdf: &Path) -> Option<Source> {
        let doc = Document::load(pdf).ok()?;
        if doc.is_encrypted() {
            return None;
        }
        let pages = doc.get_pages().into_values().collect();
        Some(Source { doc, pages })
    }

    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Page `i` read glyph by glyph; `None` if it may not take this path.
    pub fn page(&self, i: usize) -> Option<Read> {
        let id = *self.pages.get(i)?;
        let doc = &self.doc;
        let rotate = inherited(doc, id, b"Rotate")
            .and_then(|o| num(&o))
            .unwrap_or(0.0);
        if rotate.rem_euclid(360.0) != 0.0 || has_appearances(doc, id) {
            return None;
        }
        let media = rect(inherited(doc, id, b"MediaBox")).unwrap_or([0.0, 0.0, 612.0, 792.0]);
        let crop = rect(inherited(doc, id, b"CropBox")).unwrap_or(media);
        let resources = match inherited(doc, id, b"Resources") {
            Some(Object::Dictionary(d)) => d,
            _ => Dictionary::new(),
        };
        if draws_elsewhere(doc, &resources) {
            return None;
        }
        let content = doc.get_page_content(id).ok()?;
        let ops = Content::decode(&content).ok()?.operations;
        let glyphs = interpret(doc, &resources, &ops)?;
        Some(Read {
            ops,
            glyphs,
            crop,
            resources,
        })
    }

    /// Page `read` with the glyphs in `removed` taken out and `labels` drawn: a one-page
    /// document, to be stamped when its number is known.
    pub fn produce(
        &self,
        read: Read,
        removed: &BTreeSet<usize>,
        labels: Vec<Label>,
    ) -> Option<VectorPage> {
        let ops = without(&read.ops, &read.glyphs, removed)?;
        let content = Content { operations: ops }.encode().ok()?;
        let mut out = Document::with_version("1.4");
        let mut copied = HashMap::new();
        let mut res = Dictionary::new();
        for key in [
            &b"Font"[..],
            b"ExtGState",
            b"ColorSpace",
            b"Pattern",
            b"Shading",
        ] {
            if let Ok(v) = read.resources.get(key) {
                res.set(key, copy(&self.doc, v, &mut out, &mut copied));
            }
        }
        let mut stream = Stream::new(dictionary! {}, content);
        let _ = stream.compress();
        let body = out.add_object(stream);
        Some(VectorPage {
            doc: out,
            resources: res,
            body,
            crop: read.crop,
            labels,
        })
    }
}

/// A page read glyph by glyph.
pub struct Read {
    ops: Vec<Operation>,
    pub glyphs: Vec<Glyph>,
    /// The page's visible box: x0, y0, x1, y1.
    pub crop: [f64; 4],
    resources: Dictionary,
}

impl Read {
    /// The page's words, in pixels at `dpi` from its top-left corner, and for each the
    /// glyphs it is made of.
    pub fn words(&self, dpi: f64) -> (Vec<Word>, Vec<Vec<usize>>) {
        let k = dpi / 72.0;
        let (x0, y1) = (self.crop[0], self.crop[3]);
        let mut words: Vec<Word> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut line = 0usize;
        let mut prev: Option<&Glyph> = None;
        let mut open = false;
        for (gi, g) in self.glyphs.iter().enumerate() {
            let blank = g.text.chars().all(char::is_whitespace);
            let new_line = prev.is_some_and(|p| {
                (g.origin.1 - p.origin.1).abs() > 0.5 * p.size.max(g.size)
                    || g.origin.0 < p.origin.0 - 0.5 * p.size
            });
            if new_line {
                line += 1;
                open = false;
            }
            if blank {
                open = false;
                prev = Some(g);
                continue;
            }
            let gap = prev.map_or(0.0, |p| g.origin.0 - p.end.0);
            if open && gap > 0.15 * g.size {
                open = false;
            }
            let b = PxBox {
                x0: ((g.bbox[0] - x0) * k).floor().max(0.0) as usize,
                y0: ((y1 - g.bbox[3]) * k).floor().max(0.0) as usize,
                x1: ((g.bbox[2] - x0) * k).ceil().max(0.0) as usize,
                y1: ((y1 - g.bbox[1]) * k).ceil().max(0.0) as usize,
            };
            match (open, words.last_mut(), members.last_mut()) {
                (true, Some(w), Some(m)) => {
                    w.text.push_str(&g.text);
                    w.bx.x0 = w.bx.x0.min(b.x0);
                    w.bx.y0 = w.bx.y0.min(b.y0);
                    w.bx.x1 = w.bx.x1.max(b.x1);
                    w.bx.y1 = w.bx.y1.max(b.y1);
                    m.push(gi);
                }
                _ => {
                    words.push(Word {
                        text: g.text.clone(),
                        bx: b,
                        line,
                    });
                    members.push(vec![gi]);
                    open = true;
                }
            }
            prev = Some(g);
        }
        (words, members)
    }
}

/// A produced vector page, waiting for its stamps.
pub struct VectorPage {
    doc: Document,
    resources: Dictionary,
    body: ObjectId,
    crop: [f64; 4],
    labels: Vec<Label>,
}

impl VectorPage {
    /// The page with its labels, and its Bates number and legend in a strip added below
    /// it, as a one-page PDF.
    pub fn finish(mut self, stamps: &super::page::Stamps) -> Vec<u8> {
        let [x0, y0, x1, y1] = self.crop;
        // A page too narrow for its stamps is widened; its content stays clipped to its
        // own box.
        let (w, h) = (x1 - x0, y1 - y0);
        let x1 = x0 + w.max(super::page::stamp_width(stamps));
        let mut overlay = b"Q\n".to_vec();
        for l in &self.labels {
            super::page::push_label(&mut overlay, l, "LexrunF2");
        }
        let _ = writeln!(overlay, "q 1 0 0 1 {x0:.3} {:.3} cm", y0 - BAND);
        super::page::push_stamps(&mut overlay, x1 - x0, stamps, "LexrunF2");
        overlay.extend_from_slice(b"Q\n");
        let doc = &mut self.doc;
        let font = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Courier-Bold",
            "Encoding" => "WinAnsiEncoding",
        });
        let mut fonts = match self.resources.get(b"Font") {
            Ok(Object::Dictionary(d)) => d.clone(),
            Ok(Object::Reference(r)) => doc.get_dictionary(*r).cloned().unwrap_or_default(),
            _ => Dictionary::new(),
        };
        fonts.set("LexrunF2", Object::Reference(font));
        self.resources.set("Font", Object::Dictionary(fonts));
        let clip = format!("q {x0:.3} {y0:.3} {w:.3} {h:.3} re W n\n");
        let open = doc.add_object(Stream::new(dictionary! {}, clip.into_bytes()));
        let mut over = Stream::new(dictionary! {}, overlay);
        let _ = over.compress();
        let over = doc.add_object(over);
        let pages = doc.new_object_id();
        let page = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages,
            "MediaBox" => vec![x0.into(), (y0 - BAND).into(), x1.into(), y1.into()],
            "Resources" => Object::Dictionary(self.resources),
            "Contents" => vec![open.into(), self.body.into(), over.into()],
        });
        doc.objects.insert(
            pages,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Kids" => vec![page.into()], "Count" => 1,
            }),
        );
        let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages });
        doc.trailer.set("Root", catalog);
        let mut bytes = Vec::new();
        let _ = doc.save_to(&mut bytes);
        bytes
    }
}

/// Whether the page's resources hold content of their own that this path does not read: a
/// tiling pattern (a content stream), or a graphics state with a soft mask (a form) or a
/// font.
fn draws_elsewhere(doc: &Document, resources: &Dictionary) -> bool {
    let entries = |key: &[u8]| -> Vec<Object> {
        resources
            .get(key)
            .ok()
            .and_then(|o| doc.dereference(o).ok())
            .and_then(|(_, o)| o.as_dict().ok())
            .map(|d| {
                d.iter()
                    .filter_map(|(_, v)| doc.dereference(v).ok().map(|(_, o)| o.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let tiling = entries(b"Pattern")
        .iter()
        .any(|p| matches!(p, Object::Stream(_)));
    let states = entries(b"ExtGState").iter().any(|g| {
        let Ok(d) = g.as_dict() else { return true };
        d.has(b"Font")
            || d.get(b"SMask")
                .is_ok_and(|m| m.as_name().ok() != Some(b"None"))
    });
    tiling || states
}

/// Whether the page has annotations that draw something of their own (form fields,
/// comments, stamps): those are seen only on a raster. Links draw nothing and are dropped.
fn has_appearances(doc: &Document, page: ObjectId) -> bool {
    let Some(Object::Array(annots)) = inherited(doc, page, b"Annots") else {
        return false;
    };
    annots.iter().any(|a| {
        let d = doc
            .dereference(a)
            .ok()
            .and_then(|(_, o)| o.as_dict().ok().cloned());
        d.is_none_or(|d| d.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Link"))
    })
}

/// Deep-copies `o` from `src` into `dst`, each referenced object once.
fn copy(
    src: &Document,
    o: &Object,
    dst: &mut Document,
    done: &mut HashMap<ObjectId, ObjectId>,
) -> Object {
    match o {
        Object::Reference(id) => {
            if let Some(n) = done.get(id) {
                return Object::Reference(*n);
            }
            let n = dst.new_object_id();
            done.insert(*id, n);
            let copied = match src.get_object(*id) {
                Ok(obj) => copy(src, obj, dst, done),
                Err(_) => Object::Null,
            };
            dst.objects.insert(n, copied);
            Object::Reference(n)
        }
        Object::Array(a) => Object::Array(a.iter().map(|x| copy(src, x, dst, done)).collect()),
        Object::Dictionary(d) => Object::Dictionary(copy_dict(src, d, dst, done)),
        Object::Stream(s) => {
            let mut c = s.clone();
            c.dict = copy_dict(src, &s.dict, dst, done);
            Object::Stream(c)
        }
        other => other.clone(),
    }
}

fn copy_dict(
    src: &Document,
    d: &Dictionary,
    dst: &mut Document,
    done: &mut HashMap<ObjectId, ObjectId>,
) -> Dictionary {
    let mut out = Dictionary::new();
    for (k, v) in d.iter() {
        if k.as_slice() == b"Parent" {
            continue;
        }
        out.set(k.clone(), copy(src, v, dst, done));
    }
    out
}

/// The operations with the `removed` glyphs taken out: each operation that showed one
/// becomes a `TJ` whose numbers move the text after it to where it was. Marked content
/// keeps its tags but loses its properties (`/ActualText` and `/Alt` could carry the text).
fn without(
    ops: &[Operation],
    glyphs: &[Glyph],
    removed: &BTreeSet<usize>,
) -> Option<Vec<Operation>> {
    let mut by_op: BTreeMap<usize, Vec<&Glyph>> = BTreeMap::new();
    for gi in removed {
        let g = glyphs.get(*gi)?;
        by_op.entry(g.place.0).or_default().push(g);
    }
    let mut out = Vec::with_capacity(ops.len());
    let mut depth = 0usize;
    for (oi, op) in ops.iter().enumerate() {
        match op.operator.as_str() {
            // Balanced, so nothing the page leaves set reaches the boxes drawn over it.
            "q" => {
                depth += 1;
                out.push(op.clone());
            }
            "Q" if depth == 0 => {}
            "Q" => {
                depth -= 1;
                out.push(op.clone());
            }
            "BDC" => out.push(Operation::new(
                "BMC",
                op.operands.iter().take(1).cloned().collect(),
            )),
            "DP" => out.push(Operation::new(
                "MP",
                op.operands.iter().take(1).cloned().collect(),
            )),
            _ => match by_op.get(&oi) {
                None => out.push(op.clone()),
                Some(gone) => out.extend(cut(op, gone)?),
            },
        }
    }
    out.extend((0..depth).map(|_| Operation::new("Q", vec![])));
    Some(out)
}

/// One showing operation without the glyphs in `gone`.
fn cut(op: &Operation, gone: &[&Glyph]) -> Option<Vec<Operation>> {
    let mut pre = Vec::new();
    let elements: Vec<Object> = match op.operator.as_str() {
        "TJ" => op.operands.first()?.as_array().ok()?.clone(),
        "Tj" => vec![op.operands.first()?.clone()],
        "'" => {
            pre.push(Operation::new("T*", vec![]));
            vec![op.operands.first()?.clone()]
        }
        "\"" => {
            pre.push(Operation::new("Tw", vec![op.operands.first()?.clone()]));
            pre.push(Operation::new("Tc", vec![op.operands.get(1)?.clone()]));
            pre.push(Operation::new("T*", vec![]));
            vec![op.operands.get(2)?.clone()]
        }
        _ => return None,
    };
    let mut array = Vec::new();
    for (ei, e) in elements.iter().enumerate() {
        let Object::String(s, format) = e else {
            array.push(e.clone());
            continue;
        };
        let mut kept = Vec::new();
        let mut at = 0;
        for g in gone.iter().filter(|g| g.place.1 == ei) {
            let (_, _, from, len) = g.place;
            kept.extend_from_slice(s.get(at..from)?);
            let joins = kept.is_empty() && at == from && at > 0;
            if !kept.is_empty() {
                array.push(Object::String(std::mem::take(&mut kept), *format));
            }
            // A run of removed glyphs leaves one number, their widths summed: a number for
            // each would record the width of every redacted character.
            match array.last_mut() {
                Some(Object::Real(n)) if joins => *n -= g.shift as f32,
                _ => array.push(Object::Real(-g.shift as f32)),
            }
            at = from + len;
        }
        kept.extend_from_slice(s.get(at..)?);
        if !kept.is_empty() {
            array.push(Object::String(kept, *format));
        }
    }
    pre.push(Operation::new("TJ", vec![Object::Array(array)]));
    Some(pre)
}

/// The text a produced one-page PDF holds, read from its bytes: words on a line joined by
/// spaces, lines by newlines; and the part of it that prints — glyphs inside the page's
/// visible box and set large enough to be read. `None` if the page cannot be read this way.
pub fn text_of(pdf: &[u8]) -> Option<(String, String)> {
    let doc = Document::load_mem(pdf).ok()?;
    let id = *doc.get_pages().values().next()?;
    let resources = match inherited(&doc, id, b"Resources") {
        Some(Object::Dictionary(d)) => d,
        _ => Dictionary::new(),
    };
    let content = doc.get_page_content(id).ok()?;
    let ops = Content::decode(&content).ok()?.operations;
    let fonts = page_fonts(&doc, &resources);
    if fonts.values().any(Option::is_none) {
        return None;
    }
    // Images are allowed here: the stamps of a raster page are read from its text.
    let ops: Vec<Operation> = ops
        .into_iter()
        .filter(|o| !matches!(o.operator.as_str(), "Do" | "BI" | "ID" | "EI"))
        .collect();
    let glyphs = interpret(&doc, &resources, &ops)?;
    let media = rect(inherited(&doc, id, b"MediaBox")).unwrap_or([0.0, 0.0, 612.0, 792.0]);
    let crop = rect(inherited(&doc, id, b"CropBox")).unwrap_or(media);
    let seen = [
        media[0].max(crop[0]),
        media[1].max(crop[1]),
        media[2].min(crop[2]),
        media[3].min(crop[3]),
    ];
    let inside = |g: &Glyph| {
        let [a, b, c, d] = g.bbox;
        g.size >= 2.0
            && a >= seen[0] - 0.5
            && b >= seen[1] - 0.5
            && c <= seen[2] + 0.5
            && d <= seen[3] + 0.5
    };
    let visible: Vec<Glyph> = glyphs.iter().filter(|g| inside(g)).cloned().collect();
    let text = |glyphs: Vec<Glyph>| {
        let read = Read {
            ops: Vec::new(),
            glyphs,
            crop: media,
            resources: Dictionary::new(),
        };
        let (words, _) = read.words(72.0);
        super::words::join(&words).text
    };
    Some((text(glyphs), text(visible)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glyph(op: usize, at: usize) -> Glyph {
        Glyph {
            text: "x".into(),
            bbox: [0.0; 4],
            origin: (0.0, 0.0),
            end: (0.0, 0.0),
            size: 10.0,
            shift: 500.0,
            place: (op, 0, at, 1),
        }
    }

    #[test]
    fn a_run_of_removed_glyphs_leaves_one_number_and_the_page_is_balanced() {
        let ops = vec![
            Operation::new("q", vec![]),
            Operation::new("q", vec![]),
            Operation::new("Tj", vec![Object::string_literal("ab123cd")]),
            Operation::new("Q", vec![]),
        ];
        let glyphs: Vec<Glyph> = (0..7).map(|i| glyph(2, i)).collect();
        let removed: BTreeSet<usize> = [2, 3, 4].into_iter().collect();
        let out = without(&ops, &glyphs, &removed).unwrap();
        let names: Vec<&str> = out.iter().map(|o| o.operator.as_str()).collect();
        assert_eq!(names, ["q", "q", "TJ", "Q", "Q"]);
        let Object::Array(a) = &out[2].operands[0] else {
            panic!("not a TJ array")
        };
        assert_eq!(a.len(), 3);
        assert_eq!(a[0], Object::string_literal("ab"));
        assert_eq!(a[1], Object::Real(-1500.0));
        assert_eq!(a[2], Object::string_literal("cd"));
    }
}
