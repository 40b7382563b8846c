//! A page's content stream read glyph by glyph: the graphics and text state it sets, and for
//! every glyph it shows the text it stands for, where it is on the page and where in the
//! stream it was shown. What `vector.rs` redacts by; `None` wherever the page draws something
//! this reading cannot vouch for.

use std::collections::BTreeMap;

use lopdf::content::Operation;
use lopdf::{Dictionary, Document, Object};

use super::fonts::Font;
use crate::bates::number as num;

pub(super) type Matrix = [f64; 6];
pub(super) const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

pub(super) fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    [
        a[0] * b[0] + a[1] * b[2],
        a[0] * b[1] + a[1] * b[3],
        a[2] * b[0] + a[3] * b[2],
        a[2] * b[1] + a[3] * b[3],
        a[4] * b[0] + a[5] * b[2] + b[4],
        a[4] * b[1] + a[5] * b[3] + b[5],
    ]
}

pub(super) fn apply(m: &Matrix, x: f64, y: f64) -> (f64, f64) {
    (m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5])
}

/// One glyph shown by the page: the text it stands for, where it is, and where in the
/// content stream it was shown (operation, array element, byte offset and length).
#[derive(Clone, Debug)]
pub struct Glyph {
    pub text: String,
    /// Bounding box in the page's space: x0, y0, x1, y1.
    pub bbox: [f64; 4],
    /// The baseline origin and the glyph's height in the page's space.
    pub(super) origin: (f64, f64),
    pub(super) end: (f64, f64),
    pub(super) size: f64,
    /// What a `TJ` number must be to move the text after the glyph to where it was.
    pub(super) shift: f64,
    pub(super) place: (usize, usize, usize, usize),
}

/// Text state, as the content stream sets it.
#[derive(Clone)]
struct State {
    ctm: Matrix,
    tc: f64,
    tw: f64,
    th: f64,
    tl: f64,
    size: f64,
    rise: f64,
    font: Option<Vec<u8>>,
}

/// Reads every glyph the operations show; `None` if the page draws anything this path
/// cannot vouch for (an image, a form, an inline image, or a font it cannot read).
pub(super) fn interpret(
    doc: &Document,
    resources: &Dictionary,
    ops: &[Operation],
) -> Option<Vec<Glyph>> {
    let fonts = page_fonts(doc, resources);
    let mut st = State {
        ctm: IDENTITY,
        tc: 0.0,
        tw: 0.0,
        th: 1.0,
        tl: 0.0,
        size: 0.0,
        rise: 0.0,
        font: None,
    };
    let mut stack: Vec<State> = Vec::new();
    let (mut tm, mut tlm) = (IDENTITY, IDENTITY);
    let mut glyphs = Vec::new();
    for (oi, op) in ops.iter().enumerate() {
        let n = |i: usize| op.operands.get(i).and_then(num);
        let arity = match op.operator.as_str() {
            "Tj" | "'" | "TJ" => Some(1),
            "\"" => Some(3),
            _ => None,
        };
        let has_string = op.operands.iter().any(|o| matches!(o, Object::String(..)));
        match arity {
            // Text is shown only where it is read: exactly the operands the operator takes.
            Some(k) if op.operands.len() != k => return None,
            // A string anywhere else (an unknown operator's) could be shown by a reader.
            None if has_string && !matches!(op.operator.as_str(), "BDC" | "DP") => return None,
            _ => {}
        }
        match op.operator.as_str() {
            "q" => stack.push(st.clone()),
            "Q" => st = stack.pop().unwrap_or_else(|| st.clone()),
            "cm" => {
                let m = [n(0)?, n(1)?, n(2)?, n(3)?, n(4)?, n(5)?];
                st.ctm = mul(&m, &st.ctm);
            }
            "BT" => (tm, tlm) = (IDENTITY, IDENTITY),
            "Tc" => st.tc = n(0)?,
            "Tw" => st.tw = n(0)?,
            "Tz" => st.th = n(0)? / 100.0,
            "TL" => st.tl = n(0)?,
            "Ts" => st.rise = n(0)?,
            "Tf" => {
                st.font = Some(op.operands.first()?.as_name().ok()?.to_vec());
                st.size = n(1)?;
            }
            "Td" | "TD" => {
                let (tx, ty) = (n(0)?, n(1)?);
                if op.operator == "TD" {
                    st.tl = -ty;
                }
                tlm = mul(&[1.0, 0.0, 0.0, 1.0, tx, ty], &tlm);
                tm = tlm;
            }
            "Tm" => {
                tlm = [n(0)?, n(1)?, n(2)?, n(3)?, n(4)?, n(5)?];
                tm = tlm;
            }
            "T*" => {
                tlm = mul(&[1.0, 0.0, 0.0, 1.0, 0.0, -st.tl], &tlm);
                tm = tlm;
            }
            "Tj" | "'" | "\"" | "TJ" => {
                if op.operator != "Tj" && op.operator != "TJ" {
                    if op.operator == "\"" {
                        st.tw = n(0)?;
                        st.tc = n(1)?;
                    }
                    tlm = mul(&[1.0, 0.0, 0.0, 1.0, 0.0, -st.tl], &tlm);
                    tm = tlm;
                }
                let font = fonts.get(st.font.as_ref()?)?.as_ref()?;
                let mut show = Show {
                    st: &st,
                    font,
                    tm: &mut tm,
                    glyphs: &mut glyphs,
                };
                match op.operator.as_str() {
                    "TJ" => {
                        for (ei, e) in op.operands.first()?.as_array().ok()?.iter().enumerate() {
                            match e {
                                Object::String(s, _) => show.string(s, (oi, ei))?,
                                other => show.adjust(num(other)?),
                            }
                        }
                    }
                    _ => {
                        let s = op.operands.last()?.as_str().ok()?;
                        show.string(s, (oi, 0))?;
                    }
                }
            }
            "Do" | "BI" | "ID" | "EI" | "d0" | "d1" => return None,
            _ => {}
        }
    }
    Some(glyphs)
}

/// The page's fonts by resource name, each read once (`None`: a font this path cannot read).
pub(super) fn page_fonts(
    doc: &Document,
    resources: &Dictionary,
) -> BTreeMap<Vec<u8>, Option<Font>> {
    let mut out = BTreeMap::new();
    let fonts = resources
        .get(b"Font")
        .ok()
        .and_then(|f| doc.dereference(f).ok())
        .and_then(|(_, o)| o.as_dict().ok());
    if let Some(fonts) = fonts {
        for (name, f) in fonts.iter() {
            let font = doc
                .dereference(f)
                .ok()
                .and_then(|(_, o)| o.as_dict().ok())
                .and_then(|d| Font::read(doc, d));
            out.insert(name.clone(), font);
        }
    }
    out
}

/// Glyphs being shown by one operation.
struct Show<'a> {
    st: &'a State,
    font: &'a Font,
    tm: &'a mut Matrix,
    glyphs: &'a mut Vec<Glyph>,
}

impl Show<'_> {
    fn adjust(&mut self, n: f64) {
        let tx = -n / 1000.0 * self.st.size * self.st.th;
        *self.tm = mul(&[1.0, 0.0, 0.0, 1.0, tx, 0.0], self.tm);
    }

    fn string(&mut self, s: &[u8], (op, element): (usize, usize)) -> Option<()> {
        let step = if self.font.two_byte { 2 } else { 1 };
        if !s.len().is_multiple_of(step) {
            return None;
        }
        let st = self.st;
        let mut at = 0;
        while at + step <= s.len() {
            let code = s[at..at + step]
                .iter()
                .fold(0u32, |a, b| (a << 8) | *b as u32);
            let w0 = self.font.width(code);
            if !w0.is_finite() || st.size == 0.0 {
                return None;
            }
            let space = if step == 1 && code == 32 { st.tw } else { 0.0 };
            let trm = mul(
                &[st.size * st.th, 0.0, 0.0, st.size, 0.0, st.rise],
                &mul(self.tm, &st.ctm),
            );
            let corners = [
                apply(&trm, 0.0, -0.2),
                apply(&trm, w0 / 1000.0, -0.2),
                apply(&trm, 0.0, 0.8),
                apply(&trm, w0 / 1000.0, 0.8),
            ];
            let xs = corners.map(|c| c.0);
            let ys = corners.map(|c| c.1);
            let min = |v: [f64; 4]| v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = |v: [f64; 4]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let (ox, oy) = apply(&trm, 0.0, 0.0);
            let (ex, ey) = apply(&trm, w0 / 1000.0, 0.0);
            let (hx, hy) = apply(&trm, 0.0, 1.0);
            let bbox = [min(xs), min(ys), max(xs), max(ys)];
            if !bbox.iter().all(|v| v.is_finite() && v.abs() < 1e6) {
                return None;
            }
            self.glyphs.push(Glyph {
                text: self.font.text(code).unwrap_or("\u{FFFD}").to_string(),
                bbox,
                origin: (ox, oy),
                end: (ex, ey),
                size: ((hx - ox).powi(2) + (hy - oy).powi(2)).sqrt(),
                shift: w0 + (st.tc + space) * 1000.0 / st.size,
                place: (op, element, at, step),
            });
            let tx = (w0 / 1000.0 * st.size + st.tc + space) * st.th;
            *self.tm = mul(&[1.0, 0.0, 0.0, 1.0, tx, 0.0], self.tm);
            at += step;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_shown_with_other_operands_than_its_operator_takes_is_not_read() {
        let doc = Document::with_version("1.5");
        let ops = vec![Operation::new(
            "Tj",
            vec![Object::string_literal("a"), Object::string_literal("b")],
        )];
        assert!(interpret(&doc, &Dictionary::new(), &ops).is_none());
        let ops = vec![Operation::new("XX", vec![Object::string_literal("secret")])];
        assert!(interpret(&doc, &Dictionary::new(), &ops).is_none());
    }

    #[test]
    fn matrices_compose_as_pdf_does() {
        let t = [1.0, 0.0, 0.0, 1.0, 10.0, 20.0];
        let s = [2.0, 0.0, 0.0, 2.0, 0.0, 0.0];
        // Translate, then scale.
        assert_eq!(apply(&mul(&t, &s), 1.0, 1.0), (22.0, 42.0));
    }
}
