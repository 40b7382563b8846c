//! One produced page as a PDF of its own: either a raster of the original page (1-bit at the
//! production's resolution, with every redaction blacked out in the pixels themselves) or
//! lines of text set in Courier with redacted characters never written; then the Bates
//! number bottom-right, the legend bottom-left and each box's label as the only live text.
//! The file is written by hand: one page, its fonts, at most one image, and no document
//! information or metadata that could carry a redacted word.

use std::io::Write as _;

use crate::winansi;

/// Height of the strip added below a raster page for the stamps, in points.
pub const BAND: f64 = 30.0;
/// Courier's advance, as a share of the font size.
pub const COURIER: f64 = 0.6;

/// A grey raster: one byte a pixel, 0 black.
#[derive(Clone)]
pub struct Gray {
    pub w: usize,
    pub h: usize,
    pub px: Vec<u8>,
}

impl Gray {
    /// Reads a binary PGM (`P5`) as `pdftoppm -gray` writes it.
    pub fn from_pgm(bytes: &[u8]) -> Option<Gray> {
        let mut fields = Vec::new();
        let mut i = 0;
        while fields.len() < 4 {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if bytes.get(i) == Some(&b'#') {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            let start = i;
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if start == i {
                return None;
            }
            fields.push(std::str::from_utf8(&bytes[start..i]).ok()?.to_string());
        }
        if fields[0] != "P5" || fields[3] != "255" {
            return None;
        }
        let w: usize = fields[1].parse().ok()?;
        let h: usize = fields[2].parse().ok()?;
        let data = bytes.get(i + 1..i + 1 + w * h)?;
        Some(Gray {
            w,
            h,
            px: data.to_vec(),
        })
    }

    pub fn to_pgm(&self) -> Vec<u8> {
        let mut v = format!("P5\n{} {}\n255\n", self.w, self.h).into_bytes();
        v.extend_from_slice(&self.px);
        v
    }

    /// Blacks out a box (pixels, clipped to the raster).
    pub fn fill(&mut self, b: PxBox) {
        let x1 = b.x1.min(self.w);
        let y1 = b.y1.min(self.h);
        for y in b.y0.min(y1)..y1 {
            let row = &mut self.px[y * self.w..(y + 1) * self.w];
            for p in &mut row[b.x0.min(x1)..x1] {
                *p = 0;
            }
        }
    }

    /// Packs to one bit a pixel, rows padded to whole bytes, 1 white (PDF DeviceGray).
    pub fn to_bits(&self) -> Vec<u8> {
        let stride = self.w.div_ceil(8);
        let mut out = vec![0u8; stride * self.h];
        for y in 0..self.h {
            let row = &self.px[y * self.w..(y + 1) * self.w];
            let dst = &mut out[y * stride..(y + 1) * stride];
            for (x, &p) in row.iter().enumerate() {
                if p >= 160 {
                    dst[x / 8] |= 0x80 >> (x % 8);
                }
            }
        }
        out
    }
}

/// A box in pixels, top-left origin, end exclusive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PxBox {
    pub x0: usize,
    pub y0: usize,
    pub x1: usize,
    pub y1: usize,
}

/// A labelled redaction on the finished page, in points from its bottom-left corner.
#[derive(Clone, Debug)]
pub struct Label {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
    pub text: String,
}

/// What is printed on a page besides its content.
pub struct Stamps<'a> {
    pub bates: &'a str,
    pub legend: &'a str,
}

/// Characters `from..to` of a line, blacked out and labelled.
pub type Run = (usize, usize, String);

/// A page of Courier text: lines with, for each, the character ranges to black out.
pub struct TextPage {
    pub lines: Vec<(String, Vec<Run>)>,
}

pub const TEXT_SIZE: f64 = 9.0;
pub const TEXT_LEAD: f64 = 11.0;
pub const MARGIN: f64 = 54.0;
pub const PAGE_W: f64 = 612.0;
pub const PAGE_H: f64 = 792.0;

/// Characters a text page's line holds, and lines a page holds.
pub fn text_capacity() -> (usize, usize) {
    let cols = ((PAGE_W - 2.0 * MARGIN) / (TEXT_SIZE * COURIER)).floor() as usize;
    let rows = ((PAGE_H - MARGIN - 60.0) / TEXT_LEAD).floor() as usize;
    (cols, rows)
}

fn push_text(c: &mut Vec<u8>, font: &str, size: f64, x: f64, y: f64, text: &str) {
    let _ = write!(c, "BT /{font} {size:.2} Tf {x:.2} {y:.2} Td (");
    c.extend_from_slice(&winansi::literal_lossy(text));
    c.extend_from_slice(b") Tj ET\n");
}

/// The black box and its label, drawn on top of everything else.
pub(super) fn push_label(c: &mut Vec<u8>, l: &Label, font: &str) {
    let _ = writeln!(c, "0 g {:.2} {:.2} {:.2} {:.2} re f", l.x, l.y, l.w, l.h);
    let n = l.text.chars().count().max(1) as f64;
    let size = (l.h * 0.7)
        .min(7.0)
        .min((l.w - 2.0) / (n * COURIER))
        .max(1.5);
    let tw = n * COURIER * size;
    let x = l.x + ((l.w - tw) / 2.0).max(0.5);
    let y = l.y + (l.h - size * 0.7) / 2.0;
    c.extend_from_slice(b"1 g\n");
    push_text(c, font, size, x, y, &l.text);
    c.extend_from_slice(b"0 g\n");
}

/// The smallest size a stamp is set in, in points: still read at 300 dpi by eye and OCR.
pub const MIN_STAMP: f64 = 6.0;
/// The largest, on a page wide enough.
const STAMP: f64 = 9.0;

/// The least width a page needs for its stamps to be set at [`MIN_STAMP`] or more, each on
/// a line of its own: a narrower page is widened to it (the band below it holds them).
pub fn stamp_width(s: &Stamps) -> f64 {
    let n = s.bates.chars().count().max(s.legend.chars().count()).max(1) as f64;
    n * COURIER * MIN_STAMP + 8.0
}

/// Where each stamp is set in the band below a page `width` points wide: (x, y, size, text).
/// The Bates number bottom-right and the legend bottom-left on one line where both fit at a
/// legible size, else on two lines; each shrunk to fit inside the page, never placed off it.
pub fn stamp_layout<'a>(width: f64, s: &Stamps<'a>) -> Vec<(f64, f64, f64, &'a str)> {
    let margin = (width * 0.03).clamp(4.0, 18.0);
    let room = (width - 2.0 * margin).max(1.0);
    let chars = |t: &str| t.chars().count().max(1) as f64;
    let (nb, nl) = (chars(s.bates), chars(s.legend));
    let bsize = STAMP.min(room / (nb * COURIER));
    let bw = nb * COURIER * bsize;
    let mut out = Vec::new();
    if s.legend.is_empty() {
        out.push((width - margin - bw, 12.0, bsize, s.bates));
        return out;
    }
    let gap = 12.0;
    let lsize = STAMP.min((room - bw - gap) / (nl * COURIER));
    if lsize >= MIN_STAMP.min(bsize) && bsize >= MIN_STAMP.min(STAMP) {
        out.push((width - margin - bw, 12.0, bsize, s.bates));
        out.push((margin, 12.0, lsize, s.legend));
    } else {
        let lsize = STAMP.min(room / (nl * COURIER));
        out.push((width - margin - bw, 17.0, bsize, s.bates));
        out.push((margin, 5.0, lsize, s.legend));
    }
    out
}

pub(super) fn push_stamps(c: &mut Vec<u8>, width: f64, s: &Stamps, font: &str) {
    c.extend_from_slice(b"0 g\n");
    for (x, y, size, text) in stamp_layout(width, s) {
        push_text(c, font, size, x, y, text);
    }
}

/// A page's raster at one bit a pixel, compressed: what is kept of it until it is written.
pub struct Packed {
    pub w: usize,
    pub h: usize,
    pub deflated: Vec<u8>,
}

impl Packed {
    pub fn of(img: &Gray) -> Packed {
        Packed {
            w: img.w,
            h: img.h,
            deflated: deflate(&img.to_bits()),
        }
    }
}

/// A raster page: the image, its labels and stamps. `dpi` gives the page its size.
pub fn raster_pdf(img: &Packed, dpi: f64, labels: &[Label], s: &Stamps) -> Vec<u8> {
    let iw = img.w as f64 * 72.0 / dpi;
    let h = img.h as f64 * 72.0 / dpi;
    // A page too narrow for its stamps is widened, the image at its left.
    let w = iw.max(stamp_width(s));
    let mut c = Vec::new();
    let _ = writeln!(c, "q {iw:.3} 0 0 {h:.3} 0 {BAND:.3} cm /Im0 Do Q");
    for l in labels {
        push_label(
            &mut c,
            &Label {
                y: l.y + BAND,
                ..l.clone()
            },
            "F2",
        );
    }
    push_stamps(&mut c, w, s, "F2");
    write_pdf(w, h + BAND, &c, Some(img))
}

/// A text page set in Courier.
pub fn text_pdf(page: &TextPage, s: &Stamps) -> Vec<u8> {
    let mut c = Vec::new();
    let mut labels = Vec::new();
    for (i, (line, boxes)) in page.lines.iter().enumerate() {
        let y = PAGE_H - MARGIN - TEXT_LEAD * (i as f64 + 1.0);
        if !line.trim().is_empty() {
            push_text(&mut c, "F1", TEXT_SIZE, MARGIN, y, line);
        }
        for (from, to, why) in boxes {
            let cw = TEXT_SIZE * COURIER;
            labels.push(Label {
                x: MARGIN + *from as f64 * cw,
                y: y - 2.5,
                w: (to - from) as f64 * cw,
                h: TEXT_LEAD,
                text: why.clone(),
            });
        }
    }
    for l in &labels {
        push_label(&mut c, l, "F2");
    }
    push_stamps(&mut c, PAGE_W, s, "F2");
    write_pdf(PAGE_W, PAGE_H, &c, None)
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = e.write_all(data);
    e.finish().unwrap_or_default()
}

/// A one-page PDF: catalog, pages, page, contents, two Courier fonts and maybe one 1-bit
/// image, with a correct cross-reference table.
fn write_pdf(w: f64, h: f64, content: &[u8], image: Option<&Packed>) -> Vec<u8> {
    let mut out: Vec<u8> = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    let mut obj = |out: &mut Vec<u8>, body: &[u8]| {
        offsets.push(out.len());
        let _ = writeln!(out, "{} 0 obj", offsets.len());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    };
    let xobj = if image.is_some() {
        " /XObject << /Im0 7 0 R >>"
    } else {
        ""
    };
    obj(&mut out, b"<< /Type /Catalog /Pages 2 0 R >>");
    obj(&mut out, b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>");
    obj(
        &mut out,
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w:.3} {h:.3}] /Contents 4 0 R /Resources << /Font << /F1 5 0 R /F2 6 0 R >>{xobj} >> >>"
        )
        .as_bytes(),
    );
    let z = deflate(content);
    let mut s = format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", z.len()).into_bytes();
    s.extend_from_slice(&z);
    s.extend_from_slice(b"\nendstream");
    obj(&mut out, &s);
    obj(
        &mut out,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier /Encoding /WinAnsiEncoding >>",
    );
    obj(
        &mut out,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier-Bold /Encoding /WinAnsiEncoding >>",
    );
    if let Some(img) = image {
        let (iw, ih, z) = (img.w, img.h, &img.deflated);
        let mut s = format!(
            "<< /Type /XObject /Subtype /Image /Width {iw} /Height {ih} /ColorSpace /DeviceGray /BitsPerComponent 1 /Length {} /Filter /FlateDecode >>\nstream\n",
            z.len()
        )
        .into_bytes();
        s.extend_from_slice(z);
        s.extend_from_slice(b"\nendstream");
        obj(&mut out, &s);
    }
    let xref = out.len();
    let _ = write!(out, "xref\n0 {}\n0000000000 65535 f \n", offsets.len() + 1);
    for o in &offsets {
        let _ = writeln!(out, "{o:010} 00000 n ");
    }
    let _ = write!(
        out,
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        offsets.len() + 1
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_page_never_holds_what_it_blacks_out() {
        let page = TextPage {
            lines: vec![(
                "SSN:            end".into(),
                vec![(5, 16, "REDACTED – PII".into())],
            )],
        };
        let pdf = text_pdf(
            &page,
            &Stamps {
                bates: "HARBOR0000001",
                legend: "CONFIDENTIAL",
            },
        );
        assert!(pdf.starts_with(b"%PDF-1.4"));
        let text = String::from_utf8_lossy(&pdf);
        assert!(text.contains("startxref"));
    }

    #[test]
    fn pgm_round_trips_and_boxes_are_black() {
        let mut g = Gray {
            w: 10,
            h: 4,
            px: vec![255; 40],
        };
        g.fill(PxBox {
            x0: 2,
            y0: 1,
            x1: 4,
            y1: 3,
        });
        let back = Gray::from_pgm(&g.to_pgm()).unwrap();
        assert_eq!(back.px, g.px);
        assert_eq!(back.px[12], 0);
        assert_eq!(back.px[0], 255);
        let bits = g.to_bits();
        assert_eq!(bits.len(), 8);
        assert_eq!(bits[2], 0b1100_1111);
        assert_eq!(bits[3], 0b1100_0000);
    }
}
